//! # Reliora
//!
//! An embedded search engine for the *experience memory* of AI coding agents: records of a
//! task, the problems met, what solved them, what failed and when it applies — found again in
//! milliseconds, with a score an agent can explain.
//!
//! An index is a directory of immutable, memory-mapped files: an FST term dictionary
//! ([`fst`]), postings as one roaring record set per term with a field-group code per record,
//! a record store compressed by a word-based Huffman model, and bit-packed per-record columns,
//! named by an atomically replaced manifest, plus a checksummed record log for writes. There is no database and no
//! network. The behaviour follows the project's SPEC: tokenization ([`text`]), matching and
//! scoring ([`Index::search`]), and the record format ([`record`]).
//!
//! The main types:
//!
//! - [`Index`]: [`Index::build`] writes a generation from JSON exports, [`Index::open`] maps it
//!   (O(1) work), [`Index::search`] answers a [`SearchRequest`] with a [`SearchResponse`] — the
//!   same structure `reliora search` prints as JSON.
//! - [`SearchRequest`], written with [`QueryBuilder`] ([`SearchRequest::builder`]): typed
//!   options — [`Profile`], [`Backend`], limits and counts, filters, [`Timestamp`],
//!   [`RerankWeights`] — validated like the command line's flags, with the same SPEC error
//!   codes. Options that arrive as text (flags, MCP arguments, `--queries` lines) go through
//!   one adapter, [`SearchRequest::set_option`].
//! - [`Profile`]: `standard`, `decay` (salience and time), `recency` (pins) and `bm25f` (term
//!   statistics); [`search_federated`] fuses several indexes; [`eval`] measures relevance on a
//!   BEIR folder.
//! - [`SearchResponse`]: the results with their [`MatchLevel`] and [`ScoreBreakdown`] (the
//!   profile's components as a [`ProfileBreakdown`], then what rerank, supersession and MMR
//!   changed), the [`BackendUsed`], and with `--explain` an [`Explain`] carrying an
//!   [`ExplainStatus`].
//! - [`Record`]: one experience record, validated.
//! - [`Error`]: one error type; [`Error::code`] gives the SPEC error code.
//!
//! For an agent that keeps its memory open while it works (an embedded library, a server) —
//! the names are tantivy's: an [`Index`] is one opened snapshot, an [`IndexReader`] hands out
//! fresh ones, an [`IndexWriter`] writes:
//!
//! - [`IndexReader`]: searches an index directory again and again, reopening it whenever a
//!   writer — in this process or another — changed it, so every acknowledged change is seen.
//! - [`IndexWriter`]: `record`, `feedback`, `delete` and `compact` on a directory (SPEC §8),
//!   each durable when it returns; it answers with [`RecordReport`], [`FeedbackReport`],
//!   [`DeleteReport`] and [`CompactReport`].
//! - [`BuildOptions::progress`]: an [`OnProgress`] callback that receives [`Progress`] reports
//!   during a build (the command line draws its progress bar from them).
//! - `mcp` (feature `mcp`, on by default): the MCP server `reliora mcp` runs, built on the
//!   official Rust SDK; without the feature the library needs no async runtime.
//!
//! Response and report types are `#[non_exhaustive]`: later versions may add fields (as the
//! JSON they serialize to may gain keys) without breaking code that reads them.
//!
//! ```
//! use reliora::{BackendUsed, BuildOptions, Index, Profile, SearchRequest};
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
//! assert_eq!(response.backend, BackendUsed::Index);
//!
//! let request = SearchRequest::builder("tokio runtime panic").profile(Profile::Bm25f).build()?;
//! let response = index.search(&request)?;
//! assert_eq!(response.results[0].id, "rs-1");
//! assert!(response.results[0].score_breakdown.contains_key("bm25f"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! An agent's loop — build, open, search, record what it learned, report how advice worked:
//!
//! ```
//! use reliora::record::Outcome;
//! use reliora::{BuildOptions, ErrorCode, Index, SearchRequest, IndexReader, IndexWriter};
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir()?;
//! let input = dir.path().join("experiences.jsonl");
//! std::fs::write(&input, concat!(
//!     r#"{"id": "ci-1", "title": "Flaky test: port already in use on CI", "#,
//!     r#""solution": "Bind to port 0 and read the port back.", "tags": ["ci", "testing"]}"#, "\n",
//! ))?;
//! let memory = dir.path().join("memory");
//! Index::build(&memory, &BuildOptions { inputs: vec![input], ..BuildOptions::default() })?;
//!
//! // Open once; each search sees the latest writes.
//! let searcher = IndexReader::open(&memory)?;
//! let writer = IndexWriter::new(&memory);
//!
//! // Search before starting, or when an error appears. Options validate like the CLI's flags.
//! let request = SearchRequest::builder("address already in use").tag("ci").limit(5).build()?;
//! let response = searcher.search(&request)?;
//! assert_eq!(response.results[0].id, "ci-1");
//! let bad = SearchRequest::builder("address already in use").limit(0).build();
//! assert_eq!(bad.unwrap_err().code(), ErrorCode::InvalidLimit);
//!
//! // The advice worked: report it.
//! let feedback = writer.feedback("ci-1", Outcome::Success)?;
//! assert_eq!(feedback.feedback.success, 1);
//!
//! // A fix verified for a new problem: record it. Similar records come back as warnings.
//! let report = writer.record_json(&json!({
//!     "title": "Docker build on CI: no space left on device",
//!     "problems": ["write /var/lib/docker/tmp: no space left on device"],
//!     "solution": "docker builder prune --all --force before the build step",
//!     "tags": ["ci", "docker"],
//! }))?;
//! assert!(!report.replaced);
//!
//! let response = searcher.search(&SearchRequest::new("no space left on device"))?;
//! assert_eq!(response.results[0].id, report.id);
//! assert_eq!(searcher.get("ci-1")?.record.feedback.success, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]
// Memory maps are the one `unsafe` code, allowed in `format::mmap` alone.
#![deny(unsafe_code)]

pub mod error;
pub mod eval;
pub mod handle;
#[doc(hidden)]
pub mod internals;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod progress;
pub mod record;
pub mod schema;
pub mod settings;
pub mod text;

pub(crate) use internals::{format, index, search, work};

pub use error::{Error, ErrorCode, FormatError, Result};
pub use handle::searcher::IndexReader;
pub use handle::writer::{
    CompactReport, DeleteReport, DuplicateWarning, FeedbackCounts, FeedbackReport, IndexWriter,
    RecordReport,
};
pub use index::{BuildOptions, BuildReport, FileStats, Index, Shard, SkippedRecord, Stats};
pub use progress::{OnProgress, Progress};
pub use record::{Feedback, LocatedRecord, Outcome, Record, Timestamp};
pub use schema::FieldGroup;
pub use search::breakdown::{
    Bm25fBreakdown, DecayBreakdown, FederatedBreakdown, ProfileBreakdown, RecencyBreakdown,
    RerankBreakdown, ScoreBreakdown, StandardBreakdown,
};
pub use search::builder::QueryBuilder;
pub use search::federated::search_federated;
pub use search::profiles::rerank::RerankWeights;
pub use search::request::{Backend, Profile, SearchRequest};
pub use search::response::{
    BackendUsed, Counts, Explain, ExplainStatus, FilterKind, SearchResponse, SearchResult,
};
pub use search::shards;
pub use search::standard::MatchLevel;
pub use text::Analyzer;
