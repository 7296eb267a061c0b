//! SPEC rules checked through the library API, one table per rule.
//!
//! Every test builds a small index in a temporary directory from JSON Lines written here, then
//! searches it with a fixed `now`. Expected values are worked out by hand from SPEC §2–4, §6 and
//! §7 and written into the tables; where a value is a formula of the SPEC, the test spells the
//! formula out rather than calling the crate's own scoring code.

use reliora::{
    Analyzer, BuildOptions, ErrorCode, Index, MatchLevel, SearchRequest, SearchResponse,
    SearchResult,
};
use serde_json::{json, Value};
use tempfile::TempDir;

/// The reference time of every search.
const NOW: &str = "2026-01-01T00:00:00Z";

/// The searchable field groups, as named in `scoreBreakdown`, with their weights (SPEC §1).
const GROUPS: [(&str, u32); 9] = [
    ("tags", 9),
    ("title", 8),
    ("problems", 7),
    ("task", 5),
    ("solution", 4),
    ("projectContext", 4),
    ("applicability", 4),
    ("failedAttempts", 3),
    ("warnings", 2),
];

/// Search options as (flag name without dashes, value) pairs, in command-line order.
type Options<'a> = Vec<(&'a str, &'a str)>;

/// Result ids, best first.
type Ids<'a> = &'a [&'a str];

/// A filter table row: options, the ids that pass, and `counts.filtered`.
type FilterCase<'a> = (Options<'a>, Ids<'a>, usize);

/// An opened index over records written by the test. The index is dropped before its directory.
struct Fixture {
    index: Index,
    _dir: TempDir,
}

fn fixture(records: &[Value]) -> Fixture {
    fixture_with_stem(records, false)
}

fn fixture_with_stem(records: &[Value], stem: bool) -> Fixture {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let input = dir.path().join("records.jsonl");
    let lines: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&input, lines).expect("the fixture is written");
    let index_dir = dir.path().join("index");
    let options = BuildOptions {
        inputs: vec![input],
        stem,
        ..BuildOptions::default()
    };
    let report = Index::build(&index_dir, &options).expect("the fixture builds");
    assert_eq!(report.records, records.len());
    let index = Index::open(&index_dir).expect("the fixture opens");
    Fixture { index, _dir: dir }
}

/// A request with `--now NOW` and then `options` in order (`full` takes no value).
fn request(query: &str, options: &[(&str, &str)]) -> reliora::Result<SearchRequest> {
    let mut request = SearchRequest::new(query);
    request.set_option("now", Some(NOW))?;
    for &(name, value) in options {
        let value = if name == "full" { None } else { Some(value) };
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
            .unwrap_or_else(|e| panic!("search {query:?} {options:?} failed: {e}"))
    }
}

fn ids(response: &SearchResponse) -> Vec<&str> {
    response.results.iter().map(|r| r.id.as_str()).collect()
}

fn result<'a>(response: &'a SearchResponse, id: &str) -> &'a SearchResult {
    response
        .results
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("{id} is not among the results of {:?}", response.query))
}

fn breakdown(result: &SearchResult, key: &str) -> f64 {
    result
        .score_breakdown
        .get(key)
        .and_then(|v| v.as_f64())
        .unwrap_or_else(|| panic!("{}: no numeric breakdown key {key}", result.id))
}

/// SPEC §4: `0.6 + 0.4 × coverage`, coverage being one division.
fn multiplier(matched: usize, tokens: usize) -> f64 {
    0.6 + 0.4 * (matched as f64 / tokens as f64)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// `prefix01 prefix02 …` for the numbers in `range`.
fn numbered(prefix: &str, range: std::ops::RangeInclusive<u32>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i:02}")).collect()
}

// ---------------------------------------------------------------------------------------------
// SPEC 2: text analysis, seen through the response.

#[test]
fn query_tokens_dropped_tokens_and_analyzer_follow_spec_2() {
    let f = fixture(&[json!({"id": "any", "title": "anything at all"})]);
    let forty = numbered("w", 1..=40).join(" ");
    let cases: Vec<(String, Vec<String>, Vec<String>, Analyzer)> = vec![
        // English routing removes stop words.
        (
            "How to fix the flaky tests".into(),
            strings(&["fix", "flaky", "tests"]),
            vec![],
            Analyzer::English,
        ),
        // More than 15% of the letters are non-ASCII: multilingual, stop words kept.
        (
            "to café über".into(),
            strings(&["to", "café", "über"]),
            vec![],
            Analyzer::Multilingual,
        ),
        // Punctuation does not count: Müller!!! routes like Müller (1 of 6 letters).
        (
            "Müller!!!".into(),
            strings(&["müller"]),
            vec![],
            Analyzer::Multilingual,
        ),
        (
            "the 東京".into(),
            strings(&["the", "東京"]),
            vec![],
            Analyzer::Multilingual,
        ),
        // Repeats are removed after lowercasing, keeping the first.
        (
            "deploy Deploy DEPLOY fails".into(),
            strings(&["deploy", "fails"]),
            vec![],
            Analyzer::English,
        ),
        // A CJK run yields overlapping bigrams.
        (
            "数据库连接".into(),
            strings(&["数据", "据库", "库连", "连接"]),
            vec![],
            Analyzer::Multilingual,
        ),
        // A CJK character never shares a run with a non-CJK one.
        (
            "rust错误".into(),
            strings(&["rust", "错误"]),
            vec![],
            Analyzer::Multilingual,
        ),
        // NFC: e + U+0301 becomes é; the combining mark is not a letter, so routing is english.
        (
            "cafe\u{301} crash".into(),
            strings(&["café", "crash"]),
            vec![],
            Analyzer::English,
        ),
        // A combining mark continues the current run …
        (
            "x\u{301}yz".into(),
            vec!["x\u{301}yz".to_string()],
            vec![],
            Analyzer::English,
        ),
        // … and with no current run it separates like punctuation.
        (
            " \u{301}abc".into(),
            strings(&["abc"]),
            vec![],
            Analyzer::English,
        ),
        // Truncation counts characters, not bytes.
        (
            "é".repeat(70),
            vec!["é".repeat(64)],
            vec![],
            Analyzer::Multilingual,
        ),
        // A non-CJK token keeps its first 64 characters.
        (
            "x".repeat(70),
            vec!["x".repeat(64)],
            vec![],
            Analyzer::English,
        ),
        // Only the first 32 tokens are used; the rest are reported.
        (
            forty,
            numbered("w", 1..=32),
            numbered("w", 33..=40),
            Analyzer::English,
        ),
    ];
    for (query, tokens, dropped, analyzer) in cases {
        let response = f.search(&query, &[]);
        assert_eq!(response.tokens, tokens, "tokens of {query:?}");
        assert_eq!(
            response.dropped_tokens, dropped,
            "droppedTokens of {query:?}"
        );
        assert_eq!(response.analyzer, analyzer, "analyzer of {query:?}");
        assert_eq!(response.query, query);
    }
}

#[test]
fn cjk_bigrams_match_and_single_cjk_characters_match_only_exactly() {
    let f = fixture(&[
        json!({"id": "cjk-db", "title": "数据库连接失败"}),
        json!({"id": "cjk-one", "title": "库 notes"}),
        json!({"id": "cjk-pair", "title": "数据"}),
    ]);
    let cases: [(&str, &[&str]); 6] = [
        // 数据 and 据库 both match cjk-db (16); cjk-pair matches 数据 only (8 × 0.8).
        ("数据库", &["cjk-db", "cjk-pair"]),
        ("连接失败", &["cjk-db"]),
        // A single character matches the single-character token only, not bigrams holding it.
        ("库", &["cjk-one"]),
        ("数", &[]),
        ("据", &[]),
        // A bigram does not match a longer run's other bigrams.
        ("据连", &[]),
    ];
    for (query, expected) in cases {
        let response = f.search(query, &[]);
        assert_eq!(ids(&response), expected, "results of {query:?}");
    }
    let response = f.search("数据库", &[]);
    assert_eq!(result(&response, "cjk-db").score, 16.0);
    assert_eq!(result(&response, "cjk-pair").score, 8.0 * multiplier(1, 2));
}

#[test]
fn stem_option_lets_inflected_forms_match() {
    let records = [
        json!({"id": "st-connect", "title": "connect"}),
        json!({"id": "st-study", "title": "study"}),
        json!({"id": "st-runs", "title": "runs"}),
    ];
    let plain = fixture(&records);
    let stemmed = fixture_with_stem(&records, true);
    // (query, results without --stem, results and tokens with --stem)
    let cases: [(&str, Ids, Ids, Ids); 4] = [
        // "connect" is a 7-character prefix of "connections": matches even unstemmed.
        (
            "connections",
            &["st-connect"],
            &["st-connect"],
            &["connect"],
        ),
        // study/studies share no 5-character prefix relation; both stem to "studi".
        ("studies", &[], &["st-study"], &["studi"]),
        // running/runs both stem to "run".
        ("running", &[], &["st-runs"], &["run"]),
        ("connected", &["st-connect"], &["st-connect"], &["connect"]),
    ];
    for (query, unstemmed, with_stem, stem_tokens) in cases {
        assert_eq!(ids(&plain.search(query, &[])), unstemmed, "{query:?}");
        let response = stemmed.search(query, &[]);
        assert_eq!(ids(&response), with_stem, "{query:?} with --stem");
        assert_eq!(
            response.tokens,
            strings(stem_tokens),
            "{query:?} with --stem"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// SPEC 3: matching, filters, the empty query.

#[test]
fn prefix_matching_needs_five_characters_in_either_direction() {
    let f = fixture(&[
        json!({"id": "deploy", "title": "deploy"}),
        json!({"id": "graph", "title": "graph"}),
        json!({"id": "node", "title": "node"}),
        json!({"id": "go", "title": "go"}),
        json!({"id": "their", "title": "their"}),
    ]);
    let cases: [(&str, &[&str]); 13] = [
        // Query token shorter than the record token.
        ("deplo", &["deploy"]),
        ("depl", &[]),
        // Record token shorter than the query token.
        ("graphql", &["graph"]),
        ("deployments", &["deploy"]),
        ("nodejs", &[]),
        ("gopher", &[]),
        // Exact matches under five characters.
        ("node", &["node"]),
        ("go", &["go"]),
        ("nod", &[]),
        ("grap", &[]),
        // An english query ignores the record's stop words ("their" is one) …
        ("theirs", &[]),
        // … a multilingual query does not ("üü" makes 2 of 8 letters non-ASCII).
        ("theirs üü", &["their"]),
        ("their üü", &["their"]),
    ];
    for (query, expected) in cases {
        let response = f.search(query, &[("limit", "20")]);
        assert_eq!(ids(&response), expected, "results of {query:?}");
    }
}

/// Five records titled "cache …", differing in project context, applicability, tags and type.
fn filter_fixture() -> Fixture {
    fixture(&[
        json!({"id": "pc-1", "title": "cache invalidation", "projectContext": "payments service",
               "tags": ["CI/CD"], "memoryType": " Semantic "}),
        json!({"id": "pc-2", "title": "cache warmup", "applicability": "payments gateway",
               "tags": ["ci cd", "rust"]}),
        json!({"id": "pc-3", "title": "cache eviction", "tags": ["payments"],
               "memoryType": "procedural"}),
        json!({"id": "pc-4", "title": "cache payments"}),
        json!({"id": "pc-5", "title": "cache sizing", "solution": "payments", "memoryType": ""}),
    ])
}

fn assert_filter_table(f: &Fixture, cases: &[FilterCase]) {
    for (options, expected, filtered) in cases {
        let response = f.search("cache", options);
        assert_eq!(ids(&response), *expected, "results with {options:?}");
        assert_eq!(
            response.counts.filtered, *filtered,
            "counts.filtered with {options:?}"
        );
        assert_eq!(response.counts.candidates, expected.len(), "{options:?}");
    }
}

#[test]
fn project_context_filter_matches_project_context_applicability_and_tags_only() {
    let f = filter_fixture();
    let cases: Vec<FilterCase> = vec![
        (vec![], &["pc-1", "pc-2", "pc-3", "pc-4", "pc-5"], 0),
        // projectContext (pc-1), applicability (pc-2), tags (pc-3); not title or solution.
        (
            vec![("project-context", "payments")],
            &["pc-1", "pc-2", "pc-3"],
            2,
        ),
        // Prefix rules apply: five characters match, four do not.
        (
            vec![("project-context", "payme")],
            &["pc-1", "pc-2", "pc-3"],
            2,
        ),
        (vec![("project-context", "paym")], &[], 5),
        (
            vec![("project-context", "the payments")],
            &["pc-1", "pc-2", "pc-3"],
            2,
        ),
        (vec![("project-context", "gateway")], &["pc-2"], 4),
        (vec![("project-context", "rust")], &["pc-2"], 4),
        (vec![("project-context", "invalidation")], &[], 5),
    ];
    assert_filter_table(&f, &cases);
}

#[test]
fn tag_filter_compares_phrases_and_requires_every_tag() {
    let f = filter_fixture();
    let cases: Vec<FilterCase> = vec![
        // "CI/CD" and "ci cd" have the same phrase.
        (vec![("tag", "CI/CD")], &["pc-1", "pc-2"], 3),
        (vec![("tag", "ci-cd")], &["pc-1", "pc-2"], 3),
        (vec![("tag", "  ci   CD ")], &["pc-1", "pc-2"], 3),
        // A phrase is compared whole, not by token.
        (vec![("tag", "ci")], &[], 5),
        (vec![("tag", "CI/CD"), ("tag", "Rust")], &["pc-2"], 4),
        (vec![("tag", "payments"), ("tag", "rust")], &[], 5),
        (vec![("tag", "payments")], &["pc-3"], 4),
    ];
    assert_filter_table(&f, &cases);
}

#[test]
fn type_filter_trims_lowercases_and_defaults_to_episodic() {
    let f = filter_fixture();
    let cases: Vec<FilterCase> = vec![
        (vec![("type", "semantic")], &["pc-1"], 4),
        (vec![("type", "  SEMANTIC ")], &["pc-1"], 4),
        // Missing and empty memoryType are episodic.
        (vec![("type", "episodic")], &["pc-2", "pc-4", "pc-5"], 2),
        (vec![("type", "Procedural")], &["pc-3"], 4),
        (vec![("type", "reflective")], &[], 5),
        (vec![("type", "semantic"), ("tag", "ci cd")], &["pc-1"], 4),
    ];
    assert_filter_table(&f, &cases);
}

#[test]
fn empty_query_with_a_filter_lists_records_by_created_at_desc_then_id() {
    let f = fixture(&[
        json!({"id": "e-1", "title": "one", "tags": ["ops"], "createdAt": "2025-01-01T00:00:00Z",
               "feedback": {"success": 5}}),
        json!({"id": "e-2", "title": "two", "tags": ["ops"], "createdAt": "2025-06-01T00:00:00Z"}),
        json!({"id": "e-3", "title": "three", "tags": ["ops"]}),
        json!({"id": "e-0", "title": "zero", "tags": ["ops"]}),
        // Two hours before e-2 as an instant.
        json!({"id": "e-4", "title": "four", "tags": ["ops"],
               "createdAt": "2025-06-01T00:00:00+02:00"}),
        json!({"id": "e-5", "title": "five", "tags": ["dev"], "createdAt": "2025-12-01T00:00:00Z"}),
    ]);
    let all = ["e-2", "e-4", "e-1", "e-0", "e-3"];
    // (query, options, expected ids)
    let cases: [(&str, Options, Ids); 6] = [
        ("", vec![("tag", "ops")], &all),
        ("the of !!!", vec![("tag", "ops")], &all),
        ("", vec![("tag", "ops"), ("min-score", "0")], &all),
        ("", vec![("tag", "ops"), ("limit", "2")], &all[..2]),
        ("", vec![("tag", "ops"), ("min-score", "0.01")], &[]),
        ("", vec![("tag", "ops"), ("min-score", "50")], &[]),
    ];
    for (query, options, expected) in cases {
        let response = f.search(query, &options);
        assert_eq!(ids(&response), expected, "{query:?} {options:?}");
        assert!(response.tokens.is_empty());
        assert_eq!(response.counts.candidates, 5, "{query:?} {options:?}");
        assert_eq!(response.counts.weak, 5);
        assert_eq!(response.counts.strong + response.counts.moderate, 0);
        assert_eq!(response.counts.filtered, 1);
        for r in &response.results {
            assert_eq!(r.score, 0.0, "{}", r.id);
            assert_eq!(r.normalized_score, 0.0, "{}", r.id);
            assert_eq!(r.coverage, 0.0, "{}", r.id);
            assert_eq!(r.match_level, MatchLevel::Weak, "{}", r.id);
            assert!(r.matched_tokens.is_empty());
            for (group, _) in GROUPS {
                assert_eq!(breakdown(r, group), 0.0, "{} {group}", r.id);
            }
            assert_eq!(breakdown(r, "exactPhrase"), 0.0, "{}", r.id);
            // No feedback is added, even to e-1 with five successes.
            assert_eq!(breakdown(r, "feedback"), 0.0, "{}", r.id);
        }
    }
}

#[test]
fn empty_query_without_a_filter_is_error_empty_query() {
    let f = fixture(&[json!({"id": "a", "title": "the of"})]);
    for query in ["", "   ", "the and of", "!!! ???", "-- \t --"] {
        let error = f
            .try_search(query, &[])
            .expect_err("an empty query without a filter is an error");
        assert_eq!(error.code(), ErrorCode::EmptyQuery, "{query:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// SPEC 4: the standard profile.

/// One record per field group holding "zebra" (and a record whose only "zebra" is unsearched).
fn group_fixture() -> Fixture {
    fixture(&[
        json!({"id": "g-tags", "title": "group one", "tags": ["zebra"]}),
        json!({"id": "g-title", "title": "zebra crossing"}),
        json!({"id": "g-problems", "title": "group one", "problems": ["zebra"]}),
        json!({"id": "g-task", "title": "group one", "task": "zebra"}),
        json!({"id": "g-solution", "title": "group one", "solution": "zebra"}),
        json!({"id": "g-why", "title": "group one", "whyItWorked": "zebra"}),
        json!({"id": "g-pc", "title": "group one", "projectContext": "zebra"}),
        json!({"id": "g-app", "title": "group one", "applicability": "zebra"}),
        json!({"id": "g-failed", "title": "group one", "failedAttempts": ["zebra"]}),
        json!({"id": "g-warn", "title": "group one", "warnings": ["zebra"]}),
        json!({"id": "g-verify", "title": "group one", "verification": "zebra", "notes": "zebra"}),
    ])
}

#[test]
fn each_field_group_adds_its_weight_times_the_coverage_multiplier() {
    let f = group_fixture();
    // "missingword" matches nothing: coverage 1/2.
    let response = f.search("zebra missingword", &[("limit", "20")]);
    let m = multiplier(1, 2);
    // (id, group hit, weight), in the expected order: score desc, then id.
    let cases = [
        ("g-tags", "tags", 9),
        ("g-title", "title", 8),
        ("g-problems", "problems", 7),
        ("g-task", "task", 5),
        ("g-app", "applicability", 4),
        ("g-pc", "projectContext", 4),
        ("g-solution", "solution", 4),
        ("g-why", "solution", 4),
        ("g-failed", "failedAttempts", 3),
        ("g-warn", "warnings", 2),
    ];
    let expected_ids: Vec<&str> = cases.iter().map(|c| c.0).collect();
    assert_eq!(ids(&response), expected_ids);
    for (id, group, weight) in cases {
        let r = result(&response, id);
        assert_eq!(r.coverage, 0.5, "{id}");
        assert_eq!(r.matched_tokens, strings(&["zebra"]), "{id}");
        assert_eq!(breakdown(r, "coverageMultiplier"), m, "{id}");
        for (other, _) in GROUPS {
            let expected = if other == group {
                f64::from(weight) * m
            } else {
                0.0
            };
            assert_eq!(breakdown(r, other), expected, "{id}: breakdown {other}");
        }
        assert_eq!(breakdown(r, "exactPhrase"), 0.0, "{id}");
        assert_eq!(breakdown(r, "feedback"), 0.0, "{id}");
        assert_eq!(r.score, f64::from(weight) * m, "{id}");
    }
}

#[test]
fn field_score_counts_each_matching_query_token_once_per_group() {
    let f = fixture(&[json!({
        "id": "multi", "title": "yak zebra zebra", "tags": ["yak", "yak herd"],
        "solution": "yak", "whyItWorked": "yak yak"
    })]);
    let response = f.search("yak zebra okapi", &[]);
    let r = result(&response, "multi");
    let m = multiplier(2, 3);
    // title: yak and zebra (2 × 8); tags: yak (9); solution group: yak once (4).
    let expected = [("title", 16.0), ("tags", 9.0), ("solution", 4.0)];
    for (group, _) in GROUPS {
        let field = expected
            .iter()
            .find(|(g, _)| *g == group)
            .map_or(0.0, |(_, v)| *v);
        assert_eq!(breakdown(r, group), field * m, "breakdown {group}");
    }
    assert_eq!(r.score, 29.0 * m);
    assert_eq!(r.coverage, 2.0 / 3.0);
    assert_eq!(r.matched_tokens, strings(&["yak", "zebra"]));
}

#[test]
fn exact_phrase_bonus_needs_two_words_at_word_boundaries_within_one_value() {
    let long_title: String = numbered("w", 1..=33).join(" ");
    let short_title: String = numbered("w", 1..=32).join(" ");
    let f = fixture(&[
        json!({"id": "p-title", "title": "fix flaky integration tests"}),
        json!({"id": "p-inside", "title": "preflaky integration"}),
        json!({"id": "p-suffix", "title": "flaky integrations"}),
        json!({"id": "p-items", "title": "ci notes",
               "problems": ["the build is flaky", "integration tests fail"]}),
        json!({"id": "p-item", "title": "ci notes", "problems": ["flaky integration"]}),
        json!({"id": "p-stop", "title": "Fix the build!"}),
        json!({"id": "p-cjk", "title": "tokio rust 错误处理"}),
        json!({"id": "p-cjk-bound", "title": "trust 错误处理"}),
        json!({"id": "p-cjk-single", "title": "rust 库存"}),
        json!({"id": "p-long33", "title": long_title}),
        json!({"id": "p-long32", "title": short_title}),
    ]);
    // (id, query, Σ field, exactPhrase before the multiplier, matched tokens, query tokens)
    let cases: [(&str, &str, u32, u32, usize, usize); 12] = [
        ("p-title", "flaky integration", 16, 12, 2, 2),
        // One word is never a phrase.
        ("p-title", "flaky", 8, 0, 1, 1),
        // The occurrence must start at a word boundary …
        ("p-inside", "flaky integration", 8, 0, 1, 2),
        // … and end at one.
        ("p-suffix", "flaky integration", 16, 0, 2, 2),
        // A phrase never spans two list items.
        ("p-items", "flaky integration", 14, 0, 2, 2),
        ("p-item", "flaky integration", 14, 12, 2, 2),
        // Words keep stop words and drop punctuation.
        ("p-stop", "fix: the BUILD", 16, 12, 2, 2),
        // A CJK edge of the phrase needs no boundary.
        ("p-cjk", "rust 错误", 16, 12, 2, 2),
        // A non-CJK edge does.
        ("p-cjk-bound", "rust 错误", 8, 0, 1, 2),
        // The phrase occurs although the single character 库 matches no token.
        ("p-cjk-single", "rust 库", 8, 12, 1, 2),
        // The phrase is the whole query, beyond the 32 tokens used.
        ("p-long33", &long_title, 32 * 8, 12, 32, 32),
        ("p-long32", &long_title, 32 * 8, 0, 32, 32),
    ];
    for (id, query, field_sum, exact, matched, tokens) in cases {
        let response = f.search(query, &[("limit", "20")]);
        let r = result(&response, id);
        let m = multiplier(matched, tokens);
        assert_eq!(r.matched_tokens.len(), matched, "{id} {query:?}");
        assert_eq!(
            breakdown(r, "exactPhrase"),
            f64::from(exact) * m,
            "{id} {query:?}"
        );
        assert_eq!(r.score, f64::from(field_sum + exact) * m, "{id} {query:?}");
    }
    // verification is stored, not searched.
    let f = fixture(&[
        json!({"id": "v", "title": "unrelated words", "verification": "flaky integration"}),
        json!({"id": "w", "title": "other"}),
    ]);
    assert!(f.search("flaky integration", &[]).results.is_empty());
}

#[test]
fn match_level_thresholds_use_coverage_and_relevance_before_feedback() {
    struct Case {
        id: &'static str,
        fields: Value,
        feedback: Value,
        query: Vec<String>,
        field_sum: u32,
        matched: usize,
        /// The relevance when the SPEC arithmetic makes it a round number.
        exact_relevance: Option<f64>,
        feedback_term: f64,
        level: MatchLevel,
    }
    let q = |matched: Vec<String>, unmatched: Vec<String>| -> Vec<String> {
        matched.into_iter().chain(unmatched).collect()
    };
    let cases = vec![
        // coverage 3/4 exactly, relevance 20 × 0.9 = 18 exactly: strong.
        Case {
            id: "lv-a",
            fields: json!({"title": "qa01 qa02", "solution": "qa03"}),
            feedback: json!({}),
            query: q(numbered("qa", 1..=3), numbered("za", 1..=1)),
            field_sum: 20,
            matched: 3,
            exact_relevance: Some(18.0),
            feedback_term: 0.0,
            level: MatchLevel::Strong,
        },
        // The same with five failures: the score drops below 18, the level stays strong.
        Case {
            id: "lv-b",
            fields: json!({"title": "qb01 qb02", "solution": "qb03"}),
            feedback: json!({"failure": 5}),
            query: q(numbered("qb", 1..=3), numbered("zb", 1..=1)),
            field_sum: 20,
            matched: 3,
            exact_relevance: Some(18.0),
            feedback_term: -7.5 / 7.0,
            level: MatchLevel::Strong,
        },
        // coverage 3/4, relevance 19 × 0.9 = 17.1: moderate.
        Case {
            id: "lv-c",
            fields: json!({"title": "qc01 qc02", "failedAttempts": ["qc03"]}),
            feedback: json!({}),
            query: q(numbered("qc", 1..=3), numbered("zc", 1..=1)),
            field_sum: 19,
            matched: 3,
            exact_relevance: None,
            feedback_term: 0.0,
            level: MatchLevel::Moderate,
        },
        // The same with ten successes: score above 18, still moderate.
        Case {
            id: "lv-d",
            fields: json!({"title": "qd01 qd02", "failedAttempts": ["qd03"]}),
            feedback: json!({"success": 10}),
            query: q(numbered("qd", 1..=3), numbered("zd", 1..=1)),
            field_sum: 19,
            matched: 3,
            exact_relevance: None,
            feedback_term: 25.0 / 12.0,
            level: MatchLevel::Moderate,
        },
        // relevance exactly 18 with coverage 9/14 < 0.75: moderate.
        Case {
            id: "lv-e",
            fields: json!({"title": "qe99", "warnings": numbered("qe", 1..=6),
                           "failedAttempts": numbered("qe", 7..=9)}),
            feedback: json!({}),
            query: q(numbered("qe", 1..=9), numbered("ze", 1..=5)),
            field_sum: 6 * 2 + 3 * 3,
            matched: 9,
            exact_relevance: Some(18.0),
            feedback_term: 0.0,
            level: MatchLevel::Moderate,
        },
        // coverage 23/31, the largest below 0.75 with at most 32 tokens; relevance far above 18.
        Case {
            id: "lv-f",
            fields: json!({"title": numbered("qf", 1..=23).join(" ")}),
            feedback: json!({}),
            query: q(numbered("qf", 1..=23), numbered("zf", 1..=8)),
            field_sum: 23 * 8,
            matched: 23,
            exact_relevance: None,
            feedback_term: 0.0,
            level: MatchLevel::Moderate,
        },
        // coverage 1, relevance 9 + 7 + 2 = 18 exactly: strong.
        Case {
            id: "lv-g",
            fields: json!({"title": "qg99", "tags": ["qg01"], "problems": ["qg01"],
                           "warnings": ["qg01"]}),
            feedback: json!({}),
            query: q(numbered("qg", 1..=1), vec![]),
            field_sum: 18,
            matched: 1,
            exact_relevance: Some(18.0),
            feedback_term: 0.0,
            level: MatchLevel::Strong,
        },
        // relevance 10 × 0.8 = 8 exactly at coverage 1/2: moderate.
        Case {
            id: "lv-h",
            fields: json!({"title": "qh01", "warnings": ["qh01"]}),
            feedback: json!({}),
            query: q(numbered("qh", 1..=1), numbered("zh", 1..=1)),
            field_sum: 10,
            matched: 1,
            exact_relevance: Some(8.0),
            feedback_term: 0.0,
            level: MatchLevel::Moderate,
        },
        // The same with five failures: score below 8, still moderate.
        Case {
            id: "lv-i",
            fields: json!({"title": "qi01", "warnings": ["qi01"]}),
            feedback: json!({"failure": 5}),
            query: q(numbered("qi", 1..=1), numbered("zi", 1..=1)),
            field_sum: 10,
            matched: 1,
            exact_relevance: Some(8.0),
            feedback_term: -7.5 / 7.0,
            level: MatchLevel::Moderate,
        },
        // coverage 2/5 = 0.4 exactly, relevance 11 × 0.76 = 8.36: moderate.
        Case {
            id: "lv-j",
            fields: json!({"title": "qj01", "failedAttempts": ["qj02"]}),
            feedback: json!({}),
            query: q(numbered("qj", 1..=2), numbered("zj", 1..=3)),
            field_sum: 11,
            matched: 2,
            exact_relevance: None,
            feedback_term: 0.0,
            level: MatchLevel::Moderate,
        },
        // coverage 0.4 exactly, relevance 10 × 0.76 = 7.6 < 8: weak.
        Case {
            id: "lv-k",
            fields: json!({"title": "qk01", "warnings": ["qk02"]}),
            feedback: json!({}),
            query: q(numbered("qk", 1..=2), numbered("zk", 1..=3)),
            field_sum: 10,
            matched: 2,
            exact_relevance: None,
            feedback_term: 0.0,
            level: MatchLevel::Weak,
        },
        // coverage 11/28, the largest below 0.4 with at most 32 tokens: weak despite 88 points.
        Case {
            id: "lv-l",
            fields: json!({"title": numbered("ql", 1..=11).join(" ")}),
            feedback: json!({}),
            query: q(numbered("ql", 1..=11), numbered("zl", 1..=17)),
            field_sum: 11 * 8,
            matched: 11,
            exact_relevance: None,
            feedback_term: 0.0,
            level: MatchLevel::Weak,
        },
        // relevance 9 × 0.8 = 7.2 plus ten successes (score 9.28): still weak.
        Case {
            id: "lv-m",
            fields: json!({"title": "qm99", "tags": ["qm01"]}),
            feedback: json!({"success": 10}),
            query: q(numbered("qm", 1..=1), numbered("zm", 1..=1)),
            field_sum: 9,
            matched: 1,
            exact_relevance: None,
            feedback_term: 25.0 / 12.0,
            level: MatchLevel::Weak,
        },
    ];
    let records: Vec<Value> = cases
        .iter()
        .map(|c| {
            let mut record = c.fields.clone();
            record["id"] = json!(c.id);
            record["feedback"] = c.feedback.clone();
            record
        })
        .collect();
    let f = fixture(&records);
    for case in &cases {
        let query = case.query.join(" ");
        let response = f.search(&query, &[]);
        assert_eq!(ids(&response), [case.id], "{}", case.id);
        let r = &response.results[0];
        let coverage = case.matched as f64 / case.query.len() as f64;
        let relevance = f64::from(case.field_sum) * multiplier(case.matched, case.query.len());
        if let Some(exact) = case.exact_relevance {
            assert_eq!(
                relevance, exact,
                "{}: the case is built on round numbers",
                case.id
            );
        }
        assert_eq!(r.coverage, coverage, "{}", case.id);
        assert!(
            (breakdown(r, "feedback") - case.feedback_term).abs() < 1e-12,
            "{}",
            case.id
        );
        assert_eq!(r.score, relevance + breakdown(r, "feedback"), "{}", case.id);
        assert_eq!(r.match_level, case.level, "{}: level", case.id);
    }
}

#[test]
fn feedback_term_follows_the_counts_formula() {
    // (id, feedback, (2.5 (s + p/2) − 1.5 (f + n/2 + o/2)) / (T + 2) worked by hand)
    let cases: [(&str, Value, f64); 12] = [
        ("fb-none", json!({}), 0.0),
        ("fb-s3", json!({"success": 3}), 7.5 / 5.0),
        ("fb-f2o2", json!({"failure": 2, "outdated": 2}), -4.5 / 6.0),
        ("fb-s1p2", json!({"success": 1, "partial": 2}), 5.0 / 5.0),
        ("fb-p1", json!({"partial": 1}), 1.25 / 3.0),
        ("fb-n2", json!({"notApplicable": 2}), -1.5 / 4.0),
        ("fb-snake", json!({"not_applicable": 2}), -1.5 / 4.0),
        ("fb-s2f2", json!({"success": 2, "failure": 2}), 2.0 / 6.0),
        ("fb-s100", json!({"success": 100}), 250.0 / 102.0),
        ("fb-f100", json!({"failure": 100}), -150.0 / 102.0),
        (
            "fb-mixed",
            json!({"success": 4, "partial": 2, "failure": 1, "notApplicable": 2, "outdated": 3}),
            7.25 / 14.0,
        ),
        ("fb-null", json!({"success": 3, "failure": null}), 1.5),
    ];
    let records: Vec<Value> = cases
        .iter()
        .map(|(id, feedback, _)| json!({"id": id, "title": "kettle", "feedback": feedback}))
        .collect();
    let f = fixture(&records);
    let response = f.search("kettle", &[("limit", "20")]);
    for (id, _, expected) in &cases {
        let r = result(&response, id);
        let feedback = breakdown(r, "feedback");
        assert!(
            (feedback - expected).abs() < 1e-12,
            "{id}: feedback {feedback}, expected {expected}"
        );
        assert!(feedback > -1.5 && feedback < 2.5, "{id}");
        assert_eq!(r.score, 8.0 + feedback, "{id}");
    }
    let mut expected_order: Vec<(&str, f64)> = cases.iter().map(|(id, _, e)| (*id, *e)).collect();
    expected_order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let expected_ids: Vec<&str> = expected_order.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids(&response), expected_ids);
}

#[test]
fn equal_scores_are_ordered_by_id_ascending_bytewise() {
    let input_order = ["b", "a", "Z", "é", "aa", "a-1"];
    let records: Vec<Value> = input_order
        .iter()
        .map(|id| json!({"id": id, "title": "same words"}))
        .collect();
    let f = fixture(&records);
    let response = f.search("same words", &[]);
    assert_eq!(ids(&response), ["Z", "a", "a-1", "aa", "b", "é"]);
    // The smallest case: two identical records "b" and "a".
    let f = fixture(&[
        json!({"id": "b", "title": "twin record"}),
        json!({"id": "a", "title": "twin record"}),
    ]);
    assert_eq!(ids(&f.search("twin record", &[])), ["a", "b"]);
}

/// Records mixing feedback, phrases, several groups and supersession.
fn mixed_records() -> Vec<Value> {
    vec![
        json!({"id": "m-1", "title": "Postgres connection pool exhausted",
               "problems": ["too many connections", "pool timeout"],
               "solution": "Raise max_connections and use pgbouncer",
               "tags": ["postgres", "database"], "feedback": {"success": 3, "failure": 1},
               "createdAt": "2025-10-01T00:00:00Z"}),
        json!({"id": "m-2", "title": "Connection pool tuning for postgres",
               "supersedes": "m-1", "applicability": "postgres 14+",
               "feedback": {"outdated": 2}}),
        json!({"id": "m-3", "title": "Redis timeout under load", "warnings": ["pool size"],
               "failedAttempts": ["increasing the timeout"], "tags": ["redis"],
               "projectContext": "checkout service"}),
        json!({"id": "m-4", "title": "数据库连接池耗尽", "problems": ["连接超时"],
               "tags": ["数据库"]}),
        json!({"id": "m-5", "title": "Flaky integration tests in CI",
               "task": "stabilize the CI pipeline", "whyItWorked": "retries hide races",
               "tags": ["ci cd"], "feedback": {"partial": 2, "notApplicable": 1}}),
        json!({"id": "m-6", "title": "Connection pool exhausted", "supersedes": "m-2",
               "tags": ["postgres"]}),
    ]
}

const MIXED_QUERIES: [&str; 8] = [
    "postgres connection pool exhausted",
    "connection pool",
    "redis timeout",
    "数据库连接",
    "flaky integration tests",
    "pool timeout postgres redis ci",
    "the checkout service",
    "connections",
];

#[test]
fn breakdown_sums_to_score_within_1e_9() {
    let f = fixture(&mixed_records());
    let mut checked = 0;
    for query in MIXED_QUERIES {
        let response = f.search(query, &[("limit", "20")]);
        for r in &response.results {
            let sum: f64 = r
                .score_breakdown
                .to_map()
                .iter()
                .filter(|(key, _)| key.as_str() != "coverageMultiplier")
                .map(|(key, value)| {
                    value
                        .as_f64()
                        .unwrap_or_else(|| panic!("{}: {key} is not a number", r.id))
                })
                .sum();
            assert!(
                (sum - r.score).abs() < 1e-9,
                "{query:?} {}: breakdown sum {sum} != score {}",
                r.id,
                r.score
            );
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} results checked");
}

// ---------------------------------------------------------------------------------------------
// SPEC 6: post-steps.

#[test]
fn superseded_candidate_is_clamped_below_its_superseder() {
    let f = fixture(&[
        json!({"id": "sx", "title": "kafka consumer lag", "tags": ["kafka"]}),
        json!({"id": "sy", "title": "kafka consumer", "supersedes": "sx"}),
        // Supersedes sx too and has the smallest id, but is not a candidate.
        json!({"id": "sa", "title": "zookeeper note", "supersedes": "sx"}),
        // Naming itself is ignored.
        json!({"id": "sself", "title": "kafka broker", "supersedes": "sself"}),
        // A superseder already above its target changes nothing.
        json!({"id": "rv", "title": "rebalancing"}),
        json!({"id": "rw", "title": "rebalancing storms", "tags": ["rebalancing"],
               "supersedes": "rv"}),
    ]);
    let response = f.search("kafka consumer lag", &[]);
    assert_eq!(ids(&response), ["sy", "sx", "sself"]);
    let (sx, sy, sself) = (
        result(&response, "sx"),
        result(&response, "sy"),
        result(&response, "sself"),
    );
    // sx: title 3 × 8 + tags 9 + exact phrase 12 = 45 before the clamp.
    let sx_before = 45.0;
    assert_eq!(sy.score, 16.0 * multiplier(2, 3));
    assert_eq!(sx.score, sy.score - 0.001);
    assert!(
        (breakdown(sx, "supersession") - (sx.score - sx_before)).abs() < 1e-9,
        "supersession is the change"
    );
    assert_eq!(sx.superseded_by.as_deref(), Some("sa"));
    assert_eq!(sy.superseded_by, None);
    assert!(!sy.score_breakdown.contains_key("supersession"));
    assert_eq!(sself.superseded_by, None);
    assert_eq!(sself.score, 8.0 * multiplier(1, 3));
    assert!(!sself.score_breakdown.contains_key("supersession"));

    let response = f.search("rebalancing", &[]);
    assert_eq!(ids(&response), ["rw", "rv"]);
    let rv = result(&response, "rv");
    assert_eq!(rv.score, 8.0);
    assert_eq!(rv.superseded_by.as_deref(), Some("rw"));
    assert!(!rv.score_breakdown.contains_key("supersession"));
}

#[test]
fn supersession_chain_ends_ordered_newest_first() {
    let f = fixture(&[
        json!({"id": "ca", "title": "redis timeout tuning", "tags": ["redis"],
               "problems": ["redis timeout"]}),
        json!({"id": "cb", "title": "redis timeout", "supersedes": "ca"}),
        json!({"id": "cc", "title": "redis", "supersedes": "cb"}),
    ]);
    let response = f.search("redis timeout", &[]);
    assert_eq!(ids(&response), ["cc", "cb", "ca"]);
    let (ca, cb, cc) = (
        result(&response, "ca"),
        result(&response, "cb"),
        result(&response, "cc"),
    );
    assert_eq!(cc.score, 8.0 * multiplier(1, 2));
    assert_eq!(cb.score, cc.score - 0.001);
    assert_eq!(ca.score, cb.score - 0.001);
    // Before the clamps: ca = 16 + 9 + 14 + 12 = 51, cb = 16 + 12 = 28.
    assert!((breakdown(ca, "supersession") - (ca.score - 51.0)).abs() < 1e-9);
    assert!((breakdown(cb, "supersession") - (cb.score - 28.0)).abs() < 1e-9);
    assert!(!cc.score_breakdown.contains_key("supersession"));
    assert_eq!(ca.superseded_by.as_deref(), Some("cb"));
    assert_eq!(cb.superseded_by.as_deref(), Some("cc"));
    assert_eq!(cc.superseded_by, None);
}

#[test]
fn normalized_score_is_score_divided_by_the_best() {
    let f = group_fixture();
    let response = f.search("zebra missingword", &[("limit", "20")]);
    let best = response.results[0].score;
    for r in &response.results {
        assert_eq!(r.normalized_score, r.score / best, "{}", r.id);
    }
    assert_eq!(response.results[0].normalized_score, 1.0);
}

#[test]
fn min_score_is_a_fraction_or_a_percentage() {
    let f = group_fixture();
    // normalizedScores: 1, 8/9, 7/9, 5/9, 4/9 (×4), 3/9, 2/9.
    let cases = [
        ("0", 10),
        ("0.5", 4),
        ("50", 4),
        ("0.56", 3),
        ("56", 3),
        ("0.44", 8),
        ("44", 8),
        ("1", 1),
        ("100", 1),
        ("1.5", 10),
    ];
    for (min_score, expected) in cases {
        let response = f.search(
            "zebra missingword",
            &[("limit", "20"), ("min-score", min_score)],
        );
        assert_eq!(response.results.len(), expected, "--min-score {min_score}");
        assert_eq!(
            response.counts.candidates, 10,
            "counts come before min-score"
        );
    }
}

#[test]
fn limit_keeps_the_first_results_and_is_clamped_at_200_with_a_notice() {
    let f = group_fixture();
    let all = ids(&f.search("zebra missingword", &[("limit", "200")]))
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>();
    assert_eq!(all.len(), 10);
    for (limit, expected) in [("1", 1), ("3", 3), ("10", 10), ("200", 10)] {
        let response = f.search("zebra missingword", &[("limit", limit)]);
        assert_eq!(ids(&response), all[..expected], "--limit {limit}");
        assert!(response.notices.is_empty(), "--limit {limit}");
    }
    let default = f.search("zebra missingword", &[]);
    assert_eq!(default.results.len(), 10);
    let clamped = f.search("zebra missingword", &[("limit", "500")]);
    assert_eq!(ids(&clamped), all);
    assert_eq!(clamped.notices.len(), 1, "{:?}", clamped.notices);
    assert!(clamped.notices[0].contains("200"), "{:?}", clamped.notices);
    assert_eq!(
        request("q", &[("limit", "500")]).expect("valid").limit(),
        200
    );
}

// ---------------------------------------------------------------------------------------------
// SPEC 7: output.

/// Ranks for "kernel panic boot": k-sem 1 and k-strong 2 (36 each), k-mod 3, k-weak 4.
fn kernel_fixture() -> Fixture {
    fixture(&[
        json!({"id": "k-strong", "title": "kernel panic boot"}),
        json!({"id": "k-sem", "title": "kernel panic boot", "memoryType": "semantic"}),
        json!({"id": "k-mod", "title": "kernel panic"}),
        json!({"id": "k-weak", "title": "misc", "warnings": ["boot"]}),
        json!({"id": "k-none", "title": "unrelated"}),
    ])
}

#[test]
fn counts_split_candidates_by_level_before_min_score_and_limit() {
    let f = kernel_fixture();
    // (options, candidates, strong, moderate, weak, filtered)
    let cases: [(Options, [usize; 5]); 5] = [
        (vec![], [4, 2, 1, 1, 0]),
        (vec![("limit", "1")], [4, 2, 1, 1, 0]),
        (vec![("min-score", "0.9")], [4, 2, 1, 1, 0]),
        (vec![("type", "episodic")], [3, 1, 1, 1, 1]),
        (vec![("type", "semantic")], [1, 1, 0, 0, 4]),
    ];
    for (options, [candidates, strong, moderate, weak, filtered]) in cases {
        let c = f.search("kernel panic boot", &options).counts;
        assert_eq!(
            [c.candidates, c.strong, c.moderate, c.weak, c.filtered],
            [candidates, strong, moderate, weak, filtered],
            "{options:?}"
        );
    }
    let response = f.search("kernel panic boot", &[]);
    let levels: Vec<MatchLevel> = response.results.iter().map(|r| r.match_level).collect();
    assert_eq!(ids(&response), ["k-sem", "k-strong", "k-mod", "k-weak"]);
    use MatchLevel::*;
    assert_eq!(levels, [Strong, Strong, Moderate, Weak]);
}

#[test]
fn matched_tokens_are_in_query_order() {
    let f = kernel_fixture();
    let cases: [(&str, &str, &[&str]); 4] = [
        ("boot panic kernel", "k-mod", &["panic", "kernel"]),
        (
            "boot panic kernel",
            "k-strong",
            &["boot", "panic", "kernel"],
        ),
        (
            "panic kernel boot",
            "k-strong",
            &["panic", "kernel", "boot"],
        ),
        ("boot panic kernel", "k-weak", &["boot"]),
    ];
    for (query, id, expected) in cases {
        let response = f.search(query, &[]);
        assert_eq!(
            result(&response, id).matched_tokens,
            strings(expected),
            "{query:?} {id}"
        );
    }
}

#[test]
fn explain_tells_why_a_record_is_or_is_not_a_result() {
    let f = kernel_fixture();
    // (options, id, status, rank, a word the filter name contains)
    type ExplainCase<'a> = (
        Options<'a>,
        &'a str,
        &'a str,
        Option<usize>,
        Option<&'a str>,
    );
    let cases: [ExplainCase; 8] = [
        (vec![], "nope", "not_found", None, None),
        (
            vec![("type", "episodic")],
            "k-sem",
            "filtered",
            None,
            Some("type"),
        ),
        (
            vec![("tag", "linux")],
            "k-strong",
            "filtered",
            None,
            Some("tag"),
        ),
        (
            vec![("project-context", "kernel")],
            "k-strong",
            "filtered",
            None,
            Some("project"),
        ),
        (vec![], "k-none", "no_token_matched", None, None),
        (
            vec![("min-score", "0.5")],
            "k-weak",
            "below_min_score",
            Some(4),
            None,
        ),
        (vec![("limit", "2")], "k-mod", "beyond_limit", Some(3), None),
        (vec![], "k-strong", "result", Some(2), None),
    ];
    for (mut options, id, status, rank, filter) in cases {
        options.push(("explain", id));
        let response = f.search("kernel panic boot", &options);
        let explain = response.explain.as_ref().expect("--explain adds explain");
        assert_eq!(explain.id, id);
        assert_eq!(explain.status, status, "{options:?}");
        assert_eq!(explain.rank, rank, "{options:?}");
        match filter {
            Some(word) => {
                let named = explain.filter.map_or("", |f| f.as_str()).to_lowercase();
                assert!(named.contains(word), "{options:?}: filter {named:?}");
            }
            None => assert_eq!(explain.filter, None, "{options:?}"),
        }
        if rank.is_some() {
            assert!(explain.score_breakdown.is_some(), "{options:?}");
        }
    }
    let response = f.search("kernel panic boot", &[("explain", "k-strong")]);
    let explain = response.explain.as_ref().expect("explain");
    assert_eq!(explain.score, Some(36.0));
    assert_eq!(explain.match_level, Some(MatchLevel::Strong));
    assert!(f.search("kernel panic boot", &[]).explain.is_none());
}

#[test]
fn full_adds_each_results_whole_record() {
    let f = kernel_fixture();
    let plain = f.search("kernel panic boot", &[]);
    assert!(plain.results.iter().all(|r| r.record.is_none()));
    let full = f.search("kernel panic boot", &[("full", "")]);
    assert_eq!(full.results.len(), 4);
    for r in &full.results {
        let record = r.record.as_ref().expect("--full includes the record");
        assert_eq!(record["id"], json!(r.id));
        assert_eq!(record["title"], json!(r.title));
    }
    let sem = result(&full, "k-sem").record.as_ref().expect("record");
    assert_eq!(sem["memoryType"], json!("semantic"));
    let weak = result(&full, "k-weak").record.as_ref().expect("record");
    assert_eq!(weak["warnings"], json!(["boot"]));
}

#[test]
fn fingerprint_is_equal_for_equal_requests_and_differs_otherwise() {
    let f = kernel_fixture();
    let base = f.search("kernel panic boot", &[]).fingerprint;
    assert_eq!(f.search("kernel panic boot", &[]).fingerprint, base);
    // The same instant spelled differently.
    assert_eq!(
        f.search("kernel panic boot", &[("now", "2026-01-01T01:00:00+01:00")])
            .fingerprint,
        base
    );
    let different: [(&str, Options); 4] = [
        ("kernel panic", vec![]),
        ("kernel panic boot", vec![("now", "2026-01-02T00:00:00Z")]),
        ("kernel panic boot", vec![("limit", "3")]),
        ("kernel panic boot", vec![("type", "semantic")]),
    ];
    for (query, options) in different {
        assert_ne!(
            f.search(query, &options).fingerprint,
            base,
            "{query:?} {options:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// SPEC 9: `--backend scan` answers like the index.

#[test]
fn backend_scan_gives_the_same_results_as_the_index() {
    let f = fixture(&mixed_records());
    let mut queries: Vec<(&str, Options)> = MIXED_QUERIES
        .iter()
        .map(|q| (*q, vec![("limit", "20")]))
        .collect();
    queries.push(("connection pool", vec![("tag", "postgres")]));
    queries.push(("", vec![("project-context", "postgres")]));
    queries.push(("pool", vec![("min-score", "0.5"), ("explain", "m-3")]));
    for (query, options) in queries {
        let index = f.search(query, &options);
        let mut scan_options = options.clone();
        scan_options.push(("backend", "scan"));
        let scan = f.search(query, &scan_options);
        assert_eq!(index.backend, "index", "{query:?}");
        assert!(!index.degraded);
        assert_eq!(scan.backend, "scan", "{query:?}");
        assert!(!scan.degraded, "a forced scan is not degraded");
        assert_eq!(ids(&scan), ids(&index), "{query:?} {options:?}");
        assert_eq!(scan.counts, index.counts, "{query:?}");
        assert_eq!(scan.tokens, index.tokens);
        assert_eq!(scan.explain, index.explain, "{query:?}");
        for (s, i) in scan.results.iter().zip(&index.results) {
            assert_eq!(s.score, i.score, "{query:?} {}", s.id);
            assert_eq!(s.normalized_score, i.normalized_score, "{query:?} {}", s.id);
            assert_eq!(s.score_breakdown, i.score_breakdown, "{query:?} {}", s.id);
            assert_eq!(s.match_level, i.match_level);
            assert_eq!(s.matched_tokens, i.matched_tokens);
            assert_eq!(s.superseded_by, i.superseded_by);
            assert_eq!(s.locator, i.locator);
        }
    }
}
