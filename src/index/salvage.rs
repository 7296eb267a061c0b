//! `reliora salvage`: every intact record of a damaged index, written into a new generation.
//!
//! Salvage reads what it can and trusts only what checks out: each stored record is decoded
//! on its own (a record failing its checksum is reported, its neighbours kept), and the record
//! log is read entry by entry on both sides of any damage (log.rs resynchronizes on the next
//! sound entry). With the manifest lost, it finds the newest generation whose log exists (a
//! generation's log is created after its segments, so those are complete) and reads that
//! generation's stores by their own footers.
//!
//! The records are replayed as a search would see them — segment records, then the log's
//! records, feedback and deletes in order — and written as a new generation, never in place:
//! the damaged files are left where they are (`check` lists them), so nothing that could still
//! be read by other means is lost.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Serialize;

use crate::error::Result;
use crate::format::codec::{LogEntry, StoredRecord};
use crate::format::log::{read_any_log, read_log};
use crate::format::manifest::Manifest;
use crate::index::files;
use crate::index::segment::Store;
use crate::index::writer::{GenerationWriter, WriterLock};
use crate::record::SourcedRecord;

/// What `salvage` kept and what it could not read.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SalvageReport {
    /// The new generation.
    pub generation: u64,
    /// Live records written into it.
    pub records: usize,
    /// Records read from segment stores.
    pub segment_records: usize,
    /// Sound log entries replayed.
    pub log_entries: usize,
    /// Whether a readable manifest named the files salvaged.
    pub manifest: bool,
    /// Whether the new generation stems tokens.
    pub stem: bool,
    /// Everything that could not be read, naming its file (and record or offset).
    pub unreadable: Vec<String>,
    /// The files salvaged from, left in place and no longer part of the index.
    pub left_in_place: Vec<String>,
}

/// Salvages the index in `dir` (see the module docs). `stem` is used when no manifest says
/// whether the lost index stemmed its tokens.
pub fn salvage(dir: &Path, stem: bool) -> Result<SalvageReport> {
    let _lock = WriterLock::acquire(dir)?;
    let manifest = files::load_manifest(dir);
    let mut unreadable = Vec::new();
    let source = match &manifest {
        Ok(manifest) => Source::named(manifest),
        Err(error) => {
            unreadable.push(error.to_string());
            Source::found(dir)?
        }
    };
    let stem = manifest.as_ref().map_or(stem, |m| m.stem);

    let mut live = Replay::default();
    for segment in &source.segments {
        let path = dir.join(format!("{segment}.store"));
        let store = match &manifest {
            Ok(m) => m
                .segments
                .iter()
                .find(|s| &s.name == segment)
                .map(|entry| Store::open(dir, entry))
                .expect("a named segment"),
            Err(_) => Store::open_unlisted(&path),
        };
        let store = match store {
            Ok(store) => store,
            Err(error) => {
                unreadable.push(error.to_string());
                continue;
            }
        };
        for doc in 0..store.len() {
            match store.get(doc) {
                Ok(stored) => live.put(stored),
                Err(error) => unreadable.push(error.to_string()),
            }
        }
    }
    let segment_records = live.len();
    let log_entries = match &source.log {
        Some(log) => salvage_log(dir, log, &manifest, &mut live, &mut unreadable),
        None => 0,
    };

    let records = live.into_records();
    // Salvage leaves the files it read in place: the new generation deletes nothing.
    let mut writer = GenerationWriter::keeping_previous(dir, stem)?;
    for chunk in records.chunks(crate::index::writer::DEFAULT_SPILL_RECORDS) {
        writer.push_segment(chunk)?;
    }
    let (written, _) = writer.commit()?;
    let left_in_place = files::leftovers(dir, &written)?;
    Ok(SalvageReport {
        generation: written.generation,
        records: records.len(),
        segment_records,
        log_entries,
        manifest: manifest.is_ok(),
        stem,
        unreadable,
        left_in_place,
    })
}

/// Replays every sound entry of the record log `log` into `live`, noting what could not be
/// read; returns how many entries it read.
fn salvage_log(
    dir: &Path,
    log: &str,
    manifest: &Result<Manifest>,
    live: &mut Replay,
    unreadable: &mut Vec<String>,
) -> usize {
    let mut log_entries = 0;
    let path = dir.join(log);
    // Every sound entry, those after the committed length included (a write whose command
    // never returned: keeping it is what retrying it would have done); what the committed
    // length says is reported.
    if let Ok(m) = &manifest {
        match read_log(&path, m.log_key()) {
            Ok(acknowledged) => unreadable.extend(
                acknowledged
                    .damage
                    .iter()
                    .filter(|d| d.len == 0)
                    .map(|d| format!("{}: {}", path.display(), d.problem)),
            ),
            Err(error) => unreadable.push(error.to_string()),
        }
    }
    let read = read_any_log(&path).and_then(|contents| match &manifest {
        Ok(m) if contents.log_id != m.log_key() => Err(crate::Error::corrupt(
            &path,
            "the record log belongs to another index or generation; its entries were not \
             salvaged",
        )),
        _ => Ok(contents),
    });
    match read {
        Ok(contents) => {
            unreadable.extend(contents.damage.iter().map(|d| {
                format!(
                    "{}: {} bytes at offset {}: {}",
                    path.display(),
                    d.len,
                    d.offset,
                    d.problem
                )
            }));
            log_entries = contents.entries.len();
            for (_, entry) in contents.entries {
                live.apply(entry);
            }
        }
        Err(error) => unreadable.push(error.to_string()),
    }
    log_entries
}

/// The segments and log to salvage from.
struct Source {
    segments: Vec<String>,
    log: Option<String>,
}

impl Source {
    fn named(manifest: &Manifest) -> Source {
        Source {
            segments: manifest.segments.iter().map(|s| s.name.clone()).collect(),
            log: Some(manifest.log.clone()),
        }
    }

    /// Without a manifest: the newest generation that has a log, else the newest with a store.
    fn found(dir: &Path) -> Result<Source> {
        let mut generations: BTreeMap<u64, (Vec<String>, Option<String>)> = BTreeMap::new();
        for name in files::index_files(dir)? {
            let generation = files::generation_of(&name).expect("an index file");
            let (segments, log) = generations.entry(generation).or_default();
            if name.ends_with(".log") {
                *log = Some(name);
            } else if let Some(segment) = name.strip_suffix(".store") {
                segments.push(segment.to_string());
            }
        }
        let chosen = generations
            .iter()
            .rev()
            .find(|(_, (_, log))| log.is_some())
            .or_else(|| generations.iter().next_back());
        Ok(match chosen {
            Some((_, (segments, log))) => Source {
                segments: segments.clone(),
                log: log.clone(),
            },
            None => Source {
                segments: Vec::new(),
                log: None,
            },
        })
    }
}

/// The live records as replaying segments and log gives them, in index order.
#[derive(Default)]
struct Replay {
    records: Vec<Option<StoredRecord>>,
    by_id: HashMap<String, usize>,
}

impl Replay {
    fn len(&self) -> usize {
        self.by_id.len()
    }

    /// A record version: replaces any earlier one with its id.
    fn put(&mut self, stored: StoredRecord) {
        if let Some(i) = self.by_id.remove(&stored.record.id) {
            self.records[i] = None;
        }
        self.by_id
            .insert(stored.record.id.clone(), self.records.len());
        self.records.push(Some(stored));
    }

    fn apply(&mut self, entry: LogEntry) {
        match entry {
            LogEntry::Record(stored) => self.put(*stored),
            LogEntry::Feedback { id, outcome } => {
                if let Some(Some(stored)) = self.by_id.get(&id).map(|&i| self.records[i].as_mut()) {
                    stored.record.feedback.add(outcome);
                }
            }
            LogEntry::Delete { id } => {
                if let Some(i) = self.by_id.remove(&id) {
                    self.records[i] = None;
                }
            }
        }
    }

    fn into_records(self) -> Vec<SourcedRecord> {
        self.records
            .into_iter()
            .flatten()
            .map(|s| SourcedRecord {
                record: s.record,
                locator: s.locator,
            })
            .collect()
    }
}
