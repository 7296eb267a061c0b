//! Byte layouts of the index files, and the only `unsafe` code (memory maps).
//!
//! An index is a directory:
//!
//! ```text
//! MANIFEST                      the current generation (manifest.rs)
//! <segment>.terms.fst           term → term number (dictionary.rs)
//! <segment>.terms.post          term number → its records, each with a group-mask code and
//!                               term frequencies (blobs.rs, postings.rs, bitpack.rs)
//! <segment>.facets.fst          facet key → facet number: tag phrases, memory types,
//!                               supersedes targets; entity names and the irregular
//!                               records where the manifest says `entityFacets`
//! <segment>.facets.post         facet number → roaring bitmap of records
//! <segment>.ids.fst             record id → record number
//! <segment>.entities.fst        lowercased entity name → records naming it (dictionary.rs)
//! <segment>.store               record number → bincode record, compressed by a word-based
//!                               Huffman model trained per build (store.rs, wordcode/,
//!                               huffman.rs, blobs.rs, codec.rs)
//! <segment>.columns             per-record values for scoring (columns/)
//! <segment>.pairs               frequent words, and the records holding each adjacent pair
//!                               of them (pairs.rs)
//! <segment>.prefixes            per record, a fingerprint of its MMR content prefix
//!                               (prefixes.rs); absent in a segment written before it
//! g<generation>.log             the record log, appended to, never mapped (log.rs); its live
//!                               records are indexed at open into one more segment held in
//!                               memory (directory.rs)
//! ```
//!
//! The manifest also records, per segment, the sum over its records of each field group's
//! length (`groupLengthSums`), so `bm25f` has its average lengths without reading the columns.
//!
//! Every file is written once, ends in a footer (footer.rs), and is checked before use: its
//! integers are read through one cursor (bytes.rs) that checks every read against the bytes'
//! end, and what a check finds wrong is a [`FormatError`] (error.rs), which
//! [`Error::Corrupt`](crate::Error::Corrupt) carries with the file's name.
//! Term keys are the token text; a token that came from a stop word is keyed with a trailing
//! `0xFF` byte (which never occurs in UTF-8), so `english` queries can skip those entries while a
//! prefix scan still finds them for `multilingual` ones.

pub mod bitpack;
pub mod blobs;
pub mod bytes;
pub mod codec;
pub mod columns;
pub mod dictionary;
pub mod directory;
pub mod file;
pub mod footer;
pub mod fsio;
pub mod huffman;
pub mod log;
pub mod manifest;
// The one room for `unsafe`: its module docs state the invariant (write-once files), each
// block its `// SAFETY:` comment.
#[allow(unsafe_code)]
pub mod mmap;
pub mod pairs;
pub mod postings;
pub mod prefixes;
pub mod store;
pub mod wordcode;

pub use crate::error::FormatError;

/// The marker byte appended to the key of a token that came from a stop word.
pub const STOP_MARKER: u8 = 0xFF;

/// Facet key prefix of a tag phrase.
pub const FACET_TAG: &[u8] = b"t\0";
/// Facet key prefix of a memory type.
pub const FACET_TYPE: &[u8] = b"m\0";
/// Facet key prefix of a `supersedes` target id: the records superseding it.
pub const FACET_SUPERSEDES: &[u8] = b"s\0";
/// Facet key prefix of a lowercased entity name: the records naming it in `entities`. Written
/// since the manifest's `entityFacets` (a segment without it has none).
pub const FACET_ENTITY: &[u8] = b"e\0";
/// Facet key of the irregular records: those holding a term outside ASCII or of the longest
/// length (`Segment::irregular`), absent when there are none. Written with `FACET_ENTITY`.
pub const FACET_IRREGULAR: &[u8] = b"i\0";

/// File suffixes a segment may have besides [`SEGMENT_FILES`]: read where the manifest lists
/// them (a segment written before one existed has none).
pub const OPTIONAL_SEGMENT_FILES: [&str; 1] = ["prefixes"];

/// File suffixes of a segment.
pub const SEGMENT_FILES: [&str; 9] = [
    "terms.fst",
    "terms.post",
    "facets.fst",
    "facets.post",
    "ids.fst",
    "store",
    "columns",
    "entities.fst",
    "pairs",
];
