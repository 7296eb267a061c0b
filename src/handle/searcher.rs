//! [`IndexReader`]: an index directory searched again and again by a long-lived process, that sees
//! every change other writers make.
//!
//! An [`Index`] is a snapshot: the generation and the record log as they were when it was
//! opened. A searcher keeps the last snapshot and, before each use, compares it with the
//! directory — the manifest (a new generation after `build` or compaction) and the length of
//! the record log (appended to by `record`, `feedback` and `delete`) — and opens the index
//! again when either moved. So a change acknowledged by any process is visible to the next
//! search (SPEC §8), while an unchanged index costs one small file read and one `stat` per
//! search instead of an open.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::Result;
use crate::format::codec::StoredRecord;
use crate::format::manifest::Manifest;
use crate::index::Index;
use crate::search::request::SearchRequest;
use crate::search::response::SearchResponse;

/// Searches an index directory, reopening it whenever a writer changed it.
///
/// Cheap to share: every method takes `&self`, and concurrent searches run in parallel on the
/// same snapshot.
///
/// # Example
///
/// ```
/// use reliora::{IndexReader, SearchRequest, IndexWriter};
/// use reliora::record::Record;
/// use serde_json::json;
///
/// let dir = tempfile::tempdir()?;
/// let writer = IndexWriter::new(dir.path());
/// writer.record(Record::from_json(&json!({"id": "a", "title": "flaky CI cache"}))?)?;
///
/// let searcher = IndexReader::open(dir.path())?;
/// assert_eq!(searcher.search(&SearchRequest::new("flaky cache"))?.results.len(), 1);
///
/// // A write — from this process or any other — is seen by the next search.
/// writer.record(Record::from_json(&json!({"id": "b", "title": "flaky network test"}))?)?;
/// assert_eq!(searcher.search(&SearchRequest::new("flaky"))?.results.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct IndexReader {
    dir: PathBuf,
    current: Mutex<Option<Arc<Index>>>,
}

impl IndexReader {
    /// A searcher over `dir` that opens the index on first use (so that a directory without an
    /// index yet, which [`IndexWriter::record`](crate::IndexWriter::record) will create, is no error
    /// until searched).
    pub fn new(dir: impl Into<PathBuf>) -> IndexReader {
        IndexReader {
            dir: dir.into(),
            current: Mutex::new(None),
        }
    }

    /// A searcher over `dir`, opening the index now: fails when there is none.
    pub fn open(dir: impl Into<PathBuf>) -> Result<IndexReader> {
        let searcher = IndexReader::new(dir);
        searcher.index()?;
        Ok(searcher)
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The current snapshot of the index, opened again first if the directory changed since
    /// the last one. Holding the returned index keeps that snapshot readable.
    pub fn index(&self) -> Result<Arc<Index>> {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(index) = current.as_ref() {
            if is_current(&self.dir, index) {
                return Ok(Arc::clone(index));
            }
        }
        // Drop the stale snapshot first: its error, if opening fails now, must not linger.
        *current = None;
        let index = Arc::new(Index::open(&self.dir)?);
        *current = Some(Arc::clone(&index));
        Ok(index)
    }

    /// Runs one search on the current snapshot (see [`Index::search`]).
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        self.index()?.search(request)
    }

    /// The live record named by an id or a locator (see [`Index::get`]).
    pub fn get(&self, id_or_locator: &str) -> Result<StoredRecord> {
        self.index()?.get(id_or_locator)
    }
}

/// Whether `index` still shows what `dir` holds: the same manifest, a record log of the length
/// it read, and the settings file it read. (A log with a torn tail, longer than what was sound, reopens every time until
/// the next writer cuts the tail off; that costs time, never a stale answer.)
fn is_current(dir: &Path, index: &Index) -> bool {
    let Ok(manifest) = Manifest::load(dir) else {
        return false;
    };
    if &manifest != index.manifest() {
        return false;
    }
    let log_len = match std::fs::metadata(dir.join(&manifest.log)) {
        Ok(metadata) => metadata.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(_) => return false,
    };
    log_len == index.log_bytes() && index.config_unchanged()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::writer::IndexWriter;
    use crate::record::{Outcome, Record};
    use serde_json::json;

    fn record(id: &str, title: &str) -> Record {
        Record::from_json(&json!({"id": id, "title": title})).unwrap()
    }

    #[test]
    fn a_searcher_sees_records_feedback_deletes_and_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let writer = IndexWriter::new(dir.path());
        let searcher = IndexReader::new(dir.path());
        assert!(searcher.search(&SearchRequest::new("x")).is_err());

        writer
            .record(record("a", "gradle daemon out of memory"))
            .unwrap();
        let first = searcher.index().unwrap();
        assert!(
            Arc::ptr_eq(&first, &searcher.index().unwrap()),
            "unchanged: kept"
        );

        writer
            .record(record("b", "gradle cache corrupted"))
            .unwrap();
        let ids = |s: &IndexReader| -> Vec<String> {
            s.search(&SearchRequest::new("gradle"))
                .unwrap()
                .results
                .into_iter()
                .map(|r| r.id)
                .collect()
        };
        assert_eq!(ids(&searcher), ["a", "b"]);

        writer.feedback("b", Outcome::Success).unwrap();
        assert_eq!(ids(&searcher), ["b", "a"], "feedback moves b up");
        assert_eq!(searcher.get("b").unwrap().record.feedback.success, 1);

        writer.delete("b").unwrap();
        assert_eq!(ids(&searcher), ["a"]);

        writer.compact().unwrap();
        let after = searcher.index().unwrap();
        assert!(!Arc::ptr_eq(&first, &after), "a new generation is opened");
        assert_eq!(ids(&searcher), ["a"]);
        // The old snapshot still answers from what it mapped.
        assert_eq!(
            first.get("a").unwrap().record.title,
            Some("gradle daemon out of memory".to_string())
        );
    }
}
