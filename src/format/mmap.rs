//! Read-only memory maps: the one place Reliora uses `unsafe`.
//!
//! # Safety
//!
//! Mapping a file is `unsafe` because another process could change or truncate it while it is
//! mapped. Reliora only maps index files, which are write-once: a file is fully written, synced
//! and named by a manifest before any reader opens it, is never modified in place afterwards, and
//! is deleted (unlinked) only when no generation names it — unlinking keeps the mapped pages
//! alive. Files that are appended to (the record log) are never mapped.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;

use crate::error::{Error, Result};

/// A whole index file mapped read-only, shared between the structures that read it.
#[derive(Clone)]
pub struct MappedFile {
    bytes: Arc<Bytes>,
    path: Arc<PathBuf>,
}

enum Bytes {
    Mapped(Mmap),
    Empty,
    /// A file of a memory directory (format/directory.rs).
    Memory(Arc<Vec<u8>>),
}

impl MappedFile {
    /// Maps `path` read-only.
    pub fn open(path: &Path) -> Result<MappedFile> {
        let file = crate::format::fsio::open_read(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => Error::corrupt(path, e.to_string()),
            _ => Error::io(path, e),
        })?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let bytes = if len == 0 {
            // Zero-length maps are not portable; an empty file is simply empty.
            Bytes::Empty
        } else {
            // SAFETY: index files are write-once and never modified in place (module docs);
            // the map is read-only and every read is bounds-checked against its length.
            Bytes::Mapped(unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?)
        };
        Ok(MappedFile {
            bytes: Arc::new(bytes),
            path: Arc::new(path.to_path_buf()),
        })
    }

    /// A file held in memory, named `path` in error messages.
    pub fn from_memory(path: &Path, bytes: Arc<Vec<u8>>) -> MappedFile {
        MappedFile {
            bytes: Arc::new(Bytes::Memory(bytes)),
            path: Arc::new(path.to_path_buf()),
        }
    }

    /// The file's path, for error messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Unmaps the pages read so far from this process (the data stays in the page cache; a
    /// later read maps it again). A pass over a large file — merging segments — calls this as
    /// it goes, so the pages it read do not add up in its resident memory.
    pub fn release_pages(&self) {
        #[cfg(unix)]
        if let Bytes::Mapped(map) = &*self.bytes {
            // SAFETY: the map is a read-only shared mapping of a write-once file (module docs):
            // MADV_DONTNEED only drops this process's page-table entries, and the next read of a
            // page faults in the same bytes from the file. No reference into the map becomes
            // invalid. The advice is a hint: failing to take it changes nothing.
            let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
    }

    /// A shared view of `range` of this file.
    pub fn slice(&self, start: usize, end: usize) -> FileSlice {
        assert!(start <= end && end <= self.len(), "slice out of bounds");
        FileSlice {
            file: self.clone(),
            start,
            end,
        }
    }
}

impl Deref for MappedFile {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &*self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Empty => &[],
            Bytes::Memory(bytes) => bytes,
        }
    }
}

/// A cheap, cloneable sub-range of a mapped file (for example an FST body without its footer).
#[derive(Clone)]
pub struct FileSlice {
    file: MappedFile,
    start: usize,
    end: usize,
}

impl AsRef<[u8]> for FileSlice {
    fn as_ref(&self) -> &[u8] {
        &self.file[self.start..self.end]
    }
}

impl Deref for FileSlice {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_ref()
    }
}
