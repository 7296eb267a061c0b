//! The stored records one search has decoded, kept so that a later pass reads them again
//! without decoding: decay's entity check then MMR's content prefix, a phrase checked for
//! several of the query's word pairs, `bm25f`'s first page scored twice (by its pruned top,
//! then by the pipeline).
//!
//! Bounded: at most [`Decoded::RECORDS`] records holding about [`Decoded::BYTES`] bytes (a
//! record may hold 1 MiB); past that, records are decoded again each time they are asked for.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::Result;
use crate::format::codec::StoredRecord;
use crate::record::Record;
use crate::search::{DocRef, Source};

/// The stored records a search has decoded, by where they live.
#[derive(Default)]
pub(crate) struct Decoded(Mutex<Kept>);

/// The records kept, and about how many bytes they hold.
#[derive(Default)]
struct Kept {
    records: HashMap<DocRef, Arc<StoredRecord>>,
    bytes: usize,
}

impl Decoded {
    /// At most this many records are kept (`--candidates` reads at most 500)…
    pub const RECORDS: usize = 512;
    /// …holding at most about this many bytes (records of real text take a few KiB).
    pub const BYTES: usize = 8 << 20;

    /// The record at `doc` if it was decoded and kept.
    pub fn cached(&self, doc: DocRef) -> Option<Arc<StoredRecord>> {
        self.0
            .lock()
            .ok()
            .and_then(|kept| kept.records.get(&doc).cloned())
    }

    /// The record at `doc`, decoded on first use (outside the lock) and kept while the
    /// bounds allow.
    pub fn get(&self, source: &dyn Source, doc: DocRef) -> Result<Arc<StoredRecord>> {
        if let Some(record) = self.cached(doc) {
            return Ok(record);
        }
        let record = Arc::new(source.stored(doc)?);
        let bytes = record_bytes(&record.record);
        if let Ok(mut kept) = self.0.lock() {
            if kept.records.len() < Self::RECORDS && kept.bytes + bytes <= Self::BYTES {
                kept.bytes += bytes;
                kept.records.insert(doc, Arc::clone(&record));
            }
        }
        Ok(record)
    }

    /// How many records are kept, and about how many bytes they hold.
    #[cfg(test)]
    pub fn kept(&self) -> (usize, usize) {
        self.0
            .lock()
            .map(|kept| (kept.records.len(), kept.bytes))
            .unwrap_or_default()
    }
}

/// About the bytes a decoded record holds: its strings', and its unknown fields' as JSON.
fn record_bytes(record: &Record) -> usize {
    let lists = [
        &record.problems,
        &record.failed_attempts,
        &record.warnings,
        &record.tags,
        &record.entities,
    ];
    let texts = [
        &record.title,
        &record.task,
        &record.solution,
        &record.why_it_worked,
        &record.project_context,
        &record.applicability,
        &record.verification,
        &record.memory_type,
        &record.supersedes,
    ];
    let extra: usize = record
        .extra
        .iter()
        .map(|(key, value)| key.len() + value.to_string().len())
        .sum();
    record.id.len()
        + lists
            .iter()
            .flat_map(|l| l.iter())
            .map(String::len)
            .sum::<usize>()
        + texts
            .iter()
            .filter_map(|t| t.as_ref())
            .map(String::len)
            .sum::<usize>()
        + extra
}
