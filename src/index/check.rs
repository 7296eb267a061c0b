//! `reliora check`: verify every file of an index in full, and the invariants between files.
//!
//! Checked, in order: the manifest (footer, CRC, JSON, file names); every segment file (footer,
//! length and CRC against the manifest, then the whole body); per segment, that the store, the
//! columns, the id dictionary, the facets (the word pairs recomputed from the records), the
//! prefix fingerprints (where the segment has them) and the postings agree record by record; and the record log (header and log id, every entry's CRC
//! and decoding, and that each feedback or delete entry names a record that was live at that
//! point). A log whose last entry was cut
//! short by a crash is sound — readers ignore that entry and the next writer removes it — and is
//! reported as a note.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use roaring::RoaringBitmap;
use serde::Serialize;

use crate::error::Result;
use crate::format::blobs::BlobFile;
use crate::format::codec::{LogEntry, StoredRecord};
use crate::format::dictionary::Dictionary;
use crate::format::file::IndexFile;
use crate::format::footer::FileKind;
use crate::format::log::read_log;
use crate::format::manifest::Manifest;
use crate::format::pairs::{PairList, INLINE_MAX};
use crate::format::postings::{decode_bitmap, TermPostings};
use crate::format::prefixes::fingerprint;
use crate::format::{
    FACET_ENTITY, FACET_IRREGULAR, FACET_SUPERSEDES, FACET_TAG, FACET_TYPE, OPTIONAL_SEGMENT_FILES,
    SEGMENT_FILES,
};
use crate::index::build::{entity_names, RecordTokens};
use crate::index::pairs::{FrequentWords, MAX_WORDS};
use crate::index::segment::{Segment, Store};
use crate::schema::GROUP_COUNT;
use crate::text::TextAnalyzer;

/// What `check` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    /// Whether every check passed.
    pub sound: bool,
    /// Files fully verified.
    pub files_checked: usize,
    /// Records verified.
    pub records_checked: u64,
    /// Each problem, naming its file.
    pub problems: Vec<String>,
    /// Observations that are not damage (an unfinished last log entry left by a crash, files
    /// an interrupted write left).
    pub notes: Vec<String>,
}

fn kind_of(suffix: &str) -> FileKind {
    match suffix {
        "terms.fst" | "facets.fst" | "ids.fst" | "entities.fst" => FileKind::Fst,
        "terms.post" | "facets.post" | "pairs" => FileKind::Postings,
        "store" => FileKind::Store,
        "prefixes" => FileKind::Prefixes,
        _ => FileKind::Columns,
    }
}

/// Verifies the index in `dir`: every file's footer and checksum, then the cross-file
/// invariants (counts agree, every record decodes, ids map to their records, every posting
/// names an existing record).
pub fn check(dir: &Path) -> CheckReport {
    let mut report = CheckReport {
        sound: true,
        files_checked: 0,
        records_checked: 0,
        problems: Vec::new(),
        notes: Vec::new(),
    };
    let manifest = match crate::index::files::load_manifest(dir) {
        Ok(m) => m,
        Err(e) => {
            report.sound = false;
            report.problems.push(e.to_string());
            return report;
        }
    };
    report.files_checked += 1;
    // The ids of the segments' records, when every segment could be read.
    let mut segment_ids: Option<HashSet<String>> = Some(HashSet::new());
    for entry in &manifest.segments {
        let mut files_sound = true;
        let optional = OPTIONAL_SEGMENT_FILES
            .into_iter()
            .filter(|suffix| entry.files.contains_key(*suffix));
        for suffix in SEGMENT_FILES.into_iter().chain(optional) {
            let path = Manifest::file_path(dir, &entry.name, suffix);
            let outcome = match entry.files.get(suffix) {
                None => Err(format!(
                    "{}: the manifest does not list this file",
                    path.display()
                )),
                Some(expected) => IndexFile::open(&path, kind_of(suffix), expected)
                    .and_then(|f| f.verify())
                    .map_err(|e| e.to_string()),
            };
            match outcome {
                Ok(()) => report.files_checked += 1,
                Err(problem) => {
                    files_sound = false;
                    report.problems.push(problem);
                }
            }
        }
        let checked = if files_sound {
            check_segment(dir, entry, manifest.stem, &mut report)
                .map_err(|e| report.problems.push(e.to_string()))
        } else {
            Err(())
        };
        match (checked, segment_ids.as_mut()) {
            (Ok(ids), Some(all)) => all.extend(ids),
            _ => segment_ids = None,
        }
    }
    check_log(dir, &manifest, segment_ids, &mut report);
    note_leftovers(dir, &manifest, &mut report);
    report.sound = report.problems.is_empty();
    report
}

/// Notes the files in the directory that the manifest does not name but a writer or `salvage`
/// left: they are not part of the index and change nothing, but they take space.
fn note_leftovers(dir: &Path, manifest: &Manifest, report: &mut CheckReport) {
    let pending = dir.join(crate::index::files::PENDING_NAME);
    if std::fs::symlink_metadata(&pending).is_ok() {
        report.notes.push(format!(
            "{}: a write was interrupted; the next write settles it (removes the files it left)",
            pending.display()
        ));
    }
    if let Ok(leftovers) = crate::index::files::leftovers(dir, manifest) {
        if !leftovers.is_empty() {
            report.notes.push(format!(
                "{}: {} index files are not named by the manifest ({}): left by an interrupted \
                 write or a salvage, not part of the index",
                dir.display(),
                leftovers.len(),
                leftovers.join(", ")
            ));
        }
    }
}

/// Verifies the record log and, when the segments' ids are known, that every feedback and
/// delete entry names a record live at that point of the log.
fn check_log(
    dir: &Path,
    manifest: &Manifest,
    segment_ids: Option<HashSet<String>>,
    report: &mut CheckReport,
) {
    let path = dir.join(&manifest.log);
    let contents = match read_log(&path, manifest.log_key()) {
        Ok(contents) => contents,
        Err(e) => {
            report.problems.push(e.to_string());
            return;
        }
    };
    report.files_checked += 1;
    for damage in &contents.damage {
        report.problems.push(format!(
            "{}: {} bytes at offset {}: {}; searches answer from the sound entries around it, \
             writes refuse — run `reliora salvage`",
            path.display(),
            damage.len,
            damage.offset,
            damage.problem
        ));
    }
    if contents.torn_bytes() > 0 {
        report.notes.push(format!(
            "{}: the last {} bytes (from offset {}) are an entry a crash interrupted before it \
             was acknowledged; searches ignore it and the next write removes it",
            path.display(),
            contents.torn_bytes(),
            contents.valid_len,
        ));
    }
    if contents.version != crate::format::log::LOG_VERSION {
        report.notes.push(format!(
            "{}: the record log has format version {}: it is read, but writes refuse until \
             `reliora compact` folds it into a new generation",
            path.display(),
            contents.version
        ));
    }
    let Some(mut live) = segment_ids else {
        return;
    };
    for (offset, entry) in &contents.entries {
        let (id, what) = match entry {
            LogEntry::Record(stored) => {
                live.insert(stored.record.id.clone());
                continue;
            }
            LogEntry::Feedback { id, .. } => (id, "feedback for"),
            LogEntry::Delete { id } => (id, "a delete of"),
        };
        let known = if matches!(entry, LogEntry::Delete { .. }) {
            live.remove(id)
        } else {
            live.contains(id)
        };
        if !known {
            report.problems.push(format!(
                "{}: the entry at offset {offset} is {what} {id:?}, which is not a live record \
                 at that point",
                path.display()
            ));
        }
    }
}

/// Checks one segment whose files passed their CRCs; returns the ids of its records.
fn check_segment(
    dir: &Path,
    entry: &crate::format::manifest::SegmentEntry,
    stem: bool,
    report: &mut CheckReport,
) -> Result<HashSet<String>> {
    let segment = Segment::open(dir, entry, Store::open(dir, entry)?)?;
    // The frequent words the segment stores, and every pair of them its records imply.
    let analyzer = TextAnalyzer::new(stem);
    let frequent = FrequentWords::from_words(segment.pair_header()?.words.clone());
    // Pair id → (records, a sum of a hash of each record) implied by the records.
    let mut implied_pairs: HashMap<u32, (u64, u64)> = HashMap::new();
    let n = segment.len();
    let mut ids = HashSet::with_capacity(n as usize);
    let mut locators = HashSet::with_capacity(n as usize);
    // Facet key → how many records should be in its bitmap.
    let mut facet_counts: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut records = Vec::with_capacity(n as usize);
    let mut record_pairs = Vec::new();
    // The irregular records, where the segment has entity facets.
    let mut irregular = RoaringBitmap::new();
    for doc in 0..n {
        let stored = segment.stored(doc)?;
        let record = &stored.record;
        record_pairs.clear();
        let tokens = RecordTokens::of(record, &analyzer);
        frequent.pairs(tokens.words(), &mut record_pairs);
        if segment.entity_facets && tokens.irregular() {
            irregular.push(doc);
        }
        for &pair in &record_pairs {
            let (count, sum) = implied_pairs.entry(pair).or_default();
            *count += 1;
            *sum = sum.wrapping_add(record_hash(doc));
        }
        if !ids.insert(record.id.clone()) {
            report.problems.push(format!(
                "{}: id {:?} is stored twice",
                segment.store.file().path().display(),
                record.id
            ));
        }
        count_facets(record, segment.entity_facets, &mut facet_counts);
        if let Some(prefixes) = &segment.prefixes {
            if prefixes.get(doc)? != fingerprint(&record.content_prefix(prefixes.chars())) {
                report.problems.push(format!(
                    "{}: record {doc}'s prefix fingerprint is not its prefix's",
                    prefixes.file().path().display()
                ));
            }
        }
        if segment.doc_of_id(&record.id)? != Some(doc) {
            report.problems.push(format!(
                "{}: id {:?} does not map to record {doc}",
                segment.ids.file().path().display(),
                record.id
            ));
        }
        if locators.insert(stored.locator.clone()) {
            let mapped = segment.doc_of_locator(&stored.locator)?;
            if mapped != Some(doc) {
                report.problems.push(format!(
                    "{}: locator {:?} does not map to record {doc}",
                    segment.ids.file().path().display(),
                    stored.locator
                ));
            }
        }
        records.push(stored);
        report.records_checked += 1;
    }
    check_lengths_and_entities(dir, &segment, &records, report)?;
    check_columns(&segment, &records, report)?;
    let ids_entries = segment.ids.len()?;
    if ids_entries != ids.len() + locators.len() {
        report.problems.push(format!(
            "{}: {ids_entries} entries for {} ids and {} locators",
            segment.ids.file().path().display(),
            ids.len(),
            locators.len()
        ));
    }
    if !irregular.is_empty() {
        facet_counts.insert(FACET_IRREGULAR.to_vec(), irregular.len());
    }
    check_facets(&segment, &facet_counts, report)?;
    if segment.facet(FACET_IRREGULAR)? != irregular {
        report.problems.push(format!(
            "{}: the irregular records' facet is not the records whose terms are irregular",
            segment.facets.file().path().display()
        ));
    }
    check_pairs(&segment, &frequent, &implied_pairs, report)?;
    check_postings(&segment.terms, &segment.postings, n, report, true)?;
    check_postings(&segment.facets, &segment.facet_postings, n, report, false)?;
    Ok(ids)
}

/// The facet keys `record` implies (its entity names where the segment has `entity_facets`),
/// counted into `facet_counts`.
fn count_facets(
    record: &crate::record::Record,
    entity_facets: bool,
    facet_counts: &mut BTreeMap<Vec<u8>, u64>,
) {
    if entity_facets {
        for name in entity_names(record) {
            *facet_counts
                .entry([FACET_ENTITY, name.as_bytes()].concat())
                .or_default() += 1;
        }
    }
    if let Some(target) = &record.supersedes {
        *facet_counts
            .entry([FACET_SUPERSEDES, target.as_bytes()].concat())
            .or_default() += 1;
    }
    let mut tags: Vec<String> = record
        .tags
        .iter()
        .map(|t| crate::text::phrase(t))
        .filter(|p| !p.is_empty())
        .collect();
    tags.sort();
    tags.dedup();
    for tag in tags {
        *facet_counts
            .entry([FACET_TAG, tag.as_bytes()].concat())
            .or_default() += 1;
    }
    *facet_counts
        .entry([FACET_TYPE, record.memory_type_normalized().as_bytes()].concat())
        .or_default() += 1;
}

/// The columns' group lengths against the manifest's sums, and every entity of the stored
/// records in the entity dictionary.
fn check_lengths_and_entities(
    dir: &Path,
    segment: &Segment,
    records: &[StoredRecord],
    report: &mut CheckReport,
) -> Result<()> {
    let mut group_length_sums = [0u64; GROUP_COUNT];
    for (doc, stored) in records.iter().enumerate() {
        let row = segment.columns.row(doc as u32)?;
        for (sum, &len) in group_length_sums.iter_mut().zip(&row.group_lengths) {
            *sum += u64::from(len);
        }
        for entity in &stored.record.entities {
            let key = entity.to_lowercase();
            if !key.is_empty() && segment.entities.get(key.as_bytes())?.is_none() {
                report.problems.push(format!(
                    "{}: entity {entity:?} of record {doc} is missing",
                    segment.entities.file().path().display()
                ));
            }
        }
    }
    if group_length_sums != segment.group_length_sums {
        report.problems.push(format!(
            "{}: the manifest's group length sums {:?} differ from the columns' {:?}",
            dir.join(crate::format::manifest::MANIFEST_NAME).display(),
            segment.group_length_sums,
            group_length_sums
        ));
    }
    Ok(())
}

/// Every column value against the stored record.
fn check_columns(
    segment: &Segment,
    records: &[StoredRecord],
    report: &mut CheckReport,
) -> Result<()> {
    let columns_path = segment.columns.file().path().display().to_string();
    for (doc, stored) in records.iter().enumerate() {
        let record = &stored.record;
        let row = segment.columns.row(doc as u32)?;
        let mismatch = |what: &str| {
            format!(
                "{columns_path}: record {doc} ({:?}): {what} disagrees with the store",
                record.id
            )
        };
        let created = record
            .created_at
            .as_ref()
            .map(|t| (t.unix_seconds(), t.subsec_nanos()));
        let checks = [
            (row.id == record.id, "the id"),
            (row.created_at == created, "createdAt"),
            (
                row.memory_type == record.memory_type_normalized(),
                "memoryType",
            ),
            (
                row.salience.to_bits() == record.salience_or_default().to_bits(),
                "salience",
            ),
            (
                row.decay_factor.to_bits() == record.decay_factor_or_default().to_bits(),
                "decayFactor",
            ),
            (row.feedback == record.feedback, "feedback"),
            (row.pinned == record.pinned_or_default(), "pinned"),
            (row.supersedes == record.supersedes.as_deref(), "supersedes"),
        ];
        for (agrees, what) in checks {
            if !agrees {
                report.problems.push(mismatch(what));
            }
        }
    }
    Ok(())
}

/// A record's term in the sums that compare a pair's stored records with the implied ones.
fn record_hash(doc: u32) -> u64 {
    // SplitMix64's finalizer: distinct records give unrelated terms.
    let mut z = u64::from(doc).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The pair file holds exactly the pairs the records imply, each with their records, in the
/// layout a build writes: per word, the lists of more than 64 records in blobs of their own in
/// pair order, then its partners blob with the shorter lists in pair order; the words last.
fn check_pairs(
    segment: &Segment,
    frequent: &FrequentWords,
    implied: &HashMap<u32, (u64, u64)>,
    report: &mut CheckReport,
) -> Result<()> {
    let file = segment.pairs.file();
    let path = file.path().display().to_string();
    let header = segment.pair_header()?;
    if header.pairs() as usize != implied.len() {
        report.problems.push(format!(
            "{path}: {} word pairs, the records imply {}",
            header.pairs(),
            implied.len()
        ));
    }
    let words = frequent.words();
    // The next blob and, in a partners blob, the next list offset the layout expects.
    let mut next_blob = 0;
    for first in 0..words.len() {
        let partners = segment.partners(first)?;
        let seconds = partners.seconds(words.len(), file)?;
        let mut next_list = 0;
        let mut misplaced = false;
        for (j, &second) in seconds.iter().enumerate() {
            let place = partners.list(j, file)?;
            let own = match &place {
                PairList::Inline { at, .. } => {
                    misplaced |= at.start != next_list;
                    next_list = at.end;
                    false
                }
                PairList::Own(blob) => {
                    misplaced |= *blob != next_blob;
                    next_blob = blob + 1;
                    true
                }
            };
            let list = segment.list_records(place)?;
            misplaced |= own != (list.len() as usize > INLINE_MAX);
            let mut stored = (0u64, 0u64);
            list.for_each(segment.len(), file, |doc| {
                stored.0 += 1;
                stored.1 = stored.1.wrapping_add(record_hash(doc));
            })?;
            let id = (first * MAX_WORDS + usize::from(second)) as u32;
            if implied.get(&id) != Some(&stored) {
                report.problems.push(format!(
                    "{path}: pair {:?} holds {} records, not the ones the records imply",
                    [first, usize::from(second)].map(|w| words.get(w).map_or("?", String::as_str)),
                    stored.0
                ));
            }
        }
        misplaced |= next_list != partners.inline_bytes();
        misplaced |= header.partners_blob(first) != next_blob;
        next_blob = header.partners_blob(first) + 1;
        if misplaced {
            report.problems.push(format!(
                "{path}: the pairs word {:?} starts are not laid out as a build writes them",
                words[first]
            ));
        }
    }
    if next_blob + 1 != segment.pairs.len() {
        report.problems.push(format!(
            "{path}: {} blobs, the pairs take {}",
            segment.pairs.len(),
            next_blob + 1
        ));
    }
    Ok(())
}

/// Every facet the records imply exists with exactly the records counted, and no other.
fn check_facets(
    segment: &Segment,
    expected: &BTreeMap<Vec<u8>, u64>,
    report: &mut CheckReport,
) -> Result<()> {
    let path = segment.facets.file().path().display().to_string();
    let mut keys = Vec::new();
    segment.facets.for_each(|key, _| keys.push(key.to_vec()))?;
    if keys.len() != expected.len() {
        report.problems.push(format!(
            "{path}: {} facets, the records imply {}",
            keys.len(),
            expected.len()
        ));
    }
    for (key, &count) in expected {
        let found = segment.facet(key)?.len();
        if found != count {
            report.problems.push(format!(
                "{path}: facet {:?} holds {found} records, the records imply {count}",
                String::from_utf8_lossy(key)
            ));
        }
    }
    Ok(())
}

fn check_postings(
    dictionary: &Dictionary,
    blobs: &BlobFile,
    records: u32,
    report: &mut CheckReport,
    term_postings: bool,
) -> Result<()> {
    let terms = dictionary.len()?;
    if terms != blobs.len() {
        report.problems.push(format!(
            "{}: {} entries, but {} has {} blobs",
            dictionary.file().path().display(),
            terms,
            blobs.file().path().display(),
            blobs.len()
        ));
        return Ok(());
    }
    let file = blobs.file();
    let mut outside = None;
    let mut check_max = |max: Option<u32>, i: usize| {
        if max.is_some_and(|m| m >= records) && outside.is_none() {
            outside = Some(i);
        }
    };
    for i in 0..blobs.len() {
        let blob = blobs.get(i)?;
        if term_postings {
            let postings = TermPostings::parse(blob, file)?;
            // The record set through the validating decoder, then every record's groups and
            // frequencies (which checks the codes and the frequencies fill the blob exactly).
            let bitmap = postings.records(file)?;
            check_max(bitmap.max(), i);
            if bitmap.max().is_none_or(|m| m < records) {
                postings.for_each_with_tfs(records, file, |_, _, _| {})?;
            }
        } else {
            let bitmap = decode_bitmap(blob)
                .map_err(|problem| file.corrupt(format!("blob {i}: {problem}")))?;
            check_max(bitmap.max(), i);
        }
    }
    if let Some(i) = outside {
        report.problems.push(format!(
            "{}: blob {i} names a record beyond the {records} stored",
            file.path().display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::manifest::FileEntry;
    use crate::format::pairs::{EncodedList, PairsWriter};
    use crate::index::{BuildOptions, Index};

    /// Rewrites the pairs file of the index at `dir` with the same pairs and records, each
    /// list in the form `form` gives it, and names it in the manifest.
    fn rewrite_pairs(dir: &Path, form: impl Fn(EncodedList) -> EncodedList) {
        let mut manifest = Manifest::load(dir).unwrap();
        let entry = &manifest.segments[0];
        let segment = Segment::open(dir, entry, Store::open(dir, entry).unwrap()).unwrap();
        let header = segment.pair_header().unwrap();
        let path = Manifest::file_path(dir, &entry.name, "pairs");
        let rewritten = path.with_extension("rewritten");
        let mut writer = PairsWriter::create(rewritten.as_path()).unwrap();
        for first in 0..header.words.len() {
            let partners = segment.partners(first).unwrap();
            let mut pairs = Vec::new();
            for j in 0..partners.len() {
                let mut records = Vec::new();
                let list = segment.pair_records(&partners, j).unwrap();
                list.for_each(segment.len(), segment.pairs.file(), |r| records.push(r))
                    .unwrap();
                pairs.push((partners.second(j), form(EncodedList::new(&records))));
            }
            writer.push_word(&pairs).unwrap();
        }
        let footer = writer.finish(&header.words).unwrap();
        drop(segment);
        std::fs::rename(&rewritten, &path).unwrap();
        let files = &mut manifest.segments[0].files;
        files.insert("pairs".to_string(), FileEntry::from(footer));
        manifest.store(dir).unwrap();
    }

    /// Pairs holding the records the records imply, but not laid out as a build writes them (a
    /// short list in a blob of its own), are reported; written as a build writes them, they
    /// check sound, and searches answer the same either way.
    #[test]
    fn pairs_laid_out_otherwise_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("records.jsonl");
        // "alpha beta" held by 100 records (a list of its own), "beta gamma" by 40 (inline).
        let lines: Vec<String> = (0..100)
            .map(|i| {
                let task = if i < 40 {
                    "alpha beta gamma"
                } else {
                    "alpha beta"
                };
                format!(r#"{{"id":"r{i}","task":"{task} note{i}"}}"#)
            })
            .collect();
        std::fs::write(&input, lines.join("\n")).unwrap();
        let path = dir.path().join("index");
        let options = BuildOptions {
            inputs: vec![input],
            ..Default::default()
        };
        Index::build(&path, &options).unwrap();
        let answers = || {
            let index = Index::open(&path).unwrap();
            ["\"alpha beta\"", "\"beta gamma\"", "\"alpha beta gamma\""].map(|phrase| {
                let mut request = crate::SearchRequest::new(phrase);
                request.set_option("limit", Some("200")).unwrap();
                let response = index.search(&request).unwrap();
                let ids: Vec<String> = response.results.iter().map(|r| r.id.clone()).collect();
                (ids, response.counts)
            })
        };
        let before = answers();
        assert_eq!(before[0].0.len(), 100);
        assert!(check(&path).sound);

        // Every list in a blob of its own.
        rewrite_pairs(&path, |list| match list {
            EncodedList::Inline(bytes) => {
                let count = u32::from(bytes[0]).to_le_bytes();
                EncodedList::Own([&count[..], &bytes[1..]].concat())
            }
            own => own,
        });
        let report = check(&path);
        assert!(!report.sound);
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.contains("not laid out as a build writes")),
            "{:?}",
            report.problems
        );
        assert_eq!(answers(), before);

        // As a build writes them again.
        rewrite_pairs(&path, |list| list);
        let report = check(&path);
        assert!(report.sound, "{:?}", report.problems);
        assert_eq!(answers(), before);
    }
}
