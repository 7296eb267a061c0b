//! The write path through the library: record, feedback, delete, compact (SPEC §8), the log's
//! torn-tail rule, and a model-based property: any sequence of writes answers like an index
//! built from scratch out of the same live records.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use reliora::handle::writer;
use reliora::record::{LocatedRecord, Outcome};
use reliora::{ErrorCode, Index, MatchLevel, Record, SearchRequest, SearchResponse};
use serde_json::json;

fn rec(value: serde_json::Value) -> Record {
    Record::from_json(&value).unwrap()
}

fn request(query: &str) -> SearchRequest {
    let mut r = SearchRequest::new(query);
    r.set_option("now", Some("2026-01-01T00:00:00Z")).unwrap();
    r.set_option("limit", Some("200")).unwrap();
    r
}

fn search(dir: &Path, query: &str) -> SearchResponse {
    Index::open(dir).unwrap().search(&request(query)).unwrap()
}

fn ids(response: &SearchResponse) -> Vec<&str> {
    response.results.iter().map(|r| r.id.as_str()).collect()
}

/// What must agree between two indexes holding the same live records.
fn answer(response: &SearchResponse) -> serde_json::Value {
    let results: Vec<_> = response
        .results
        .iter()
        .map(|r| {
            json!([
                r.id,
                r.score,
                r.match_level,
                r.superseded_by,
                r.score_breakdown
            ])
        })
        .collect();
    json!({"counts": response.counts, "results": results})
}

#[test]
fn record_into_an_empty_directory_creates_the_index_and_replaces_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    let first = writer::record(
        &index,
        rec(json!({"id": "a", "title": "pgbouncer drops prepared statements", "tags": ["postgres"]})),
    )
    .unwrap();
    assert!(!first.replaced);
    assert!(
        first.locator.starts_with("g000001.log@"),
        "{}",
        first.locator
    );
    assert_eq!(ids(&search(&index, "pgbouncer")), ["a"]);

    let second = writer::record(
        &index,
        rec(json!({"id": "a", "title": "redis eviction under maxmemory", "tags": ["redis"]})),
    )
    .unwrap();
    assert!(second.replaced);
    assert!(search(&index, "pgbouncer").results.is_empty());
    assert_eq!(ids(&search(&index, "redis eviction")), ["a"]);
    // show accepts the new locator; the replaced version is gone.
    let opened = Index::open(&index).unwrap();
    assert_eq!(
        opened.get(&second.locator).unwrap().record.title,
        Some("redis eviction under maxmemory".to_string())
    );
    assert_eq!(
        opened.get(&first.locator).unwrap_err().code(),
        ErrorCode::NotFound
    );
    assert_eq!(opened.stats().unwrap().records, 1);
}

#[test]
fn delete_removes_from_search_and_export_and_unknown_ids_are_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    for id in ["a", "b"] {
        writer::record(
            &index,
            rec(json!({"id": id, "title": format!("docker cache {id}")})),
        )
        .unwrap();
    }
    writer::delete(&index, "a").unwrap();
    assert_eq!(ids(&search(&index, "docker cache")), ["b"]);
    let mut out = Vec::new();
    let opened = Index::open(&index).unwrap();
    assert_eq!(opened.export(&mut out, Path::new("-")).unwrap(), 1);
    assert!(!String::from_utf8(out).unwrap().contains("\"a\""));
    assert_eq!(
        writer::delete(&index, "a").unwrap_err().code(),
        ErrorCode::NotFound
    );
    assert_eq!(
        writer::feedback(&index, "zzz", Outcome::Success)
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );
}

#[test]
fn feedback_moves_the_score_by_the_spec_formula() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    writer::record(
        &index,
        rec(json!({"id": "a", "title": "flaky playwright test"})),
    )
    .unwrap();
    let base = search(&index, "flaky playwright").results[0].score;
    for outcome in [
        Outcome::Success,
        Outcome::Success,
        Outcome::Partial,
        Outcome::Outdated,
    ] {
        writer::feedback(&index, "a", outcome).unwrap();
    }
    let report = writer::feedback(&index, "a", Outcome::Failure).unwrap();
    assert_eq!(
        (
            report.feedback.success,
            report.feedback.partial,
            report.feedback.failure
        ),
        (2, 1, 1)
    );
    // s=2 p=1 f=1 o=1: (2.5 × 2.5 − 1.5 × 1.5) / (5 + 2) = 4 / 7.
    let after = search(&index, "flaky playwright").results[0].clone();
    assert!((after.score - base - 4.0 / 7.0).abs() < 1e-12, "{after:?}");
    assert_eq!(after.score_breakdown.to_map()["feedback"], json!(4.0 / 7.0));
    // The same after compaction, which folds the counts into the stored record.
    writer::compact(&index).unwrap();
    let compacted = Index::open(&index).unwrap();
    assert_eq!(compacted.get("a").unwrap().record.feedback.total(), 5);
    assert_eq!(compacted.stats().unwrap().log_entries, 0);
}

fn warning_ids(report: &writer::RecordReport) -> Vec<(&str, MatchLevel)> {
    report
        .warnings
        .iter()
        .map(|w| (w.id.as_str(), w.match_level))
        .collect()
}

#[test]
fn duplicate_warnings_follow_spec_8() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    let base = |id: &str, ctx: &str| {
        json!({"id": id, "title": "tokio runtime panic on drop", "tags": ["rust", "tokio"],
               "problems": ["cannot drop a runtime in async context"], "projectContext": ctx,
               "solution": format!("solution {id}")})
    };
    // Strong matches sharing a project-context token stay strong.
    for id in ["s1", "s2", "s3", "s4"] {
        writer::record(&index, rec(base(id, "payments service"))).unwrap();
    }
    let report = writer::record(&index, rec(base("new", "payments api"))).unwrap();
    // The first three in result order only (equal scores: id order).
    assert_eq!(
        warning_ids(&report),
        [
            ("s1", MatchLevel::Strong),
            ("s2", MatchLevel::Strong),
            ("s3", MatchLevel::Strong)
        ]
    );
    assert!(report
        .warnings
        .iter()
        .all(|w| w.code == "SIMILAR_EXPERIENCE_FOUND"));

    // No shared project-context or applicability token: strong becomes moderate.
    let report = writer::record(&index, rec(base("other", "search indexer"))).unwrap();
    assert!(
        report
            .warnings
            .iter()
            .all(|w| w.match_level == MatchLevel::Moderate),
        "{report:?}"
    );
    assert!(!warning_ids(&report).iter().any(|(id, _)| *id == "other"));

    // Equal title, solution and applicability (as phrases) make even a weak match strong.
    let dir2 = tempfile::tempdir().unwrap();
    let index2 = dir2.path().join("idx");
    let twin = json!({"id": "t1", "title": "Zig!", "solution": "Use  ZIG 0.13", "task": "alpha beta gamma delta epsilon"});
    writer::record(&index2, rec(twin)).unwrap();
    let report = writer::record(
        &index2,
        rec(
            json!({"id": "t2", "title": "zig", "solution": "use zig 0.13",
                   "problems": ["alpha unrelated words here now"]}),
        ),
    )
    .unwrap();
    assert_eq!(warning_ids(&report), [("t1", MatchLevel::Strong)]);

    // A record never warns about itself (replacement) or the record it supersedes.
    let report = writer::record(
        &index2,
        rec(json!({"id": "t3", "title": "zig", "solution": "use zig 0.13", "supersedes": "t1"})),
    )
    .unwrap();
    assert!(
        warning_ids(&report).iter().all(|(id, _)| *id != "t1"),
        "{report:?}"
    );
    let report = writer::record(
        &index2,
        rec(json!({"id": "t3", "title": "zig", "solution": "use zig 0.13", "supersedes": "t1"})),
    )
    .unwrap();
    assert!(report.replaced);
    // Neither itself nor t1 (which it supersedes): only its twin t2.
    assert_eq!(warning_ids(&report), [("t2", MatchLevel::Strong)]);

    // A query without tokens gives no warnings, not an error.
    let report = writer::record(&index2, rec(json!({"id": "t4", "title": "the of and"}))).unwrap();
    assert!(report.warnings.is_empty());
}

#[test]
fn a_torn_log_tail_is_ignored_and_cut_off_by_the_next_writer() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    writer::record(&index, rec(json!({"id": "a", "title": "alpha record"}))).unwrap();
    let log = index.join(Index::open(&index).unwrap().manifest().log.clone());
    let commit = reliora::internals::format::log::commit_path(&log);
    let committed_after_a = std::fs::read(&commit).unwrap();
    let len_after_a = std::fs::metadata(&log).unwrap().len() as usize;
    writer::record(&index, rec(json!({"id": "b", "title": "bravo record"}))).unwrap();
    let bytes = std::fs::read(&log).unwrap();
    // A crash while appending "b", before its committed length was recorded: its entry is
    // cut short.
    std::fs::write(&log, &bytes[..len_after_a + 30]).unwrap();
    std::fs::write(&commit, &committed_after_a).unwrap();
    assert_eq!(ids(&search(&index, "record")), ["a"]);
    writer::record(&index, rec(json!({"id": "c", "title": "charlie record"}))).unwrap();
    assert_eq!(ids(&search(&index, "record")), ["a", "c"]);
    assert!(reliora::internals::index::check::check(&index).sound);
}

#[test]
fn compaction_keeps_every_answer() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    Index::build(
        &index,
        &reliora::BuildOptions {
            inputs: vec![data],
            ..Default::default()
        },
    )
    .unwrap();
    writer::record(&index, rec(json!({"id": "new-1", "title": "docker layer cache busted by COPY . .", "supersedes": "ct-003", "tags": ["docker"]}))).unwrap();
    writer::feedback(&index, "rs-008", Outcome::Failure).unwrap();
    writer::delete(&index, "db-001").unwrap();
    let queries = [
        "docker layer cache",
        "connection pool timeout",
        "postgres",
        "tokio runtime",
    ];
    let before: Vec<_> = queries.iter().map(|q| answer(&search(&index, q))).collect();
    let cache = search(&index, "docker layer cache");
    let superseded = cache.results.iter().find(|r| r.id == "ct-003").unwrap();
    assert_eq!(superseded.superseded_by.as_deref(), Some("new-1"));
    writer::compact(&index).unwrap();
    let after: Vec<_> = queries.iter().map(|q| answer(&search(&index, q))).collect();
    assert_eq!(before, after);
    assert!(reliora::internals::index::check::check(&index).sound);
}

#[test]
fn the_log_is_compacted_automatically_past_its_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("idx");
    writer::record(&index, rec(json!({"id": "a", "title": "alpha"}))).unwrap();
    for _ in 1..writer::COMPACT_AFTER_ENTRIES {
        writer::feedback(&index, "a", Outcome::Success).unwrap();
    }
    let opened = Index::open(&index).unwrap();
    assert_eq!(opened.stats().unwrap().log_entries, 0);
    assert!(opened.manifest().generation >= 2);
    assert_eq!(
        opened.get("a").unwrap().record.feedback.success,
        writer::COMPACT_AFTER_ENTRIES as u64 - 1
    );
}

#[derive(Debug, Clone)]
enum Op {
    Record(usize, usize, Option<usize>),
    Feedback(usize, usize),
    Delete(usize),
    Compact,
}

const TITLES: &[&str] = &[
    "tokio runtime panic",
    "postgres pool timeout",
    "docker cache busted",
    "tokio pool leak",
    "flaky test retries",
    "postgres migration lock",
];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..6usize, 0..TITLES.len(), prop::option::of(0..6usize))
            .prop_map(|(i, t, s)| Op::Record(i, t, s)),
        2 => (0..6usize, 0..5usize).prop_map(|(i, o)| Op::Feedback(i, o)),
        1 => (0..6usize).prop_map(Op::Delete),
        1 => Just(Op::Compact),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn any_write_sequence_answers_like_a_fresh_build_of_the_live_records(
        ops in prop::collection::vec(op(), 1..16)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("idx");
        let mut model: BTreeMap<String, Record> = BTreeMap::new();
        for op in &ops {
            match op {
                Op::Record(i, t, s) => {
                    let mut value = json!({"id": format!("r{i}"), "title": TITLES[*t],
                        "tags": [TITLES[(*t + 1) % TITLES.len()]]});
                    if let Some(s) = s {
                        value["supersedes"] = format!("r{s}").into();
                    }
                    let record = rec(value);
                    let report = writer::record(&index, record.clone()).unwrap();
                    prop_assert_eq!(report.replaced, model.contains_key(&record.id));
                    model.insert(record.id.clone(), record);
                }
                Op::Feedback(i, o) => {
                    let id = format!("r{i}");
                    let outcome = Outcome::ALL[*o];
                    let result = writer::feedback(&index, &id, outcome);
                    match model.get_mut(&id) {
                        Some(r) => { result.unwrap(); r.feedback.add(outcome); }
                        None => prop_assert_eq!(result.unwrap_err().code(), ErrorCode::NotFound),
                    }
                }
                Op::Delete(i) => {
                    let id = format!("r{i}");
                    let result = writer::delete(&index, &id);
                    match model.remove(&id) {
                        Some(_) => { result.unwrap(); }
                        None => prop_assert_eq!(result.unwrap_err().code(), ErrorCode::NotFound),
                    }
                }
                Op::Compact => {
                    let result = writer::compact(&index);
                    if index.join("MANIFEST").exists() {
                        result.unwrap();
                    } else {
                        prop_assert!(result.unwrap_err().to_string().contains("no index here"));
                    }
                }
            }
        }
        if !index.exists() {
            return Ok(());
        }
        let fresh = dir.path().join("fresh");
        let records: Vec<LocatedRecord> = model
            .values()
            .map(|r| LocatedRecord { record: r.clone(), locator: r.id.clone() })
            .collect();
        Index::build_from_records(&fresh, records, &reliora::BuildOptions::default()).unwrap();
        let written = Index::open(&index).unwrap();
        let rebuilt = Index::open(&fresh).unwrap();
        for query in ["tokio", "postgres pool", "docker cache", "flaky test retries", "lock leak"] {
            for profile in ["standard", "decay", "recency", "bm25f"] {
                let mut a = request(query);
                a.set_option("profile", Some(profile)).unwrap();
                prop_assert_eq!(
                    answer(&written.search(&a).unwrap()),
                    answer(&rebuilt.search(&a).unwrap()),
                    "query {} profile {}", query, profile
                );
            }
            let mut scan = request(query);
            scan.set_option("backend", Some("scan")).unwrap();
            prop_assert_eq!(
                answer(&written.search(&scan).unwrap()),
                answer(&rebuilt.search(&request(query)).unwrap())
            );
        }
        prop_assert_eq!(written.stats().unwrap().records, model.len() as u64);
    }
}
