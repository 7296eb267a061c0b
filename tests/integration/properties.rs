//! Laws the engine must obey on any input: the index answers exactly as a plain scan of the
//! records, the breakdown sums to the score, thread count does not change answers, and an
//! export rebuilds into the same answers.

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::TestCaseResult;
use reliora::handle::writer;
use reliora::{BuildOptions, Index, Outcome, SearchRequest, SearchResponse};

use crate::support::entity_adjusted;

/// A small vocabulary with prefix relations, stop words, CJK and non-ASCII words, so random
/// records and queries collide often.
const WORDS: &[&str] = &[
    "config",
    "configuration",
    "configure",
    "conf",
    "confi",
    "tokio",
    "tok",
    "runtime",
    "run",
    "running",
    "the",
    "and",
    "of",
    "rust",
    "trust",
    "rustls",
    "pool",
    "pooling",
    "timeout",
    "timed",
    "out",
    "数据库",
    "连接",
    "失败",
    "Müller",
    "café",
    "connection",
    "connections",
    "refused",
    "docker",
    "cache",
    "caching",
    "CI/CD",
    "ci",
    "cd",
    "postgres",
    "migration",
    "migrations",
    "async",
    "await",
    "panic",
    "panics",
    "x",
    "42",
    "v1.2",
];

pub(crate) fn text(max_words: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..=max_words).prop_map(|w| w.join(" "))
}

fn record(i: usize) -> impl Strategy<Value = serde_json::Value> {
    (
        text(6),
        text(8),
        prop::collection::vec(text(5), 0..3),
        text(8),
        prop::collection::vec(text(2), 0..3),
        text(4),
        (0u64..4, 0u64..3, 0u64..3),
        prop::option::of(0usize..12),
        prop::option::of(prop::sample::select(
            &["episodic", "Semantic", " procedural "][..],
        )),
        prop::option::of(0i64..1000),
        (
            prop::option::of(0u8..=10),
            prop::option::of(prop::sample::select(&[0.0, 0.02, 0.5][..])),
            prop::option::of(any::<bool>()),
            prop::collection::vec(
                prop::sample::select(&["Tokio", "rust", "数据库", "CI"][..]),
                0..3,
            ),
        ),
    )
        .prop_map(
            move |(title, task, problems, solution, tags, context, fb, sup, kind, day, more)| {
                let (salience, decay, pinned, entities) = more;
                let mut r = serde_json::json!({
                    "id": format!("r{i:02}"),
                    "title": if title.trim().is_empty() { format!("record {i}") } else { title },
                    "task": task,
                    "problems": problems,
                    "solution": solution,
                    "tags": tags,
                    "projectContext": context,
                    "feedback": {"success": fb.0, "failure": fb.1, "outdated": fb.2},
                });
                if let Some(s) = sup {
                    r["supersedes"] = format!("r{s:02}").into();
                }
                if let Some(k) = kind {
                    r["memoryType"] = k.into();
                }
                if let Some(d) = day {
                    r["createdAt"] = format!(
                        "2025-{:02}-{:02}T{:02}:00:00Z",
                        1 + d % 12,
                        1 + d % 28,
                        d % 24
                    )
                    .into();
                }
                if let Some(s) = salience {
                    r["salience"] = (f64::from(s) / 10.0).into();
                }
                if let Some(d) = decay {
                    r["decayFactor"] = d.into();
                }
                if let Some(p) = pinned {
                    r["pinned"] = p.into();
                }
                r["entities"] = entities.into();
                r
            },
        )
}

pub(crate) fn records() -> impl Strategy<Value = Vec<serde_json::Value>> {
    (1usize..12).prop_flat_map(|n| (0..n).map(record).collect::<Vec<_>>())
}

/// Texts longer than MMR's 100-character prefix: records sharing one are near duplicates.
const LONG_TEXTS: [&str; 3] = [
    "Connection pool timeout under load: the pool ran out of connections while every worker \
     waited on a slow query, so requests timed out",
    "Configure the tokio runtime before spawning tasks: a runtime built inside another runtime \
     panics, and the pool of blocking threads is shared",
    "Postgres migrations ran twice in CI because the cache of the migration table was stale \
     and two jobs raced on the same connection pool",
];

/// Records made to collide under decay: a few long texts (near duplicates), tasks with and
/// without the entity `Tokio` and of different relevance, spread over ages, saliences and
/// memory types; some equal but for their ids.
fn decay_records() -> impl Strategy<Value = Vec<serde_json::Value>> {
    let record = (
        0usize..3,
        0usize..4,
        0usize..4,
        0usize..3,
        0usize..3,
        any::<bool>(),
    );
    prop::collection::vec(record, 2..40).prop_map(|records| {
        records
            .into_iter()
            .enumerate()
            .map(|(i, (text, task, age, salience, kind, named))| {
                let tasks = [
                    "runtime pool",
                    "tokio runtime pool",
                    "pool timeout",
                    "Tokio pool",
                ];
                let (salience, kind) = (
                    [0.2, 0.5, 0.9][salience],
                    ["episodic", "semantic", "procedural"][kind],
                );
                let entities: Vec<&str> = if named { vec!["Tokio"] } else { vec![] };
                serde_json::json!({
                    "id": format!("d{i:02}"),
                    "title": LONG_TEXTS[text],
                    "task": tasks[task],
                    "createdAt": format!("2025-12-{:02}T00:00:00Z", 1 + 9 * age),
                    "salience": salience,
                    "memoryType": kind,
                    "entities": entities,
                })
            })
            .collect()
    })
}

/// How a build lays its records out.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Layout {
    /// One segment, written at once.
    One,
    /// Segments of this many records, kept (`--segment-records`).
    Segments(usize),
    /// One segment merged from spills of this many records (`--spill-records`).
    Spills(usize),
}

/// Builds `records` laid out as `layout`.
fn build(dir: &Path, records: &[serde_json::Value], layout: Layout) -> Index {
    let input = dir.join("input.jsonl");
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    let index_dir = dir.join("index");
    let (segment_records, spill_records) = match layout {
        Layout::One => (0, 0),
        Layout::Segments(n) => (n, 0),
        Layout::Spills(n) => (0, n),
    };
    let options = BuildOptions {
        inputs: vec![input],
        segment_records,
        spill_records,
        ..BuildOptions::default()
    };
    Index::build(&index_dir, &options).unwrap();
    Index::open(&index_dir).unwrap()
}

/// One segment, several (an index built with `--segment-records`), or one merged from spills.
fn layouts() -> impl Strategy<Value = Layout> {
    prop::sample::select(
        &[
            Layout::One,
            Layout::Segments(1),
            Layout::Segments(2),
            Layout::Segments(5),
            Layout::Spills(1),
            Layout::Spills(3),
        ][..],
    )
}

fn request(query: &str, options: &[(&str, &str)]) -> SearchRequest {
    let mut request = SearchRequest::new(query);
    request
        .set_option("now", Some("2026-01-01T00:00:00Z"))
        .unwrap();
    request.set_option("limit", Some("200")).unwrap();
    for (name, value) in options {
        request.set_option(name, Some(value)).unwrap();
    }
    request
}

/// The parts of a response that must agree between two ways of answering.
fn answer(response: &SearchResponse) -> serde_json::Value {
    let results: Vec<serde_json::Value> = response
        .results
        .iter()
        .map(|r| {
            serde_json::json!({
                "id": r.id, "score": r.score, "normalizedScore": r.normalized_score,
                "matchLevel": r.match_level, "coverage": r.coverage,
                "matchedTokens": r.matched_tokens, "supersededBy": r.superseded_by,
                "scoreBreakdown": r.score_breakdown,
            })
        })
        .collect();
    serde_json::json!({
        "tokens": response.tokens, "counts": response.counts, "results": results,
    })
}

pub(crate) fn filters() -> impl Strategy<Value = Vec<(&'static str, String)>> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(&["rust", "ci cd", "pool"][..])
                .prop_map(|t| ("tag", t.to_string())),
            prop::sample::select(&["tokio", "configuration", "数据库"][..])
                .prop_map(|t| ("project-context", t.to_string())),
            prop::sample::select(&["episodic", "semantic"][..])
                .prop_map(|t| ("type", t.to_string())),
        ],
        0..2,
    )
}

/// Options of the profiles and post-steps, drawn so that each is exercised often.
pub(crate) fn profile_options() -> impl Strategy<Value = Vec<(&'static str, String)>> {
    prop::collection::vec(
        prop_oneof![
            Just(("include-superseded", "true".to_string())),
            (1usize..6).prop_map(|n| ("candidates", n.to_string())),
            prop::sample::select(&["true", "false"][..]).prop_map(|v| ("mmr", v.to_string())),
            prop::sample::select(&["Tokio", "数据库", "rust"][..])
                .prop_map(|e| ("entity", e.to_string())),
            prop::sample::select(&["relevance=1,temporal=1", "salience=2,textMatch=1"][..])
                .prop_map(|w| ("rerank", w.to_string())),
            (20u64..400).prop_map(|n| ("token-budget", n.to_string())),
        ],
        0..3,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn index_answers_exactly_as_a_scan(
        records in records(),
        queries in prop::collection::vec(text(5), 1..4),
        filters in filters(),
        profile in prop::sample::select(&["standard", "decay", "recency", "bm25f"][..]),
        extras in profile_options(),
        layout in layouts(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path(), &records, layout);
        let mut options: Vec<(&str, &str)> = filters.iter().map(|(n, v)| (*n, v.as_str())).collect();
        options.push(("profile", profile));
        options.extend(extras.iter().map(|(n, v)| (*n, v.as_str())));
        for query in &queries {
            let mut by_index = request(query, &options);
            by_index.set_option("backend", Some("index")).unwrap();
            let mut by_scan = request(query, &options);
            by_scan.set_option("backend", Some("scan")).unwrap();
            match (index.search(&by_index), index.search(&by_scan)) {
                (Ok(a), Ok(b)) => {
                    prop_assert_eq!(a.backend, "index");
                    prop_assert_eq!(b.backend, "scan");
                    prop_assert_eq!(answer(&a), answer(&b), "query {:?}", query);
                }
                // A valid request on a sound index fails only for an empty query.
                (Err(a), Err(b)) => {
                    prop_assert_eq!(a.code(), reliora::ErrorCode::EmptyQuery, "{}", a);
                    prop_assert_eq!(b.code(), reliora::ErrorCode::EmptyQuery, "{}", b);
                }
                (a, b) => prop_assert!(false, "index {:?} vs scan {:?}", a.is_ok(), b.is_ok()),
            }
        }
    }

    /// The standard, recency and decay profiles rank only what can reach the top of the list
    /// (and check phrases lazily): a short page must be exactly the head of a long one, and the
    /// same as when `--explain` forces the full ranking.
    #[test]
    fn a_short_page_is_the_head_of_the_full_ranking(
        records in records(),
        query in text(6),
        limit in 1usize..4,
        layout in layouts(),
        profile in prop::sample::select(&["standard", "decay", "recency", "bm25f"][..]),
        extras in prop::collection::vec(
            prop_oneof![
                Just(("include-superseded", "true".to_string())),
                (1usize..6).prop_map(|n| ("candidates", n.to_string())),
            ],
            0..2,
        ),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path(), &records, layout);
        let mut options: Vec<(&str, &str)> = vec![("profile", profile)];
        options.extend(extras.iter().map(|(n, v)| (*n, v.as_str())));
        let full = request(&query, &options);
        let Ok(all) = index.search(&full) else { return Ok(()); };
        let limit_text = limit.to_string();
        options.push(("limit", limit_text.as_str()));
        let short = index.search(&request(&query, &options)).unwrap();
        options.push(("explain", "r00"));
        let explained = index.search(&request(&query, &options)).unwrap();
        let head: Vec<_> = answer(&all)["results"].as_array().unwrap().iter().take(limit).cloned().collect();
        let head = serde_json::Value::Array(head);
        let (short, explained, all) = (answer(&short), answer(&explained), answer(&all));
        prop_assert_eq!(&short["results"], &head);
        prop_assert_eq!(&explained["results"], &head);
        prop_assert_eq!(&short["counts"], &all["counts"]);
    }

    /// Decay reads a record for its entity check and near-duplicate demotion only while the
    /// record can still reach the page: its page must be the head of the ranking that reads
    /// every candidate (a long page, and `--explain`, which reads them all).
    #[test]
    fn decays_page_reads_only_what_can_reach_it_and_is_the_head_of_the_full_ranking(
        records in decay_records(),
        query in prop::sample::select(&[
            "Tokio pool timeout connection", "tokio runtime pool", "Postgres pool migrations",
        ][..]),
        limit in 1usize..6,
        layout in layouts(),
        extras in prop::collection::vec(
            prop_oneof![
                (1usize..30).prop_map(|n| ("candidates", n.to_string())),
                Just(("mmr", "false".to_string())),
                Just(("entity", "tokio".to_string())),
            ],
            0..2,
        ),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path(), &records, layout);
        let mut options: Vec<(&str, &str)> = vec![("profile", "decay")];
        options.extend(extras.iter().map(|(n, v)| (*n, v.as_str())));
        let all = answer(&index.search(&request(query, &options)).unwrap());
        let limit_text = limit.to_string();
        options.push(("limit", limit_text.as_str()));
        let short = answer(&index.search(&request(query, &options)).unwrap());
        options.push(("explain", "d00"));
        let explained = answer(&index.search(&request(query, &options)).unwrap());
        let head: Vec<_> = all["results"].as_array().unwrap().iter().take(limit).cloned().collect();
        let head = serde_json::Value::Array(head);
        prop_assert_eq!(&short["results"], &head);
        prop_assert_eq!(&explained["results"], &head);
    }

    #[test]
    fn breakdown_sums_to_score_and_order_is_by_score_then_id(
        records in records(),
        query in text(6),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path(), &records, Layout::One);
        let Ok(response) = index.search(&request(&query, &[])) else { return Ok(()); };
        for r in &response.results {
            let sum: f64 = r
                .score_breakdown
                .to_map()
                .iter()
                .filter(|(k, _)| k.as_str() != "coverageMultiplier")
                .map(|(_, v)| v.as_f64().unwrap())
                .sum();
            prop_assert!((sum - r.score).abs() < 1e-9, "{} sums to {} not {}", r.id, sum, r.score);
        }
        for pair in response.results.windows(2) {
            prop_assert!(
                pair[0].score > pair[1].score
                    || (pair[0].score == pair[1].score && pair[0].id < pair[1].id)
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    /// Every profile ranks only the candidates whose bounds let them reach the page (or decay's
    /// candidate list): a short page must be the scan's, which scores every candidate.
    #[test]
    fn a_bounded_page_answers_as_a_scan(
        // More records than a page, from a small vocabulary: many ties in relevance, told
        // apart by their columns (age, pinned, feedback) and ids.
        // Few supersession relations (their records are kept whatever their bounds).
        records in (8usize..40).prop_flat_map(|n| (0..n).map(record).collect::<Vec<_>>())
            .prop_map(|mut records| {
                for (i, r) in records.iter_mut().enumerate() {
                    if i % 8 != 0 {
                        r.as_object_mut().unwrap().remove("supersedes");
                    }
                }
                records
            }),
        query in text(4),
        limit in 1usize..4,
        profile in prop::sample::select(&["standard", "decay", "recency", "bm25f"][..]),
        extras in prop::collection::vec(
            prop_oneof![
                Just(("include-superseded", "true".to_string())),
                (1usize..6).prop_map(|n| ("candidates", n.to_string())),
                prop::sample::select(&["true", "false"][..]).prop_map(|v| ("mmr", v.to_string())),
            ],
            0..2,
        ),
        layout in layouts(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path(), &records, layout);
        let limit_text = limit.to_string();
        // Records are dated through 2025: a reference time amid them makes ages (recency, decay)
        // count as much as relevance.
        let mut options: Vec<(&str, &str)> = vec![
            ("profile", profile),
            ("limit", &limit_text),
            ("now", "2025-08-01T00:00:00Z"),
        ];
        options.extend(extras.iter().map(|(n, v)| (*n, v.as_str())));
        answers_as_a_scan(&index, &query, &options)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The bounded ranking skips whole chunks of 64 records (their best bound cannot reach the
    /// page, or cannot hold recency's best relevance): matching records spread thinly over
    /// several chunks, few of them pinned, among records no query word matches.
    #[test]
    fn a_bounded_page_over_many_chunks_answers_as_a_scan(
        records in (130usize..320)
            .prop_flat_map(|n| (Just(n), prop::collection::btree_set(0..n, 8..40)))
            .prop_flat_map(|(n, matching)| {
                (0..n)
                    .map(|i| {
                        if matching.contains(&i) {
                            record(i)
                                .prop_map(move |mut r| {
                                    let fields = r.as_object_mut().unwrap();
                                    if i % 8 != 0 {
                                        fields.remove("supersedes");
                                    }
                                    if i % 4 != 0 {
                                        fields.remove("pinned");
                                    }
                                    r
                                })
                                .boxed()
                        } else {
                            Just(serde_json::json!({
                                "id": format!("r{i:02}"),
                                "title": format!("record {i}"),
                                "createdAt": "2025-03-01T00:00:00Z",
                            }))
                            .boxed()
                        }
                    })
                    .collect::<Vec<_>>()
            }),
        query in text(4),
        limit in 1usize..4,
        profile in prop::sample::select(&["standard", "decay", "recency", "bm25f"][..]),
        layout in prop::sample::select(&[Layout::One, Layout::Segments(128)][..]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path(), &records, layout);
        let limit_text = limit.to_string();
        let options = [
            ("profile", profile),
            ("limit", limit_text.as_str()),
            ("now", "2025-08-01T00:00:00Z"),
        ];
        answers_as_a_scan(&index, &query, &options)?;
    }
}

/// Recency's bound has the pin's bonus only in the chunks of 64 records that hold a pinned
/// record: a recent pinned record among weak matches still reaches the page above stronger,
/// older matches, though its chunk's best relevance alone could not.
#[test]
fn a_pinned_weak_match_reaches_recencys_page_from_its_own_chunk() {
    let records: Vec<serde_json::Value> = (0..256usize)
        .map(|i| {
            let pinned = i == 150;
            let mut record = serde_json::json!({
                "id": format!("p{i:03}"),
                "title": if i < 64 { "lantern harbor kestrel" } else { "kestrel harbor" },
                "task": "unrelated words here",
                "createdAt": if pinned { "2025-12-30T00:00:00Z" } else { "2020-01-01T00:00:00Z" },
            });
            if pinned {
                record["pinned"] = true.into();
            }
            record
        })
        .collect();
    let ids = recency_page(&records, "kestrel harbor lantern", 3);
    assert_eq!(ids[0], "p150", "{ids:?}");
}

/// Recency divides by the best relevance of every candidate. Here the best record reaches it
/// only with the phrase, found by the check its level needs for the counts: a best relevance
/// taken without that check is too low, inflates every text score by 18/15, and would keep
/// old moderate matches on the page in place of a recent weak one.
#[test]
fn recencys_best_relevance_counts_the_phrase_found_for_the_counts() {
    let old = "2020-01-01T00:00:00Z";
    let records: Vec<serde_json::Value> = (0..256usize)
        .map(|i| {
            let (task, warnings, created) = match i {
                // Relevance 6 without the phrase, 18 with it: its level depends on it.
                40 => ("unrelated words here", vec!["alpha beta gamma"], old),
                // 15 without the phrase (moderate), 27 with it (strong); it is not there.
                90 => ("gamma beta alpha", vec![], old),
                // 8.67, old: three of them, enough to fill the page with a text score
                // inflated.
                130 | 131 | 160 => ("alpha beta", vec![], old),
                // 3.67, created at `now`.
                200 => ("alpha", vec![], "2026-01-01T00:00:00Z"),
                _ => ("unrelated words here", vec![], old),
            };
            serde_json::json!({
                "id": format!("b{i:03}"),
                "task": task,
                "warnings": warnings,
                "createdAt": created,
            })
        })
        .collect();
    let ids = recency_page(&records, "alpha beta gamma", 3);
    assert_eq!(ids, ["b040", "b090", "b200"]);
}

/// Recency's best relevance may belong to a record whose level does not depend on the phrase,
/// so the counts never checked it, and whose postings only allow the phrase (three words):
/// that record must be checked for the best. Without the check the best is 24, not 36: every
/// text score is half as large again, the bound prefers old strong matches to recent moderate
/// ones, and the recent record that belongs on the page is never read.
#[test]
fn recencys_best_relevance_checks_a_phrase_the_counts_did_not_need() {
    let old = "2020-01-01T00:00:00Z";
    let records: Vec<serde_json::Value> = (0..256usize)
        .map(|i| {
            let (title, task, created) = match i {
                // Strong with or without the phrase: 24 without it, 36 with it.
                40 => ("alpha beta gamma", "", old),
                // 24, strong; the phrase is not there. Text score 0.67.
                90 => ("gamma beta alpha", "", old),
                // 15 (moderate; the phrase, checked for the counts, is not there), created
                // at `now`: 15 / 36 + 0.3 = 0.72 puts it second.
                200 => ("", "gamma alpha beta", "2026-01-01T00:00:00Z"),
                _ => ("unrelated words here", "", old),
            };
            serde_json::json!({
                "id": format!("c{i:03}"),
                "title": title,
                "task": task,
                "createdAt": created,
            })
        })
        .collect();
    let ids = recency_page(&records, "alpha beta gamma", 2);
    assert_eq!(ids, ["c040", "c200"]);
}

/// The ids of `recency`'s first `limit` places for `query` over `records` (one segment), by
/// the index, which answers as a scan.
fn recency_page(records: &[serde_json::Value], query: &str, limit: usize) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let index = build(dir.path(), records, Layout::One);
    let limit = limit.to_string();
    let options = [("profile", "recency"), ("limit", limit.as_str())];
    answers_as_a_scan(&index, query, &options).unwrap();
    let mut by_index = request(query, &options);
    by_index.set_option("backend", Some("index")).unwrap();
    let response = index.search(&by_index).unwrap();
    response.results.into_iter().map(|r| r.id).collect()
}

/// Decay's entity check is made from the postings where they can tell (a plain ASCII entity,
/// a record without non-ASCII or cut terms, no record of the segment naming it) and from the
/// record's text elsewhere: both agree with a scan, which reads every record. The records are
/// the cases where the tokenizer's terms and the check's text part: a combining mark after
/// the entity or before it, a run cut at 64 characters, a stop word, the Kelvin sign, a
/// dotted capital I, punctuation inside the entity, a CJK character right after it (a term of
/// its own, but no boundary for the check), and a record naming it.
#[test]
fn decays_entity_check_from_the_postings_answers_as_a_scan() {
    let texts: [(&str, String); 14] = [
        ("e01", "Tokio\u{301} pool".into()),
        ("e02", "e\u{301}tokio pool".into()),
        ("e03", format!("{}e\u{301}tokio pool", "a".repeat(64))),
        ("e04", "tokio-based pool".into()),
        ("e05", "tokios pool".into()),
        ("e07", "pool of the sea".into()),
        ("e08", "\u{212A}ube pool".into()),
        ("e09", "TOK\u{130} pool".into()),
        ("e10", "c++ pool".into()),
        ("e11", "rust analyzer pool".into()),
        ("e12", "rust-analyzer pool".into()),
        ("e13", "pool".into()),
        ("e14", "Caf\u{e9} TOKIO pool".into()),
        ("e15", "tokio\u{6570}\u{636e} pool".into()),
    ];
    let record = |id: &str, task: &str| serde_json::json!({ "id": id, "task": task });
    let plain: Vec<serde_json::Value> = texts.iter().map(|(id, t)| record(id, t)).collect();
    let mut naming = plain.clone();
    naming.push(serde_json::json!({ "id": "e06", "task": "pool", "entities": ["Tokio"] }));
    let with_entity = |index: &Index, entity: &str| -> Vec<String> {
        let options = [("profile", "decay"), ("entity", entity), ("limit", "50")];
        answers_as_a_scan(index, "pool", &options).unwrap();
        entity_adjusted(&index.search(&request("pool", &options)).unwrap())
    };
    for (records, layout) in [(&plain, Layout::One), (&naming, Layout::Segments(1))] {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path(), records, layout);
        for entity in [
            "tokio",
            "the",
            "kube",
            "toki",
            "c++",
            "rust-analyzer",
            "Café",
        ] {
            with_entity(&index, entity);
        }
        let mut expected = vec!["e01", "e02", "e03", "e04", "e14"];
        if layout != Layout::One {
            expected.push("e06");
            expected.sort();
        }
        assert_eq!(with_entity(&index, "tokio"), expected);
        assert_eq!(with_entity(&index, "the"), ["e07"]);
        assert_eq!(with_entity(&index, "kube"), ["e08"]);
        assert_eq!(with_entity(&index, "c++"), ["e10"]);
        assert_eq!(with_entity(&index, "rust-analyzer"), ["e12"]);
    }
}

/// The index's answer to `query` with `options` equals a plain scan's, which scores every
/// candidate; or both fail with the same code.
fn answers_as_a_scan(index: &Index, query: &str, options: &[(&str, &str)]) -> TestCaseResult {
    let mut by_index = request(query, options);
    by_index.set_option("backend", Some("index")).unwrap();
    let mut by_scan = request(query, options);
    by_scan.set_option("backend", Some("scan")).unwrap();
    match (index.search(&by_index), index.search(&by_scan)) {
        (Ok(a), Ok(b)) => prop_assert_eq!(answer(&a), answer(&b), "query {:?}", query),
        (Err(a), Err(b)) => prop_assert_eq!(a.code(), b.code()),
        (a, b) => prop_assert!(false, "index {:?} vs scan {:?}", a.is_ok(), b.is_ok()),
    }
    Ok(())
}

fn sample_index(dir: &Path) -> Index {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let index_dir = dir.join("sample");
    let options = BuildOptions {
        inputs: vec![data],
        ..BuildOptions::default()
    };
    Index::build(&index_dir, &options).unwrap();
    Index::open(&index_dir).unwrap()
}

const SAMPLE_QUERIES: &[&str] = &[
    "Tokio runtime panic",
    "connection pool timeout",
    "docker layer cache invalidated",
    "github actions cache",
    "typescript module resolution",
    "migration lock",
    "数据库 连接",
    "flaky test",
];

#[test]
fn one_thread_and_many_threads_answer_identically() {
    let dir = tempfile::tempdir().unwrap();
    let index = sample_index(dir.path());
    let run = |threads: usize| -> Vec<serde_json::Value> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut out = Vec::new();
            for profile in ["standard", "decay", "recency", "bm25f"] {
                for q in SAMPLE_QUERIES {
                    let response = index.search(&request(q, &[("profile", profile)])).unwrap();
                    out.push(serde_json::to_value(response).unwrap());
                }
            }
            out
        })
    };
    let one = run(1);
    assert_eq!(one, run(4));
    assert_eq!(one, run(7));
    assert!(one
        .iter()
        .any(|r| !r["results"].as_array().unwrap().is_empty()));
}

#[test]
fn export_then_build_answers_identically() {
    let dir = tempfile::tempdir().unwrap();
    let index = sample_index(dir.path());
    let export = dir.path().join("export.jsonl");
    let mut file = std::fs::File::create(&export).unwrap();
    let count = index.export(&mut file, &export).unwrap();
    assert_eq!(count as u64, index.stats().unwrap().records);
    let rebuilt_dir = dir.path().join("rebuilt");
    Index::build(
        &rebuilt_dir,
        &BuildOptions {
            inputs: vec![export],
            ..BuildOptions::default()
        },
    )
    .unwrap();
    let rebuilt = Index::open(&rebuilt_dir).unwrap();
    for profile in ["standard", "decay", "recency", "bm25f"] {
        for query in SAMPLE_QUERIES {
            let options = [("profile", profile)];
            let a = index.search(&request(query, &options)).unwrap();
            let b = rebuilt.search(&request(query, &options)).unwrap();
            assert_eq!(answer(&a), answer(&b), "{profile} query {query:?}");
        }
    }
}

/// Phrases of frequent words are found from the word-pair postings: a two-word phrase exactly,
/// a longer one only where its text confirms it. Records holding every pair of a phrase apart,
/// across list items or in another order must not get the phrase bonus.
#[test]
fn phrases_of_frequent_words_need_their_words_in_order_in_one_value() {
    let records: Vec<serde_json::Value> = [
        ("r1", "alpha beta", vec![], "beta gamma"),
        ("r2", "alpha beta gamma", vec![], "done"),
        ("r3", "gamma beta alpha", vec![], "done"),
        ("r4", "four", vec!["alpha", "beta gamma"], "done"),
        ("r5", "alpha, beta!", vec![], "done"),
        ("r6", "six", vec!["alpha", "beta"], "gamma"),
    ]
    .into_iter()
    .map(|(id, title, tags, solution)| {
        serde_json::json!({
            "id": id, "title": title, "tags": tags, "solution": solution, "task": "gamma",
        })
    })
    // Words are frequent from 32 records on: these hold all three, never side by side.
    .chain((0..32).map(|i| {
        serde_json::json!({
            "id": format!("f{i:02}"), "title": "alpha", "solution": "beta", "task": "gamma",
        })
    }))
    .collect();
    let dir = tempfile::tempdir().unwrap();
    // Spills of 36 records: the first holds enough records for frequent words, and its
    // pairs merge with the second's.
    for (i, layout) in [Layout::One, Layout::Segments(2), Layout::Spills(36)]
        .into_iter()
        .enumerate()
    {
        let at = dir.path().join(i.to_string());
        std::fs::create_dir(&at).unwrap();
        let index = build(&at, &records, layout);
        for (query, with_phrase) in [
            ("alpha beta gamma", &["r2"][..]),
            ("alpha beta", &["r1", "r2", "r5"][..]),
            ("beta gamma", &["r1", "r2", "r4"][..]),
            ("gamma beta", &["r3"][..]),
            ("beta alpha", &["r3"][..]),
        ] {
            let by_index = index
                .search(&request(query, &[("backend", "index")]))
                .unwrap();
            let by_scan = index
                .search(&request(query, &[("backend", "scan")]))
                .unwrap();
            assert_eq!(answer(&by_index), answer(&by_scan), "{query}");
            // bm25f: the records holding the phrase gain its pair term, from the word-pair
            // postings (index) or the text (scan) alike.
            let bm25f = |backend| {
                index
                    .search(&request(
                        query,
                        &[("backend", backend), ("profile", "bm25f")],
                    ))
                    .unwrap()
            };
            assert_eq!(
                answer(&bm25f("index")),
                answer(&bm25f("scan")),
                "bm25f {query}"
            );
            let mut found: Vec<&str> = by_index
                .results
                .iter()
                .filter(|r| r.score_breakdown.to_map()["exactPhrase"].as_f64().unwrap() > 0.0)
                .map(|r| r.id.as_str())
                .collect();
            found.sort_unstable();
            assert_eq!(found, with_phrase, "{query}, {layout:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// With records enough for frequent words — and so for word pairs — phrase queries over a
    /// tiny vocabulary (a stop word included) answer exactly as a scan.
    #[test]
    fn phrases_over_word_pairs_answer_as_a_scan(
        texts in prop::collection::vec(
            ("(ax|by|the|cz)( (ax|by|the|cz)){0,6}", "(ax|by|cz)([ ,.](ax|by|cz)){0,3}"),
            40..60,
        ),
        queries in prop::collection::vec("(ax|by|the|cz)( (ax|by|the|cz)){1,3}", 1..5),
        layout in prop::sample::select(&[Layout::One, Layout::Spills(35)][..]),
    ) {
        let records: Vec<serde_json::Value> = texts
            .iter()
            .enumerate()
            .map(|(i, (title, solution))| {
                serde_json::json!({"id": format!("r{i:02}"), "title": title, "solution": solution})
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path(), &records, layout);
        // bm25f's pair term reads the same word-pair postings (or the text) as the phrase.
        for (query, profile) in queries.iter().flat_map(|q| [(q, "standard"), (q, "bm25f")]) {
            let by_index = index.search(&request(query, &[("backend", "index"), ("profile", profile)]));
            let by_scan = index.search(&request(query, &[("backend", "scan"), ("profile", profile)]));
            match (by_index, by_scan) {
                (Ok(a), Ok(b)) => prop_assert_eq!(answer(&a), answer(&b), "query {:?}", query),
                // A valid request on a sound index fails only for an empty query.
                (Err(a), Err(b)) => {
                    prop_assert_eq!(a.code(), reliora::ErrorCode::EmptyQuery, "{}", a);
                    prop_assert_eq!(b.code(), reliora::ErrorCode::EmptyQuery, "{}", b);
                }
                (a, b) => prop_assert!(false, "index {:?} vs scan {:?}", a.is_ok(), b.is_ok()),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// `bm25f` scores first the candidates whose bounds (each token's part at its term
    /// frequencies in groups holding nothing else, their pairs, the feedback term) are among
    /// the best, then only those whose bound reaches the floor the first ones set. With many more candidates than that first pass, rare words
    /// among common ones and pages of 1 to 5, the page must still be the scan's.
    #[test]
    fn bm25f_past_its_first_pass_answers_as_a_scan(
        records in (120usize..240).prop_flat_map(|n| (0..n).map(record).collect::<Vec<_>>())
            .prop_map(|mut records| {
                for (i, r) in records.iter_mut().enumerate() {
                    let r = r.as_object_mut().unwrap();
                    // One supersession relation: its records are kept whatever their bounds,
                    // the rest are ranked under them.
                    if i != 5 {
                        r.remove("supersedes");
                    }
                    // Rare words, in a few records each.
                    for (k, rare) in [(7, "zanzibar"), (13, "quokka"), (29, "fjord")] {
                        if i % k == 3 {
                            let solution = r["solution"].as_str().unwrap_or("").to_string();
                            r.insert("solution".into(), format!("{solution} {rare}").into());
                        }
                    }
                }
                records
            }),
        query in (text(4), prop::collection::vec(
            prop::sample::select(&["zanzibar", "quokka", "fjord"][..]), 0..3))
            .prop_map(|(common, rare)| format!("{common} {}", rare.join(" "))),
        limit in 1usize..6,
        layout in prop::sample::select(
            &[Layout::One, Layout::Spills(50), Layout::Segments(90)][..]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path(), &records, layout);
        let limit_text = limit.to_string();
        let options: Vec<(&str, &str)> = vec![("profile", "bm25f"), ("limit", &limit_text)];
        answers_as_a_scan(&index, &query, &options)?;
    }
}

/// Records whose bounds lead can score below records whose bounds trail: a hundred records
/// holding every query word once amid other words (BM25F's length normalization makes each
/// count less) and poor feedback outnumber `bm25f`'s first pass; five short records holding one
/// query word and the best feedback outscore them (a thousand more records make the words
/// rare). Their bound without the feedback term's most would fall below the first pass's
/// floor. The page must be those five, as the scan ranks them.
#[test]
fn bm25f_finds_the_page_beyond_the_records_whose_bounds_lead() {
    let filler: Vec<String> = (0..30).map(|i| format!("filler{i}")).collect();
    let mut records: Vec<serde_json::Value> = (0..100)
        .map(|i| {
            serde_json::json!({
                "id": format!("long{i:03}"),
                "title": format!("long record {i}"),
                "task": format!("{} alpha {}", filler[..10].join(" "), filler[10..].join(" ")),
                "feedback": {"failure": 100},
                "solution": format!("{} bravo charlie", filler.join(" ")),
            })
        })
        .collect();
    records.extend((0..1000).map(|i| {
        serde_json::json!({
            "id": format!("other{i:04}"),
            "title": format!("other record {}", i % 7),
            "task": "unrelated words",
            "solution": "nothing to see",
        })
    }));
    records.extend((0..5).map(|i| {
        serde_json::json!({
            "id": format!("short{i}"),
            "title": "alpha alpha alpha",
            "task": "alpha",
            "solution": "alpha",
            "feedback": {"success": 100},
        })
    }));
    for layout in [Layout::One, Layout::Spills(40)] {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path(), &records, layout);
        for limit in ["1", "3", "5"] {
            let options = [("profile", "bm25f"), ("limit", limit)];
            let context = format!("limit {limit}, {layout:?}");
            answers_as_a_scan(&index, "alpha bravo charlie", &options).expect(&context);
            let a = index
                .search(&request("alpha bravo charlie", &options))
                .unwrap();
            assert!(
                a.results.iter().all(|r| r.id.starts_with("short")),
                "the short records lead: {:?}",
                a.results.iter().map(|r| &r.id).collect::<Vec<_>>()
            );
        }
    }
}

/// A segment's feedback terms are bounded by what its columns can encode, and by the most the
/// log added to one of its records. Here no record was built with feedback (the columns bound
/// the term to 0), and then the log gives one record, a little behind the others in relevance,
/// enough successes to lead: the bounded page must still be the scan's, with that record
/// first, in every layout and both profiles that add feedback. No record holds the query as a
/// phrase, so no phrase bonus widens the bounds: without the log's part of the bound, that
/// record could never reach the page.
#[test]
fn feedback_the_log_added_lifts_a_record_past_its_columns_bound() {
    let mut records: Vec<serde_json::Value> = (0..60)
        .map(|i| {
            serde_json::json!({
                "id": format!("even{i:02}"),
                "title": format!("record {i}"),
                "warnings": ["echo delta charlie bravo alpha"],
                "solution": "alpha",
            })
        })
        .collect();
    records.push(serde_json::json!({
        "id": "lifted",
        "title": "record lifted",
        "warnings": ["echo delta charlie bravo alpha"],
        "failedAttempts": ["alpha"],
    }));
    records
        .extend((0..200).map(
            |i| serde_json::json!({"id": format!("other{i:03}"), "title": "unrelated words"}),
        ));
    for layout in [Layout::One, Layout::Segments(100), Layout::Spills(40)] {
        let dir = tempfile::tempdir().unwrap();
        drop(build(dir.path(), &records, layout));
        let index_dir = dir.path().join("index");
        for _ in 0..40 {
            writer::feedback(&index_dir, "lifted", Outcome::Success).unwrap();
        }
        let index = Index::open(&index_dir).unwrap();
        for profile in ["standard", "bm25f"] {
            for limit in ["1", "3"] {
                let options = [("profile", profile), ("limit", limit)];
                let context = format!("{profile}, limit {limit}, {layout:?}");
                answers_as_a_scan(&index, "alpha bravo charlie delta echo", &options)
                    .expect(&context);
                let page = index
                    .search(&request("alpha bravo charlie delta echo", &options))
                    .unwrap();
                assert_eq!(page.results[0].id, "lifted", "{context}");
            }
        }
    }
}

/// Before any record is scored, `bm25f` reads the rarer half of the query's tokens first and
/// sets an early floor from the best records' parts from those alone, with their feedback
/// terms. Here the records holding the rare word hold it in their tags, but poor feedback
/// leaves them below records holding only the common word: an early floor without their
/// feedback would stand above all the common word can add, so that those records would never
/// be read, and the page would be the rare word's.
#[test]
fn bm25f_early_floor_counts_the_feedback_of_the_records_it_reads() {
    let mut records: Vec<serde_json::Value> = (0..60)
        .map(|i| {
            serde_json::json!({
                "id": format!("rare{i:02}"),
                "title": format!("record {i}"),
                "tags": ["zephyr"],
                "warnings": ["the kettle boiled over on a long evening with many other words"],
                "feedback": {"failure": 100},
            })
        })
        .collect();
    records.extend((0..120).map(|i| {
        serde_json::json!({"id": format!("common{i:03}"), "title": "a record", "tags": ["kettle"]})
    }));
    records
        .extend((0..120).map(
            |i| serde_json::json!({"id": format!("other{i:03}"), "title": "unrelated words"}),
        ));
    for layout in [Layout::One, Layout::Segments(100)] {
        let dir = tempfile::tempdir().unwrap();
        let index = build(dir.path(), &records, layout);
        for limit in ["1", "3", "10"] {
            let options = [("profile", "bm25f"), ("limit", limit)];
            let context = format!("limit {limit}, {layout:?}");
            answers_as_a_scan(&index, "zephyr kettle", &options).expect(&context);
            let page = index.search(&request("zephyr kettle", &options)).unwrap();
            assert!(page.results[0].id.starts_with("common"), "{context}");
        }
    }
}

/// A segment is searched a chunk of 65,536 records at a time: the standard accumulation and
/// `bm25f`'s bounds and scores, whose floor rises from chunk to chunk. Two chunks of records
/// over a small vocabulary, rare words spread over all of them and the best feedback late,
/// must answer as the scan does — one segment, and one merged from spills.
#[test]
fn a_segment_of_several_chunks_answers_as_a_scan() {
    const WORDS: [&str; 12] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let records: Vec<serde_json::Value> = (0..100_000usize)
        .map(|i| {
            let mut words = |count: usize| {
                (0..count)
                    .map(|_| WORDS[next(WORDS.len())])
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let (title, mut task) = (words(3), words(1 + i % 7));
            for (every, rare) in [(997, "quokka"), (4093, "zanzibar"), (21_013, "fjord")] {
                if i % every == every / 2 {
                    task = format!("{task} {rare}");
                }
            }
            // Does (a stop word, stemmed "doe") and the word doe: a token of two terms under
            // the multilingual analyzer, whose term frequencies add up.
            if i % 5003 == 7 {
                task = format!("{task} doe does does does");
            } else if i % 4001 == 11 {
                task = format!("{task} doe doe");
            }
            let feedback = match i % 9 {
                0 => serde_json::json!({"success": 1 + i / 20_000}),
                1 => serde_json::json!({"failure": 3}),
                _ => serde_json::json!({}),
            };
            serde_json::json!({
                "id": format!("r{i:06}"),
                "title": title,
                "task": task,
                "feedback": feedback,
            })
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.jsonl");
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    // One segment; one merged from spills, stemmed.
    for (name, spill_records, stem) in [("one", 0, false), ("spills", 40_000, true)] {
        let index_dir = dir.path().join(name);
        let options = BuildOptions {
            inputs: vec![input.clone()],
            spill_records,
            stem,
            ..BuildOptions::default()
        };
        Index::build(&index_dir, &options).unwrap();
        let index = Index::open(&index_dir).unwrap();
        for query in [
            "quokka alpha",
            "zanzibar bravo charlie",
            "fjord quokka",
            "kilo lima",
        ] {
            for (profile, limit) in [("standard", "10"), ("bm25f", "1"), ("bm25f", "10")] {
                let options = [("profile", profile), ("limit", limit)];
                let context = format!("{query:?} {profile} limit {limit}, {name}");
                answers_as_a_scan(&index, query, &options).expect(&context);
            }
        }
        // Routed to the multilingual analyzer, which keeps stop words: stemmed, the token
        // `doe` has two terms, the word's and the stop word's.
        let options = [("profile", "bm25f"), ("limit", "3")];
        answers_as_a_scan(&index, "größenänderung übergröße does", &options).expect(name);
    }
}
