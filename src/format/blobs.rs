//! Blob files: numbered byte strings, each with its own CRC. The postings and the record store
//! are blob files.
//!
//! ```text
//! blob 0 | blob 1 | … | blob n−1
//! directory: n entries of { offset u64, len u32, crc32 u32 }   (16 bytes each, LE)
//! count      u64   n
//! dir_offset u64   where the directory starts
//! footer (see footer.rs)
//! ```
//!
//! Reading blob `i` checks its directory entry against the body bounds and its bytes against
//! their CRC, so a damaged blob is reported, never decoded. A blob's CRC is checked the first
//! time a process reads it (the files are never rewritten in place: a blob's bytes are the
//! same at every later read), not at every search; so are the checks of a blob's contents that
//! cost more than reading it (the postings' bitmap counts, [`BlobFile::get_checked`]), at the
//! first read that passes them.

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

const ENTRY_LEN: usize = 16;
const TRAILER_LEN: usize = 16;

/// Writes a blob file, blob after blob.
pub struct BlobWriter {
    out: FileWriter,
    directory: Vec<u8>,
    count: u64,
}

impl BlobWriter {
    /// Creates a blob file of `kind` at `path`.
    pub fn create(path: impl Into<FileTarget>, kind: FileKind) -> Result<BlobWriter> {
        Ok(BlobWriter {
            out: FileWriter::create(path, kind)?,
            directory: Vec::new(),
            count: 0,
        })
    }

    /// Appends the next blob and returns its number.
    pub fn push(&mut self, blob: &[u8]) -> Result<u64> {
        let offset = self.out.position();
        self.out.write_all(blob)?;
        self.directory.extend_from_slice(&offset.to_le_bytes());
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

    /// Writes the directory and the footer and syncs the file.
    pub fn finish(mut self) -> Result<Footer> {
        let dir_offset = self.out.position();
        let directory = std::mem::take(&mut self.directory);
        self.out.write_all(&directory)?;
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
            .and_then(|d| d.checked_add(dir_offset))
            .and_then(|d| d.checked_add(TRAILER_LEN as u64));
        if expected_end != Some(body.len() as u64) {
            return Err(file.corrupt(format!(
                "blob directory of {count} entries at {dir_offset} does not fit the {}-byte body",
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

    /// Where blob `index` lies in the body, once its bounds and CRC are checked.
    fn checked_range(&self, index: usize) -> Result<Range<usize>> {
        if index >= self.count {
            return Err(self
                .file
                .corrupt(format!("blob {index} requested of {}", self.count)));
        }
        let body = self.file.body();
        // Open checked that the directory lies in the body.
        let at = self.dir_offset + index * ENTRY_LEN;
        let offset = u64_at(body, at) as usize;
        let len = u32_at(body, at + 8) as usize;
        let crc = u32_at(body, at + 12);
        let range = offset
            .checked_add(len)
            .filter(|&end| end <= self.dir_offset)
            .map(|end| offset..end)
            .ok_or_else(|| {
                self.file.corrupt(format!(
                    "blob {index} ({len} bytes at {offset}) is out of bounds"
                ))
            })?;
        if !self.checked.is_set(index) {
            self.file.populate(range.clone());
            FormatError::check_crc(
                || format!("blob {index}"),
                crc,
                crc32fast::hash(&body[range.clone()]),
            )
            .map_err(|problem| self.file.corrupt(problem))?;
            self.checked.set(index, self.count);
        }
        Ok(range)
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
