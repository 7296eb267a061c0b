//! The `reliora` binary with the profile options (SPEC §5, §6), federated search over several
//! `--index`, and `reliora eval --beir` on a tiny BEIR folder whose metrics are worked out by
//! hand below.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tempfile::TempDir;

const NOW: &str = "2026-01-01T00:00:00Z";

use crate::support::{self, Run};

fn reliora(args: &[&str]) -> Run {
    support::run_binary(args, None)
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Writes `records` and builds them into `dir/name`.
fn build(dir: &Path, name: &str, records: &[Value]) -> PathBuf {
    let input = dir.join(format!("{name}.jsonl"));
    let lines: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&input, lines).unwrap();
    let index = dir.join(name);
    reliora(&[
        "--index",
        path_str(&index),
        "build",
        "--input",
        path_str(&input),
    ])
    .ok();
    index
}

fn workspace() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let index = build(
        dir.path(),
        "index",
        &[
            json!({"id": "a", "title": "kernel panic at boot", "createdAt": "2025-12-30T00:00:00Z",
                   "entities": ["Linux"]}),
            json!({"id": "b", "title": "kernel oops", "pinned": true}),
            json!({"id": "c", "title": "Kernel panic at boot", "supersedes": "d"}),
            json!({"id": "d", "title": "kernel panic on resume"}),
        ],
    );
    (dir, index)
}

fn search(index: &Path, query: &str, options: &[&str]) -> Run {
    let mut args = vec!["--index", path_str(index), "search", query, "--now", NOW];
    args.extend_from_slice(options);
    reliora(&args)
}

fn result_ids(response: &Value) -> Vec<String> {
    response["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_profile_is_reachable_from_the_command_line() {
    let (_dir, index) = workspace();
    for (profile, key) in [
        ("standard", "coverageMultiplier"),
        ("decay", "posterior"),
        ("recency", "recency"),
        ("bm25f", "bm25f"),
    ] {
        let response = search(&index, "kernel panic", &["--profile", profile]).ok();
        assert_eq!(response["profile"], json!(profile));
        let first = &response["results"][0];
        assert!(
            first["scoreBreakdown"].get(key).is_some(),
            "{profile}: {first}"
        );
    }
    // decay removes the superseded record d and demotes c, a near duplicate of a.
    let decay = search(&index, "kernel panic", &["--profile", "decay"]).ok();
    assert!(!result_ids(&decay).contains(&"d".to_string()));
    let c = decay["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "c")
        .unwrap();
    assert_eq!(c["scoreBreakdown"]["mmr"], json!(-0.1));
    let kept = search(
        &index,
        "kernel panic",
        &["--profile", "decay", "--include-superseded", "--mmr=false"],
    )
    .ok();
    assert!(result_ids(&kept).contains(&"d".to_string()));
    assert!(kept["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["scoreBreakdown"].get("mmr").is_none()));
}

#[test]
fn profile_options_from_the_command_line() {
    let (dir, index) = workspace();
    let response = search(
        &index,
        "kernel",
        &["--rerank", "textMatch=1", "--entity", "Linux", "--mmr"],
    )
    .ok();
    let results = response["results"].as_array().unwrap();
    assert!(results
        .iter()
        .all(|r| r["scoreBreakdown"].get("rerank").is_some()));
    // b is neither a near duplicate nor superseded: its reranked score stays 1.
    let b = results.iter().find(|r| r["id"] == "b").unwrap();
    assert_eq!(b["score"], json!(1.0));
    // c repeats a's content: --mmr demotes it by 0.1 × |score|.
    let c = results.iter().find(|r| r["id"] == "c").unwrap();
    assert_eq!(c["scoreBreakdown"]["mmr"], json!(-0.1));
    let response = search(&index, "kernel", &["--token-budget", "1"]).ok();
    assert_eq!(response["results"].as_array().unwrap().len(), 1);
    assert!(response["notices"][0]
        .as_str()
        .unwrap()
        .contains("3 results cut"));
    let response = search(&index, "kernel", &["--candidates", "2"]).ok();
    assert_eq!(response["results"].as_array().unwrap().len(), 2);

    let config = dir.path().join("c.toml");
    std::fs::write(&config, "[recency]\npinBonus = 2.0\n").unwrap();
    let response = search(
        &index,
        "kernel",
        &["--profile", "recency", "--config", path_str(&config)],
    )
    .ok();
    assert_eq!(response["results"][0]["id"], json!("b"));
    assert!(response["notices"][0]
        .as_str()
        .unwrap()
        .contains("recency.pinBonus"));

    // Batch lines take the same options, camelCase or not.
    let queries = dir.path().join("q.jsonl");
    std::fs::write(
        &queries,
        concat!(
            r#"{"id": "q1", "query": "kernel", "profile": "decay", "includeSuperseded": true, "mmr": false}"#,
            "\n",
            r#"{"id": "q2", "query": "kernel", "tokenBudget": 0}"#,
            "\n",
            r#"{"id": "q3", "query": "kernel", "entities": ["Linux", "Tokio"], "candidates": 1}"#,
            "\n",
        ),
    )
    .unwrap();
    let run = reliora(&[
        "--index",
        path_str(&index),
        "search",
        "--queries",
        path_str(&queries),
        "--now",
        NOW,
    ]);
    assert_eq!(run.status, 2);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["queryId"], json!("q1"));
    assert_eq!(result_ids(&lines[0]).len(), 4);
    assert_eq!(lines[1]["error"], json!("invalid_token_budget"));
    assert_eq!(result_ids(&lines[2]).len(), 1);
}

#[test]
fn invalid_profile_options_exit_2_with_their_codes_in_order() {
    let (dir, index) = workspace();
    let bad_config = dir.path().join("bad.toml");
    std::fs::write(&bad_config, "[bm25f]\nk1 = \"high\"\n").unwrap();
    let cases: [(&[&str], &str); 9] = [
        (&["--candidates", "0"], "invalid_candidates"),
        (&["--token-budget", "0"], "invalid_token_budget"),
        (
            &["--candidates", "0", "--token-budget", "0"],
            "invalid_candidates",
        ),
        (
            &["--token-budget", "-1", "--candidates", "0"],
            "invalid_token_budget",
        ),
        (&["--profile", "fancy"], "unknown_profile"),
        (&["--mmr=perhaps"], "invalid_option"),
        (&["--rerank", "relevance"], "invalid_option"),
        (&["--config", path_str(&bad_config)], "invalid_option"),
        (&["--token-budget", "0", "--bogus"], "invalid_token_budget"),
    ];
    for (options, code) in cases {
        assert_eq!(
            search(&index, "kernel", options).error_code(),
            code,
            "{options:?}"
        );
    }
}

#[test]
fn several_indexes_are_searched_together_by_search_only() {
    let dir = tempfile::tempdir().unwrap();
    let a = build(
        dir.path(),
        "a",
        &[
            json!({"id": "k-1", "title": "kernel panic boot"}),
            json!({"id": "k-2", "title": "kernel"}),
        ],
    );
    let b = build(
        dir.path(),
        "b",
        &[
            json!({"id": "k-3", "title": "kernel panic"}),
            json!({"id": "k-1", "title": "kernel"}),
        ],
    );
    let response = reliora(&[
        "--index",
        path_str(&a),
        "--index",
        path_str(&b),
        "search",
        "kernel panic",
        "--now",
        NOW,
    ])
    .ok();
    assert_eq!(result_ids(&response), ["k-1", "k-3", "k-2"]);
    let indexes: Vec<&str> = response["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["index"].as_str().unwrap())
        .collect();
    assert_eq!(indexes, [path_str(&a), path_str(&b), path_str(&a)]);
    assert_eq!(response["results"][0]["score"], json!(0.82));
    // A single index has no `index` field.
    let single = search(&a, "kernel panic", &[]).ok();
    assert!(single["results"][0].get("index").is_none());
    // Other commands refuse several.
    let run = reliora(&["--index", path_str(&a), "--index", path_str(&b), "stats"]);
    assert_eq!(run.error_code(), "invalid_option");
}

/// A BEIR folder: four documents, three judged queries and one unjudged.
fn tiny_beir(dir: &Path) -> PathBuf {
    let beir = dir.join("beir");
    std::fs::create_dir_all(beir.join("qrels")).unwrap();
    let corpus = [
        json!({"_id": "d1", "title": "alpha beta", "text": "gamma", "metadata": {}}),
        json!({"_id": "d2", "title": "delta", "text": "alpha epsilon", "metadata": {}}),
        json!({"_id": "d3", "title": "zeta", "text": "beta theta", "metadata": {}}),
        json!({"_id": "d4", "title": "eta", "text": "iota", "metadata": {}}),
    ];
    let queries = [
        json!({"_id": "1", "text": "alpha", "metadata": {}}),
        json!({"_id": "2", "text": "beta", "metadata": {}}),
        json!({"_id": "3", "text": "iota", "metadata": {}}),
        json!({"_id": "4", "text": "gamma", "metadata": {}}),
    ];
    let lines = |items: &[Value]| -> String { items.iter().map(|v| format!("{v}\n")).collect() };
    std::fs::write(beir.join("corpus.jsonl"), lines(&corpus)).unwrap();
    std::fs::write(beir.join("queries.jsonl"), lines(&queries)).unwrap();
    std::fs::write(
        beir.join("qrels").join("test.tsv"),
        "query-id\tcorpus-id\tscore\r\n1\td2\t1\r\n2\td1\t1\r\n3\td4\t1\r\n3\td3\t1\r\n",
    )
    .unwrap();
    beir
}

/// `reliora eval` on `beir` with BEIR's keys mapped explicitly.
fn eval_with_explicit_field_map(beir: &Path) -> Run {
    reliora(&[
        "eval",
        "--beir",
        path_str(beir),
        "--field-map",
        "_id=id",
        "--field-map",
        "text=problems",
    ])
}

#[test]
fn eval_reports_metrics_computed_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let beir = tiny_beir(dir.path());
    let run = eval_with_explicit_field_map(&beir);
    let report = run.ok();
    // Standard profile, title weight 8 > problems weight 7:
    // q1 "alpha" ranks d1 (title), d2 (text); relevant d2 at rank 2.
    // q2 "beta" ranks d1 (title), d3 (text); relevant d1 at rank 1.
    // q3 "iota" ranks d4 only; relevant d4 and d3.
    let l3 = 3f64.log2();
    let ndcg = [1.0 / l3, 1.0, 1.0 / (1.0 + 1.0 / l3)];
    let recall = [1.0, 1.0, 0.5];
    let mrr = [0.5, 1.0, 1.0];
    let mean = |v: [f64; 3]| v.iter().sum::<f64>() / 3.0;
    let close = |key: &str, expected: f64| {
        let got = report[key].as_f64().unwrap();
        assert!((got - expected).abs() < 1e-12, "{key}: {got} vs {expected}");
    };
    assert_eq!(report["queries"], json!(3));
    assert_eq!(report["documents"], json!(4));
    assert_eq!(report["profile"], json!("standard"));
    close("nDCG@10", mean(ndcg));
    close("Recall@10", mean(recall));
    close("Recall@100", mean(recall));
    close("MRR@10", mean(mrr));
    assert!(report["queriesPerSecond"].as_f64().unwrap() > 0.0);

    // bm25f: q1 now ranks d2 first (its text is longer than average by less than d1's title):
    // avglen title 1.25, problems 1.5; d1: 8 / (0.25 + 0.75 × 2 / 1.25) = 5.52,
    // d2: 7 / (0.25 + 0.75 × 2 / 1.5) = 5.6. q2: d1 5.52 vs d3 5.6 → d3 first.
    let report = reliora(&[
        "eval",
        "--beir",
        path_str(&beir),
        "--field-map",
        "_id=id",
        "--field-map",
        "text=problems",
        "--profile",
        "bm25f",
        "--stem",
    ])
    .ok();
    let ndcg = [1.0, 1.0 / l3, 1.0 / (1.0 + 1.0 / l3)];
    let mrr = [1.0, 0.5, 1.0];
    let got = report["nDCG@10"].as_f64().unwrap();
    assert!((got - mean(ndcg)).abs() < 1e-12, "{got}");
    let got = report["MRR@10"].as_f64().unwrap();
    assert!((got - mean(mrr)).abs() < 1e-12, "{got}");
    assert_eq!(report["stem"], json!(true));

    // A missing folder is an error naming it.
    let run = reliora(&["eval", "--beir", path_str(&dir.path().join("nope"))]);
    assert_eq!(run.status, 1);
    assert!(run.stdout.contains("nope"), "{}", run.stdout);
}

#[test]
fn eval_takes_beir_conventions_and_never_reports_a_silent_zero() {
    let dir = tempfile::tempdir().unwrap();
    let beir = tiny_beir(dir.path());
    // BEIR's keys without flags: the same figures as with the explicit field map.
    let explicit = eval_with_explicit_field_map(&beir).ok();
    let default = reliora(&["eval", "--beir", path_str(&beir)]).ok();
    for key in ["nDCG@10", "Recall@10", "MRR@10", "documents", "queries"] {
        assert_eq!(default[key], explicit[key], "{key}");
    }
    assert_eq!(default["documents"], json!(4));

    // A query whose judgments are all 0 is counted apart, not averaged in as a zero.
    let qrels = beir.join("qrels").join("test.tsv");
    let mut rows = std::fs::read_to_string(&qrels).unwrap();
    rows.push_str("4\td2\t0\r\n");
    std::fs::write(&qrels, rows).unwrap();
    let with_zero = reliora(&["eval", "--beir", path_str(&beir)]).ok();
    assert_eq!(with_zero["queries"], json!(3));
    assert_eq!(with_zero["queriesWithoutRelevant"], json!(1));
    assert_eq!(with_zero["nDCG@10"], default["nDCG@10"]);

    // An invalid document fails the run naming it, unless --skip-invalid says to skip.
    let corpus = beir.join("corpus.jsonl");
    let mut lines = std::fs::read_to_string(&corpus).unwrap();
    lines.push_str(&format!(
        "{}\n",
        json!({"_id": "d5", "title": "t", "confidence": 7})
    ));
    std::fs::write(&corpus, lines).unwrap();
    let run = reliora(&["eval", "--beir", path_str(&beir)]);
    assert_eq!(run.error_code(), "invalid_record");
    assert!(run.stdout.contains("corpus.jsonl:5"), "{}", run.stdout);
    let skipped = reliora(&["eval", "--beir", path_str(&beir), "--skip-invalid"]).ok();
    assert_eq!(skipped["documents"], json!(4));
    assert_eq!(skipped["skipped"], json!(1));
    let reason = &skipped["skippedDocuments"][0];
    assert!(
        reason["locator"]
            .as_str()
            .unwrap()
            .ends_with("corpus.jsonl:5"),
        "{reason}"
    );
    assert!(
        reason["message"].as_str().unwrap().contains("confidence"),
        "{reason}"
    );
}
