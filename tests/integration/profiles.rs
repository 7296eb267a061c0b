//! SPEC §5 (profiles, entities, configuration, rerank) and §6.2–6.6 (MMR, candidates, token
//! budget) checked through the library API, one table per rule, plus federated search.
//!
//! Each test builds small indexes in a temporary directory and searches them at a fixed `now`.
//! Expected values are worked out by hand from the SPEC formulas and spelled out here rather
//! than computed with the crate's own scoring code.

use std::path::Path;

use reliora::{search_federated, BuildOptions, ErrorCode, Index, SearchRequest, SearchResponse};
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::support::entity_adjusted;

/// The reference time of every search.
const NOW: &str = "2026-01-01T00:00:00Z";

type Options<'a> = Vec<(&'a str, &'a str)>;

struct Fixture {
    index: Index,
    dir: TempDir,
}

fn build_into(dir: &Path, name: &str, records: &[Value]) -> Index {
    let input = dir.join(format!("{name}.jsonl"));
    let lines: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&input, lines).expect("the fixture is written");
    let index_dir = dir.join(name);
    let options = BuildOptions {
        inputs: vec![input],
        ..BuildOptions::default()
    };
    Index::build(&index_dir, &options).expect("the fixture builds");
    Index::open(&index_dir).expect("the fixture opens")
}

fn fixture(records: &[Value]) -> Fixture {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let index = build_into(dir.path(), "index", records);
    Fixture { index, dir }
}

fn request(query: &str, options: &[(&str, &str)]) -> reliora::Result<SearchRequest> {
    let mut request = SearchRequest::new(query);
    request.set_option("now", Some(NOW))?;
    for &(name, value) in options {
        let value = if matches!(name, "include-superseded") {
            None
        } else {
            Some(value)
        };
        request.set_option(name, value)?;
    }
    Ok(request)
}

impl Fixture {
    fn try_search(&self, query: &str, options: &[(&str, &str)]) -> reliora::Result<SearchResponse> {
        self.index.search(&request(query, options)?)
    }

    fn search(&self, query: &str, options: &[(&str, &str)]) -> SearchResponse {
        self.try_search(query, options)
            .unwrap_or_else(|e| panic!("search {query:?} {options:?}: {e}"))
    }
}

fn ids(response: &SearchResponse) -> Vec<&str> {
    response.results.iter().map(|r| r.id.as_str()).collect()
}

fn result<'a>(response: &'a SearchResponse, id: &str) -> &'a reliora::SearchResult {
    response
        .results
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("{id} is not among {:?}", ids(response)))
}

fn num(result: &reliora::SearchResult, key: &str) -> f64 {
    result.score_breakdown.to_map()[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {:?}", result.score_breakdown))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

fn keys(result: &reliora::SearchResult) -> Vec<String> {
    result.score_breakdown.to_map().keys().cloned().collect()
}

/// `rel` of SPEC §5.1.
fn rel(r: f64, r_max: f64) -> f64 {
    0.30 + 0.52 * (r / r_max) * (r_max / 18.0).min(1.0)
}

// ---------------------------------------------------------------------------------------------
// SPEC 5.1: decay.

#[test]
fn decay_bands_relevance_and_lists_its_breakdown_keys() {
    let f = fixture(&[
        // title: kernel + panic = 16, exact phrase 12 → r = 28
        json!({"id": "d-a", "title": "kernel panic"}),
        // task: 2 × 5 = 10, phrase 12 → r = 22
        json!({"id": "d-b", "title": "unrelated words", "task": "kernel panic"}),
        // warnings: 2, coverage 1/2 → r = 2 × 0.8 = 1.6
        json!({"id": "d-c", "title": "another thing", "warnings": ["kernel"]}),
    ]);
    let response = f.search("kernel panic", &[("profile", "decay")]);
    assert_eq!(response.profile, "decay");
    assert_eq!(ids(&response), ["d-a", "d-b", "d-c"]);
    for (id, r) in [("d-a", 28.0), ("d-b", 22.0), ("d-c", 1.6)] {
        let x = result(&response, id);
        let expected_rel = rel(r, 28.0);
        // No createdAt: temporal 0; salience 0.5; no adjustment; no feedback.
        let base = expected_rel * 1.0 * 1.05;
        assert!(close(num(x, "relevance"), r), "{id}");
        assert!(close(num(x, "rel"), expected_rel), "{id}");
        assert_eq!(x.score_breakdown.to_map()["ageDays"], Value::Null);
        assert_eq!(num(x, "temporal"), 0.0);
        assert_eq!(num(x, "salience"), 0.5);
        assert!(close(num(x, "base"), base), "{id}");
        assert_eq!(x.score_breakdown.to_map()["adjustments"], json!([]));
        assert!(close(num(x, "clamped"), base));
        assert_eq!(num(x, "posterior"), 1.0);
        assert!(close(x.score, base), "{id}: {}", x.score);
        assert_eq!(x.normalized_score, x.score.clamp(0.0, 1.0));
        assert_eq!(
            keys(x),
            [
                "relevance",
                "rel",
                "ageDays",
                "temporal",
                "salience",
                "base",
                "adjustments",
                "clamped",
                "posterior"
            ]
        );
    }
    assert!(close(num(result(&response, "d-a"), "rel"), 0.82));
    // Below the saturation, rel is scaled down by r_max / 18.
    let response = f.search("unrelated", &[("profile", "decay")]);
    assert!(close(
        num(&response.results[0], "rel"),
        0.30 + 0.52 * 8.0 / 18.0
    ));
}

fn dated(id: &str, title: &str, created: &str, extra: Value) -> Value {
    let mut record = json!({"id": id, "title": title, "createdAt": created});
    if let Value::Object(map) = extra {
        for (k, v) in map {
            record[k] = v;
        }
    }
    record
}

#[test]
fn decay_temporal_salience_adjustments_and_posterior_table() {
    let f = fixture(&[
        dated("t-1", "kernel one", "2025-12-29T00:00:00Z", json!({})),
        dated(
            "t-2",
            "kernel two",
            "2025-11-22T00:00:00Z",
            json!({"memoryType": "Semantic", "salience": 0.9, "decayFactor": 0.5}),
        ),
        dated("t-3", "kernel three", "2025-12-25T00:00:00Z", json!({})),
        dated("t-4", "kernel four", "2025-12-24T12:00:00Z", json!({})),
        dated(
            "t-5",
            "kernel five",
            "2025-12-02T00:00:00Z",
            json!({"memoryType": "semantic", "salience": 0.85, "decayFactor": 0}),
        ),
        json!({"id": "t-6", "title": "kernel six"}),
        dated(
            "t-7",
            "kernel seven",
            "2026-01-01T00:00:00Z",
            json!({"feedback": {"success": 3, "failure": 1}, "memoryType": "procedural"}),
        ),
        dated(
            "t-8",
            "kernel eight",
            "2026-01-05T00:00:00Z",
            json!({"memoryType": "semantic", "salience": 0.2}),
        ),
    ]);
    let response = f.search("kernel", &[("profile", "decay"), ("limit", "20")]);
    // Every record: title match only → r = 8, r_max = 8.
    let r = rel(8.0, 8.0);
    // (id, age in days, effective decay factor, salience, adjustments, delta, posterior)
    type Row<'a> = (&'a str, Option<f64>, f64, f64, &'a [&'a str], f64, f64);
    let rows: [Row; 8] = [
        ("t-1", Some(3.0), 0.02, 0.5, &["recentEpisodic"], 0.05, 1.0),
        ("t-2", Some(40.0), 0.1, 0.9, &["staleSemantic"], -0.05, 1.0),
        ("t-3", Some(7.0), 0.02, 0.5, &["recentEpisodic"], 0.05, 1.0),
        ("t-4", Some(7.5), 0.02, 0.5, &[], 0.0, 1.0),
        ("t-5", Some(30.0), 0.0, 0.85, &["staleSemantic"], -0.05, 1.0),
        ("t-6", None, 0.02, 0.5, &[], 0.0, 1.0),
        (
            "t-7",
            Some(0.0),
            0.02,
            0.5,
            &[],
            0.0,
            1.0 + 0.3 * (4.0 / 6.0 - 0.5),
        ),
        // Created after now: age clamped at 0; salience below staleSemantic's bound.
        ("t-8", Some(0.0), 0.02, 0.2, &[], 0.0, 1.0),
    ];
    for (id, age, factor, salience, adjustments, delta, posterior) in rows {
        let x = result(&response, id);
        let temporal = age.map_or(0.0, |a| (-factor * a).exp());
        let base = r * (1.0 + 0.1 * temporal) * (1.0 + 0.1 * salience);
        let clamped = (base + delta).clamp(0.0, 1.0);
        assert_eq!(
            x.score_breakdown.to_map()["ageDays"],
            age.map_or(Value::Null, |a| json!(a)),
            "{id}"
        );
        assert!(close(num(x, "temporal"), temporal), "{id}");
        assert!(close(num(x, "base"), base), "{id}");
        assert_eq!(
            x.score_breakdown.to_map()["adjustments"],
            json!(adjustments),
            "{id}"
        );
        assert!(close(num(x, "clamped"), clamped), "{id}");
        assert!(close(num(x, "posterior"), posterior), "{id}");
        assert!(close(x.score, clamped * posterior), "{id}");
    }
    // The order is by score: t-1 (0.531 × 1.094 × 1.05 + 0.05 ≈ 0.660) beats t-3 (≈ 0.659)
    // and t-7 (0.531 × 1.1 × 1.05 × 1.05 ≈ 0.644).
    assert_eq!(ids(&response)[..3], ["t-1", "t-3", "t-7"]);
}

#[test]
fn decay_clamps_to_one_and_normalized_score_is_the_clamped_score() {
    let f = fixture(&[
        json!({"id": "c-1", "title": "kernel panic boot", "entities": ["Kernel"],
        "salience": 1.0, "createdAt": NOW, "feedback": {"success": 50}}),
    ]);
    let response = f.search("Kernel panic boot", &[("profile", "decay")]);
    let x = &response.results[0];
    // rel 0.82 × 1.1 × 1.1 + 0.05 → × 1.3 > 1: clamped at 1, then the posterior > 1.
    assert_eq!(
        x.score_breakdown.to_map()["adjustments"],
        json!(["recentEpisodic", "entity"])
    );
    assert_eq!(num(x, "clamped"), 1.0);
    let posterior = 1.0 + 0.3 * (51.0 / 52.0 - 0.5);
    assert!(close(x.score, posterior));
    assert!(x.score > 1.0);
    assert_eq!(x.normalized_score, 1.0);
}

#[test]
fn decay_entity_adjustment_uses_capitalized_words_lookups_and_explicit_entities() {
    let f = fixture(&[
        json!({"id": "e-1", "title": "kernel oops", "entities": ["Linux"]}),
        json!({"id": "e-2", "title": "kernel oops in linux-firmware"}),
        json!({"id": "e-3", "title": "kernel oops with linuxulator"}),
        json!({"id": "e-4", "title": "kernel oops", "solution": "rebuild the 数据库驱动",
               "entities": ["数据库"]}),
        json!({"id": "e-5", "title": "kernel oops", "solution": "rebuild the 驱动数据库表"}),
    ]);
    let with_entity = |response: &SearchResponse| -> Vec<String> {
        response
            .results
            .iter()
            .filter(|r| {
                r.score_breakdown.to_map()["adjustments"]
                    .as_array()
                    .unwrap()
                    .contains(&json!("entity"))
            })
            .map(|r| r.id.clone())
            .collect()
    };
    let cases: [(&str, Options, &[&str]); 5] = [
        // (a) A capitalized word: e-1 names it, e-2 has "linux" before '-', e-3 inside a word.
        ("Linux kernel oops", vec![], &["e-1", "e-2"]),
        // (b) A lookup word, kept because e-1 names the entity.
        ("linux kernel oops", vec![], &["e-1", "e-2"]),
        // (b) A CJK substring of the query found in the dictionary; all-CJK entities match
        // as plain substrings of the content (e-5).
        ("kernel oops 数据库连接", vec![], &["e-4", "e-5"]),
        // Explicit entities replace the detected ones.
        ("Linux kernel oops", vec![("entity", "firmware")], &["e-2"]),
        // "Kernel" is capitalized but no record names it; it still occurs in every content.
        ("Kernel oops", vec![], &["e-1", "e-2", "e-3", "e-4", "e-5"]),
    ];
    for (query, mut options, expected) in cases {
        options.push(("profile", "decay"));
        options.push(("mmr", "false"));
        let response = f.search(query, &options);
        let mut got = with_entity(&response);
        got.sort();
        assert_eq!(got, expected, "{query:?} {options:?}");
    }
    // A lowercase word that no record names is not an entity.
    let response = f.search("oops kernel", &[("profile", "decay"), ("mmr", "false")]);
    assert!(with_entity(&response).is_empty());
}

#[test]
fn decay_removes_superseded_records_unless_asked() {
    let f = fixture(&[
        json!({"id": "s-old", "title": "kernel fix"}),
        json!({"id": "s-new", "title": "kernel fix again", "supersedes": "s-old"}),
    ]);
    let response = f.search("kernel", &[("profile", "decay"), ("explain", "s-old")]);
    assert_eq!(ids(&response), ["s-new"]);
    assert_eq!(response.explain.as_ref().unwrap().status, "superseded");
    // Counts are SPEC §4's candidates, before the profile removes any.
    assert_eq!(response.counts.candidates, 2);

    let response = f.search(
        "kernel",
        &[("profile", "decay"), ("include-superseded", "")],
    );
    assert_eq!(ids(&response), ["s-new", "s-old"]);
    let old = result(&response, "s-old");
    let new = result(&response, "s-new");
    // Equal scores: s-old is clamped 0.001 below its superseder.
    assert!(close(num(old, "supersession"), -0.001));
    assert!(close(old.score, new.score - 0.001));
    assert_eq!(old.superseded_by.as_deref(), Some("s-new"));
}

fn ladder() -> Fixture {
    // "kernel" in one group each: r = 8, 7, 5, 4, 2.
    fixture(&[
        json!({"id": "c-1", "title": "kernel"}),
        json!({"id": "c-2", "title": "two", "problems": ["kernel"]}),
        json!({"id": "c-3", "title": "three", "task": "kernel"}),
        json!({"id": "c-4", "title": "four", "solution": "kernel"}),
        json!({"id": "c-5", "title": "five", "warnings": ["kernel"]}),
    ])
}

#[test]
fn candidates_cap_keeps_the_top_by_relevance() {
    let f = ladder();
    let response = f.search(
        "kernel",
        &[
            ("profile", "decay"),
            ("candidates", "2"),
            ("explain", "c-4"),
        ],
    );
    assert_eq!(ids(&response), ["c-1", "c-2"]);
    let explain = response.explain.as_ref().unwrap();
    assert_eq!(explain.status, "beyond_limit");
    assert_eq!(explain.rank, Some(4));
    // r_max is the best r of the kept candidates.
    assert!(close(num(&response.results[1], "rel"), rel(7.0, 8.0)));

    // Other profiles: the cap applies only when given, to their own order.
    let response = f.search("kernel", &[("candidates", "3")]);
    assert_eq!(ids(&response), ["c-1", "c-2", "c-3"]);
    let response = f.search("kernel", &[]);
    assert_eq!(response.results.len(), 5);

    // Out of range, whatever the profile.
    for profile in ["standard", "decay", "recency", "bm25f"] {
        let err = f
            .try_search("kernel", &[("profile", profile), ("candidates", "0")])
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidCandidates, "{profile}");
    }
    let response = f.search("kernel", &[("profile", "decay"), ("candidates", "600")]);
    assert_eq!(response.results.len(), 5);
    assert!(response
        .notices
        .iter()
        .any(|n| n.contains("--candidates 600 clamped to 500")));
}

// ---------------------------------------------------------------------------------------------
// SPEC 6.2: MMR.

#[test]
fn mmr_demotes_near_duplicates_by_profile() {
    let f = fixture(&[
        json!({"id": "m-1", "title": "Kernel panic at boot", "problems": ["oops"]}),
        json!({"id": "m-2", "title": "kernel  PANIC at\tboot", "problems": ["OOPS"]}),
        json!({"id": "m-3", "title": "kernel panic at boot time"}),
    ]);
    // decay: on by default, −0.1.
    let response = f.search("kernel panic", &[("profile", "decay")]);
    let m1 = result(&response, "m-1");
    let m2 = result(&response, "m-2");
    assert!(!m1.score_breakdown.contains_key("mmr"));
    assert!(close(num(m2, "mmr"), -0.1));
    assert!(close(
        m2.score,
        num(m2, "clamped") * num(m2, "posterior") - 0.1
    ));
    assert!(!result(&response, "m-3").score_breakdown.contains_key("mmr"));
    assert_eq!(ids(&response).last(), Some(&"m-2"));
    let off = f.search("kernel panic", &[("profile", "decay"), ("mmr", "false")]);
    assert!(off
        .results
        .iter()
        .all(|r| !r.score_breakdown.contains_key("mmr")));

    // standard: off by default; with --mmr, −0.1 × |score|.
    let plain = f.search("kernel panic", &[]);
    assert!(plain
        .results
        .iter()
        .all(|r| !r.score_breakdown.contains_key("mmr")));
    let response = f.search("kernel panic", &[("mmr", "true")]);
    let m2 = result(&response, "m-2");
    let before = result(&plain, "m-2").score;
    assert!(close(num(m2, "mmr"), -0.1 * before));
    assert!(close(m2.score, 0.9 * before));
    // The breakdown still sums to the score.
    let sum: f64 = m2
        .score_breakdown
        .to_map()
        .iter()
        .filter(|(k, _)| k.as_str() != "coverageMultiplier")
        .map(|(_, v)| v.as_f64().unwrap())
        .sum();
    assert!(close(sum, m2.score));
}

// ---------------------------------------------------------------------------------------------
// SPEC 5.2: recency.

#[test]
fn recency_table() {
    let f = fixture(&[
        dated("r-1", "kernel one", NOW, json!({})),
        dated("r-2", "kernel two", "2025-12-02T00:00:00Z", json!({})),
        dated(
            "r-3",
            "kernel three",
            "2025-11-02T00:00:00Z",
            json!({"pinned": true}),
        ),
        json!({"id": "r-4", "title": "kernel four"}),
        dated("r-5", "kernel five", NOW, json!({})),
        json!({"id": "r-6", "title": "kernel six", "supersedes": "r-5"}),
        json!({"id": "r-7", "title": "seven", "warnings": ["kernel"]}),
    ]);
    let response = f.search("kernel", &[("profile", "recency"), ("limit", "20")]);
    // (id, text, age, recency, pinned, superseded, score)
    type Row<'a> = (&'a str, f64, Option<f64>, f64, bool, bool, f64);
    let rows: [Row; 7] = [
        ("r-1", 1.0, Some(0.0), 1.0, false, false, 1.3),
        ("r-2", 1.0, Some(30.0), 0.5, false, false, 1.15),
        ("r-3", 1.0, Some(60.0), 0.25, true, false, 1.0 + 0.075 + 0.5),
        ("r-4", 1.0, None, 0.0, false, false, 1.0),
        ("r-5", 1.0, Some(0.0), 1.0, false, true, 1.3 - 10.0),
        ("r-6", 1.0, None, 0.0, false, false, 1.0),
        ("r-7", 0.25, None, 0.0, false, false, 0.25),
    ];
    for (id, text, age, recency, pinned, superseded, score) in rows {
        let x = result(&response, id);
        assert_eq!(num(x, "text"), text, "{id}");
        assert_eq!(
            x.score_breakdown.to_map()["ageDays"],
            age.map_or(Value::Null, |a| json!(a)),
            "{id}"
        );
        assert!(close(num(x, "recency"), recency), "{id}");
        assert_eq!(x.score_breakdown.to_map()["pinned"], json!(pinned), "{id}");
        assert_eq!(
            x.score_breakdown.to_map()["superseded"],
            json!(superseded),
            "{id}"
        );
        assert!(close(x.score, score), "{id}: {}", x.score);
    }
    assert_eq!(
        ids(&response),
        ["r-3", "r-1", "r-2", "r-4", "r-6", "r-7", "r-5"]
    );
    // normalizedScore: score ÷ best.
    let best = response.results[0].score;
    for x in &response.results {
        assert!(close(x.normalized_score, x.score / best));
    }
}

// ---------------------------------------------------------------------------------------------
// SPEC 5.3: bm25f.

#[test]
fn bm25f_by_hand() {
    let f = fixture(&[
        json!({"id": "b-1", "title": "cache miss", "problems": ["cache cache eviction"]}),
        json!({"id": "b-2", "title": "eviction policy", "problems": ["the cache"],
               "feedback": {"success": 1}}),
        json!({"id": "b-3", "title": "configuration cache", "tags": ["caching"]}),
        json!({"id": "b-4", "title": "unrelated"}),
        json!({"id": "b-5", "title": "evictions"}),
    ]);
    // N = 5. Lengths: title 2, 2, 2, 1, 1 → avglen 1.6; problems 3, 2 → avglen 1.0; tags 1 →
    // avglen 0.2.
    let n = 5.0;
    let idf = |df: f64| (1.0f64 + (n - df + 0.5) / (df + 0.5)).ln();
    let norm = |len: f64, avg: f64| 0.25 + 0.75 * len / avg;
    let (title, problems) = (1.6, 1.0);
    let (idf_cache, idf_eviction) = (idf(3.0), idf(2.0));
    let feedback = 2.5 / 3.0;
    // The adaptive saturation (the default): 0.009 × Σ weight × avglen; the classic one: 1.2.
    let adaptive = 0.009 * (8.0 * 1.6 + 7.0 * 1.0 + 9.0 * 0.2);
    // The adaptive variant's proximity signal: only b-1 holds "cache eviction" as adjacent
    // words; 0.2 × the mean idf of the pair's words. The classic variant has none.
    let pair = 0.2 * (idf_cache + idf_eviction) / 2.0;
    for (variant, k, proximity, config) in [
        ("adaptive", adaptive, pair, None),
        ("classic", 1.2, 0.0, Some(classic_config(&f))),
    ] {
        let sat = |w: f64| w / (k + w);
        let b1 = idf_cache * sat(8.0 / norm(2.0, title) + 7.0 * 2.0 / norm(3.0, problems))
            + idf_eviction * sat(7.0 / norm(3.0, problems))
            + proximity;
        let b2 =
            idf_cache * sat(7.0 / norm(2.0, problems)) + idf_eviction * sat(8.0 / norm(2.0, title));
        let b3 = idf_cache * sat(8.0 / norm(2.0, title));
        let mut options = vec![("profile", "bm25f"), ("explain", "b-5")];
        if let Some(config) = &config {
            options.push(("config", config.as_str()));
        }
        let response = f.search("the cache eviction", &options);
        assert_eq!(response.tokens, ["cache", "eviction"]);
        let mut expected = [("b-1", b1), ("b-2", b2 + feedback), ("b-3", b3)];
        expected.sort_by(|a, b| b.1.total_cmp(&a.1));
        assert_eq!(ids(&response), expected.map(|e| e.0), "{variant}");
        let x = result(&response, "b-1");
        assert!(
            close(num(x, "bm25f"), b1),
            "{variant}: {} vs {b1}",
            num(x, "bm25f")
        );
        assert_eq!(num(x, "feedback"), 0.0);
        let x = result(&response, "b-2");
        assert!(close(num(x, "bm25f"), b2), "{variant}");
        assert!(close(num(x, "feedback"), feedback));
        assert!(close(x.score, b2 + feedback));
        assert_eq!(keys(x), ["bm25f", "feedback"]);
        assert!(close(result(&response, "b-3").score, b3), "{variant}");
        // "evictions" matches "eviction" by prefix (a §4 candidate) but not exactly.
        assert_eq!(response.counts.candidates, 4);
        assert_eq!(
            response.explain.as_ref().unwrap().status,
            "no_token_matched"
        );
        // Each result keeps the standard coverage and matched tokens.
        assert_eq!(result(&response, "b-3").matched_tokens, ["cache"]);
        assert_eq!(result(&response, "b-3").coverage, 0.5);
    }
}

/// A settings file selecting SPEC §5.3's classic bm25f formula, in the fixture's directory.
fn classic_config(f: &Fixture) -> String {
    let path = f.dir.path().join("classic.toml");
    std::fs::write(&path, "[bm25f]\nvariant = \"classic\"\n").expect("the settings file");
    path.to_str().expect("a UTF-8 path").to_string()
}

#[test]
fn bm25f_multilingual_queries_count_stop_word_occurrences() {
    let f = fixture(&[
        json!({"id": "w-1", "title": "the the café"}),
        json!({"id": "w-2", "title": "café crème"}),
    ]);
    // "the café" routes english: "the" is dropped.
    let english = f.search("the café", &[("profile", "bm25f")]);
    assert_eq!(english.tokens, ["café"]);
    // "thé café über" is multilingual (> 15% non-ASCII letters): "the" is not among its
    // tokens, but a multilingual query for "the" counts w-1's two stop-word occurrences.
    let multilingual = f.search("the über café", &[("profile", "bm25f")]);
    assert_eq!(multilingual.tokens, ["the", "über", "café"]);
    // N 2; avglen title (3 + 2) / 2 = 2.5; the adaptive saturation 0.009 × 8 × 2.5.
    let idf = |df: f64| (1.0f64 + (2.0 - df + 0.5) / (df + 0.5)).ln();
    let norm = |len: f64| 0.25 + 0.75 * len / 2.5;
    let sat = |w: f64| w / (0.009 * 8.0 * 2.5 + w);
    let w1 = idf(1.0) * sat(8.0 * 2.0 / norm(3.0)) + idf(2.0) * sat(8.0 / norm(3.0));
    assert!(close(result(&multilingual, "w-1").score, w1));
}

// ---------------------------------------------------------------------------------------------
// SPEC 5.5: rerank.

#[test]
fn rerank_replaces_the_score_by_the_weighted_features() {
    let f = ladder();
    let plain = f.search("kernel", &[]);
    // r = 8, 7, 5, 4, 2; r_max = 8 → rel = 0.30 + 0.52 × r / 18. No createdAt: temporal 0.
    type Expected = fn(f64) -> f64;
    let cases: [(&str, Expected); 6] = [
        ("relevance=1", |r| 0.30 + 0.52 * r / 18.0),
        ("relevance=1,temporal=1", |r| (0.30 + 0.52 * r / 18.0) / 2.0),
        ("textMatch=2,vectorMatch=2", |_| 0.5),
        ("salience=-1", |_| 0.0),
        ("colour=3", |_| 0.0),
        ("relevance=1,salience=-5", |r| 0.30 + 0.52 * r / 18.0),
    ];
    for (weights, expected) in cases {
        let response = f.search("kernel", &[("rerank", weights)]);
        for (id, r) in [
            ("c-1", 8.0),
            ("c-2", 7.0),
            ("c-3", 5.0),
            ("c-4", 4.0),
            ("c-5", 2.0),
        ] {
            let x = result(&response, id);
            assert!(close(x.score, expected(r)), "{weights} {id}: {}", x.score);
            let before = result(&plain, id).score;
            assert!(close(num(x, "rerank"), x.score - before), "{weights} {id}");
            assert_eq!(
                x.score_breakdown.to_map()["rerankFeatures"]["textMatch"],
                json!(1.0)
            );
            let sum: f64 = x
                .score_breakdown
                .to_map()
                .iter()
                .filter(|(k, _)| k.as_str() != "coverageMultiplier")
                .filter_map(|(_, v)| v.as_f64())
                .sum();
            assert!(close(sum, x.score), "{weights} {id}");
        }
    }
    // With a creation date, temporal and salience × temporal count.
    let f = fixture(&[dated(
        "d-1",
        "kernel",
        "2025-12-22T00:00:00Z",
        json!({"salience": 0.8, "decayFactor": 0.05}),
    )]);
    let temporal = (-0.05f64 * 10.0).exp();
    let response = f.search("kernel", &[("rerank", "temporal=1,salience=3")]);
    assert!(close(
        response.results[0].score,
        (temporal + 3.0 * 0.8 * temporal) / 4.0
    ));
    // Applied after the decay profile too.
    let response = f.search("kernel", &[("profile", "decay"), ("rerank", "temporal=1")]);
    assert!(close(response.results[0].score, temporal));
}

// ---------------------------------------------------------------------------------------------
// SPEC 5.5: configuration.

#[test]
fn a_config_file_changes_numbers_says_so_and_changes_the_fingerprint() {
    let f = ladder();
    let config = f.dir.path().join("custom.toml");
    std::fs::write(
        &config,
        "[recency]\npinBonus = 0.5\nweight = 0.6\n\n[decay.adjustments.anyRecord]\nadd = 0.01\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let plain = f.search("kernel", &[("profile", "decay")]);
    let custom = f.search("kernel", &[("profile", "decay"), ("config", config)]);
    assert_ne!(plain.fingerprint, custom.fingerprint);
    let notice = custom
        .notices
        .iter()
        .find(|n| n.contains("non-default settings"))
        .expect("a notice names the settings");
    assert!(notice.contains("custom.toml"), "{notice}");
    assert!(notice.contains("recency.weight"), "{notice}");
    assert!(notice.contains("decay.adjustments"), "{notice}");
    assert!(
        !notice.contains("pinBonus"),
        "{notice}: pinBonus is the default"
    );
    let x = &custom.results[0];
    assert_eq!(
        x.score_breakdown.to_map()["adjustments"],
        json!(["anyRecord"])
    );
    assert!(close(num(x, "clamped"), num(x, "base") + 0.01));
    assert!(plain.notices.is_empty());

    // A file equal to the defaults adds no notice but is accepted.
    let same = f.dir.path().join("same.toml");
    std::fs::write(&same, "[bm25f]\nk1 = 1.2\n").unwrap();
    let response = f.search("kernel", &[("config", same.to_str().unwrap())]);
    assert!(response.notices.is_empty());

    // reliora.toml in the index directory applies when no --config is given.
    std::fs::write(
        f.dir.path().join("index").join("reliora.toml"),
        "[recency]\nweight = 0.6\n",
    )
    .unwrap();
    let reopened = Index::open(&f.dir.path().join("index")).unwrap();
    let response = reopened
        .search(&request("kernel", &[("profile", "recency")]).unwrap())
        .unwrap();
    assert!(response
        .notices
        .iter()
        .any(|n| n.contains("reliora.toml") && n.contains("recency.weight")));

    // Bad files are invalid options naming the file.
    let bad = f.dir.path().join("bad.toml");
    std::fs::write(&bad, "[decay]\nunknownKey = 1\n").unwrap();
    let err = request("kernel", &[("config", bad.to_str().unwrap())]).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidOption);
    assert!(err.to_string().contains("bad.toml"));
}

// ---------------------------------------------------------------------------------------------
// SPEC 6.6: token budget.

#[test]
fn token_budget_keeps_results_while_their_json_fits() {
    let f = ladder();
    let all = f.search("kernel", &[]);
    let json_chars = |k: usize| {
        serde_json::to_string(&all.results[..k])
            .unwrap()
            .chars()
            .count() as u64
    };
    // A budget exactly fitting three results keeps three; one character less keeps two.
    for k in 1..=all.results.len() {
        let chars = json_chars(k);
        let budget = chars / 4; // 4 × budget ≤ chars
        let response = f.search("kernel", &[("token-budget", &budget.to_string())]);
        let expected = (1..=all.results.len())
            .rev()
            .find(|&j| json_chars(j) <= 4 * budget)
            .unwrap_or(1);
        assert_eq!(response.results.len(), expected, "budget {budget}");
        assert_eq!(ids(&response), ids(&all)[..expected].to_vec());
        let cut = all.results.len() - expected;
        let noticed = response
            .notices
            .iter()
            .any(|n| n.contains("--token-budget"));
        assert_eq!(noticed, cut > 0, "budget {budget}: {:?}", response.notices);
    }
    // The first result is always kept.
    let response = f.search("kernel", &[("token-budget", "1")]);
    assert_eq!(ids(&response), ["c-1"]);
    assert!(response.notices.iter().any(|n| n.contains("4 results cut")));
    // Clamped above 16000 with a notice; errors below 1.
    let response = f.search("kernel", &[("token-budget", "20000")]);
    assert!(response
        .notices
        .iter()
        .any(|n| n.contains("clamped to 16000")));
    let err = f
        .try_search("kernel", &[("token-budget", "0")])
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidTokenBudget);
}

#[test]
fn options_are_validated_in_order_before_the_query() {
    let first = |options: &[(&str, &str)]| request("", options).unwrap_err().code();
    assert_eq!(
        first(&[("candidates", "0"), ("token-budget", "0")]),
        ErrorCode::InvalidCandidates
    );
    assert_eq!(
        first(&[("token-budget", "0"), ("candidates", "0")]),
        ErrorCode::InvalidTokenBudget
    );
    assert_eq!(
        first(&[("profile", "fancy"), ("limit", "0")]),
        ErrorCode::UnknownProfile
    );
}

#[test]
fn fingerprint_covers_every_profile_setting() {
    let f = ladder();
    let base = f.search("kernel", &[]).fingerprint;
    let variants: [Options; 9] = [
        vec![("profile", "decay")],
        vec![("profile", "bm25f")],
        vec![("include-superseded", "")],
        vec![("candidates", "3")],
        vec![("mmr", "true")],
        vec![("token-budget", "100")],
        vec![("entity", "Linux")],
        vec![("rerank", "relevance=1")],
        vec![("rerank", "relevance=2")],
    ];
    let mut seen = vec![base.clone()];
    for options in variants {
        let fingerprint = f.search("kernel", &options).fingerprint;
        assert!(!seen.contains(&fingerprint), "{options:?}");
        seen.push(fingerprint);
    }
}

#[test]
fn empty_query_with_a_filter_ignores_profile_rules() {
    let f = fixture(&[
        dated(
            "z-1",
            "one",
            "2025-01-01T00:00:00Z",
            json!({"tags": ["x"], "pinned": true}),
        ),
        dated("z-2", "two", "2025-06-01T00:00:00Z", json!({"tags": ["x"]})),
    ]);
    for profile in ["standard", "decay", "recency", "bm25f"] {
        let response = f.search(
            "",
            &[
                ("profile", profile),
                ("tag", "x"),
                ("rerank", "textMatch=1"),
            ],
        );
        assert_eq!(ids(&response), ["z-2", "z-1"], "{profile}");
        for x in &response.results {
            assert_eq!(x.score, 0.0);
            assert_eq!(x.normalized_score, 0.0);
            assert_eq!(x.score_breakdown.to_map()["tags"], json!(0.0), "{profile}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Federated search.

#[test]
fn federated_search_fuses_rankings_by_reciprocal_rank() {
    let dir = tempfile::tempdir().unwrap();
    // A ranks k-1 (r 28), k-2 (6.4); B ranks k-3 (28), k-1 (6.4).
    let a = build_into(
        dir.path(),
        "a",
        &[
            json!({"id": "k-1", "title": "kernel panic boot"}),
            json!({"id": "k-2", "title": "kernel"}),
        ],
    );
    let b = build_into(
        dir.path(),
        "b",
        &[
            json!({"id": "k-3", "title": "kernel panic"}),
            json!({"id": "k-1", "title": "kernel"}),
        ],
    );
    let indexes = [("A".to_string(), &a), ("B".to_string(), &b)];
    let response = search_federated(&indexes, &request("kernel panic", &[]).unwrap()).unwrap();
    let best = 1.0 / 61.0 + 1.0 / 62.0;
    let expected = [
        ("k-1", "A", best, 0.82),
        ("k-3", "B", 1.0 / 61.0, 0.30 + 0.52 * (1.0 / 61.0) / best),
        ("k-2", "A", 1.0 / 62.0, 0.30 + 0.52 * (1.0 / 62.0) / best),
    ];
    assert_eq!(ids(&response), ["k-1", "k-3", "k-2"]);
    for (x, (id, index, fused, mapped)) in response.results.iter().zip(expected) {
        assert_eq!(x.id, id);
        assert_eq!(x.index.as_deref(), Some(index), "{id}");
        assert!(close(num(x, "rrf"), fused), "{id}");
        assert!(close(x.score, mapped), "{id}");
        assert_eq!(x.normalized_score, x.score);
    }
    assert_eq!(
        response.results[0].score_breakdown.to_map()["ranks"],
        json!({"A": 1, "B": 2})
    );
    assert_eq!(response.counts.candidates, 4);

    // Fused scores below floor × best are dropped: with floor 0.5, k-3 (0.504) stays and
    // k-2 (0.496) goes.
    let config = dir.path().join("fed.toml");
    std::fs::write(&config, "[federation]\nfloor = 0.5\n").unwrap();
    let options = [("config", config.to_str().unwrap())];
    let response = search_federated(&indexes, &request("kernel panic", &options).unwrap()).unwrap();
    assert_eq!(ids(&response), ["k-1", "k-3"]);
    assert!(close(
        response.results[1].score,
        0.5 + 0.32 * (1.0 / 61.0) / best
    ));
    // min-score and limit apply to the fused list.
    let response = search_federated(
        &indexes,
        &request("kernel panic", &[("limit", "1")]).unwrap(),
    )
    .unwrap();
    assert_eq!(ids(&response), ["k-1"]);
    let response = search_federated(
        &indexes,
        &request("kernel panic", &[("min-score", "0.6")]).unwrap(),
    )
    .unwrap();
    assert_eq!(ids(&response), ["k-1"]);
}

// ---------------------------------------------------------------------------------------------
// On disk: group length sums in the manifest, the entity dictionary.

#[test]
fn check_verifies_group_length_sums_and_an_old_manifest_falls_back_to_the_scan() {
    use reliora::internals::format::manifest::Manifest;
    use reliora::internals::index::check::check;

    let f = ladder();
    let dir = f.dir.path().join("index");
    let mut manifest = Manifest::load(&dir).unwrap();
    let sums = manifest.segments[0]
        .group_length_sums
        .expect("written by build");
    // Title lengths: "kernel", "two", "three", "four", "five" → 5 tokens.
    assert_eq!(sums[1], 5);
    assert!(manifest.segments[0].files.contains_key("entities.fst"));
    assert!(check(&dir).sound);

    let mut wrong = sums;
    wrong[1] += 1;
    manifest.segments[0].group_length_sums = Some(wrong);
    manifest.store(&dir).unwrap();
    let report = check(&dir);
    assert!(!report.sound);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("group length sums")),
        "{:?}",
        report.problems
    );

    // A manifest without the sums (an older build): searches scan the records, with a notice.
    manifest.segments[0].group_length_sums = None;
    manifest.store(&dir).unwrap();
    let index = Index::open(&dir).unwrap();
    let response = index
        .search(&request("kernel", &[("profile", "bm25f")]).unwrap())
        .unwrap();
    assert_eq!(response.backend, "scan");
    assert!(response.degraded);
    assert!(response.notices.iter().any(|n| n.contains("rebuild")));
    assert_eq!(response.results.len(), 5);
}

#[test]
fn entity_facets_are_checked_and_a_manifest_without_them_reads_the_records() {
    use reliora::internals::format::manifest::Manifest;
    use reliora::internals::index::check::check;

    let f = fixture(&[
        json!({"id": "n-1", "title": "kernel panic", "entities": ["Tokio"]}),
        json!({"id": "n-2", "title": "kernel tokio"}),
        json!({"id": "n-3", "title": "kernel caf\u{e9}"}),
        json!({"id": "n-4", "title": "kernel", "entities": ["Docker", "TOKIO"]}),
        json!({"id": "n-5", "title": "kernel"}),
    ]);
    let dir = f.dir.path().join("index");
    let mut manifest = Manifest::load(&dir).unwrap();
    assert!(manifest.segments[0].entity_facets);
    assert!(check(&dir).sound);
    let named = |f: &Fixture| {
        entity_adjusted(&f.search("kernel", &[("profile", "decay"), ("entity", "tokio")]))
    };
    assert_eq!(named(&f), ["n-1", "n-2", "n-4"]);

    // A manifest written before entity facets: its segment has none, so check finds the
    // facets of this one unexpected, and searches read the records to decide.
    manifest.segments[0].entity_facets = false;
    manifest.store(&dir).unwrap();
    let report = check(&dir);
    assert!(!report.sound);
    assert!(
        report.problems.iter().any(|p| p.contains("facets")),
        "{:?}",
        report.problems
    );
    let old = Fixture {
        index: Index::open(&dir).unwrap(),
        dir: f.dir,
    };
    assert_eq!(named(&old), ["n-1", "n-2", "n-4"]);
}

#[test]
fn prefix_fingerprints_are_merged_checked_and_optional() {
    use reliora::internals::format::manifest::{FileEntry, Manifest};
    use reliora::internals::format::prefixes::write_prefixes;
    use reliora::internals::index::check::check;

    // Near duplicates (the same content but for case and spaces) spread over three spills.
    let records: Vec<Value> = (0..9)
        .map(|i| match i % 3 {
            0 => json!({"id": format!("d-{i}"), "title": "Kernel panic at boot", "task": "reboot"}),
            1 => {
                json!({"id": format!("d-{i}"), "title": "kernel  PANIC at boot", "task": "reboot"})
            }
            _ => json!({"id": format!("d-{i}"), "title": format!("kernel panic {i}")}),
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("records.jsonl");
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    let path = dir.path().join("index");
    let options = BuildOptions {
        inputs: vec![input],
        spill_records: 3,
        ..BuildOptions::default()
    };
    Index::build(&path, &options).unwrap();
    let mut manifest = Manifest::load(&path).unwrap();
    assert_eq!(
        manifest.segments.len(),
        1,
        "the spills merged into one segment"
    );
    assert!(manifest.segments[0].files.contains_key("prefixes"));
    // `check` recomputes every record's fingerprint: the merge kept each with its record.
    assert!(check(&path).sound, "{:?}", check(&path).problems);

    let demoted = |index: &Index| -> Vec<String> {
        let request = request("kernel panic", &[("profile", "decay")]).unwrap();
        let response = index.search(&request).unwrap();
        let mut ids: Vec<String> = (response.results.iter())
            .filter(|r| r.score_breakdown.to_map().contains_key("mmr"))
            .map(|r| r.id.clone())
            .collect();
        ids.sort();
        ids
    };
    // Of the six records sharing a prefix, all but the best-ranked one are demoted.
    let with = demoted(&Index::open(&path).unwrap());
    assert_eq!(with.len(), 5, "{with:?}");

    // A segment written before the file existed has none: the prefixes are read, the same
    // records demoted, and `check` finds nothing missing.
    let entry = manifest.segments[0].files.remove("prefixes").unwrap();
    manifest.store(&path).unwrap();
    assert_eq!(demoted(&Index::open(&path).unwrap()), with);
    assert!(check(&path).sound);

    // Fingerprints that are not the records' are reported.
    let file = Manifest::file_path(&path, &manifest.segments[0].name, "prefixes");
    std::fs::remove_file(&file).unwrap();
    let footer = write_prefixes(file.as_path().into(), 100, &[0; 9]).unwrap();
    assert_ne!(FileEntry::from(footer), entry);
    manifest.segments[0]
        .files
        .insert("prefixes".into(), FileEntry::from(footer));
    manifest.store(&path).unwrap();
    let report = check(&path);
    assert!(!report.sound);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("prefix fingerprint")),
        "{:?}",
        report.problems
    );
}

// ---------------------------------------------------------------------------------------------
// SPEC 6.3–6.5: supersession after MMR, normalizedScore and min-score per profile.

#[test]
fn supersession_runs_again_after_mmr_and_sums_both_changes() {
    let f = fixture(&[
        json!({"id": "p-1", "title": "kernel panic", "problems": ["same text"]}),
        json!({"id": "p-2", "title": "kernel panic", "problems": ["same text"],
               "supersedes": "p-3"}),
        json!({"id": "p-3", "title": "kernel panic", "problems": ["other"]}),
    ]);
    // Every r = 16 + 12 = 28. Step 1: p-3 → 27.999. Step 2: p-2 repeats p-1 → 28 − 2.8.
    // Step 3: p-3 (27.999) ≥ p-2 (25.2) → 25.199.
    let response = f.search("kernel panic", &[("mmr", "true")]);
    assert_eq!(ids(&response), ["p-1", "p-2", "p-3"]);
    let p2 = result(&response, "p-2");
    let p3 = result(&response, "p-3");
    assert!(close(p2.score, 25.2));
    assert!(close(num(p2, "mmr"), -2.8));
    assert!(close(p3.score, 25.2 - 0.001));
    assert!(close(num(p3, "supersession"), 25.199 - 28.0));
    assert!(!p3.score_breakdown.contains_key("mmr"));
}

#[test]
fn normalized_score_and_min_score_follow_each_profile() {
    let f = ladder();
    // decay: normalizedScore is the score clamped to [0, 1], not divided by the best.
    let decay = f.search("kernel", &[("profile", "decay")]);
    for x in &decay.results {
        assert_eq!(x.normalized_score, x.score.clamp(0.0, 1.0));
    }
    assert!(decay.results[0].normalized_score < 1.0);
    let threshold = decay.results[2].normalized_score;
    let kept = f.search(
        "kernel",
        &[("profile", "decay"), ("min-score", &threshold.to_string())],
    );
    assert_eq!(ids(&kept), ids(&decay)[..3].to_vec());
    // recency and bm25f (classic: on these one-line records the adaptive saturation is so
    // strong that every score is above half the best): score ÷ best; a percentage works as a
    // fraction.
    let classic = classic_config(&f);
    for profile in ["recency", "bm25f"] {
        let all = f.search("kernel", &[("profile", profile), ("config", &classic)]);
        assert_eq!(all.results[0].normalized_score, 1.0, "{profile}");
        let best = all.results[0].score;
        let expected: Vec<&str> = all
            .results
            .iter()
            .filter(|x| x.score / best >= 0.5)
            .map(|x| x.id.as_str())
            .collect();
        let half = f.search(
            "kernel",
            &[
                ("profile", profile),
                ("config", &classic),
                ("min-score", "50"),
            ],
        );
        assert_eq!(ids(&half), expected, "{profile}");
        assert!(expected.len() < all.results.len(), "{profile}");
    }
}

/// Settings given to the builder as a value score as the same settings read from a file
/// (`--config`), and differently from the defaults when they change a weight.
#[test]
fn builder_settings_score_as_the_config_file_does() {
    let f = fixture(&[
        json!({"id": "a", "title": "connection pool exhausted", "task": "raise the pool size"}),
        json!({"id": "b", "title": "pool of connection workers", "task": "exhausted threads"}),
    ]);
    let toml = "[bm25f]\nproximity = 0.0\n";
    let path = f.dir.path().join("settings.toml");
    std::fs::write(&path, toml).unwrap();
    let settings = reliora::settings::Settings::from_toml(toml, "test").unwrap();
    let query = "connection pool";
    let base = || {
        SearchRequest::builder(query)
            .profile(reliora::Profile::Bm25f)
            .now(reliora::Timestamp::parse(NOW).unwrap())
    };
    let scores = |request: SearchRequest| -> Vec<(String, f64)> {
        let response = f.index.search(&request).unwrap();
        response
            .results
            .iter()
            .map(|r| (r.id.clone(), r.score))
            .collect()
    };
    let by_value = scores(base().settings(settings).build().unwrap());
    let by_file = scores(base().config(path.to_str().unwrap()).build().unwrap());
    let default = scores(base().build().unwrap());
    assert_eq!(by_value, by_file);
    assert_ne!(
        by_value, default,
        "no proximity bonus for `a`'s adjacent pair"
    );
}

/// Decay reads records in the order of their greatest possible score and stops once the page
/// is settled; a read record that only ties with an unread one is not settled, since the tie
/// goes by id. Here every record scores 0 (everything sinks below the clamp), but the episodic
/// ones might score 1 until their entity check reads them: `a00`, read last, leads by its id.
#[test]
fn decays_page_breaks_a_tie_with_an_unread_record_by_id() {
    let mut records = vec![json!({"id": "a00", "title": "pool a", "memoryType": "semantic"})];
    records.extend((1..6).map(|i| {
        json!({"id": format!("e{i:02}"), "title": format!("pool e{i}"), "memoryType": "episodic"})
    }));
    let f = fixture(&records);
    let path = f.dir.path().join("settings.toml");
    std::fs::write(
        &path,
        "[decay.adjustments.sink]\nsubtract = 10.0\n\n\
         [decay.adjustments.episodicEntity]\nmemoryType = \"episodic\"\nentity = true\nadd = 20.0\n",
    )
    .unwrap();
    let config = path.to_str().unwrap();
    let ids = |options: &[(&str, &str)]| -> Vec<String> {
        let mut options = options.to_vec();
        options.extend([("profile", "decay"), ("config", config)]);
        let response = f.search("Tokio pool", &options);
        response.results.iter().map(|r| r.id.clone()).collect()
    };
    let all = ids(&[]);
    assert_eq!(all, ["a00", "e01", "e02", "e03", "e04", "e05"]);
    assert_eq!(ids(&[("limit", "1")]), ["a00"]);
    assert_eq!(ids(&[("limit", "2")]), ["a00", "e01"]);
}

/// A record whose entity check can lift it from the bottom of the candidates to the top is
/// read before the page is settled, however low its score without the entity.
#[test]
fn decays_page_reads_a_record_its_entity_can_lift_from_the_bottom() {
    let mut records: Vec<Value> = (1..7)
        .map(|i| {
            json!({"id": format!("s{i:02}"), "title": format!("pool timeout connection {i}"),
                   "memoryType": "semantic", "salience": f64::from(i) / 10.0})
        })
        .collect();
    records.push(json!({"id": "x", "title": "tokio", "memoryType": "episodic"}));
    let f = fixture(&records);
    let path = f.dir.path().join("settings.toml");
    std::fs::write(
        &path,
        "[decay.adjustments.episodicEntity]\nmemoryType = \"episodic\"\nentity = true\nadd = 20.0\n",
    )
    .unwrap();
    let config = path.to_str().unwrap();
    let ids = |limit: &str| -> Vec<String> {
        let options = [("profile", "decay"), ("config", config), ("limit", limit)];
        let response = f.search("Tokio pool timeout connection", &options);
        response.results.iter().map(|r| r.id.clone()).collect()
    };
    let all = ids("10");
    assert_eq!(all[0], "x", "{all:?}");
    assert_eq!(ids("1"), ["x"]);
    assert_eq!(ids("3"), all[..3]);
}
