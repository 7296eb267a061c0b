//! Indexes: building a generation from records, opening it (memory maps, O(1) checks),
//! and the operations over it — search, show, export, stats and check.

pub(crate) mod build;
pub mod check;
pub mod segment;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::format::codec::StoredRecord;
use crate::format::footer::FORMAT_VERSION;
use crate::format::manifest::{sync_dir, Manifest};
use crate::record::input::{read_inputs, FieldMap, SourcedRecord};
use crate::search::index_source::IndexSource;
use crate::search::request::{Backend, SearchRequest};
use crate::search::response::SearchResponse;
use crate::search::scan::ScanSource;
use crate::search::{execute, Context, DocRef};
use crate::text::TextAnalyzer;

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
    /// Draw a progress bar on stderr.
    pub progress: bool,
}

/// A record `build --skip-invalid` left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedRecord {
    /// Where it was.
    pub locator: String,
    /// What was wrong.
    pub message: String,
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
}

/// An opened index: memory-mapped segments, ready to search.
pub struct Index {
    dir: PathBuf,
    manifest: Manifest,
    pub(crate) segments: Vec<Segment>,
    /// Set when some segment file failed its checks: searches then scan these stores.
    damage: Option<(Vec<Store>, Error)>,
    pub(crate) analyzer: TextAnalyzer,
    generation_key: String,
}

impl Index {
    /// Builds a new index generation in `dir` from the inputs of `options`.
    ///
    /// The previous generation, if any, stays readable until the new manifest replaces it.
    pub fn build(dir: &Path, options: &BuildOptions) -> Result<BuildReport> {
        let batch = read_inputs(&options.inputs, &options.field_map, options.skip_invalid)?;
        let skipped = batch
            .skipped
            .iter()
            .map(|s| SkippedRecord {
                locator: s.locator.clone(),
                message: s.error.to_string(),
            })
            .collect();
        let mut report =
            Index::build_from_records(dir, batch.records, options.stem, options.progress)?;
        report.skipped = skipped;
        Ok(report)
    }

    /// Builds a new index generation in `dir` from already validated records.
    pub fn build_from_records(
        dir: &Path,
        records: Vec<SourcedRecord>,
        stem: bool,
        progress: bool,
    ) -> Result<BuildReport> {
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
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let previous = Manifest::load(dir).ok();
        let generation = next_generation(dir, previous.as_ref())?;
        let name = format!("g{generation:06}-s0000");
        let bar = progress.then(|| {
            let bar = ProgressBar::new(records.len() as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} indexing {pos}/{len} records {wide_bar} {eta}",
                )
                .expect("valid template"),
            );
            bar
        });
        let analyzer = TextAnalyzer::new(stem);
        let written = build::write_segment(dir, &name, &records, &analyzer, bar.as_ref())?;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        let bytes = written.entry.files.values().map(|f| f.len).sum();
        let manifest = Manifest {
            format_version: FORMAT_VERSION,
            generation,
            stem,
            segments: vec![written.entry],
        };
        manifest.store(dir)?;
        if let Some(previous) = previous {
            remove_unlisted(dir, &previous, &manifest);
        }
        Ok(BuildReport {
            index: dir.to_path_buf(),
            records: records.len(),
            skipped: Vec::new(),
            terms: written.terms,
            generation,
            stem,
            bytes,
        })
    }

    /// Opens the index in `dir`: reads the manifest and maps every file, checking footers,
    /// lengths and CRCs recorded in the manifest — O(1) per file, nothing proportional to the
    /// corpus. A damaged segment file does not fail the open: searches then fall back to
    /// scanning the stored records (or fail with `--backend index`).
    pub fn open(dir: &Path) -> Result<Index> {
        let manifest = Manifest::load(dir)?;
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
        let damage = match damage {
            None => None,
            Some(error) => {
                let stores = manifest
                    .segments
                    .iter()
                    .map(|entry| Store::open(dir, entry))
                    .collect::<Result<Vec<_>>>()?;
                segments.clear();
                Some((stores, error))
            }
        };
        let generation_key = {
            let mut hasher = Sha256::new();
            hasher.update(serde_json::to_vec(&manifest).expect("manifest serializes"));
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
            damage,
            generation_key,
        })
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

    /// Runs one search (SPEC §3–7).
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse> {
        let request = &*crate::search::settings::with_index_config(&self.dir, request)?;
        if request.backend == Backend::Scan {
            return self.scan_search(request, false, Vec::new());
        }
        if let Some((_, error)) = &self.damage {
            if request.backend == Backend::Index {
                return Err(Error::corrupt(
                    self.dir.clone(),
                    format!("the index cannot be used (--backend index): {error}"),
                ));
            }
            let notice = format!("index damaged, scanned the stored records instead: {error}");
            return self.scan_search(request, true, vec![notice]);
        }
        let context = Context {
            analyzer: &self.analyzer,
            generation: &self.generation_key,
            degraded: false,
            notices: Vec::new(),
        };
        match execute(&IndexSource { index: self }, request, context) {
            Err(error @ Error::Corrupt { .. }) if request.backend == Backend::Auto => {
                let notice = format!("index damaged, scanned the stored records instead: {error}");
                self.scan_search(request, true, vec![notice])
            }
            other => other,
        }
    }

    fn scan_search(
        &self,
        request: &SearchRequest,
        degraded: bool,
        notices: Vec<String>,
    ) -> Result<SearchResponse> {
        let records = self.all_records()?;
        let source = ScanSource::new(records, self.manifest.stem);
        let context = Context {
            analyzer: &self.analyzer,
            generation: &self.generation_key,
            degraded,
            notices,
        };
        execute(&source, request, context)
    }

    fn stores(&self) -> Vec<&Store> {
        match &self.damage {
            Some((stores, _)) => stores.iter().collect(),
            None => self.segments.iter().map(|s| &s.store).collect(),
        }
    }

    /// Every live record, decoded, in index order.
    pub fn all_records(&self) -> Result<Vec<StoredRecord>> {
        let mut out = Vec::new();
        for store in self.stores() {
            let decoded = (0..store.len())
                .into_par_iter()
                .map(|doc| store.get(doc))
                .collect::<Result<Vec<_>>>()?;
            out.extend(decoded);
        }
        Ok(out)
    }

    /// The live record with this id.
    pub(crate) fn find(&self, id: &str) -> Result<Option<DocRef>> {
        for (s, segment) in self.segments.iter().enumerate().rev() {
            if let Some(doc) = segment.doc_of_id(id)? {
                return Ok(Some(DocRef {
                    segment: s as u32,
                    doc,
                }));
            }
        }
        Ok(None)
    }

    /// The stored record named by an id or a locator.
    pub fn get(&self, id_or_locator: &str) -> Result<StoredRecord> {
        if self.damage.is_some() {
            return self
                .all_records()?
                .into_iter()
                .find(|r| r.record.id == id_or_locator || r.locator == id_or_locator)
                .ok_or_else(|| Error::NotFound(id_or_locator.to_string()));
        }
        if let Some(doc) = self.find(id_or_locator)? {
            return self.segments[doc.segment as usize].stored(doc.doc);
        }
        for segment in self.segments.iter().rev() {
            if let Some(doc) = segment.doc_of_locator(id_or_locator)? {
                return segment.stored(doc);
            }
        }
        Err(Error::NotFound(id_or_locator.to_string()))
    }

    /// Writes every live record as JSON Lines; returns how many.
    pub fn export(&self, out: &mut dyn Write, path: &Path) -> Result<usize> {
        let mut count = 0;
        for store in self.stores() {
            for doc in 0..store.len() {
                let stored = store.get(doc)?;
                let line =
                    serde_json::to_string(&stored.record.to_json()).expect("records serialize");
                writeln!(out, "{line}").map_err(|e| Error::io(path, e))?;
                count += 1;
            }
        }
        out.flush().map_err(|e| Error::io(path, e))?;
        Ok(count)
    }

    /// Counts and sizes.
    pub fn stats(&self) -> Result<Stats> {
        let mut stats = Stats {
            index: self.dir.clone(),
            generation: self.manifest.generation,
            format_version: self.manifest.format_version,
            stem: self.manifest.stem,
            segments: self.manifest.segments.len(),
            records: self.manifest.segments.iter().map(|s| s.records).sum(),
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
        for segment in &self.segments {
            stats.terms += segment.term_count()?;
        }
        Ok(stats)
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

fn next_generation(dir: &Path, previous: Option<&Manifest>) -> Result<u64> {
    let mut highest = previous.map_or(0, |m| m.generation);
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if let Some(digits) = name.strip_prefix('g').and_then(|n| n.get(..6)) {
            if let Ok(g) = digits.parse::<u64>() {
                highest = highest.max(g);
            }
        }
    }
    Ok(highest + 1)
}

/// Deletes the files of `previous` that `current` does not name. Readers that mapped them keep
/// their pages (unlinking does not unmap).
fn remove_unlisted(dir: &Path, previous: &Manifest, current: &Manifest) {
    let keep: Vec<&str> = current.segments.iter().map(|s| s.name.as_str()).collect();
    for segment in &previous.segments {
        if keep.contains(&segment.name.as_str()) {
            continue;
        }
        for suffix in segment.files.keys() {
            let _ = std::fs::remove_file(Manifest::file_path(dir, &segment.name, suffix));
        }
    }
    let _ = sync_dir(dir);
}
