//! The manifest: which files make up the current generation of an index.
//!
//! The body of `MANIFEST` is UTF-8 JSON (so a person can read it) followed by the usual footer:
//!
//! ```json
//! {"formatVersion": 1, "generation": 3, "stem": false, "log": "g000003.log",
//!  "segments": [{"name": "g000003-s0000", "records": 300,
//!                "files": {"terms.fst": {"len": 1234, "crc": 305419896}, …},
//!                "groupLengthSums": [300, 2400, 5100, 0, 9000, 600, 450, 0, 120]}]}
//! ```
//!
//! `groupLengthSums[g]` is the sum over the segment's records of the number of tokens of field
//! group g (stop words included, as the columns' group lengths count them), in the order of
//! [`FieldGroup::ALL`](crate::schema::FieldGroup::ALL): `bm25f` divides it by the live records
//! for its average lengths. A manifest written before it existed lacks it; such a segment is
//! reported damaged (searches scan the records) until the index is rebuilt.
//!
//! Each file entry records the body length and CRC from that file's footer: opening compares
//! them in O(1), which catches files swapped in from another index. The manifest is replaced
//! atomically: written to a temporary file, synced, renamed over `MANIFEST`, and the directory
//! synced.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::format::footer::{verify_body, write_file, FileKind, Footer, FOOTER_LEN};
use crate::schema::GROUP_COUNT;

/// The manifest's file name inside an index directory.
pub const MANIFEST_NAME: &str = "MANIFEST";

/// Length and CRC of one file's body, copied from its footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Body length in bytes.
    pub len: u64,
    /// CRC-32 of the body.
    pub crc: u32,
}

impl From<Footer> for FileEntry {
    fn from(footer: Footer) -> Self {
        FileEntry {
            len: footer.body_len,
            crc: footer.body_crc,
        }
    }
}

/// One immutable segment of the generation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentEntry {
    /// The segment's name: the prefix of its files.
    pub name: String,
    /// How many records it stores.
    pub records: u64,
    /// Its files, by suffix (`terms.fst`, `store`, …).
    pub files: BTreeMap<String, FileEntry>,
    /// Per field group, the sum of the records' group lengths.
    #[serde(
        default,
        rename = "groupLengthSums",
        skip_serializing_if = "Option::is_none"
    )]
    pub group_length_sums: Option<[u64; GROUP_COUNT]>,
}

/// The current generation of an index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// The on-disk format version.
    pub format_version: u32,
    /// Increases by one with every new generation.
    pub generation: u64,
    /// Whether tokens were stemmed (`build --stem`).
    pub stem: bool,
    /// The segments, oldest first.
    pub segments: Vec<SegmentEntry>,
    /// The record log of this generation (appended to by `record`, `feedback`, `delete`).
    pub log: String,
}

impl Manifest {
    /// Reads and fully verifies `dir/MANIFEST`.
    pub fn load(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST_NAME);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::corrupt(
                    &path,
                    "no index here: the manifest is missing (run `reliora build` first)",
                ))
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        let footer = Footer::parse(&bytes, FileKind::Manifest, &path)?;
        let body = &bytes[..bytes.len() - FOOTER_LEN];
        verify_body(body, &footer, &path)?;
        let manifest: Manifest = serde_json::from_slice(body)
            .map_err(|e| Error::corrupt(&path, format!("manifest is not valid: {e}")))?;
        if manifest.format_version != crate::format::footer::FORMAT_VERSION {
            return Err(Error::corrupt(
                &path,
                format!("manifest format version {}", manifest.format_version),
            ));
        }
        Ok(manifest)
    }

    /// Atomically replaces `dir/MANIFEST` with this manifest.
    pub fn store(&self, dir: &Path) -> Result<()> {
        let body = serde_json::to_vec_pretty(self).expect("manifest serializes");
        let tmp = dir.join(format!("{MANIFEST_NAME}.tmp"));
        write_file(&tmp, FileKind::Manifest, &body)?;
        let path = dir.join(MANIFEST_NAME);
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
        sync_dir(dir)
    }

    /// The path of `suffix` in segment `segment`.
    pub fn file_path(dir: &Path, segment: &str, suffix: &str) -> std::path::PathBuf {
        dir.join(format!("{segment}.{suffix}"))
    }
}

/// Fsyncs a directory so a rename in it is durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let handle = File::open(dir).map_err(|e| Error::io(dir, e))?;
    handle.sync_all().map_err(|e| Error::io(dir, e))
}
