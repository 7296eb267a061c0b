//! `reliora check`: verify every file of an index in full, and the invariants between files.

use std::path::Path;

use serde::Serialize;

use crate::error::Result;
use crate::format::blobs::BlobFile;
use crate::format::dictionary::Dictionary;
use crate::format::file::IndexFile;
use crate::format::footer::FileKind;
use crate::format::manifest::Manifest;
use crate::format::postings::TermPostings;
use crate::format::SEGMENT_FILES;
use crate::index::segment::{Segment, Store};
use crate::schema::{FieldGroup, GROUP_COUNT};

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
}

fn kind_of(suffix: &str) -> FileKind {
    match suffix {
        "terms.fst" | "facets.fst" | "ids.fst" | "entities.fst" => FileKind::Fst,
        "terms.post" | "facets.post" => FileKind::Postings,
        "store" => FileKind::Store,
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
    };
    let manifest = match Manifest::load(dir) {
        Ok(m) => m,
        Err(e) => {
            report.sound = false;
            report.problems.push(e.to_string());
            return report;
        }
    };
    report.files_checked += 1;
    for entry in &manifest.segments {
        let mut files_sound = true;
        for suffix in SEGMENT_FILES {
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
        if files_sound {
            if let Err(e) = check_segment(dir, entry, &mut report) {
                report.problems.push(e.to_string());
            }
        }
    }
    report.sound = report.problems.is_empty();
    report
}

fn check_segment(
    dir: &Path,
    entry: &crate::format::manifest::SegmentEntry,
    report: &mut CheckReport,
) -> Result<()> {
    let segment = Segment::open(dir, entry, Store::open(dir, entry)?)?;
    let n = segment.len();
    let mut group_length_sums = [0u64; GROUP_COUNT];
    for doc in 0..n {
        let stored = segment.stored(doc)?;
        let row = segment.columns.row(doc)?;
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
        if row.id != stored.record.id {
            report.problems.push(format!(
                "{}: record {doc} has id {:?} in the columns but {:?} in the store",
                segment.columns.file().path().display(),
                row.id,
                stored.record.id
            ));
        }
        if segment.doc_of_id(&stored.record.id)? != Some(doc) {
            report.problems.push(format!(
                "{}: id {:?} does not map to record {doc}",
                segment.ids.file().path().display(),
                stored.record.id
            ));
        }
        report.records_checked += 1;
    }
    if group_length_sums != segment.group_length_sums {
        report.problems.push(format!(
            "{}: the manifest's group length sums {:?} differ from the columns' {:?}",
            dir.join(crate::format::manifest::MANIFEST_NAME).display(),
            segment.group_length_sums,
            group_length_sums
        ));
    }
    check_postings(&segment.terms, &segment.postings, n, report, true)?;
    check_postings(&segment.facets, &segment.facet_postings, n, report, false)?;
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
            for g in FieldGroup::ALL {
                let bitmap = postings.records(g, file)?;
                let tfs = postings.term_frequencies(g, file)?;
                if tfs.len() as u64 != bitmap.len() {
                    report.problems.push(format!(
                        "{}: blob {i} has {} records but {} term frequencies",
                        file.path().display(),
                        bitmap.len(),
                        tfs.len()
                    ));
                }
                check_max(bitmap.max(), i);
            }
        } else {
            let bitmap = roaring::RoaringBitmap::deserialize_from(blob)
                .map_err(|e| file.corrupt(format!("blob {i}: invalid bitmap: {e}")))?;
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
