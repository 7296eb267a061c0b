//! The log overlay: what the record log changes on top of the immutable segments.
//!
//! Replaying the log in order gives, per id, its latest state: a record version from the log,
//! a deletion, or feedback added to the version in a segment. Segment records that a later
//! version or a deletion replaced are *dead*. Building the overlay costs time proportional to the
//! log (which compaction keeps bounded), never to the corpus.

use std::collections::HashMap;
use std::sync::OnceLock;

use roaring::RoaringBitmap;

use crate::error::Result;
use crate::format::codec::{LogEntry, StoredRecord};
use crate::index::segment::Segment;
use crate::record::Feedback;

/// The log's changes, resolved against the segments.
#[derive(Default)]
pub(crate) struct Overlay {
    /// Live record versions written to the log, in log order of their latest version, with
    /// feedback recorded after them added.
    pub records: Vec<StoredRecord>,
    /// Id → position in `records`.
    pub by_id: HashMap<String, usize>,
    /// Ids deleted (and not recorded again since).
    pub deleted: HashMap<String, ()>,
    /// Feedback added to segment records, by id.
    pub feedback: HashMap<String, Feedback>,
    /// The same, per segment by record number (the live version of each id).
    pub feedback_docs: Vec<HashMap<u32, Feedback>>,
    /// Per segment: records replaced or deleted.
    pub dead: Vec<RoaringBitmap>,
    /// Entries replayed.
    pub entries: usize,
    /// Bytes of sound log.
    pub bytes: u64,
    /// How many dead segment records name each entity (lowercased), built on first use.
    dead_entities: OnceLock<Result<HashMap<String, u64>, String>>,
}

enum Version {
    /// The segment version, possibly with feedback added.
    Segment(Feedback),
    /// A log version (index into the replayed list).
    Log(usize),
    Deleted,
}

impl Overlay {
    /// Replays `entries` over `segments`.
    pub fn replay(
        entries: &[(u64, LogEntry)],
        segments: &[Segment],
        bytes: u64,
    ) -> Result<Overlay> {
        let count = entries.len();
        let mut versions: HashMap<String, Version> = HashMap::new();
        let mut logged: Vec<StoredRecord> = Vec::new();
        for (_, entry) in entries {
            match entry {
                LogEntry::Record(stored) => {
                    let id = stored.record.id.clone();
                    logged.push(stored.as_ref().clone());
                    versions.insert(id, Version::Log(logged.len() - 1));
                }
                LogEntry::Feedback { id, outcome } => {
                    match versions
                        .entry(id.clone())
                        .or_insert(Version::Segment(Feedback::default()))
                    {
                        Version::Segment(f) => f.add(*outcome),
                        Version::Log(i) => logged[*i].record.feedback.add(*outcome),
                        Version::Deleted => {}
                    }
                }
                LogEntry::Delete { id } => {
                    versions.insert(id.clone(), Version::Deleted);
                }
            }
        }
        let mut overlay = Overlay {
            dead: vec![RoaringBitmap::new(); segments.len()],
            feedback_docs: vec![HashMap::new(); segments.len()],
            entries: count,
            bytes,
            ..Overlay::default()
        };
        let mut live_log: Vec<usize> = Vec::new();
        for (id, version) in &versions {
            match version {
                Version::Segment(f) => {
                    overlay.feedback.insert(id.clone(), *f);
                    for (s, segment) in segments.iter().enumerate() {
                        if let Some(doc) = segment.doc_of_id(id)? {
                            overlay.feedback_docs[s].insert(doc, *f);
                        }
                    }
                    continue;
                }
                Version::Log(i) => live_log.push(*i),
                Version::Deleted => {
                    overlay.deleted.insert(id.clone(), ());
                }
            }
            for (s, segment) in segments.iter().enumerate() {
                if let Some(doc) = segment.doc_of_id(id)? {
                    overlay.dead[s].insert(doc);
                }
            }
        }
        live_log.sort_unstable();
        for i in live_log {
            let stored = logged[i].clone();
            overlay
                .by_id
                .insert(stored.record.id.clone(), overlay.records.len());
            overlay.records.push(stored);
        }
        Ok(overlay)
    }

    /// How many dead records of `segments` name `entity` (lowercased) in their `entities`.
    pub fn dead_naming(&self, segments: &[Segment], entity: &str) -> Result<u64> {
        let counts = self.dead_entities.get_or_init(|| {
            let mut counts: HashMap<String, u64> = HashMap::new();
            for (s, dead) in self.dead.iter().enumerate() {
                for doc in dead {
                    let stored = segments[s].stored(doc).map_err(|e| e.to_string())?;
                    let mut names: Vec<String> = stored
                        .record
                        .entities
                        .iter()
                        .map(|e| e.to_lowercase())
                        .collect();
                    names.sort();
                    names.dedup();
                    for name in names {
                        *counts.entry(name).or_default() += 1;
                    }
                }
            }
            Ok(counts)
        });
        match counts {
            Ok(counts) => Ok(counts.get(entity).copied().unwrap_or(0)),
            Err(problem) => Err(crate::error::Error::corrupt(
                segments
                    .first()
                    .map(|s| s.store.file().path().to_path_buf())
                    .unwrap_or_default(),
                problem.clone(),
            )),
        }
    }

    /// The feedback a segment record has gained in the log.
    pub fn feedback_for(&self, id: &str) -> Option<&Feedback> {
        if self.feedback.is_empty() {
            None
        } else {
            self.feedback.get(id)
        }
    }
}
