//! The manifest: which files make up the current generation of an index.
//!
//! The body of `MANIFEST` is UTF-8 JSON (so a person can read it) followed by the usual footer:
//!
//! ```json
//! {"formatVersion": 1, "generation": 3, "stem": false, "log": "g000003.log",
//!  "logId": 1311768467294899695,
//!  "segments": [{"name": "g000003-s0000", "records": 300,
//!                "files": {"terms.fst": {"len": 1234, "crc": 305419896}, …},
//!                "groupLengthSums": [300, 2400, 5100, 0, 9000, 600, 450, 0, 120],
//!                "entityFacets": true}]}
//! ```
//!
//! `groupLengthSums[g]` is the sum over the segment's records of the number of tokens of field
//! group g (stop words included, as the columns' group lengths count them), in the order of
//! [`FieldGroup::ALL`](crate::schema::FieldGroup::ALL): `bm25f` divides it by the live records
//! for its average lengths. A manifest written before it existed lacks it; such a segment is
//! reported damaged (searches scan the records) until the index is rebuilt.
//!
//! `entityFacets: true` says the segment's facets hold, per lowercased entity name, the
//! records naming it (SPEC §5.4's entity check decided without reading them). Absent (false) in
//! a manifest written before they existed: such a segment has no entity facets, and its entity
//! checks read the records as they did; a merge keeps them only when every input has them.
//!
//! Each file entry records the body length and CRC from that file's footer: opening compares
//! them in O(1), which catches files swapped in from another index. `logId` is drawn at random
//! for each generation and repeated in the log's header, which catches a log swapped in from
//! another index (whose generation number may well be the same). The manifest is replaced
//! atomically: written to a temporary file, synced, renamed over `MANIFEST`, and the directory
//! synced.
//!
//! Nothing in a manifest is trusted before it is checked: its size is bounded
//! ([`MAX_MANIFEST_BYTES`]), its footer and CRC verified, and every file name it gives must be a
//! plain name inside the index directory.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::format::footer::{
    verify_body, write_file, FileKind, Footer, FOOTER_LEN, FORMAT_VERSION,
};
use crate::format::FormatError;
use crate::schema::GROUP_COUNT;

/// The manifest's file name inside an index directory.
pub const MANIFEST_NAME: &str = "MANIFEST";

/// The largest manifest read: a generation lists a handful of segments, so anything bigger is
/// not a manifest.
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;

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
    /// Whether its facets hold the records naming each entity (`FACET_ENTITY`); false in a
    /// manifest written before they existed, when the entity check reads such records.
    #[serde(
        default,
        rename = "entityFacets",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub entity_facets: bool,
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
    /// A random number identifying this generation's log; the log's header repeats it. 0 in a
    /// manifest written before it existed, when the generation number serves instead.
    #[serde(default)]
    pub log_id: u64,
}

impl Manifest {
    /// Reads and fully verifies `dir/MANIFEST`.
    pub fn load(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST_NAME);
        let bytes = match read_bounded(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::corrupt(
                    &path,
                    "no index here: the manifest is missing (run `reliora build` first)",
                ))
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::InvalidData | std::io::ErrorKind::InvalidInput
                ) =>
            {
                return Err(Error::corrupt(&path, e.to_string()))
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        let footer = Footer::parse(&bytes, FileKind::Manifest, &path)?;
        let body = &bytes[..bytes.len() - FOOTER_LEN];
        verify_body(body, &footer, &path)?;
        let manifest: Manifest = serde_json::from_slice(body)
            .map_err(|e| Error::corrupt(&path, format!("manifest is not valid: {e}")))?;
        if manifest.format_version != FORMAT_VERSION {
            return Err(Error::corrupt(
                &path,
                FormatError::Version {
                    found: manifest.format_version,
                    supported: FORMAT_VERSION,
                },
            ));
        }
        let names = std::iter::once(manifest.log.as_str())
            .chain(manifest.segments.iter().map(|s| s.name.as_str()));
        let mut seen = std::collections::HashSet::new();
        for name in names {
            if !is_plain_name(name) {
                return Err(Error::corrupt(
                    &path,
                    format!("manifest names {name:?}, which is not a file name of this index"),
                ));
            }
            if !seen.insert(name) {
                return Err(Error::corrupt(
                    &path,
                    format!("manifest names {name:?} more than once"),
                ));
            }
        }
        Ok(manifest)
    }

    /// The number the log's header must carry: [`Manifest::log_id`], or the generation for a
    /// manifest without one.
    pub fn log_key(&self) -> u64 {
        if self.log_id == 0 {
            self.generation
        } else {
            self.log_id
        }
    }

    /// Atomically replaces `dir/MANIFEST` with this manifest.
    ///
    /// When writing or syncing the temporary file fails (a full disk, say), it is removed and
    /// the previous manifest stays in place.
    pub fn store(&self, dir: &Path) -> Result<()> {
        let body = serde_json::to_vec_pretty(self).expect("manifest serializes");
        let tmp = dir.join(format!("{MANIFEST_NAME}.tmp"));
        // A temporary file a crashed writer left, or a link planted in its place: removing a
        // link removes the link, never its target.
        match std::fs::remove_file(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(&tmp, e)),
            _ => {}
        }
        if let Err(error) = write_file(&tmp, FileKind::Manifest, &body) {
            let _ = std::fs::remove_file(&tmp);
            return Err(error);
        }
        let path = dir.join(MANIFEST_NAME);
        if let Err(error) = std::fs::rename(&tmp, &path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io(&path, error));
        }
        sync_dir(dir)
    }

    /// The bytes of every segment file the manifest names.
    pub fn segment_bytes(&self) -> u64 {
        self.segments
            .iter()
            .flat_map(|s| s.files.values())
            .map(|f| f.len)
            .sum()
    }

    /// The path of `suffix` in segment `segment`.
    pub fn file_path(dir: &Path, segment: &str, suffix: &str) -> std::path::PathBuf {
        crate::format::directory::segment_file(dir, segment, suffix)
    }
}

/// Reads a whole regular file of at most [`MAX_MANIFEST_BYTES`], never through a link.
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    crate::format::fsio::read_bounded(path, MAX_MANIFEST_BYTES)
}

/// Whether `name` is a plain file name that stays inside the index directory.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Fsyncs a directory so a rename in it is durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let handle = File::open(dir).map_err(|e| Error::io(dir, e))?;
    handle.sync_all().map_err(|e| Error::io(dir, e))
}
