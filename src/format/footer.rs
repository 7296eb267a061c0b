//! The footer every index file ends with, and the writer that must finish it.
//!
//! ```text
//! body (body_len bytes)
//! kind magic    [u8; 4]   which file this is (see FileKind)
//! version       u32 LE    the kind's format version (FileKind::version)
//! body_len      u64 LE    must equal file length − FOOTER_LEN
//! body_crc32    u32 LE    CRC-32 (IEEE) of the body
//! end magic     [u8; 4]   b"RLRA"
//! ```
//!
//! Each kind has its own format version, so a change to one file's layout makes an index written
//! before it read as needing a rebuild while the other kinds keep [`FORMAT_VERSION`].
//!
//! Checking a footer is O(1): magic, version and length. The body CRC is recorded in the
//! manifest, so a file swapped in from another index is caught at open without reading it; the
//! body itself is verified block by block when it is used (see each file's module) and in full by
//! `check`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::bytes::ByteCursor;
use crate::format::directory::{FileTarget, MemoryDirectory};
use crate::format::FormatError;

/// The on-disk format version of the manifest and the record log, and of every file kind whose
/// layout has not changed since ([`FileKind::version`]).
pub const FORMAT_VERSION: u32 = 1;

/// The length of every footer in bytes.
pub const FOOTER_LEN: usize = 24;

const END_MAGIC: [u8; 4] = *b"RLRA";

/// Which index file a footer belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// The manifest naming the current generation.
    Manifest,
    /// An FST dictionary (terms, facets, ids).
    Fst,
    /// A blob file addressed through a dictionary (postings).
    Postings,
    /// The record store.
    Store,
    /// The per-record columns.
    Columns,
    /// The fingerprints of the records' MMR content prefixes (prefixes.rs).
    Prefixes,
}

impl FileKind {
    /// The four magic bytes of this kind.
    pub const fn magic(self) -> [u8; 4] {
        match self {
            FileKind::Manifest => *b"RMAN",
            FileKind::Fst => *b"RFST",
            FileKind::Postings => *b"RPST",
            FileKind::Store => *b"RSTO",
            FileKind::Columns => *b"RCOL",
            FileKind::Prefixes => *b"RPFX",
        }
    }

    /// The format version of this kind written and accepted by this build.
    pub const fn version(self) -> u32 {
        match self {
            // 4: a blob directory of lengths and CRCs with an anchor every 64 blobs, offsets
            // summed (blobs.rs); 3: records compressed with a word-based Huffman model (store.rs,
            // wordcode/); 2 with zstd and a dictionary; 1 stored them raw.
            FileKind::Store => 4,
            // 3: bit-packed rows, each column at the width its values need (columns/); 2 had
            // fixed 120-byte rows; 1 had blocks of 1,024 rows.
            FileKind::Columns => 3,
            FileKind::Prefixes => 1,
            // 5: term frequency blocks with exceptions (postings.rs), a pair's second word and
            // place bit-packed in its partners blob (pairs.rs); 4: the blob directory of
            // the store's version 4 (blobs.rs), and a term's postings with no stored lengths
            // their contents imply, its palette as varint steps (postings.rs); 3: the word-pair file
            // keeps short record lists in its partners blobs and its words last (pairs.rs); 2:
            // one record set per term with a group-mask code per record (postings.rs); 1 had a
            // bitmap per group. The term and facet postings share the kind and kept their layout
            // since 2.
            FileKind::Postings => 5,
            FileKind::Manifest | FileKind::Fst => FORMAT_VERSION,
        }
    }
}

/// A parsed, structurally valid footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// The body length in bytes.
    pub body_len: u64,
    /// The CRC-32 of the body, as written.
    pub body_crc: u32,
}

impl Footer {
    /// Checks the footer at the end of `bytes` (a whole file) for `kind` and returns it.
    ///
    /// The body CRC is *not* verified here; see [`verify_body`].
    pub fn parse(bytes: &[u8], kind: FileKind, file: &Path) -> Result<Footer> {
        Footer::parse_bytes(bytes, kind).map_err(|problem| Error::corrupt(file, problem))
    }

    fn parse_bytes(bytes: &[u8], kind: FileKind) -> std::result::Result<Footer, FormatError> {
        let body = bytes
            .len()
            .checked_sub(FOOTER_LEN)
            .ok_or(FormatError::Truncated {
                need: FOOTER_LEN,
                have: bytes.len(),
            })?;
        let mut footer = ByteCursor::at(bytes, body);
        let magic = footer.array::<4>()?;
        let version = footer.u32()?;
        let body_len = footer.u64()?;
        let body_crc = footer.u32()?;
        if footer.array::<4>()? != END_MAGIC {
            return Err(FormatError::Invalid(
                "no Reliora footer at the end of the file (truncated or not an index file)".into(),
            ));
        }
        if magic != kind.magic() {
            return Err(FormatError::Magic {
                found: magic,
                expected: kind.magic(),
            });
        }
        let supported = kind.version();
        if version != supported {
            return Err(FormatError::Version {
                found: version,
                supported,
            });
        }
        let actual = body as u64;
        if body_len != actual {
            return Err(FormatError::Invalid(format!(
                "footer says the body is {body_len} bytes, the file holds {actual}"
            )));
        }
        Ok(Footer { body_len, body_crc })
    }
}

/// Verifies the CRC of a whole body against its footer.
pub fn verify_body(body: &[u8], footer: &Footer, file: &Path) -> Result<()> {
    FormatError::check_crc(|| "the body".into(), footer.body_crc, crc32fast::hash(body))
        .map_err(|problem| Error::corrupt(file, problem))
}

/// Writes one index file: the body through [`Write`], then [`FileWriter::finish`] appends the
/// footer and syncs. A writer dropped before `finish` leaves a file without a footer, which no
/// reader accepts (in memory, no file at all).
pub struct FileWriter {
    out: Sink,
    path: PathBuf,
    kind: FileKind,
    hasher: crc32fast::Hasher,
    written: u64,
}

/// Where a [`FileWriter`]'s bytes go.
enum Sink {
    /// A file on disk, and whether it is synced when finished.
    Disk(BufWriter<File>, bool),
    Memory(Vec<u8>, Arc<MemoryDirectory>),
}

impl FileWriter {
    /// Creates the file `target` of `kind`; fails if the name exists (a link included), so an
    /// index writer never overwrites a file, and never one outside the index.
    pub fn create(target: impl Into<FileTarget>, kind: FileKind) -> Result<FileWriter> {
        let target = target.into();
        let path = target.path().to_path_buf();
        let out = match target.memory() {
            Some(memory) => Sink::Memory(Vec::new(), Arc::clone(memory)),
            None => {
                let file =
                    crate::format::fsio::create_new(&path).map_err(|e| Error::io(&path, e))?;
                Sink::Disk(BufWriter::with_capacity(1 << 20, file), target.sync())
            }
        };
        Ok(FileWriter {
            out,
            path,
            kind,
            hasher: crc32fast::Hasher::new(),
            written: 0,
        })
    }

    /// Bytes of body written so far: the offset the next write lands at.
    pub fn position(&self) -> u64 {
        self.written
    }

    /// Appends `bytes` to the body.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        match &mut self.out {
            Sink::Disk(out, _) => out.write_all(bytes).map_err(|e| Error::io(&self.path, e)),
            Sink::Memory(out, _) => {
                out.extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// Writes the footer, flushes and fsyncs the file (unless its target is unsynced: see
    /// [`Directory::Unsynced`](crate::format::directory::Directory::Unsynced)). Returns the body
    /// length and CRC, which the manifest records.
    pub fn finish(self) -> Result<Footer> {
        let FileWriter {
            out,
            path,
            kind,
            hasher,
            written,
        } = self;
        let crc = hasher.finalize();
        let mut footer = [0u8; FOOTER_LEN];
        footer[0..4].copy_from_slice(&kind.magic());
        footer[4..8].copy_from_slice(&kind.version().to_le_bytes());
        footer[8..16].copy_from_slice(&written.to_le_bytes());
        footer[16..20].copy_from_slice(&crc.to_le_bytes());
        footer[20..24].copy_from_slice(&END_MAGIC);
        match out {
            Sink::Disk(mut out, sync) => {
                out.write_all(&footer).map_err(|e| Error::io(&path, e))?;
                let file = out
                    .into_inner()
                    .map_err(|e| Error::io(&path, e.into_error()))?;
                if sync {
                    file.sync_all().map_err(|e| Error::io(&path, e))?;
                }
            }
            Sink::Memory(mut bytes, memory) => {
                bytes.extend_from_slice(&footer);
                memory.insert(&path, bytes)?;
            }
        }
        Ok(Footer {
            body_len: written,
            body_crc: crc,
        })
    }
}

/// Writes a whole small file at once.
pub fn write_file(target: impl Into<FileTarget>, kind: FileKind, body: &[u8]) -> Result<Footer> {
    let mut writer = FileWriter::create(target, kind)?;
    writer.write_all(body)?;
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trip_and_every_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let written = write_file(&path, FileKind::Store, b"hello body").unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let footer = Footer::parse(&bytes, FileKind::Store, &path).unwrap();
        assert_eq!(footer, written);
        verify_body(&bytes[..bytes.len() - FOOTER_LEN], &footer, &path).unwrap();

        let wrong_kind = Footer::parse(&bytes, FileKind::Columns, &path).unwrap_err();
        assert!(wrong_kind.to_string().contains("RSTO"), "{wrong_kind}");
        let short = Footer::parse(&bytes[..10], FileKind::Store, &path).unwrap_err();
        assert!(
            short
                .to_string()
                .contains("it ends before byte 24 (it holds 10 bytes)"),
            "{short}"
        );
        let cut = Footer::parse(&bytes[1..], FileKind::Store, &path).unwrap_err();
        assert!(cut.to_string().contains("body is"), "{cut}");
        let mut flipped = bytes.clone();
        flipped[0] ^= 1;
        let footer = Footer::parse(&flipped, FileKind::Store, &path).unwrap();
        let err = verify_body(&flipped[..flipped.len() - FOOTER_LEN], &footer, &path).unwrap_err();
        assert!(
            err.to_string().contains("the body fails its checksum"),
            "{err}"
        );
    }

    #[test]
    fn a_file_of_another_format_version_asks_for_a_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write_file(&path, FileKind::Store, b"body").unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - FOOTER_LEN + 4;
        let version = |v: u32| {
            let mut other = bytes.clone();
            other[at..at + 4].copy_from_slice(&v.to_le_bytes());
            Footer::parse(&other, FileKind::Store, &path)
        };
        let current = FileKind::Store.version();
        assert!(version(current).is_ok());
        let older = version(current - 1).unwrap_err();
        assert!(older.to_string().contains("older build"), "{older}");
        assert!(older.to_string().contains("needs a rebuild"), "{older}");
        let newer = version(current + 1).unwrap_err();
        assert!(newer.to_string().contains("newer build"), "{newer}");
    }

    use crate::format::directory::Directory;

    #[test]
    fn a_memory_file_reads_back_and_never_touches_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        let memory = Directory::Memory(Arc::new(MemoryDirectory::new(dir.path())));
        let target = memory.file("log", "store");
        let footer = write_file(&target, FileKind::Store, b"body").unwrap();
        assert_eq!(footer.body_len, 4);
        assert!(memory.exists(target.path()));
        assert!(!target.path().exists(), "nothing is written to disk");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let mapped = memory.map(target.path()).unwrap();
        assert_eq!(&mapped[..4], b"body");
        let again = write_file(&target, FileKind::Store, b"other");
        assert!(again.is_err(), "a name is written once");
    }
}
