//! Blob files: numbered byte strings, each with its own CRC. The postings and the record store
//! are blob files.
//!
//! ```text
//! blob 0 | blob 1 | … | blob n−1         back to back from offset 0
//! directory: n entries of { len u32, crc32 u32 }   (8 bytes each, LE)
//! anchors:   ⌈n ÷ 64⌉ u64 LE: the offset of blob 64·j
//! count      u64   n
//! dir_offset u64   where the directory starts (and the last blob ends)
//! footer (see footer.rs)
//! ```
//!
//! A blob's offset is not stored: it is its group's anchor plus the lengths of the blobs before
//! it in its group of 64 (or the next anchor, or `dir_offset` after the last group, minus the
//! lengths from it to the end of its group; a read sums whichever side is shorter). A directory
//! of 8 bytes a blob instead of 16 saves about 1.4 MB of a 100k-record index's 98 MB.
//!
//! Reading blob `i` checks its offset and length against the body bounds and its bytes against
//! their CRC, so a damaged blob is reported, never decoded. Damage to one length or one anchor
//! shifts the offsets summed across it, so a blob whose bytes fail their CRC at the offset
//! summed from one side is tried at the offset summed from the other: one damaged entry costs
//! its own blob only, as with stored offsets (`salvage` keeps every other record). A blob's CRC
//! is checked the first time a process reads it (the files are never rewritten in place: a
//! blob's bytes are the same at every later read), not at every search; so are the checks of a
//! blob's contents that cost more than reading it (the postings' bitmap counts,
//! [`BlobFile::get_checked`]), at the first read that passes them.

use crate::format::directory::FileTarget;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::error::Result;
use crate::format::bytes::{u32_at, u64_at};
use crate::format::file::IndexFile;
use crate::format::footer::{FileKind, FileWriter, Footer};
use crate::format::mmap::FileSlice;
use crate::format::FormatError;

const ENTRY_LEN: usize = 8;
const TRAILER_LEN: usize = 16;
/// Blobs per anchor.
const GROUP: usize = 64;

/// The anchors a file of `count` blobs has.
fn anchor_count(count: u64) -> u64 {
    count.div_ceil(GROUP as u64)
}

/// Writes a blob file, blob after blob.
pub struct BlobWriter {
    out: FileWriter,
    directory: Vec<u8>,
    anchors: Vec<u8>,
    count: u64,
}

impl BlobWriter {
    /// Creates a blob file of `kind` at `path`.
    pub fn create(path: impl Into<FileTarget>, kind: FileKind) -> Result<BlobWriter> {
        Ok(BlobWriter {
            out: FileWriter::create(path, kind)?,
            directory: Vec::new(),
            anchors: Vec::new(),
            count: 0,
        })
    }

    /// Appends the next blob and returns its number.
    pub fn push(&mut self, blob: &[u8]) -> Result<u64> {
        if self.count.is_multiple_of(GROUP as u64) {
            let offset = self.out.position();
            self.anchors.extend_from_slice(&offset.to_le_bytes());
        }
        self.out.write_all(blob)?;
        self.directory.extend_from_slice(
            &u32::try_from(blob.len())
                .expect("blob < 4 GiB")
                .to_le_bytes(),
        );
        self.directory
            .extend_from_slice(&crc32fast::hash(blob).to_le_bytes());
        self.count += 1;
        Ok(self.count - 1)
    }

    /// The number the next blob pushed takes.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether no blob was pushed yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Writes the directory and the footer and syncs the file.
    pub fn finish(mut self) -> Result<Footer> {
        let dir_offset = self.out.position();
        let directory = std::mem::take(&mut self.directory);
        self.out.write_all(&directory)?;
        let anchors = std::mem::take(&mut self.anchors);
        self.out.write_all(&anchors)?;
        self.out.write_all(&self.count.to_le_bytes())?;
        self.out.write_all(&dir_offset.to_le_bytes())?;
        self.out.finish()
    }
}

/// A blob file opened for reading.
#[derive(Clone)]
pub struct BlobFile {
    file: IndexFile,
    count: usize,
    dir_offset: usize,
    /// A bit per blob: its CRC was checked (shared by clones).
    checked: Arc<BlobBits>,
    /// A bit per blob: its contents passed their kind's own check ([`BlobFile::get_checked`]).
    contents_checked: Arc<BlobBits>,
}

/// A bit per blob of a file, made at the first one set.
#[derive(Default)]
struct BlobBits(OnceLock<Box<[AtomicU64]>>);

impl BlobBits {
    /// Whether blob `index` has its bit.
    fn is_set(&self, index: usize) -> bool {
        (self.0.get())
            .is_some_and(|words| words[index / 64].load(Ordering::Relaxed) >> (index % 64) & 1 != 0)
    }

    /// Sets the bit of blob `index` of a file of `count` blobs.
    fn set(&self, index: usize, count: usize) {
        let words =
            (self.0).get_or_init(|| (0..count.div_ceil(64)).map(|_| AtomicU64::new(0)).collect());
        words[index / 64].fetch_or(1 << (index % 64), Ordering::Relaxed);
    }
}

impl BlobFile {
    /// Checks the trailer and directory bounds (O(1)).
    pub fn open(file: IndexFile) -> Result<BlobFile> {
        let body = file.body();
        if body.len() < TRAILER_LEN {
            return Err(file.corrupt("blob file too short for its trailer"));
        }
        let count = u64_at(body, body.len() - 16);
        let dir_offset = u64_at(body, body.len() - 8);
        let expected_end = count
            .checked_mul(ENTRY_LEN as u64)
            .and_then(|d| d.checked_add(anchor_count(count) * 8))
            .and_then(|d| d.checked_add(dir_offset))
            .and_then(|d| d.checked_add(TRAILER_LEN as u64));
        if expected_end != Some(body.len() as u64) {
            return Err(file.corrupt(format!(
                "blob directory of {count} entries and their anchors at {dir_offset} does not fit \
                 the {}-byte body",
                body.len()
            )));
        }
        Ok(BlobFile {
            count: count as usize,
            dir_offset: dir_offset as usize,
            file,
            checked: Arc::default(),
            contents_checked: Arc::default(),
        })
    }

    /// The number of blobs.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the file holds no blobs.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The underlying file.
    pub fn file(&self) -> &IndexFile {
        &self.file
    }

    /// Blob `index`, bounds- and CRC-checked.
    pub fn get(&self, index: usize) -> Result<&[u8]> {
        Ok(&self.file.body()[self.checked_range(index)?])
    }

    /// Blob `index`, bounds- and CRC-checked, as a view that keeps the file mapped: for what
    /// reads a blob in place for as long as it lives (the store's model).
    pub fn get_shared(&self, index: usize) -> Result<FileSlice> {
        Ok(self.file.body_range(self.checked_range(index)?))
    }

    /// Where blob `index` lies in the body, once its bounds and CRC are checked: at the offset
    /// summed from the nearer end of its group, or, where the bytes there fail their CRC, from
    /// the other (module docs).
    fn checked_range(&self, index: usize) -> Result<Range<usize>> {
        if index >= self.count {
            return Err(self
                .file
                .corrupt(format!("blob {index} requested of {}", self.count)));
        }
        let body = self.file.body();
        // Open checked that the directory and the anchors lie in the body.
        let at = self.dir_offset + index * ENTRY_LEN;
        let len = u32_at(body, at) as usize;
        let crc = u32_at(body, at + 4);
        let from_start = index % GROUP < GROUP / 2;
        let nearer = self.range_from(index, len, from_start);
        if let Ok(range) = &nearer {
            if self.checked.is_set(index) {
                return Ok(range.clone());
            }
        }
        let check = |range: Range<usize>| -> Result<Range<usize>> {
            self.file.populate(range.clone());
            FormatError::check_crc(
                || format!("blob {index}"),
                crc,
                crc32fast::hash(&body[range.clone()]),
            )
            .map_err(|problem| self.file.corrupt(problem))?;
            Ok(range)
        };
        match nearer.and_then(check) {
            Ok(range) => {
                self.checked.set(index, self.count);
                Ok(range)
            }
            // The directory is damaged: the other side's sum may still find the blob. Not
            // marked checked, so every read finds it again the same way.
            Err(error) => self
                .range_from(index, len, !from_start)
                .and_then(check)
                .map_err(|_| error),
        }
    }

    /// Where blob `index` of `len` bytes lies by the lengths summed from the start of its group
    /// (its anchor) or back from the end (the next anchor, or the directory after the last
    /// group), bounds-checked.
    fn range_from(&self, index: usize, len: usize, from_start: bool) -> Result<Range<usize>> {
        let body = self.file.body();
        let group = index / GROUP;
        let lens = |blobs: Range<usize>| -> u64 {
            blobs
                .map(|blob| u64::from(u32_at(body, self.dir_offset + blob * ENTRY_LEN)))
                .sum()
        };
        let anchor = |group: usize| -> u64 {
            if group * GROUP >= self.count {
                self.dir_offset as u64
            } else {
                u64_at(body, self.anchors_offset() + group * 8)
            }
        };
        let offset = if from_start {
            anchor(group).checked_add(lens(group * GROUP..index))
        } else {
            let end = ((group + 1) * GROUP).min(self.count);
            anchor(group + 1).checked_sub(lens(index..end))
        };
        offset
            .and_then(|offset| usize::try_from(offset).ok())
            .and_then(|offset| {
                let end = offset.checked_add(len)?;
                (end <= self.dir_offset).then_some(offset..end)
            })
            .ok_or_else(|| {
                self.file.corrupt(format!(
                    "blob {index} ({len} bytes at {}) is out of bounds",
                    offset.map_or_else(|| "an offset past the end".into(), |o| o.to_string())
                ))
            })
    }

    /// Where the anchors start in the body.
    fn anchors_offset(&self) -> usize {
        self.dir_offset + self.count * ENTRY_LEN
    }

    /// Blob `index` read by `read`, which is told whether the blob's contents already passed
    /// its checks in this process (its CRC is checked regardless): checks that cost more than
    /// the read itself (the postings' bitmap counts) run until a read passes them, as the CRC
    /// does, since a blob's bytes are the same at every later read. A read that fails leaves
    /// the contents unchecked.
    pub fn get_checked<'a, T>(
        &'a self,
        index: usize,
        read: impl FnOnce(&'a [u8], bool) -> Result<T>,
    ) -> Result<T> {
        let blob = self.get(index)?;
        let known = self.contents_checked.is_set(index);
        let value = read(blob, known)?;
        if !known {
            self.contents_checked.set(index, self.count);
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::manifest::FileEntry;
    use std::io::{Seek, SeekFrom, Write};

    fn write(path: &std::path::Path, blobs: &[&[u8]]) -> Footer {
        let mut writer = BlobWriter::create(path, FileKind::Postings).unwrap();
        for blob in blobs {
            writer.push(blob).unwrap();
        }
        writer.finish().unwrap()
    }

    fn open(path: &std::path::Path, footer: Footer) -> BlobFile {
        BlobFile::open(IndexFile::open(path, FileKind::Postings, &FileEntry::from(footer)).unwrap())
            .unwrap()
    }

    /// A blob damaged before its first read is refused; its CRC is checked at that read only,
    /// in each process that opens the file (the files are never rewritten in place).
    #[test]
    fn a_blob_is_checked_at_its_first_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blobs");
        let footer = write(&path, &[b"first blob", b"second blob"]);
        let blobs = open(&path, footer);
        assert_eq!(blobs.get(0).unwrap(), b"first blob");

        // Both blobs damaged on disk (the mapping shares the page cache): the second, not yet
        // read, is refused; the first was checked when it was read.
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.write_all(b"FIRST").unwrap();
        file.seek(SeekFrom::Start(10)).unwrap();
        file.write_all(b"SECOND").unwrap();
        drop(file);
        let error = blobs.get(1).unwrap_err().to_string();
        assert!(error.contains("blob 1 fails its checksum"), "{error}");
        assert_eq!(blobs.get(0).unwrap(), b"FIRST blob");
        assert_eq!(blobs.clone().get(0).unwrap(), b"FIRST blob");
        // A process opening the file again checks it again.
        let error = open(&path, footer).get(0).unwrap_err().to_string();
        assert!(error.contains("blob 0 fails its checksum"), "{error}");
    }

    /// Blobs of many lengths, empty ones included, across three groups of 64 and a part of a
    /// fourth, read back; and with any one byte of the directory or the anchors damaged, every
    /// other blob still reads back (the other side's sum finds it), the damaged entry's own
    /// blob is refused, and nothing panics.
    #[test]
    fn one_damaged_directory_entry_costs_its_own_blob_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blobs");
        let blobs: Vec<Vec<u8>> = (0..200u32)
            .map(|i| (0..(i * 7) % 23).map(|b| (b * 31 + i) as u8).collect())
            .collect();
        let footer = write(&path, &blobs.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let pristine = std::fs::read(&path).unwrap();
        let file = open(&path, footer);
        for (index, blob) in blobs.iter().enumerate() {
            assert_eq!(file.get(index).unwrap(), blob.as_slice());
        }
        let body_len = pristine.len() - crate::format::footer::FOOTER_LEN;
        let dir_offset = u64_at(&pristine, body_len - 8) as usize;
        assert_eq!(dir_offset, blobs.iter().map(Vec::len).sum::<usize>());
        let anchors = dir_offset + blobs.len() * ENTRY_LEN;
        assert_eq!(anchors + 4 * 8 + TRAILER_LEN, body_len, "four anchors");
        for at in dir_offset..anchors + 4 * 8 {
            for flip in [0x01u8, 0x80] {
                let mut damaged = pristine.clone();
                damaged[at] ^= flip;
                std::fs::write(&path, &damaged).unwrap();
                let file = open(&path, footer);
                let own = (at < anchors).then(|| (at - dir_offset) / ENTRY_LEN);
                for (index, blob) in blobs.iter().enumerate() {
                    // Twice: the second read is not told the first one checked it.
                    for _ in 0..2 {
                        match file.get(index) {
                            Ok(read) if Some(index) != own => assert_eq!(read, blob.as_slice()),
                            Ok(read) => panic!("blob {index} read as {read:?}, damaged at {at}"),
                            Err(error) if Some(index) == own => {
                                assert!(error.to_string().contains(&format!("blob {index}")))
                            }
                            Err(error) => panic!("blob {index}, damage at {at}: {error}"),
                        }
                    }
                }
            }
        }
    }

    /// An empty file and one of exactly one group have the anchors they need, and a body that
    /// does not fit its stated count is refused at open.
    #[test]
    fn anchors_fit_the_count() {
        let dir = tempfile::tempdir().unwrap();
        for count in [0usize, 1, 63, 64, 65, 128] {
            let path = dir.path().join(format!("blobs-{count}"));
            let blobs: Vec<Vec<u8>> = (0..count).map(|i| vec![i as u8; i % 5]).collect();
            let footer = write(&path, &blobs.iter().map(Vec::as_slice).collect::<Vec<_>>());
            let file = open(&path, footer);
            assert_eq!(file.len(), count);
            for (index, blob) in blobs.iter().enumerate() {
                assert_eq!(file.get(index).unwrap(), blob.as_slice());
            }
            assert!(file.get(count).is_err());
        }
        // A count one too many for the body: the directory and anchors no longer fit.
        let path = dir.path().join("blobs-overcounted");
        let footer = write(&path, &[b"a".as_slice(); 64]);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - crate::format::footer::FOOTER_LEN - 16;
        bytes[at..at + 8].copy_from_slice(&65u64.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let file = IndexFile::open(&path, FileKind::Postings, &FileEntry::from(footer)).unwrap();
        let error = BlobFile::open(file).err().map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("does not fit")), "refused");
    }

    /// A blob's contents are told checked only after a read that passed: a read that fails
    /// leaves the next read to check again; clones share what was checked, a file opened again
    /// starts afresh.
    #[test]
    fn contents_are_checked_until_a_read_passes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blobs");
        let footer = write(&path, &[b"sound", b"refused"]);
        let blobs = open(&path, footer);
        let read = |blobs: &BlobFile, index: usize| {
            // Like the postings' bitmap counts: the check runs where the contents are not
            // known to have passed it.
            blobs.get_checked(index, |blob, known| match blob {
                b"refused" if !known => Err(blobs.file().corrupt("refused")),
                _ => Ok(known),
            })
        };
        for _ in 0..2 {
            let error = read(&blobs, 1).unwrap_err().to_string();
            assert!(error.contains("refused"), "{error}");
        }
        assert!(!read(&blobs, 0).unwrap());
        assert!(read(&blobs, 0).unwrap());
        assert!(read(&blobs.clone(), 0).unwrap());
        assert!(read(&blobs, 1).is_err());
        assert!(!read(&open(&path, footer), 0).unwrap());
    }
}
