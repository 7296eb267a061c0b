//! The engine's internals — the byte formats, the index files and generations, the search
//! pipeline — public only for the crate's own benches, integration tests and fuzz targets.
//!
//! Not part of the API: anything here may change in any release. Everything a program needs
//! is re-exported at the crate root.

#[path = "format/mod.rs"]
pub mod format;
#[path = "fuzzing.rs"]
pub mod fuzzing;
#[path = "index/mod.rs"]
pub mod index;
#[path = "search/mod.rs"]
pub mod search;
#[path = "work.rs"]
pub mod work;
