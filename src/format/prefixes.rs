//! The prefix file of a segment (`<segment>.prefixes`): per record, a fingerprint of its
//! content prefix as near-duplicate demotion compares it (SPEC §6.2,
//! [`record_prefix`](crate::search::mmr::record_prefix)), so that `decay` can tell which of the
//! records it ranks may repeat one another without reading them.
//!
//! ```text
//! chars     u32 LE: the prefix length, in characters, the fingerprints are of
//! per record, in record order:
//!   u32 LE  the CRC-32 of its prefix's UTF-8 bytes
//! footer    (footer.rs)
//! ```
//!
//! Equal prefixes have equal fingerprints, so records whose fingerprints differ are not near
//! duplicates of each other; records whose fingerprints are equal may be, and their prefixes
//! are read to tell. A segment written before the file existed has none (the manifest does not
//! list it), and its prefixes are read as before.
//!
//! The body is verified against its CRC at the first fingerprint read, once per process (4
//! bytes a record: 4 MB at a million records).

use std::sync::OnceLock;

use crate::error::Result;
use crate::format::directory::FileTarget;
use crate::format::file::IndexFile;
use crate::format::footer::{write_file, FileKind, Footer};
use crate::format::FormatError;

/// The fingerprint of a content prefix.
pub fn fingerprint(prefix: &str) -> u32 {
    crc32fast::hash(prefix.as_bytes())
}

/// Writes the prefix file: the fingerprints of prefixes of `chars` characters, a record each.
pub fn write_prefixes(target: FileTarget, chars: u32, fingerprints: &[u32]) -> Result<Footer> {
    let mut body = Vec::with_capacity(4 + 4 * fingerprints.len());
    body.extend_from_slice(&chars.to_le_bytes());
    for f in fingerprints {
        body.extend_from_slice(&f.to_le_bytes());
    }
    write_file(target, FileKind::Prefixes, &body)
}

/// An opened prefix file.
pub struct Prefixes {
    file: IndexFile,
    chars: usize,
    /// The body's CRC checked, at the first read.
    verified: OnceLock<std::result::Result<(), String>>,
}

impl Prefixes {
    /// Opens the prefix file of a segment of `records` records, checking its length in O(1).
    pub fn open(file: IndexFile, records: u64) -> Result<Prefixes> {
        let body = file.body();
        let expected = 4 + 4 * records;
        if body.len() as u64 != expected {
            return Err(file.corrupt(format!(
                "it holds {} bytes, {records} records take {expected}",
                body.len()
            )));
        }
        let chars = u32::from_le_bytes(body[..4].try_into().expect("4 bytes")) as usize;
        Ok(Prefixes {
            file,
            chars,
            verified: OnceLock::new(),
        })
    }

    /// The prefix length, in characters, the fingerprints are of.
    pub fn chars(&self) -> usize {
        self.chars
    }

    /// The fingerprint of record `doc`'s prefix.
    pub fn get(&self, doc: u32) -> Result<u32> {
        let verified = self.verified.get_or_init(|| {
            self.file
                .verify()
                .map_err(|_| "its body does not match its CRC".to_string())
        });
        if let Err(problem) = verified {
            return Err(self.file.corrupt(problem.clone()));
        }
        let at = 4 + 4 * doc as usize;
        let bytes = (self.file.body().get(at..at + 4)).ok_or_else(|| {
            self.file
                .corrupt(FormatError::from(format!("no record {doc}")))
        })?;
        Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
    }

    /// Every record's fingerprint, in record order.
    pub fn all(&self) -> Result<Vec<u32>> {
        let n = (self.file.body().len() - 4) / 4;
        (0..n as u32).map(|doc| self.get(doc)).collect()
    }

    /// The underlying file.
    pub fn file(&self) -> &IndexFile {
        &self.file
    }
}
