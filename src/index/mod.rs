//! Indexes: building a generation from records, opening it (memory maps, O(1) checks),
//! and the operations over it — search, show, export, stats and check.

pub(crate) mod build;
pub mod check;
pub(crate) mod config;
pub mod files;
pub(crate) mod merge;
pub(crate) mod overlay;
pub(crate) mod pairs;
pub mod salvage;
pub mod segment;
mod snapshot;
pub mod writer;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::format::codec::StoredRecord;
use crate::format::log::read_log;
use crate::format::manifest::Manifest;
use crate::record::input::{read_inputs_in_batches, FieldMap, SourcedRecord};
use crate::record::Feedback;
use crate::text::TextAnalyzer;

use crate::progress::{OnProgress, ProgressCounter};
use config::IndexConfig;
use overlay::Overlay;
use segment::{Segment, Store};

/// How to build an index.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// JSON array files, JSON Lines files, or directories of `.json`/`.jsonl` files.
    pub inputs: Vec<PathBuf>,
    /// Input key renames (`--field-map SRC=DST`).
    pub field_map: FieldMap,
    /// Skip (and report) invalid records instead of failing.
    pub skip_invalid: bool,
    /// Stem tokens with Snowball English.
    pub stem: bool,
    /// Called as records are indexed; `None` reports nothing.
    pub progress: Option<OnProgress>,
    /// Records per segment (`--segment-records`), the segments kept as written; 0 means one
    /// segment, written in spills of `spill_records` records merged at the end. A build holds
    /// one segment's (or spill's) records and postings in memory at a time.
    pub segment_records: usize,
    /// Records per spill when `segment_records` is 0; 0 means
    /// [`DEFAULT_SPILL_RECORDS`](writer::DEFAULT_SPILL_RECORDS).
    pub spill_records: usize,
    /// Build over an index that holds records written by `record` (they are dropped; the
    /// report says how many). Without it such a build refuses.
    pub replace: bool,
    /// Build one shard of a sharded collection: only the records whose id
    /// [`shard_of`] routes to it. Every shard reads all the inputs, so
    /// duplicate ids (always routed together) and invalid records are found as in one build;
    /// with `skip_invalid`, shard 0 alone reports the records skipped.
    pub shard: Option<Shard>,
}

/// One shard of a collection split `count` ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, from 0.
    pub index: u32,
    /// How many shards.
    pub count: u32,
}

/// Whether the record with this id belongs in `shard` (every record does without one).
fn in_shard(shard: Option<Shard>, id: &str) -> bool {
    shard.is_none_or(|s| shard_of(id, s.count) == s.index)
}

/// The shard of `count` that holds the record with this id: the first eight bytes of the
/// id's SHA-256, big-endian, modulo `count` (stable across versions, platforms and languages).
pub fn shard_of(id: &str, count: u32) -> u32 {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(id.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(first) % u64::from(count.max(1))) as u32
}

/// A record `build --skip-invalid` left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedRecord {
    /// Where it was.
    pub locator: String,
    /// What was wrong.
    pub message: String,
}

impl From<crate::record::input::Skipped> for SkippedRecord {
    fn from(skipped: crate::record::input::Skipped) -> SkippedRecord {
        SkippedRecord {
            locator: skipped.locator,
            message: skipped.error.to_string(),
        }
    }
}

/// What a build did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildReport {
    /// The index directory.
    pub index: PathBuf,
    /// Records indexed.
    pub records: usize,
    /// Records skipped with `--skip-invalid`.
    pub skipped: Vec<SkippedRecord>,
    /// Distinct terms.
    pub terms: usize,
    /// The new generation number.
    pub generation: u64,
    /// Whether tokens were stemmed.
    pub stem: bool,
    /// Bytes of index files written.
    pub bytes: u64,
    /// Records the replaced index held that `record` had written (`build --replace`).
    pub dropped_recorded: u64,
}

/// Where a record lives: a segment and a record number within it (for a scan, segment 0 and
/// the position in the scan).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DocRef {
    /// The segment.
    pub segment: u32,
    /// The record number in the segment.
    pub doc: u32,
}

impl BuildReport {
    /// The report of a build that wrote `manifest`'s generation (dropping no recorded record).
    fn of(
        dir: &Path,
        manifest: &Manifest,
        records: usize,
        skipped: Vec<SkippedRecord>,
        terms: usize,
    ) -> BuildReport {
        BuildReport {
            index: dir.to_path_buf(),
            records,
            skipped,
            terms,
            generation: manifest.generation,
            stem: manifest.stem,
            bytes: manifest.segment_bytes(),
            dropped_recorded: 0,
        }
    }
}

/// An opened index: a read-only snapshot of memory-mapped segments and the record log's
/// changes over them, ready to search (`search` runs requests against it).
pub struct Index {
    dir: PathBuf,
    manifest: Manifest,
    /// The generation's segments, then (when the log holds live records) the log's records
    /// indexed as one more segment in memory: searches read them all alike.
    segments: Vec<Segment>,
    /// How many of `segments` are the generation's files on disk.
    disk_segments: usize,
    /// Set when some segment file failed its checks: searches then scan these stores.
    damage: Option<(Vec<Store>, Error)>,
    /// Damage found in the record log (file, problem): searches answer from every sound entry
    /// with a notice, writers refuse.
    log_damage: Option<(PathBuf, String)>,
    analyzer: TextAnalyzer,
    generation_key: String,
    /// What the record log changed since the segments were written.
    overlay: Overlay,
    /// `supersededBy` by id, computed on first use (see [`Index::superseders`]).
    superseders: OnceLock<HashMap<String, String>>,
    /// Per segment, the least and the most each feedback count of its records can be
    /// (computed on first use, see [`Index::feedback_bounds`]).
    feedback_bounds: OnceLock<Vec<(Feedback, Feedback)>>,
    /// The directory's settings file, read at open, and its stamp before it was read.
    config: IndexConfig,
    config_stamp: Option<(u64, Option<std::time::SystemTime>)>,
}

/// Where a build first saw an id it meets again.
enum FirstSeen {
    /// In the spill being read: that record's locator.
    Read(String),
    /// In a spill handed to the segment writer: the record's position in the build, whose
    /// locator is read back once the writer has stopped.
    Written(u64),
}

impl Index {
    /// Builds a new index generation in `dir` from the inputs of `options`.
    ///
    /// Input is read a batch at a time and written a segment (or spill) at a time, a thread
    /// writing each while the next is read, so memory stays bounded whatever the corpus size
    /// (JSON Lines input; a JSON array file is read whole). The previous
    /// generation, if any, stays readable until the new manifest replaces it; a build that
    /// fails removes what it wrote.
    pub fn build(dir: &Path, options: &BuildOptions) -> Result<BuildReport> {
        let (per_segment, merge) = match (options.segment_records, options.spill_records) {
            (0, 0) => (writer::DEFAULT_SPILL_RECORDS, true),
            (0, spill) => (spill, true),
            (n, _) => (n, false),
        };
        let dropped_recorded = check_build_target(dir, options.replace)?;
        let created = !dir.exists();
        let built =
            Index::build_streaming(dir, options, per_segment, merge).map(|report| BuildReport {
                dropped_recorded,
                ..report
            });
        if built.is_err() && created {
            // Nothing of a failed build stays behind, not even the directory it made.
            let _ = std::fs::remove_dir_all(dir);
        }
        built
    }

    fn build_streaming(
        dir: &Path,
        options: &BuildOptions,
        per_segment: usize,
        merge: bool,
    ) -> Result<BuildReport> {
        files::create_index_dir(dir)?;
        let _lock = writer::WriterLock::acquire(dir)?;
        let bar = (options.progress.clone()).map(|callback| ProgressCounter::new(callback, None));
        let writer = writer::GenerationWriter::new(dir, options.stem, merge, bar.as_ref())?;
        // Every id seen, with its position in the build (segment-major), for duplicates.
        let mut ids: HashMap<Box<str>, u64> = HashMap::new();
        let mut pending: Vec<SourcedRecord> = Vec::new();
        // Records handed to the segment writer.
        let mut written = 0u64;
        let mut skipped = Vec::new();
        // A duplicate id stops the writing, not the reading: an invalid record later in the
        // input is still reported first, as it would be had the whole input been read first.
        let mut duplicate: Option<(Box<str>, FirstSeen, String)> = None;
        // A thread writes each spill while the next one is read and parsed: the serial parts of
        // one (inversion routing, dictionaries, files) overlap the parallel parts of the other.
        // The channel holds no spill: the reader waits for the writer to take one, so at most
        // two spills are in memory.
        let (read, writer, wrote) = std::thread::scope(|scope| {
            let (spills, received) = std::sync::mpsc::sync_channel::<Vec<SourcedRecord>>(0);
            let background = scope.spawn(move || {
                let mut writer = writer;
                let wrote = received
                    .into_iter()
                    .try_for_each(|spill| writer.push_segment(&spill));
                (writer, wrote)
            });
            // The writer stopped (it returns its error when joined).
            let stopped = || Error::io(dir, std::io::Error::other("the segment writer stopped"));
            let read = read_inputs_in_batches(
                &options.inputs,
                &options.field_map,
                options.skip_invalid,
                |batch| {
                    if options.shard.is_none_or(|shard| shard.index == 0) {
                        skipped.extend(batch.skipped.into_iter().map(SkippedRecord::from));
                    }
                    for r in batch.records {
                        if duplicate.is_some() || !in_shard(options.shard, &r.record.id) {
                            continue;
                        }
                        if let Some(found) = first_seen(&mut ids, &r, written, &pending) {
                            duplicate = Some((r.record.id.as_str().into(), found, r.locator));
                            continue;
                        }
                        pending.push(r);
                        if pending.len() == per_segment {
                            written += pending.len() as u64;
                            let spill = std::mem::take(&mut pending);
                            spills.send(spill).map_err(|_| stopped())?;
                        }
                    }
                    Ok(())
                },
            );
            let read = read.and_then(|()| {
                if duplicate.is_none() && !pending.is_empty() {
                    written += pending.len() as u64;
                    spills
                        .send(std::mem::take(&mut pending))
                        .map_err(|_| stopped())?;
                }
                Ok(())
            });
            drop(spills);
            let (writer, wrote) = background
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (read, writer, wrote)
        });
        // The writer's error first: it stopped the reading.
        wrote?;
        read?;
        if let Some(duplicate) = duplicate {
            return Err(duplicate_error(&writer, per_segment, duplicate)?);
        }
        drop(pending);
        let (manifest, terms) = writer.commit()?;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        Ok(BuildReport::of(
            dir,
            &manifest,
            written as usize,
            skipped,
            terms,
        ))
    }

    /// Builds a new index generation in `dir` from already validated records, replacing what
    /// the directory held (taking the writer lock while it does).
    pub fn build_from_records(
        dir: &Path,
        records: Vec<SourcedRecord>,
        options: &BuildOptions,
    ) -> Result<BuildReport> {
        let stem = options.stem;
        let mut first_seen: HashMap<&str, &str> = HashMap::with_capacity(records.len());
        for r in &records {
            if let Some(first) = first_seen.insert(&r.record.id, &r.locator) {
                return Err(Error::DuplicateId {
                    id: r.record.id.clone(),
                    first: first.to_string(),
                    second: r.locator.clone(),
                });
            }
        }
        drop(first_seen);
        let dropped_recorded = check_build_target(dir, true)?;
        files::create_index_dir(dir)?;
        let _lock = writer::WriterLock::acquire(dir)?;
        let bar = (options.progress.clone())
            .map(|callback| ProgressCounter::new(callback, Some(records.len() as u64)));
        let (manifest, terms) = writer::write_generation(dir, &records, stem, bar.as_ref())?;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        Ok(BuildReport {
            dropped_recorded,
            ..BuildReport::of(dir, &manifest, records.len(), Vec::new(), terms)
        })
    }

    /// Opens the index in `dir`: reads the manifest and maps every file, checking footers,
    /// lengths and CRCs recorded in the manifest — O(1) per file, nothing proportional to the
    /// corpus. A damaged segment file does not fail the open: searches then fall back to
    /// scanning the stored records (or fail with `--backend index`).
    pub fn open(dir: &Path) -> Result<Index> {
        // A writer may replace the generation between our reading the manifest and opening its
        // files; then the manifest has moved on and we open the new generation instead.
        // Damage found while a compaction deleted the old generation's files under us is no
        // damage: whatever the open found, a manifest that moved on means open again.
        let mut attempts = 0;
        loop {
            let tried = files::load_manifest(dir)?;
            let opened = Index::open_generation(dir, tried.clone());
            let damaged = match &opened {
                Ok(index) => index.damage.is_some() || index.log_damage.is_some(),
                Err(_) => true,
            };
            if damaged && attempts < 16 && Manifest::load(dir).is_ok_and(|now| now != tried) {
                attempts += 1;
                continue;
            }
            return opened;
        }
    }

    fn open_generation(dir: &Path, manifest: Manifest) -> Result<Index> {
        let mut segments = Vec::with_capacity(manifest.segments.len());
        let mut damage = None;
        for entry in &manifest.segments {
            match Store::open(dir, entry).and_then(|store| Segment::open(dir, entry, store)) {
                Ok(segment) => segments.push(segment),
                Err(error) => {
                    damage = Some(error);
                    break;
                }
            }
        }
        let log_path = dir.join(&manifest.log);
        let log = read_log(&log_path, manifest.log_key())?;
        let log_damage = match log.damage_error(&log_path) {
            Some(Error::Corrupt { file, problem }) => Some((file, problem.to_string())),
            _ => None,
        };
        // Replaying the log reads ids, facets and columns: damage found there degrades too.
        let replayed = match damage {
            None => Overlay::replay(&log.entries, &segments, log.valid_len),
            Some(error) => Err(error),
        };
        let segment_failed = segments.len() < manifest.segments.len();
        let (overlay, damage) = match replayed {
            Ok(overlay) => (overlay, None),
            Err(error) if segment_failed || matches!(error, Error::Corrupt { .. }) => {
                let stores = manifest
                    .segments
                    .iter()
                    .map(|entry| Store::open(dir, entry))
                    .collect::<Result<Vec<_>>>()
                    .map_err(|e| no_scan_possible(e, Some(&error)))?;
                segments.clear();
                (
                    Overlay::replay(&log.entries, &[], log.valid_len)?,
                    Some((stores, error)),
                )
            }
            Err(other) => return Err(other),
        };
        let disk_segments = segments.len();
        let mut overlay = overlay;
        if damage.is_none() && !overlay.records.is_empty() {
            segments.push(log_segment(dir, &manifest, &overlay.records)?);
            overlay.dead.push(roaring::RoaringBitmap::new());
            overlay.feedback_docs.push(HashMap::new());
        }
        let generation_key = {
            let mut hasher = Sha256::new();
            hasher.update(serde_json::to_vec(&manifest).expect("manifest serializes"));
            hasher.update(log.valid_len.to_le_bytes());
            hasher.update(
                dir.canonicalize()
                    .unwrap_or_else(|_| dir.to_path_buf())
                    .to_string_lossy()
                    .as_bytes(),
            );
            format!("{:x}", hasher.finalize())
        };
        Ok(Index {
            dir: dir.to_path_buf(),
            analyzer: TextAnalyzer::new(manifest.stem),
            manifest,
            segments,
            disk_segments,
            damage,
            log_damage,
            generation_key,
            overlay,
            superseders: OnceLock::new(),
            feedback_bounds: OnceLock::new(),
            config_stamp: config::config_stamp(dir),
            config: IndexConfig::load(dir),
        })
    }

    /// SPEC §6.1 `supersededBy` of every superseded id: the smallest id among the live records
    /// naming it in `supersedes`, from the supersedes facets of every segment (less the records
    /// the log replaced; the log's records are a segment). Computed on first use, in time proportional to
    /// the records that supersede another, not to the corpus; segments written apart (a
    /// spilling build) need no shared column for it.
    pub(crate) fn superseders(&self) -> Result<&HashMap<String, String>> {
        if let Some(map) = self.superseders.get() {
            return Ok(map);
        }
        let mut map: HashMap<String, String> = HashMap::new();
        let mut offer = |target: &str, id: &str| match map.get_mut(target) {
            Some(smallest) if id.as_bytes() < smallest.as_bytes() => *smallest = id.to_string(),
            Some(_) => {}
            None => {
                map.insert(target.to_string(), id.to_string());
            }
        };
        for (s, segment) in self.segments.iter().enumerate() {
            for (target, docs) in segment.supersedes_facets()? {
                for doc in docs - &self.overlay.dead[s] {
                    offer(&target, segment.columns.id(doc)?);
                }
            }
        }
        Ok(self.superseders.get_or_init(|| map))
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest of the opened generation.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The problem that makes searches fall back to a scan, if any.
    pub fn damage(&self) -> Option<&Error> {
        self.damage.as_ref().map(|(_, e)| e)
    }

    /// Damage found in the record log, if any: the entries on both sides of it are read, and
    /// writers refuse until `reliora salvage` rebuilds the index.
    pub fn log_damage(&self) -> Option<Error> {
        self.log_damage
            .as_ref()
            .map(|(file, problem)| Error::corrupt(file, problem))
    }

    /// The notice of a search over a damaged log.
    pub(crate) fn log_damage_notice(&self) -> Option<String> {
        self.log_damage().map(|damage| {
            format!(
                "record log damaged, answered from every sound entry: {damage}; run `reliora \
                 salvage` to rebuild every intact record into a new generation"
            )
        })
    }

    fn stores(&self) -> Vec<&Store> {
        match &self.damage {
            Some((stores, _)) => stores.iter().collect(),
            None => self.disk_segments().iter().map(|s| &s.store).collect(),
        }
    }

    /// Every live record, decoded, in index order: the segments' records that the log did not
    /// replace or delete (with feedback the log added), then the log's records.
    pub fn all_records(&self) -> Result<Vec<StoredRecord>> {
        let mut out = Vec::new();
        for store in self.stores() {
            let decoded = (0..store.len())
                .into_par_iter()
                .map(|doc| store.get(doc))
                .collect::<Result<Vec<_>>>()?;
            for mut stored in decoded {
                let id = stored.record.id.as_str();
                if self.overlay.by_id.contains_key(id) || self.overlay.deleted.contains_key(id) {
                    continue;
                }
                if let Some(added) = self.overlay.feedback_for(id) {
                    stored.record.feedback.merge(added);
                }
                out.push(stored);
            }
        }
        out.extend(self.overlay.records.iter().cloned());
        Ok(out)
    }

    /// The live record with this id.
    pub(crate) fn find(&self, id: &str) -> Result<Option<DocRef>> {
        if self.overlay.deleted.contains_key(id) {
            return Ok(None);
        }
        for (s, segment) in self.segments.iter().enumerate().rev() {
            if let Some(doc) = segment.doc_of_id(id)? {
                if !self.overlay.dead[s].contains(doc) {
                    return Ok(Some(DocRef {
                        segment: s as u32,
                        doc,
                    }));
                }
            }
        }
        Ok(None)
    }

    /// The live record at `doc`, with the feedback the log added.
    pub(crate) fn stored_head(
        &self,
        doc: DocRef,
        content_bytes: usize,
    ) -> Result<crate::format::codec::StoredHead> {
        self.segments[doc.segment as usize].stored_head(doc.doc, content_bytes)
    }

    /// Whether `test` holds for the searchable text of the record at `doc`, read in place
    /// (`Store::test_text`); the log's feedback is not part of it.
    pub(crate) fn test_text(
        &self,
        doc: DocRef,
        test: &dyn Fn(&crate::format::codec::RecordText<'_>) -> bool,
    ) -> Result<bool> {
        self.segments[doc.segment as usize].test_text(doc.doc, test)
    }

    pub(crate) fn stored(&self, doc: DocRef) -> Result<StoredRecord> {
        let mut stored = self.segments[doc.segment as usize].stored(doc.doc)?;
        if let Some(added) = self.overlay.feedback_for(&stored.record.id) {
            stored.record.feedback.merge(added);
        }
        Ok(stored)
    }

    /// The live record with this id, if any. When the index is damaged the stored records are
    /// scanned instead.
    pub fn live_record(&self, id: &str) -> Result<Option<StoredRecord>> {
        let scan = || Ok(self.all_records()?.into_iter().find(|r| r.record.id == id));
        if self.damage.is_some() {
            return scan();
        }
        match self
            .find(id)
            .and_then(|doc| doc.map(|d| self.stored(d)).transpose())
        {
            Err(Error::Corrupt { .. }) => scan(),
            other => other,
        }
    }

    /// The live stored record named by an id or a locator. When the index is damaged the
    /// stored records are scanned instead.
    pub fn get(&self, id_or_locator: &str) -> Result<StoredRecord> {
        let scan = || {
            self.all_records()?
                .into_iter()
                .find(|r| r.record.id == id_or_locator || r.locator == id_or_locator)
                .ok_or_else(|| Error::NotFound(id_or_locator.to_string()))
        };
        if self.damage.is_some() {
            return scan();
        }
        match self.get_indexed(id_or_locator) {
            Err(Error::Corrupt { .. }) => scan(),
            other => other,
        }
    }

    fn get_indexed(&self, id_or_locator: &str) -> Result<StoredRecord> {
        if let Some(doc) = self.find(id_or_locator)? {
            return self.stored(doc);
        }
        for (s, segment) in self.segments.iter().enumerate().rev() {
            if let Some(doc) = segment.doc_of_locator(id_or_locator)? {
                if !self.overlay.dead[s].contains(doc) {
                    return self.stored(DocRef {
                        segment: s as u32,
                        doc,
                    });
                }
            }
        }
        Err(Error::NotFound(id_or_locator.to_string()))
    }

    /// How many live records were written by `record` (their locator is a log position), not
    /// built from an input.
    pub fn recorded_records(&self) -> Result<u64> {
        if self.damage.is_some() {
            let records = self.all_records()?;
            return Ok(records
                .iter()
                .filter(|r| files::is_log_locator(&r.locator))
                .count() as u64);
        }
        let mut recorded = 0;
        for (s, segment) in self.segments.iter().enumerate() {
            let dead = &self.overlay.dead[s];
            segment
                .ids
                .for_each_with_prefix(&[crate::format::STOP_MARKER, b'g'], |key, doc| {
                    let locator = String::from_utf8_lossy(&key[1..]);
                    if files::is_log_locator(&locator) && !dead.contains(doc as u32) {
                        recorded += 1;
                    }
                })?;
        }
        Ok(recorded)
    }

    /// Writes every live record as JSON Lines; returns how many.
    pub fn export(&self, out: &mut dyn Write, path: &Path) -> Result<usize> {
        let records = self.all_records()?;
        for stored in &records {
            let line = serde_json::to_string(&stored.record.to_json()).expect("records serialize");
            writeln!(out, "{line}").map_err(|e| Error::io(path, e))?;
        }
        out.flush().map_err(|e| Error::io(path, e))?;
        Ok(records.len())
    }

    /// Counts and sizes.
    pub fn stats(&self) -> Result<Stats> {
        let mut stats = Stats {
            index: self.dir.clone(),
            generation: self.manifest.generation,
            format_version: self.manifest.format_version,
            stem: self.manifest.stem,
            segments: self.manifest.segments.len(),
            records: self
                .manifest
                .segments
                .iter()
                .map(|s| s.records)
                .sum::<u64>()
                - self.overlay.dead.iter().map(|d| d.len()).sum::<u64>()
                + self.overlay.records.len() as u64,
            log_entries: self.overlay.entries,
            log_bytes: self.overlay.bytes,
            terms: 0,
            bytes: 0,
            files: Vec::new(),
            damaged: self.damage.as_ref().map(|(_, e)| e.to_string()),
        };
        for segment in &self.manifest.segments {
            for (suffix, file) in &segment.files {
                stats.bytes += file.len;
                stats.files.push(FileStats {
                    name: format!("{}.{suffix}", segment.name),
                    bytes: file.len,
                });
            }
        }
        for segment in self.disk_segments() {
            match segment.term_count() {
                Ok(terms) => stats.terms += terms,
                Err(error) => {
                    stats.damaged.get_or_insert_with(|| error.to_string());
                }
            }
        }
        if self.damage.is_some() {
            // Without the ids the replaced records are not known: count the live ones.
            stats.records = self.all_records()?.len() as u64;
        }
        Ok(stats)
    }
}

impl Index {
    /// The generation's segments on disk (without the log's).
    fn disk_segments(&self) -> &[Segment] {
        &self.segments[..self.disk_segments]
    }
}

/// The log's live records (with the feedback logged after them) indexed as a segment in
/// memory, so searches read them as they read the generation's segments. Its files are named
/// under the index directory but never written there.
fn log_segment(dir: &Path, manifest: &Manifest, records: &[StoredRecord]) -> Result<Segment> {
    use crate::format::directory::{Directory, MemoryDirectory};
    let memory = Directory::Memory(std::sync::Arc::new(MemoryDirectory::new(dir)));
    let name = format!("{} in memory", manifest.log);
    let written = build::write_segment(
        &memory,
        &name,
        records,
        &TextAnalyzer::new(manifest.stem),
        &mut build::BuildShared::uncompressed(),
        None,
    )?;
    let store = Store::open_in(&memory, &written.entry)?;
    Segment::open_in(&memory, &written.entry, store)
}

/// The error of the id a streaming build met twice (the second time at `second`).
fn duplicate_error(
    writer: &writer::GenerationWriter<'_>,
    per_segment: usize,
    (id, first, second): (Box<str>, FirstSeen, String),
) -> Result<Error> {
    let first = match first {
        FirstSeen::Read(locator) => locator,
        FirstSeen::Written(at) => writer.locator(
            (at / per_segment as u64) as usize,
            (at % per_segment as u64) as u32,
        )?,
    };
    Ok(Error::DuplicateId {
        id: id.into(),
        first,
        second,
    })
}

/// Notes the id of `r`, the next record of a build after `written` records handed to the
/// segment writer and those `pending`; returns where the id was first seen when it was.
fn first_seen(
    ids: &mut HashMap<Box<str>, u64>,
    r: &SourcedRecord,
    written: u64,
    pending: &[SourcedRecord],
) -> Option<FirstSeen> {
    let position = written + pending.len() as u64;
    match ids.entry(r.record.id.as_str().into()) {
        std::collections::hash_map::Entry::Occupied(first) => {
            let first = *first.get();
            Some(match first.checked_sub(written) {
                Some(i) => FirstSeen::Read(pending[i as usize].locator.clone()),
                None => FirstSeen::Written(first),
            })
        }
        std::collections::hash_map::Entry::Vacant(slot) => {
            slot.insert(position);
            None
        }
    }
}

/// What a build may do in `dir`: a new or empty directory, or an index that holds no record
/// written by `record` (with `replace`, any index: returns how many such records it drops).
/// A non-empty directory that is not an index is refused, as is an index whose manifest is
/// lost (`reliora salvage` recovers it) unless `replace` is given.
fn check_build_target(dir: &Path, replace: bool) -> Result<u64> {
    if std::fs::symlink_metadata(dir).is_err() {
        return Ok(0);
    }
    let refuse = |message: String| Err(Error::query(crate::ErrorCode::InvalidOption, message));
    if !dir.is_dir() {
        return refuse(format!("--index {}: not a directory", dir.display()));
    }
    if std::fs::symlink_metadata(dir.join(crate::format::manifest::MANIFEST_NAME)).is_ok() {
        let recorded = Index::open(dir).and_then(|index| index.recorded_records());
        return match recorded {
            Ok(0) => Ok(0),
            Ok(n) if replace => Ok(n),
            Ok(n) => refuse(format!(
                "--index {} holds {n} records written by `reliora record` that are in no input; \
                 a build would drop them — run `reliora export` to keep them, or build \
                 --replace to drop them",
                dir.display()
            )),
            Err(_) if replace => Ok(0),
            Err(error) => refuse(format!(
                "--index {}: the index there cannot be read ({error}); a build would replace \
                 it — run `reliora salvage` to keep its records, or build --replace",
                dir.display()
            )),
        };
    }
    let index_files = files::unexplained_index_files(dir)?;
    if !index_files.is_empty() {
        return if replace {
            Ok(0)
        } else {
            Err(files::missing_manifest(dir, &index_files))
        };
    }
    let foreign: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != files::LOCK_NAME && name != files::PENDING_NAME)
        // Files of an interrupted first generation, which the journal explains.
        .filter(|name| files::generation_of(name).is_none())
        .collect();
    if foreign.is_empty() {
        Ok(0)
    } else {
        refuse(format!(
            "--index {} is not empty and not an index (it holds {}); build into a new or empty \
             directory",
            dir.display(),
            foreign
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// Marks damage to the stored records themselves: with them unreadable there is nothing to
/// scan, so the error says so (and what made the scan necessary, if anything did).
pub(crate) fn no_scan_possible(error: Error, first: Option<&Error>) -> Error {
    match error {
        Error::Corrupt { file, problem } => {
            let cause = first
                .filter(|f| f.to_string() != format!("{}: {problem}", file.display()))
                .map(|f| format!(" (the index was damaged too: {f})"))
                .unwrap_or_default();
            Error::Corrupt {
                file,
                problem: problem.noted(format!(
                    "the stored records cannot be read, so search cannot fall back \
                     to a scan{cause}; restore the index from a backup, or rebuild it from an \
                     export or the original inputs"
                )),
            }
        }
        other => other,
    }
}

/// What `stats` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// The index directory.
    pub index: PathBuf,
    /// The generation number.
    pub generation: u64,
    /// The on-disk format version.
    pub format_version: u32,
    /// Whether tokens are stemmed.
    pub stem: bool,
    /// Segments.
    pub segments: usize,
    /// Live records.
    pub records: u64,
    /// Entries in the record log (changes since the last build or compaction).
    pub log_entries: usize,
    /// Bytes of the record log.
    pub log_bytes: u64,
    /// Distinct terms, summed over segments.
    pub terms: usize,
    /// Bytes of index files (bodies).
    pub bytes: u64,
    /// Each file and its size.
    pub files: Vec<FileStats>,
    /// Why searches fall back to a scan, if they do.
    pub damaged: Option<String>,
}

/// One file in `stats`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileStats {
    /// File name.
    pub name: String,
    /// Body bytes.
    pub bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Outcome, Record};
    use serde_json::json;

    fn record(id: &str, title: &str) -> Record {
        Record::from_json(&json!({"id": id, "title": title, "task": "t", "solution": "s"}))
            .expect("valid record")
    }

    fn listing(dir: &Path) -> Vec<(String, u64)> {
        let mut files: Vec<(String, u64)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, e.metadata().unwrap().len())
            })
            .collect();
        files.sort();
        files
    }

    /// The log's live records are one more segment, in memory: found, read and counted like
    /// the others, replaced and deleted ones dead, and opening writes no file.
    #[test]
    fn the_log_tail_is_a_segment_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let built = vec![SourcedRecord {
            record: record("a", "alpha pool"),
            locator: "input:1".to_string(),
        }];
        Index::build_from_records(dir.path(), built, &BuildOptions::default()).unwrap();
        for (id, title) in [
            ("b", "beta pool"),
            ("c", "gamma pool"),
            ("a", "alpha replaced"),
        ] {
            writer::record_with(dir.path(), record(id, title), |_, _| Ok(())).unwrap();
        }
        writer::delete(dir.path(), "c").unwrap();
        writer::feedback(dir.path(), "b", Outcome::Success).unwrap();
        let before = listing(dir.path());
        let index = Index::open(dir.path()).unwrap();
        assert_eq!(listing(dir.path()), before, "opening writes nothing");

        assert_eq!(index.disk_segments().len(), 1);
        assert_eq!(
            index.segments().len(),
            2,
            "the log's segment follows the disk's"
        );
        let log = &index.segments()[1];
        assert_eq!(log.len(), 2, "b and the new a; c deleted");
        assert_eq!(index.dead(0).len(), 1, "the built a is replaced");
        let a = index.find("a").unwrap().unwrap();
        assert_eq!(a.segment, 1);
        assert_eq!(
            index.stored(a).unwrap().record.title.as_deref(),
            Some("alpha replaced")
        );
        let b = index.stored(index.find("b").unwrap().unwrap()).unwrap();
        assert_eq!(
            b.record.feedback.success, 1,
            "feedback logged after the record"
        );
        assert!(index.find("c").unwrap().is_none());
        assert_eq!(index.recorded_records().unwrap(), 2);
        assert_eq!(index.stats().unwrap().records, 2);
        assert_eq!(
            index.stats().unwrap().segments,
            1,
            "stats describe the files"
        );
    }
}
