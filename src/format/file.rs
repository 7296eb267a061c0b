//! An index file opened for reading: mapped, footer checked, body CRC verifiable on demand.

use std::path::Path;

use crate::error::{Error, Result};
use crate::format::directory::Directory;
use crate::format::footer::{verify_body, FileKind, Footer, FOOTER_LEN};
use crate::format::manifest::FileEntry;
use crate::format::mmap::{FileSlice, MappedFile};
use crate::format::FormatError;

/// A mapped index file whose footer has been checked against the manifest.
#[derive(Clone)]
pub struct IndexFile {
    file: MappedFile,
    footer: Footer,
    kind: FileKind,
}

impl IndexFile {
    /// Maps `path` and checks, in O(1), its footer (magic, version, length) and that its length
    /// and CRC are the ones the manifest recorded — a file swapped in from another index or
    /// generation fails here.
    pub fn open(path: &Path, kind: FileKind, expected: &FileEntry) -> Result<IndexFile> {
        IndexFile::from_mapped(MappedFile::open(path)?, kind, expected)
    }

    /// [`IndexFile::open`] of the file at `path` in `dir` (on disk or in memory).
    pub fn open_in(
        dir: &Directory,
        path: &Path,
        kind: FileKind,
        expected: &FileEntry,
    ) -> Result<IndexFile> {
        IndexFile::from_mapped(dir.map(path)?, kind, expected)
    }

    fn from_mapped(file: MappedFile, kind: FileKind, expected: &FileEntry) -> Result<IndexFile> {
        let path = file.path();
        let footer = Footer::parse(&file, kind, path)?;
        if footer.body_len != expected.len || footer.body_crc != expected.crc {
            return Err(Error::corrupt(
                path,
                format!(
                    "file does not belong to this index: manifest expects {} bytes with CRC {:08x}, \
                     found {} bytes with CRC {:08x}",
                    expected.len, expected.crc, footer.body_len, footer.body_crc
                ),
            ));
        }
        Ok(IndexFile { file, footer, kind })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Unmaps the pages read so far (see [`MappedFile::release_pages`]).
    pub fn release_pages(&self) {
        self.file.release_pages();
    }

    /// The file kind.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// The body (the file without its footer).
    pub fn body(&self) -> &[u8] {
        &self.file[..self.file.len() - FOOTER_LEN]
    }

    /// A shareable view of the body.
    pub fn body_slice(&self) -> FileSlice {
        self.file.slice(0, self.file.len() - FOOTER_LEN)
    }

    /// A shareable view of `range` of the body (which must lie in it).
    pub fn body_range(&self, range: std::ops::Range<usize>) -> FileSlice {
        assert!(
            range.end <= self.file.len() - FOOTER_LEN,
            "range out of the body"
        );
        self.file.slice(range.start, range.end)
    }

    /// Verifies the CRC of the whole body (O(file size)).
    pub fn verify(&self) -> Result<()> {
        self.populate(0..self.body().len());
        verify_body(self.body(), &self.footer, self.path())
    }

    /// Maps `range` of the body in one call before it is read whole, when it spans more than
    /// the pages one fault maps (see [`MappedFile::populate`]).
    pub fn populate(&self, range: std::ops::Range<usize>) {
        const FAULT_AROUND: usize = 64 << 10;
        if range.len() > FAULT_AROUND {
            self.file.populate(range);
        }
    }

    /// A corruption error naming this file: a [`FormatError`], or a description of the
    /// problem.
    pub fn corrupt(&self, problem: impl Into<FormatError>) -> Error {
        Error::corrupt(self.path(), problem)
    }
}

/// For tests of byte layouts that need a file to name in their errors: calls `test` with an
/// empty postings file opened from a temporary directory.
#[cfg(test)]
pub(crate) fn with_empty_file(test: impl FnOnce(&IndexFile)) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("test.post");
    let footer = crate::format::footer::write_file(&path, FileKind::Postings, b"").expect("write");
    let file = IndexFile::open(&path, FileKind::Postings, &FileEntry::from(footer)).expect("open");
    test(&file);
}
