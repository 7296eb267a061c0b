//! Damage sweeps in the spirit of Lucene's `TestAllFilesDetectTruncation` and
//! `TestAllFilesDetectBitFlips` (SPEC §9): every file of a small index — manifest, segment
//! files and record log — is cut at many offsets (0 and every footer byte included), has bytes
//! flipped at many positions, is deleted, or is swapped for the file of another index. After
//! each, in process, searches either answer exactly as the undamaged index did (the damaged
//! bytes were not needed, or the scan stood in, saying so in a notice that names the file), or
//! fail with a damage error naming the file when there is nothing to fall back to (the manifest,
//! the store, the log); `check` reports the file. No case may panic: a panic hook counts even
//! the panics something caught. A representative subset runs the real binary, which must never
//! exit 101 or die by a signal.

// A test binary of its own (not in tests/integration/): its panic hook counts every panic in
// the process, `fst` ones included, which other suites provoke and catch on purpose.
#[path = "integration/support.rs"]
mod support;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

use reliora::handle::writer;
use reliora::internals::index::check::{check, CheckReport};
use reliora::{Error, Index, SearchRequest};
use serde_json::Value;

use support::*;

const FOOTER_LEN: usize = 24;

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Counts every panic in this test binary, even one that something caught and survived.
fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // A failed assertion of a test is not the engine panicking.
            let in_tests = info
                .location()
                .is_some_and(|l| l.file().starts_with("tests"));
            if !in_tests {
                PANICS.fetch_add(1, Ordering::SeqCst);
            }
            default(info);
        }));
    });
}

fn assert_no_panics() {
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "something panicked");
}

/// The pristine index and the answers it gives.
struct Template {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    answers: Vec<Value>,
    /// Each log entry's byte range.
    log_entries: Vec<std::ops::Range<usize>>,
    /// The answers (without locators) of the index with only some log entries, by which.
    references: std::collections::HashMap<Vec<bool>, Vec<Value>>,
}

fn answers_of(path: &Path, comparable: fn(&reliora::SearchResponse) -> Value) -> Vec<Value> {
    let index = Index::open(path).expect("the pristine index opens");
    assert!(index.damage().is_none());
    sample_requests()
        .iter()
        .map(|r| {
            let response = index.search(r).expect("the pristine index answers");
            assert_eq!(response.backend, "index");
            comparable(&response)
        })
        .collect()
}

fn template() -> Template {
    count_panics();
    let dir = tempdir();
    let path = dir.path().join("index");
    build_small_index(&path);
    let answers = answers_of(&path, comparable);
    let report = check(&path);
    assert!(report.sound, "{report:?}");
    assert!(report.notes.is_empty(), "{report:?}");
    let manifest =
        reliora::internals::format::manifest::Manifest::load(&path).expect("the manifest");
    let log = path.join(&manifest.log);
    let offsets: Vec<usize> = reliora::internals::format::log::read_log(&log, manifest.log_key())
        .expect("the log")
        .entries
        .iter()
        .map(|(offset, _)| *offset as usize)
        .chain([std::fs::metadata(&log).expect("the log").len() as usize])
        .collect();
    let log_entries: Vec<_> = offsets.windows(2).map(|w| w[0]..w[1]).collect();
    assert_eq!(log_entries.len(), SMALL_LOG_ENTRIES);
    // What the index answers with one entry lost (damage in the middle), or with only the
    // first entries (a cut log).
    let mut references = std::collections::HashMap::new();
    let patterns = (0..SMALL_LOG_ENTRIES)
        .map(|lost| {
            (0..SMALL_LOG_ENTRIES)
                .map(|i| i != lost)
                .collect::<Vec<_>>()
        })
        .chain(
            (0..=SMALL_LOG_ENTRIES).map(|kept| (0..SMALL_LOG_ENTRIES).map(|i| i < kept).collect()),
        );
    for (n, keep) in patterns.enumerate() {
        let reference = dir.path().join(format!("reference-{n}"));
        build_small_index_keeping(&reference, |i| keep[i]);
        references.insert(keep, answers_of(&reference, comparable_without_locators));
    }
    Template {
        _dir: dir,
        path,
        answers,
        log_entries,
        references,
    }
}

/// Which file a case damaged, and how.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Truncated,
    Flipped,
    Missing,
    Foreign,
}

fn is_log(name: &str) -> bool {
    name.ends_with(".log")
}

/// The log's committed length: damage to it is reported, and every sound entry still read.
fn is_commit(name: &str) -> bool {
    name.ends_with(".commit")
}

/// Files with nothing to fall back to: their damage fails searches with a clear error.
fn is_essential(name: &str) -> bool {
    name == "MANIFEST" || name.ends_with(".store") || is_log(name)
}

fn names(error: &Error, name: &str) -> bool {
    matches!(error, Error::Corrupt { .. }) && error.to_string().contains(name)
}

/// Which log entries survive damage at byte `at` of the log: every entry but the one holding
/// a flipped byte; the entries wholly before a cut.
fn surviving_entries(template: &Template, kind: Kind, at: usize) -> Vec<bool> {
    template
        .log_entries
        .iter()
        .map(|entry| match kind {
            Kind::Flipped => !entry.contains(&at),
            _ => entry.end <= at,
        })
        .collect()
}

/// Searches and checks a damaged copy; `case` describes the damage (at byte `at`) for failure
/// messages.
fn assert_handled(template: &Template, dir: &Path, name: &str, kind: Kind, at: usize, case: &str) {
    // Damage to the log loses the entries it touched and no other: the answers are those of
    // the index written without them.
    let log_damage = is_log(name) && matches!(kind, Kind::Truncated | Kind::Flipped);
    let expected_answers: &Vec<Value> = if log_damage {
        &template.references[&surviving_entries(template, kind, at)]
    } else {
        &template.answers
    };
    match Index::open(dir) {
        Err(error) => {
            assert!(
                is_essential(name),
                "{case}: open failed although the index could fall back: {error}"
            );
            assert!(
                names(&error, name),
                "{case}: the error does not name {name}: {error}"
            );
        }
        Ok(index) => {
            for (request, expected) in sample_requests().iter().zip(expected_answers) {
                match index.search(request) {
                    Ok(response) => {
                        if response.degraded {
                            assert!(
                                response.backend == "scan" || is_log(name) || is_commit(name),
                                "{case}: degraded on the index backend"
                            );
                            assert!(
                                response.notices.iter().any(|n| n.contains(name)),
                                "{case}: the notice does not name {name}: {:?}",
                                response.notices
                            );
                        }
                        let answer = if log_damage {
                            comparable_without_locators(&response)
                        } else {
                            comparable(&response)
                        };
                        assert_eq!(
                            &answer,
                            expected,
                            "{case}: query {:?} answered differently",
                            request.query()
                        );
                    }
                    Err(error) => {
                        assert!(
                            name.ends_with(".store"),
                            "{case}: query {:?} failed: {error}",
                            request.query()
                        );
                        assert!(names(&error, name), "{case}: {error}");
                        assert!(
                            error.to_string().contains("cannot fall back"),
                            "{case}: {error}"
                        );
                    }
                }
            }
            // show, stats and export never panic either.
            let _ = index.get("r-05");
            let _ = index.stats();
            let _ = index.export(&mut Vec::new(), Path::new("-"));
        }
    }
    let report = check(dir);
    assert_check_names(&report, name, kind, case);
    if (is_log(name) || is_commit(name)) && !report.sound {
        // A write after damage refuses, names the remedy and cuts nothing.
        let before = std::fs::read(dir.join(name)).ok();
        let record = reliora::Record::from_json(&serde_json::json!({"title": "after damage"}))
            .expect("valid");
        let error = writer::record(dir, record).expect_err("a write over a damaged log");
        assert!(
            error.to_string().contains("reliora salvage"),
            "{case}: {error}"
        );
        assert_eq!(std::fs::read(dir.join(name)).ok(), before, "{case}");
    }
}

fn assert_check_names(report: &CheckReport, name: &str, kind: Kind, case: &str) {
    let in_problems = report.problems.iter().any(|p| p.contains(name));
    let in_notes = report.notes.iter().any(|n| n.contains(name));
    if report.sound {
        assert!(report.problems.is_empty(), "{case}: {report:?}");
    }
    if is_log(name) && kind == Kind::Truncated && report.sound {
        // A cut inside the last entry is a torn tail, noted; a cut exactly between entries
        // cannot be told from a shorter history (README, "Reliability").
        assert!(report.problems.is_empty(), "{case}: {report:?}");
    } else if is_log(name) && kind == Kind::Flipped && report.sound {
        // Only a flip in the last entry's payload reads as a torn tail.
        assert!(
            in_notes,
            "{case}: check neither reports nor notes the log: {report:?}"
        );
    } else {
        assert!(
            !report.sound && in_problems,
            "{case}: check does not report {name}: {report:?}"
        );
    }
}

/// Offsets to cut `len` bytes at: 0, a few small ones, spread points, every footer byte.
fn cut_points(name: &str, len: usize) -> Vec<usize> {
    let mut points = vec![0, 1, 2, 7, 8, 15, 16, 17];
    points.extend((1..16).map(|i| len * i / 16));
    if !is_log(name) {
        points.extend(len.saturating_sub(FOOTER_LEN)..len);
    } else {
        points.extend(len.saturating_sub(40)..len);
    }
    points.retain(|&p| p < len);
    points.sort_unstable();
    points.dedup();
    points
}

/// Positions to flip: spread over the file, the first bytes and every footer byte.
fn flip_points(name: &str, len: usize) -> Vec<usize> {
    let mut points: Vec<usize> = (0..8).collect();
    points.extend((0..48).map(|i| len * i / 48 + i % 3));
    if !is_log(name) {
        points.extend(len.saturating_sub(FOOTER_LEN)..len);
    } else {
        points.extend(len.saturating_sub(40)..len);
    }
    points.retain(|&p| p < len);
    points.sort_unstable();
    points.dedup();
    points
}

/// Damages every index file of a copy of the template, once per point `points(name, len)`
/// gives: `damage(bytes, n, point)` returns the damaged bytes and a description of the case.
/// Each case must be handled as `kind` (see [`assert_handled`]). Returns the number of cases.
fn sweep(
    label: &str,
    kind: Kind,
    points: fn(&str, usize) -> Vec<usize>,
    damage: impl Fn(&[u8], usize, usize) -> (Vec<u8>, String),
) -> usize {
    let template = template();
    let work = tempdir();
    let mut cases = 0;
    for name in index_files(&template.path) {
        let bytes = std::fs::read(template.path.join(&name)).expect("the file");
        for (n, at) in points(&name, bytes.len()).into_iter().enumerate() {
            let dir = work.path().join(format!("{name}-{label}-{at}"));
            copy_dir(&template.path, &dir);
            let (damaged, what) = damage(&bytes, n, at);
            std::fs::write(dir.join(&name), &damaged).expect("damaged");
            let case = format!("{name} {what}");
            assert_handled(&template, &dir, &name, kind, at, &case);
            std::fs::remove_dir_all(&dir).expect("cleaned up");
            cases += 1;
        }
    }
    cases
}

#[test]
fn truncation_of_every_file_at_many_offsets_is_detected() {
    let cases = sweep("cut", Kind::Truncated, cut_points, |bytes, _, cut| {
        let what = format!("cut to {cut} of {} bytes", bytes.len());
        (bytes[..cut].to_vec(), what)
    });
    assert!(cases > 250, "only {cases} cases");
    assert_no_panics();
}

#[test]
fn bit_flips_in_every_file_are_detected() {
    let cases = sweep("flip", Kind::Flipped, flip_points, |bytes, n, at| {
        let mut damaged = bytes.to_vec();
        // Alternate single-bit flips and whole-byte inversions.
        damaged[at] ^= if n % 2 == 0 { 0x01 << (n % 8) } else { 0xFF };
        (
            damaged,
            format!("with byte {at} of {} flipped", bytes.len()),
        )
    });
    assert!(cases > 400, "only {cases} cases");
    assert_no_panics();
}

#[test]
fn a_missing_file_is_detected() {
    let template = template();
    let work = tempdir();
    for name in index_files(&template.path) {
        let dir = work.path().join(format!("{name}-missing"));
        copy_dir(&template.path, &dir);
        std::fs::remove_file(dir.join(&name)).expect("removed");
        let case = format!("{name} missing");
        if name == "MANIFEST" {
            let error = Index::open(&dir).err().expect("no manifest, no index");
            assert!(error.to_string().contains("manifest is missing"), "{error}");
            assert!(!check(&dir).sound);
            continue;
        }
        assert_handled(&template, &dir, &name, Kind::Missing, 0, &case);
    }
    assert_no_panics();
}

/// Another index of the same shape: same generation, same file names, other records.
fn other_index(path: &Path) {
    build_small_index(path);
    writer::record(
        path,
        reliora::Record::from_json(&serde_json::json!({"id": "other", "title": "another index"}))
            .expect("valid"),
    )
    .expect("recorded");
    // The same generation number as the template: only contents tell the files apart.
    reliora::handle::writer::compact(path).expect("compacted");
}

#[test]
fn a_file_swapped_in_from_another_index_is_detected() {
    let template = template();
    let work = tempdir();
    let other = work.path().join("other");
    other_index(&other);
    // Rename the other index's files to the template's generation, so names match exactly.
    let template_files = index_files(&template.path);
    let other_files = index_files(&other);
    assert_eq!(template_files.len(), other_files.len());
    for (name, foreign) in template_files.iter().zip(&other_files) {
        let ours = std::fs::read(template.path.join(name)).expect("read");
        if std::fs::read(other.join(foreign)).expect("read") == ours {
            // Byte-identical (e.g. both indexes have no entities): nothing to detect.
            continue;
        }
        let dir = work.path().join(format!("{name}-foreign"));
        copy_dir(&template.path, &dir);
        std::fs::copy(other.join(foreign), dir.join(name)).expect("swapped");
        let case = format!("{name} swapped for {foreign} of another index");
        if name == "MANIFEST" {
            // The other manifest names other files: nothing of this index matches it.
            assert!(Index::open(&dir).is_err(), "{case}");
            let report = check(&dir);
            assert!(!report.sound, "{case}: {report:?}");
            continue;
        }
        assert_handled(&template, &dir, name, Kind::Foreign, 0, &case);
    }
    // A log of another index with the same generation number is foreign too.
    let same_generation = work.path().join("twin");
    build_small_index(&same_generation);
    let dir = work.path().join("twin-log");
    copy_dir(&template.path, &dir);
    let log = index_files(&dir)
        .into_iter()
        .find(|n| is_log(n))
        .expect("a log");
    std::fs::copy(same_generation.join(&log), dir.join(&log)).expect("swapped");
    let error = Index::open(&dir).err().expect("a foreign log is refused");
    assert!(error.to_string().contains("another index"), "{error}");
    assert!(!check(&dir).sound);
    assert_no_panics();
}

#[test]
fn a_stale_file_from_an_older_generation_is_detected() {
    let template = template();
    let work = tempdir();
    let dir = work.path().join("index");
    copy_dir(&template.path, &dir);
    let old: Vec<(String, Vec<u8>)> = index_files(&dir)
        .into_iter()
        .filter(|n| n != "MANIFEST")
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).expect("read");
            (n, bytes)
        })
        .collect();
    writer::compact(&dir).expect("compacted into a new generation");
    let answers: Vec<Value> = sample_requests()
        .iter()
        .map(|r| comparable(&Index::open(&dir).unwrap().search(r).unwrap()))
        .collect();
    assert_eq!(answers, template.answers, "compaction changed answers");
    for new_name in index_files(&dir).into_iter().filter(|n| n != "MANIFEST") {
        let suffix = new_name.split_once('.').map(|(_, s)| s).expect("a suffix");
        let (_, bytes) = old
            .iter()
            .find(|(n, _)| n.split_once('.').map(|(_, s)| s) == Some(suffix))
            .expect("the same file of the older generation");
        if std::fs::read(dir.join(&new_name)).expect("read") == *bytes {
            // Byte-identical across generations: nothing to detect.
            continue;
        }
        let case_dir = work.path().join(format!("{new_name}-stale"));
        copy_dir(&dir, &case_dir);
        std::fs::write(case_dir.join(&new_name), bytes).expect("stale file");
        let case = format!("{new_name} replaced by its older generation");
        assert_handled(&template, &case_dir, &new_name, Kind::Foreign, 0, &case);
    }
    assert_no_panics();
}

#[test]
fn backend_index_refuses_to_fall_back_and_backend_scan_is_not_degraded() {
    let template = template();
    let work = tempdir();
    let dir = work.path().join("index");
    copy_dir(&template.path, &dir);
    let name = index_files(&dir)
        .into_iter()
        .find(|n| n.ends_with(".terms.fst"))
        .expect("the term dictionary");
    let mut bytes = std::fs::read(dir.join(&name)).unwrap();
    bytes[3] ^= 0x10;
    std::fs::write(dir.join(&name), bytes).unwrap();
    let index = Index::open(&dir).unwrap();
    let mut request = SearchRequest::new("tokio runtime panic");
    request.set_option("backend", Some("index")).unwrap();
    let error = index.search(&request).unwrap_err();
    assert!(names(&error, &name), "{error}");
    request.set_option("backend", Some("scan")).unwrap();
    let response = index.search(&request).unwrap();
    assert_eq!(
        (response.backend.as_str(), response.degraded),
        ("scan", false)
    );
    request.set_option("backend", Some("auto")).unwrap();
    let response = index.search(&request).unwrap();
    assert_eq!(
        (response.backend.as_str(), response.degraded),
        ("scan", true)
    );
    assert!(
        response.notices[0].contains(&name),
        "{:?}",
        response.notices
    );
}

/// Damage to any file but the store, the manifest and the log loses nothing: writes go on
/// (they only append to the log), and `compact` rebuilds the index from the stored records.
#[test]
fn compact_heals_an_index_whose_store_is_intact() {
    let template = template();
    let work = tempdir();
    // The same writes on an undamaged copy give the answers to expect.
    let expected_dir = work.path().join("expected");
    copy_dir(&template.path, &expected_dir);
    writer::feedback(&expected_dir, "r-04", reliora::record::Outcome::Success).unwrap();
    writer::feedback(&expected_dir, "r-04", reliora::record::Outcome::Failure).unwrap();
    writer::compact(&expected_dir).unwrap();
    for suffix in [
        "terms.fst",
        "terms.post",
        "facets.fst",
        "facets.post",
        "ids.fst",
        "columns",
    ] {
        let dir = work.path().join(suffix);
        copy_dir(&template.path, &dir);
        let name = index_files(&dir)
            .into_iter()
            .find(|n| n.ends_with(suffix))
            .expect("the file");
        let mut bytes = std::fs::read(dir.join(&name)).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x40;
        std::fs::write(dir.join(&name), bytes).unwrap();
        assert!(!check(&dir).sound, "{suffix}");
        // Writes still work on the damaged index, and are visible at once.
        writer::feedback(&dir, "r-04", reliora::record::Outcome::Success)
            .unwrap_or_else(|e| panic!("{suffix}: feedback on a damaged index: {e}"));
        writer::feedback(&dir, "r-04", reliora::record::Outcome::Failure).unwrap();
        let report = writer::compact(&dir)
            .unwrap_or_else(|e| panic!("{suffix}: compact of a damaged index: {e}"));
        assert_eq!(report.records, 21, "{suffix}");
        let healed = check(&dir);
        assert!(healed.sound, "{suffix}: {healed:?}");
        let index = Index::open(&dir).unwrap();
        assert!(index.damage().is_none());
        let reference = Index::open(&expected_dir).unwrap();
        for request in sample_requests() {
            let response = index.search(&request).unwrap();
            assert_eq!(response.backend, "index");
            assert_eq!(
                comparable(&response),
                comparable(&reference.search(&request).unwrap()),
                "{suffix}: {:?}",
                request.query()
            );
        }
    }
    assert_no_panics();
}

/// The real binary on a representative subset of the damage: never exit 101, never a signal,
/// always one JSON document, and the exit status SPEC §9 gives.
#[test]
fn the_binary_never_panics_on_a_damaged_index() {
    let template = template();
    let work = tempdir();
    for name in index_files(&template.path) {
        let bytes = std::fs::read(template.path.join(&name)).unwrap();
        let len = bytes.len();
        let mut variants: Vec<(String, Vec<u8>)> = vec![
            ("empty".into(), Vec::new()),
            ("half".into(), bytes[..len / 2].to_vec()),
            ("no last byte".into(), bytes[..len - 1].to_vec()),
        ];
        let mut flipped = bytes.clone();
        flipped[len / 3] ^= 0x08;
        variants.push(("flipped".into(), flipped));
        for (what, damaged) in variants {
            let dir = work
                .path()
                .join(format!("{name}-{}", what.replace(' ', "-")));
            copy_dir(&template.path, &dir);
            std::fs::write(dir.join(&name), &damaged).unwrap();
            let case = format!("{name} {what}");
            let search = reliora(&dir, &["search", "tokio runtime panic", "--now", NOW], None);
            let json = search.json();
            match search.status {
                0 => {
                    if json["degraded"] == true {
                        let notices = json["notices"].to_string();
                        assert!(notices.contains(&name), "{case}: {notices}");
                    }
                }
                1 => {
                    assert_eq!(json["error"], "index_damaged", "{case}: {json}");
                    assert!(
                        json["message"].as_str().unwrap_or("").contains(&name),
                        "{case}: {json}"
                    );
                }
                other => panic!("{case}: search exited {other}: {search:?}"),
            }
            let checked = reliora(&dir, &["check"], None);
            let report = checked.json();
            let log_torn_tail = is_log(&name) && checked.status == 0;
            if !log_torn_tail {
                assert_eq!(checked.status, 3, "{case}: {checked:?}");
                assert!(checked.stdout.contains(&name), "{case}: {checked:?}");
            } else {
                assert!(
                    report["notes"].to_string().contains(&name),
                    "{case}: {report}"
                );
            }
            for args in [
                vec!["show", "r-05"],
                vec!["stats"],
                vec!["export"],
                vec!["search", "", "--tag", "postgres", "--backend", "index"],
            ] {
                let run = reliora(&dir, &args, None);
                assert!(matches!(run.status, 0 | 1), "{case}: {args:?}: {run:?}");
            }
        }
    }
}
