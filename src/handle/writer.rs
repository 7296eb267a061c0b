//! [`IndexWriter`]: the write side of an index directory — `record`, `feedback`, `delete` and
//! `compact` (SPEC §8) — with the duplicate warnings of `record`, which search the index as it
//! was before the write. The log appends themselves are the index's
//! ([`crate::index::writer`]); this module adds what needs a search.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};
use crate::index::writer::record_with;
use crate::index::Index;
use crate::record::{Outcome, Record};
use crate::search::request::SearchRequest;
use crate::search::standard::MatchLevel;
use crate::text::{self, TextAnalyzer};

pub use crate::index::writer::{
    compact, create_if_missing, delete, feedback, on_lock_wait, CompactReport, DeleteReport,
    FeedbackCounts, FeedbackReport, WriterLock, COMPACT_AFTER_BYTES, COMPACT_AFTER_ENTRIES,
    DEFAULT_SPILL_RECORDS,
};

/// How many duplicate warnings `record` returns at most.
pub const MAX_WARNINGS: usize = 3;

/// A similar live record found when recording (SPEC §8).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DuplicateWarning {
    /// Always `SIMILAR_EXPERIENCE_FOUND`.
    #[serde(skip_deserializing, default = "similar_experience_found")]
    pub code: &'static str,
    /// The similar record's id.
    pub id: String,
    /// Its locator.
    pub locator: String,
    /// strong or moderate.
    pub match_level: MatchLevel,
    /// Its score in the duplicate search.
    pub score: f64,
    /// Its title; `null` when it has none.
    pub title: Option<String>,
}

fn similar_experience_found() -> &'static str {
    "SIMILAR_EXPERIENCE_FOUND"
}

/// What `record` did.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordReport {
    /// The record's id (given or derived).
    pub id: String,
    /// Its position in the log.
    pub locator: String,
    /// Whether it replaced a live record with the same id.
    pub replaced: bool,
    /// Up to three similar records; they never block the save.
    pub warnings: Vec<DuplicateWarning>,
    /// Set when the automatic compaction after the save failed; the save itself stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<String>,
}

/// Adds or replaces one record (SPEC §8), with up to three similar live records as warnings.
/// Durable when this returns. A damaged index is refused (`index_damaged`, naming `reliora
/// salvage`), never repaired by deletion.
pub fn record(dir: &Path, record: Record) -> Result<RecordReport> {
    record_warning_of(dir, record, duplicate_warnings)
}

/// Records `record`, warning of what `check` finds in the index before the write.
fn record_warning_of(
    dir: &Path,
    record: Record,
    check: impl FnOnce(&Index, &Record) -> Result<Vec<DuplicateWarning>>,
) -> Result<RecordReport> {
    let appended = record_with(dir, record, check)?;
    Ok(RecordReport {
        id: appended.id,
        locator: appended.locator,
        replaced: appended.replaced,
        warnings: appended.checked,
        compaction: appended.compaction,
    })
}

/// SPEC §8: the first three strong or moderate records similar to `record`.
fn duplicate_warnings(index: &Index, record: &Record) -> Result<Vec<DuplicateWarning>> {
    let query = format!(
        "{} {} {}",
        record.title.as_deref().unwrap_or(""),
        record.tags.join(" "),
        record.problems.first().map_or("", String::as_str)
    );
    let mut excluded = vec![record.id.clone()];
    excluded.extend(record.supersedes.clone());
    let mut limit = 50;
    loop {
        let mut request = SearchRequest::new(query.clone());
        request.limit = limit;
        request.exclude_ids = excluded.clone();
        let response = match index.search(&request) {
            Ok(r) => r,
            Err(e) if e.code() == ErrorCode::EmptyQuery => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut warnings = Vec::new();
        for result in &response.results {
            let other = index.get(&result.id)?.record;
            let level = duplicate_level(record, &other, result.match_level, index.analyzer());
            if matches!(level, MatchLevel::Strong | MatchLevel::Moderate) {
                warnings.push(DuplicateWarning {
                    code: similar_experience_found(),
                    id: result.id.clone(),
                    locator: result.locator.clone(),
                    match_level: level,
                    score: result.score,
                    title: result.title.clone(),
                });
                if warnings.len() == MAX_WARNINGS {
                    return Ok(warnings);
                }
            }
        }
        if response.results.len() >= response.counts.candidates {
            return Ok(warnings);
        }
        limit *= 4;
    }
}

/// The level of a duplicate candidate (SPEC §8): equal title, solution and applicability make it
/// strong; otherwise a strong one sharing no token of project context and applicability with the
/// new record is only moderate.
pub(crate) fn duplicate_level(
    new: &Record,
    other: &Record,
    level: MatchLevel,
    analyzer: &TextAnalyzer,
) -> MatchLevel {
    let same = |a: Option<&str>, b: Option<&str>| {
        text::phrase(a.unwrap_or("")) == text::phrase(b.unwrap_or(""))
    };
    // Equality needs something to be equal: one of the three non-blank on the new record.
    let compared = [&new.title, &new.solution, &new.applicability];
    let something = compared
        .iter()
        .any(|t| t.as_deref().is_some_and(|t| !t.trim().is_empty()));
    if something
        && same(new.title.as_deref(), other.title.as_deref())
        && same(new.solution.as_deref(), other.solution.as_deref())
        && same(new.applicability.as_deref(), other.applicability.as_deref())
    {
        return MatchLevel::Strong;
    }
    if level == MatchLevel::Strong {
        let context_tokens = |r: &Record| -> Vec<String> {
            let text = format!(
                "{} {}",
                r.project_context.as_deref().unwrap_or(""),
                r.applicability.as_deref().unwrap_or("")
            );
            analyzer
                .tokens(&text, text::route(&text))
                .into_iter()
                .map(|t| t.text)
                .collect()
        };
        let ours = context_tokens(new);
        if !context_tokens(other).iter().any(|t| ours.contains(t)) {
            return MatchLevel::Moderate;
        }
    }
    level
}

/// The write side of an index directory: `record`, `feedback`, `delete` and `compact` (SPEC §8)
/// as methods.
///
/// A writer holds no lock and no open file: each call takes the directory's writer lock, appends
/// and syncs, and returns once the change is durable and visible to every later search, from
/// any process. Any number of writers, in any number of processes, may share a directory.
///
/// # Example
///
/// ```
/// use reliora::record::Outcome;
/// use reliora::{IndexReader, IndexWriter, SearchRequest};
/// use serde_json::json;
///
/// let dir = tempfile::tempdir()?;
/// let writer = IndexWriter::new(dir.path());
/// let report = writer.record_json(&json!({
///     "id": "ci-1",
///     "title": "Docker layer cache misses on every CI run",
///     "solution": "Copy the lockfile and fetch dependencies before copying the sources.",
///     "tags": ["docker", "ci"],
/// }))?;
/// assert_eq!((report.id.as_str(), report.replaced), ("ci-1", false));
///
/// let feedback = writer.feedback("ci-1", Outcome::Success)?;
/// assert_eq!(feedback.feedback.success, 1);
///
/// let searcher = IndexReader::new(dir.path());
/// let response = searcher.search(&SearchRequest::new("docker cache"))?;
/// assert_eq!(response.results[0].id, "ci-1");
///
/// writer.delete("ci-1")?;
/// assert!(searcher.search(&SearchRequest::new("docker cache"))?.results.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct IndexWriter {
    dir: PathBuf,
}

impl IndexWriter {
    /// A writer for the index in `dir`. Nothing is read or created until a write: `record`
    /// into a directory without an index creates one.
    pub fn new(dir: impl Into<PathBuf>) -> IndexWriter {
        IndexWriter { dir: dir.into() }
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Adds or replaces (same id) one validated record; reports up to three similar records
    /// as warnings, which never block the save.
    pub fn record(&self, record: Record) -> Result<RecordReport> {
        self::record(&self.dir, record)
    }

    /// The similar live records `record` would be warned of here (SPEC §8), without writing:
    /// for a collection split into shards, gather them from every shard, keep the first three
    /// by score (descending) then id, and write with [`IndexWriter::record_with_warnings`] to
    /// the shard that owns the id. No index yet: none.
    pub fn similar(&self, record: &Record) -> Result<Vec<DuplicateWarning>> {
        if !self
            .dir
            .join(crate::format::manifest::MANIFEST_NAME)
            .exists()
        {
            return Ok(Vec::new());
        }
        duplicate_warnings(&Index::open(&self.dir)?, record)
    }

    /// Adds or replaces one record as [`IndexWriter::record`] does, reporting `warnings`
    /// (found by [`IndexWriter::similar`], here or elsewhere) instead of searching this index.
    pub fn record_with_warnings(
        &self,
        record: Record,
        warnings: Vec<DuplicateWarning>,
    ) -> Result<RecordReport> {
        record_warning_of(&self.dir, record, |_, _| Ok(warnings))
    }

    /// Validates a record given as a JSON object (SPEC §1) and records it. An invalid one is
    /// [`Error::InvalidRecord`] (code `invalid_record`) located at `record`.
    pub fn record_json(&self, value: &serde_json::Value) -> Result<RecordReport> {
        let record = Record::from_json(value).map_err(|source| Error::InvalidRecord {
            locator: "record".to_string(),
            source,
        })?;
        self.record(record)
    }

    /// Adds one outcome to a live record's feedback; `not_found` when there is no such record.
    pub fn feedback(&self, id: &str, outcome: Outcome) -> Result<FeedbackReport> {
        self::feedback(&self.dir, id, outcome)
    }

    /// Removes a live record from every later search and export; `not_found` when there is no
    /// such record.
    pub fn delete(&self, id: &str) -> Result<DeleteReport> {
        self::delete(&self.dir, id)
    }

    /// Folds the record log into a new generation; results are unchanged.
    pub fn compact(&self) -> Result<CompactReport> {
        self::compact(&self.dir)
    }

    /// Creates an empty index unless the directory holds one; returns whether it did.
    pub fn create_if_missing(&self) -> Result<bool> {
        self::create_if_missing(&self.dir)
    }
}
