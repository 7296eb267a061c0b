//! The write path: appending `record`, `feedback` and `delete` to the log, `compact`, and the
//! generations `build` writes. (`crate::handle::writer` adds the duplicate warnings of `record`.)
//!
//! One writer at a time, across processes, holds an OS lock on `LOCK` in the index directory.
//! A change is appended to the record log and synced before the call returns, so it is durable
//! once acknowledged. Segments are never rewritten: compaction writes a new generation (one
//! segment holding every live record, and a new empty log), swaps the manifest atomically, then
//! deletes the files no generation names. Readers take no lock; a reader that raced with that
//! deletion re-reads the manifest (see [`Index::open`]).

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::progress::ProgressCounter;
use rayon::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::codec::{LogEntry, StoredRecord};
use crate::format::directory::Directory;
use crate::format::footer::FORMAT_VERSION;
use crate::format::fsio;
use crate::format::log::{create_log, refuse_write, LogAppender};
use crate::format::manifest::SegmentEntry;
use crate::format::manifest::{Manifest, MANIFEST_NAME};
use crate::index::build::{write_segment, BuildShared};
use crate::index::files;
use crate::index::merge::merge_segments;
use crate::index::Index;
use crate::record::{Feedback, Outcome, Record, SourcedRecord};
use crate::text::TextAnalyzer;

/// The log is compacted automatically once it holds this many entries…
pub const COMPACT_AFTER_ENTRIES: usize = 1000;
/// …or this many bytes.
pub const COMPACT_AFTER_BYTES: u64 = 8 << 20;

/// The exclusive writer lock of an index directory, released on drop.
pub struct WriterLock {
    file: File,
}

/// Called once when a writer finds the lock held and starts waiting (the CLI prints a line).
static WAIT_NOTICE: std::sync::OnceLock<fn(&Path)> = std::sync::OnceLock::new();

/// Sets what a writer does when it has to wait for another process's writer lock; the first
/// call wins. The command line prints a line on stderr, so a waiting command never hangs
/// without a word.
pub fn on_lock_wait(notice: fn(&Path)) {
    let _ = WAIT_NOTICE.set(notice);
}

impl WriterLock {
    /// Waits for and takes the writer lock of `dir`. `LOCK` is never followed through a link.
    pub fn acquire(dir: &Path) -> Result<WriterLock> {
        let path = dir.join(files::LOCK_NAME);
        let file = fsio::open_or_create(&path).map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                if let Some(notice) = WAIT_NOTICE.get() {
                    notice(dir);
                }
                file.lock().map_err(|e| Error::io(&path, e))?;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        Ok(WriterLock { file })
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// What `feedback` did.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackReport {
    /// The record's id.
    pub id: String,
    /// The outcome added.
    pub outcome: &'static str,
    /// The counts after adding it.
    pub feedback: FeedbackCounts,
    /// Set when the automatic compaction after the save failed; the save itself stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<String>,
}

/// Feedback counts as printed.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackCounts {
    /// success
    pub success: u64,
    /// partial
    pub partial: u64,
    /// failure
    pub failure: u64,
    /// notApplicable
    pub not_applicable: u64,
    /// outdated
    pub outdated: u64,
}

impl From<Feedback> for FeedbackCounts {
    fn from(f: Feedback) -> Self {
        FeedbackCounts {
            success: f.success,
            partial: f.partial,
            failure: f.failure,
            not_applicable: f.not_applicable,
            outdated: f.outdated,
        }
    }
}

/// What `delete` did.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeleteReport {
    /// The id removed.
    pub id: String,
    /// Always true: deleting an absent id is an error.
    pub deleted: bool,
    /// Set when the automatic compaction after the save failed; the save itself stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<String>,
}

/// What `compact` did.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactReport {
    /// The new generation.
    pub generation: u64,
    /// Live records in it.
    pub records: usize,
    /// Log entries folded in.
    pub log_entries: usize,
}

/// Opens the index for writing under the lock, creating an empty one when the directory holds
/// none yet — but never over index files a missing manifest no longer names.
fn open_for_write(dir: &Path) -> Result<Index> {
    if !manifest_exists(dir) {
        create_empty(dir)?;
    }
    Index::open(dir)
}

/// Whether `dir` has a manifest entry (a link counts: it is refused when read).
fn manifest_exists(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(MANIFEST_NAME)).is_ok()
}

/// Writes the empty first generation of a directory without a manifest, refusing when index
/// files are there (a lost manifest: `reliora salvage`). The caller holds the writer lock.
fn create_empty(dir: &Path) -> Result<()> {
    let found = files::unexplained_index_files(dir)?;
    if !found.is_empty() {
        return Err(files::missing_manifest(dir, &found));
    }
    write_generation(dir, &[], false, None)?;
    Ok(())
}

/// A record appended to the log by [`record_with`].
pub(crate) struct Appended<W> {
    /// The record's id.
    pub id: String,
    /// Its position in the log.
    pub locator: String,
    /// Whether it replaced a live record with the same id.
    pub replaced: bool,
    /// What the caller's check found before the write.
    pub checked: W,
    /// Set when the automatic compaction after the save failed; the save itself stands.
    pub compaction: Option<String>,
}

/// Adds or replaces one record (SPEC §8). Durable when this returns. `check` runs first, under
/// the writer lock, on the index as it was before the write (the duplicate warnings). A damaged
/// index is refused (`index_damaged`, naming `reliora salvage`), never repaired by deletion.
pub(crate) fn record_with<W>(
    dir: &Path,
    record: Record,
    check: impl FnOnce(&Index, &Record) -> Result<W>,
) -> Result<Appended<W>> {
    record_unless_damaged(dir, record, check).map_err(refuse_write)
}

fn record_unless_damaged<W>(
    dir: &Path,
    record: Record,
    check: impl FnOnce(&Index, &Record) -> Result<W>,
) -> Result<Appended<W>> {
    files::create_index_dir(dir)?;
    let _lock = WriterLock::acquire(dir)?;
    let index = open_for_write(dir)?;
    let replaced = index.live_record(&record.id)?.is_some();
    let checked = check(&index, &record)?;
    let manifest = index.manifest();
    let (mut log, _) = LogAppender::open(&dir.join(&manifest.log), manifest.log_key())?;
    let locator = format!("{}@{}", manifest.log, log.position());
    let id = record.id.clone();
    log.append(&LogEntry::Record(Box::new(StoredRecord {
        record,
        locator: locator.clone(),
    })))?;
    let compaction = compact_if_due(dir, log.position(), index.log_entries() + 1);
    Ok(Appended {
        id,
        locator,
        replaced,
        checked,
        compaction,
    })
}

/// Adds one outcome to a live record's feedback. Durable when this returns.
pub fn feedback(dir: &Path, id: &str, outcome: Outcome) -> Result<FeedbackReport> {
    feedback_unless_damaged(dir, id, outcome).map_err(refuse_write)
}

fn feedback_unless_damaged(dir: &Path, id: &str, outcome: Outcome) -> Result<FeedbackReport> {
    require_index(dir, id)?;
    let _lock = WriterLock::acquire(dir)?;
    let index = Index::open(dir)?;
    let mut counts = index
        .live_record(id)?
        .ok_or_else(|| Error::NotFound(id.to_string()))?
        .record
        .feedback;
    let manifest = index.manifest();
    let (mut log, _) = LogAppender::open(&dir.join(&manifest.log), manifest.log_key())?;
    log.append(&LogEntry::Feedback {
        id: id.to_string(),
        outcome,
    })?;
    counts.add(outcome);
    let compaction = compact_if_due(dir, log.position(), index.log_entries() + 1);
    Ok(FeedbackReport {
        id: id.to_string(),
        outcome: outcome.as_str(),
        feedback: counts.into(),
        compaction,
    })
}

/// Removes a live record from every later search and export. Durable when this returns.
pub fn delete(dir: &Path, id: &str) -> Result<DeleteReport> {
    delete_unless_damaged(dir, id).map_err(refuse_write)
}

fn delete_unless_damaged(dir: &Path, id: &str) -> Result<DeleteReport> {
    require_index(dir, id)?;
    let _lock = WriterLock::acquire(dir)?;
    let index = Index::open(dir)?;
    if index.live_record(id)?.is_none() {
        return Err(Error::NotFound(id.to_string()));
    }
    let manifest = index.manifest();
    let (mut log, _) = LogAppender::open(&dir.join(&manifest.log), manifest.log_key())?;
    log.append(&LogEntry::Delete { id: id.to_string() })?;
    let compaction = compact_if_due(dir, log.position(), index.log_entries() + 1);
    Ok(DeleteReport {
        id: id.to_string(),
        deleted: true,
        compaction,
    })
}

/// Creates an empty index in `dir` (and `dir` itself) unless it holds one already; returns
/// whether it did. `record` does the same on its first write; a long-lived reader such as the
/// MCP server calls this up front so that searching a new, empty memory finds nothing rather
/// than failing.
pub fn create_if_missing(dir: &Path) -> Result<bool> {
    if manifest_exists(dir) {
        return Ok(false);
    }
    files::create_index_dir(dir)?;
    let _lock = WriterLock::acquire(dir)?;
    if manifest_exists(dir) {
        return Ok(false);
    }
    create_empty(dir)?;
    Ok(true)
}

/// A directory without an index holds no record `id`.
fn require_index(dir: &Path, id: &str) -> Result<()> {
    if manifest_exists(dir) {
        return Ok(());
    }
    match files::unexplained_index_files(dir) {
        Ok(found) if !found.is_empty() => Err(files::missing_manifest(dir, &found)),
        _ => Err(Error::NotFound(id.to_string())),
    }
}

/// Folds the log into a new generation holding every live record. Results are unchanged.
pub fn compact(dir: &Path) -> Result<CompactReport> {
    if !manifest_exists(dir) {
        // Reports "no index here", or a lost manifest.
        files::load_manifest(dir)?;
    }
    let _lock = WriterLock::acquire(dir)?;
    compact_locked(dir).map_err(refuse_write)
}

/// Compacts when the log has grown past its thresholds. The change that was just appended is
/// already durable, so a failed compaction (a full disk, say) must not fail the command that
/// made it — retrying that command would apply the change twice. The generation stays as it
/// was, the next write tries again, and the failure is returned for the report.
fn compact_if_due(dir: &Path, log_bytes: u64, log_entries: usize) -> Option<String> {
    if log_entries >= COMPACT_AFTER_ENTRIES || log_bytes >= COMPACT_AFTER_BYTES {
        if let Err(error) = compact_locked(dir) {
            return Some(format!(
                "the change is saved, but the automatic compaction failed (the next write \
                 retries it): {error}"
            ));
        }
    }
    None
}

fn compact_locked(dir: &Path) -> Result<CompactReport> {
    let index = Index::open(dir)?;
    if let Some(damage) = index.log_damage() {
        // The damaged entries' records would be lost with the log.
        return Err(refuse_write(damage));
    }
    let log_entries = index.log_entries();
    let records: Vec<SourcedRecord> = index.all_records().map_err(refuse_write)?;
    let stem = index.manifest().stem;
    drop(index);
    let (manifest, _) = write_generation(dir, &records, stem, None)?;
    Ok(CompactReport {
        generation: manifest.generation,
        records: records.len(),
        log_entries,
    })
}

/// Records per spill when the caller names no segment size. Building a segment holds its
/// records, their terms and its postings in memory, so this bounds a build's memory whatever
/// the corpus size: a larger corpus is written as more spills, merged into one segment at the
/// end (merge.rs), which streams.
pub const DEFAULT_SPILL_RECORDS: usize = 200_000;

/// Writes a new generation holding `records` (one segment, written in spills of
/// [`DEFAULT_SPILL_RECORDS`] merged at the end; an empty log), makes it current and deletes the
/// files of older generations. The caller holds the writer lock.
///
/// Until the manifest is swapped nothing a reader uses changes: when writing fails (a full disk,
/// a failed fsync), the new generation's files are removed and the previous generation is
/// left exactly as it was.
pub(crate) fn write_generation(
    dir: &Path,
    records: &[SourcedRecord],
    stem: bool,
    progress: Option<&ProgressCounter>,
) -> Result<(Manifest, usize)> {
    let mut writer = GenerationWriter::new(dir, stem, true, progress)?;
    for chunk in records.chunks(DEFAULT_SPILL_RECORDS) {
        writer.push_segment(chunk)?;
    }
    writer.commit()
}

/// Writes the segments of a new generation one after another, then makes it current. Dropped
/// before [`GenerationWriter::commit`] succeeds, it removes the files it wrote, leaving the
/// previous generation exactly as it was. The caller holds the writer lock.
pub(crate) struct GenerationWriter<'p> {
    dir: PathBuf,
    generation: u64,
    stem: bool,
    analyzer: TextAnalyzer,
    shared: BuildShared,
    /// Whether `commit` merges the segments into one.
    merge: bool,
    /// The segments written so far: pushed ones unsynced (`Directory::Unsynced`), a merged one
    /// synced.
    segments: Vec<SegmentEntry>,
    /// Whether `segments` were pushed (not merged): `commit` syncs their files before the
    /// manifest names them.
    unsynced: bool,
    terms: usize,
    progress: Option<&'p ProgressCounter>,
    committed: bool,
}

impl<'p> GenerationWriter<'p> {
    /// Starts the generation after the newest one `dir` holds. With `merge`, the segments
    /// pushed are spills that `commit` merges into one segment.
    pub fn new(
        dir: &Path,
        stem: bool,
        merge: bool,
        progress: Option<&'p ProgressCounter>,
    ) -> Result<Self> {
        Self::start(dir, stem, merge, progress, true)
    }

    /// Like [`GenerationWriter::new`], but the commit deletes no file of the previous
    /// generation (`salvage` leaves what it read in place).
    pub fn keeping_previous(dir: &Path, stem: bool) -> Result<Self> {
        Self::start(dir, stem, true, None, false)
    }

    fn start(
        dir: &Path,
        stem: bool,
        merge: bool,
        progress: Option<&'p ProgressCounter>,
        replace_previous: bool,
    ) -> Result<Self> {
        let previous = Manifest::load(dir).ok();
        let generation = next_generation(dir, previous.as_ref())?;
        let replaced = previous.as_ref().filter(|_| replace_previous);
        files::begin(dir, generation, replaced)?;
        Ok(GenerationWriter {
            dir: dir.to_path_buf(),
            generation,
            stem,
            analyzer: TextAnalyzer::new(stem),
            shared: BuildShared::default(),
            merge,
            segments: Vec::new(),
            unsynced: false,
            terms: 0,
            progress,
            committed: false,
        })
    }

    fn next_name(&self) -> String {
        format!("g{:06}-s{:04}", self.generation, self.segments.len())
    }

    /// Writes `records` as the generation's next segment, without syncing its files: a spill
    /// is merged and deleted, and `commit` syncs a segment it keeps.
    pub fn push_segment(&mut self, records: &[SourcedRecord]) -> Result<()> {
        let name = self.next_name();
        self.unsynced = true;
        let written = write_segment(
            &Directory::Unsynced(self.dir.clone()),
            &name,
            records,
            &self.analyzer,
            &mut self.shared,
            self.progress,
        )?;
        self.terms += written.terms;
        self.segments.push(written.entry);
        Ok(())
    }

    /// Replaces the segments written so far by one holding their records (merge.rs, which
    /// deletes their files).
    fn merge_segments(&mut self) -> Result<()> {
        let merged = merge_segments(&self.dir, &self.next_name(), &self.segments)?;
        self.segments = vec![merged.entry];
        self.unsynced = false;
        self.terms = merged.terms;
        Ok(())
    }

    /// Syncs every file of the pushed segments (the manifest must name only durable files).
    fn sync_segments(&self) -> Result<()> {
        let paths: Vec<PathBuf> = self
            .segments
            .iter()
            .flat_map(|entry| {
                (entry.files.keys())
                    .map(|suffix| Manifest::file_path(&self.dir, &entry.name, suffix))
            })
            .collect();
        paths.par_iter().try_for_each(|path| {
            fsio::open_read(path)
                .and_then(|file| file.sync_all())
                .map_err(|e| Error::io(path, e))
        })
    }

    /// The locator of record `doc` of segment `segment` already written.
    pub fn locator(&self, segment: usize, doc: u32) -> Result<String> {
        let entry = &self.segments[segment];
        Ok(crate::index::segment::Store::open(&self.dir, entry)?
            .get(doc)?
            .locator)
    }

    /// Creates the empty log and swaps the manifest in (a generation without records gets one
    /// empty segment), then deletes older generations' files. Returns the manifest and the
    /// distinct terms summed over segments.
    pub fn commit(mut self) -> Result<(Manifest, usize)> {
        if self.segments.is_empty() {
            self.push_segment(&[])?;
        }
        if self.merge && self.segments.len() > 1 {
            self.merge_segments()?;
        }
        if self.unsynced {
            self.sync_segments()?;
        }
        let generation = self.generation;
        let manifest = Manifest {
            format_version: FORMAT_VERSION,
            generation,
            stem: self.stem,
            segments: std::mem::take(&mut self.segments),
            log: format!("g{generation:06}.log"),
            log_id: random_log_id(),
        };
        create_log(&self.dir.join(&manifest.log), manifest.log_id)?;
        manifest.store(&self.dir)?;
        self.committed = true;
        files::finish(&self.dir, &manifest);
        Ok((manifest, self.terms))
    }
}

impl Drop for GenerationWriter<'_> {
    fn drop(&mut self) {
        if !self.committed
            && !Manifest::load(&self.dir).is_ok_and(|m| m.generation == self.generation)
        {
            files::abandon(&self.dir, self.generation);
        }
    }
}

/// A random, non-zero log id (std's per-process random hash keys, mixed with the clock).
fn random_log_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    hasher.write_u32(std::process::id());
    hasher.finish().max(1)
}

/// One more than the highest generation named by the manifest or by any file in `dir` (files
/// of a generation whose writer died before its manifest swap included).
fn next_generation(dir: &Path, previous: Option<&Manifest>) -> Result<u64> {
    let mut highest = previous.map_or(0, |m| m.generation);
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries.flatten() {
        if let Some(g) = files::generation_of(&entry.file_name().to_string_lossy()) {
            highest = highest.max(g);
        }
    }
    highest.checked_add(1).ok_or_else(|| {
        Error::corrupt(
            dir.join(MANIFEST_NAME),
            "the generation number cannot grow any further",
        )
    })
}
