//! # Reliora
//!
//! An embedded search engine for the *experience memory* of AI coding agents: records of a
//! task, the problems met, what solved them, what failed and when it applies — found again in
//! milliseconds, with a score an agent can explain.
//!
//! An index is a directory of immutable, memory-mapped files: an FST term dictionary
//! ([`fst`]), per-field-group postings as roaring bitmaps, a record store (bincode) and
//! per-record columns, named by an atomically replaced manifest. There is no database and no
//! network. The behaviour follows the project's SPEC: tokenization ([`text`]), matching and
//! scoring ([`search`]), and the record format ([`record`]).
//!
//! The main types:
//!
//! - [`Index`]: [`Index::build`] writes a generation from JSON exports, [`Index::open`] maps it
//!   (O(1) work), [`Index::search`] answers a [`SearchRequest`] with a [`SearchResponse`] — the
//!   same structure `reliora search` prints as JSON.
//! - [`Record`]: one experience record, validated.
//! - [`Error`]: one error type; [`Error::code`] gives the SPEC error code.
//!
//! ```
//! use reliora::{BuildOptions, Index, SearchRequest};
//!
//! let dir = tempfile::tempdir()?;
//! let input = dir.path().join("experiences.jsonl");
//! std::fs::write(&input, concat!(
//!     r#"{"id": "rs-1", "title": "Tokio runtime panics inside async drop", "#,
//!     r#""tags": ["rust", "tokio"], "solution": "Spawn the cleanup on a runtime handle."}"#, "\n",
//!     r#"{"id": "py-1", "title": "pytest fixture leaks database connections", "#,
//!     r#""tags": ["python", "pytest"]}"#, "\n",
//! ))?;
//!
//! let index_dir = dir.path().join("index");
//! let options = BuildOptions { inputs: vec![input], ..BuildOptions::default() };
//! let report = Index::build(&index_dir, &options)?;
//! assert_eq!(report.records, 2);
//!
//! let index = Index::open(&index_dir)?;
//! let response = index.search(&SearchRequest::new("tokio runtime panic"))?;
//! assert_eq!(response.results[0].id, "rs-1");
//! assert_eq!(response.backend, "index");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub mod error;
pub mod format;
pub mod index;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod record;
pub mod schema;
pub mod search;
pub mod text;

pub use error::{Error, ErrorCode, Result};
pub use index::searcher::Searcher;
pub use index::writer::{
    CompactReport, DeleteReport, DuplicateWarning, FeedbackReport, RecordReport, Writer,
};
pub use index::{BuildOptions, BuildReport, Index, Stats};
pub use record::{Feedback, Outcome, Record, Timestamp};
pub use schema::FieldGroup;
pub use search::builder::QueryBuilder;
pub use search::request::{Backend, Profile, SearchRequest};
pub use search::response::{Counts, Explain, SearchResponse, SearchResult};
pub use search::standard::MatchLevel;
pub use text::Analyzer;
