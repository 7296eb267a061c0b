//! The `reliora` binary: bad input exits 2 with `{"error": CODE, "message": …}` naming the
//! problem (SPEC §1, §6, §9), and the commands of SPEC §10 work end to end.
//!
//! Every run passes `--format json --index DIR` with a temporary directory and clears
//! `RELIORA_INDEX`, so nothing depends on the environment or the working directory.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tempfile::TempDir;

const NOW: &str = "2026-01-01T00:00:00Z";

use crate::support::{self, Run};

fn reliora(index: &Path, args: &[&str]) -> Run {
    support::reliora(index, args, None)
}

/// A temporary workspace: input files and index directories live under it.
struct Workspace {
    dir: TempDir,
}

impl Workspace {
    fn new() -> Workspace {
        Workspace {
            dir: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, bytes).expect("the input is written");
        path
    }

    fn write_records(&self, name: &str, records: &[Value]) -> PathBuf {
        let lines: String = records.iter().map(|r| format!("{r}\n")).collect();
        self.write(name, lines)
    }

    fn build(&self, index: &str, input: &Path, extra: &[&str]) -> Run {
        let mut args = vec!["build", "--input", input.to_str().expect("UTF-8 path")];
        args.extend_from_slice(extra);
        reliora(&self.path(index), &args)
    }
}

/// A record set used by the search, show, export and check tests.
fn sample_records() -> Vec<Value> {
    vec![
        json!({"id": "rs-1", "title": "Tokio runtime panics inside async drop",
               "tags": ["rust", "tokio"], "solution": "Spawn the cleanup on a runtime handle.",
               "createdAt": "2025-11-02T10:00:00Z", "feedback": {"success": 2, "failure": 1}}),
        json!({"id": "py-1", "title": "pytest fixture leaks database connections",
               "tags": ["python", "pytest"], "problems": ["too many connections"],
               "extraField": {"kept": [1, 2, 3]}}),
        json!({"id": "rs-2", "title": "Tokio runtime shutdown hangs", "tags": ["rust"],
               "supersedes": "rs-1", "why_it_worked": "shutdown_timeout bounds the wait",
               "memory_type": "semantic"}),
        json!({"id": "go-1", "title": "Go race detector flags map writes",
               "failedAttempts": ["adding sleeps"], "warnings": ["only under -race"],
               "projectContext": "payments service", "feedback": {"outdated": 1}}),
    ]
}

/// A workspace with the sample records built into `index`.
fn sample_index() -> (Workspace, PathBuf) {
    let ws = Workspace::new();
    let input = ws.write_records("sample.jsonl", &sample_records());
    ws.build("index", &input, &[]).assert_ok("build the sample");
    let index = ws.path("index");
    (ws, index)
}

/// `file:LINE` as the locator of a line of `file`.
fn at(file: &str, line: usize) -> String {
    format!("{file}:{line}")
}

// ---------------------------------------------------------------------------------------------
// build: every invalid record fails the build with exit 2 and leaves no index.

#[test]
fn build_rejects_each_invalid_record_naming_file_line_and_field() {
    let valid = r#"{"id": "ok", "title": "a valid record"}"#.to_string();
    let huge = "x".repeat(64 * 1024 + 1);
    let many: Vec<String> = (0..257).map(|i| format!("t{i}")).collect();
    // (case, file name, second line (the first is valid), what the message must name)
    let cases: Vec<(&str, &str, Vec<u8>, Vec<String>)> = vec![
        (
            "malformed JSON",
            "records.jsonl",
            br#"{"id": "b", "title": }"#.to_vec(),
            vec![at("records.jsonl", 2)],
        ),
        (
            "a wrong type",
            "records.jsonl",
            br#"{"id": "b", "title": "t", "tags": 5}"#.to_vec(),
            vec![at("records.jsonl", 2), "tags".into()],
        ),
        (
            "confidence out of range",
            "records.jsonl",
            br#"{"id": "b", "title": "t", "confidence": 1.5}"#.to_vec(),
            vec![at("records.jsonl", 2), "confidence".into(), "1.5".into()],
        ),
        (
            "salience out of range",
            "records.jsonl",
            br#"{"id": "b", "title": "t", "salience": -0.1}"#.to_vec(),
            vec![at("records.jsonl", 2), "salience".into()],
        ),
        (
            "a text field over 64 KiB",
            "records.jsonl",
            json!({"id": "b", "title": "t", "solution": huge})
                .to_string()
                .into_bytes(),
            vec![at("records.jsonl", 2), "solution".into()],
        ),
        (
            "257 list items",
            "records.jsonl",
            json!({"id": "b", "title": "t", "tags": many})
                .to_string()
                .into_bytes(),
            vec![at("records.jsonl", 2), "tags".into()],
        ),
        (
            "invalid UTF-8",
            "records.jsonl",
            b"{\"id\": \"b\", \"title\": \"caf\xff\"}".to_vec(),
            vec![at("records.jsonl", 2)],
        ),
        (
            "an unknown feedback key",
            "records.jsonl",
            br#"{"id": "b", "title": "t", "feedback": {"sucess": 1}}"#.to_vec(),
            vec![at("records.jsonl", 2), "sucess".into()],
        ),
        (
            "a fractional feedback count",
            "records.jsonl",
            br#"{"id": "b", "title": "t", "feedback": {"success": 3.0}}"#.to_vec(),
            vec![at("records.jsonl", 2), "success".into(), "3.0".into()],
        ),
        (
            "a negative feedback count",
            "records.jsonl",
            br#"{"id": "b", "title": "t", "feedback": {"failure": -1}}"#.to_vec(),
            vec![at("records.jsonl", 2), "failure".into()],
        ),
        (
            "a timestamp without offset",
            "records.jsonl",
            br#"{"id": "b", "title": "t", "createdAt": "2025-01-01T00:00:00"}"#.to_vec(),
            vec![at("records.jsonl", 2), "createdAt".into()],
        ),
        (
            "an impossible date",
            "records.jsonl",
            br#"{"id": "b", "title": "t", "updatedAt": "2025-02-30T00:00:00Z"}"#.to_vec(),
            vec![at("records.jsonl", 2), "updatedAt".into()],
        ),
        (
            "both spellings of one field",
            "records.jsonl",
            br#"{"id": "b", "title": "t", "whyItWorked": "a", "why_it_worked": "b"}"#.to_vec(),
            vec![
                at("records.jsonl", 2),
                "whyItWorked".into(),
                "why_it_worked".into(),
            ],
        ),
        (
            "no searchable text",
            "records.jsonl",
            br#"{"id": "b", "title": "  ", "verification": "not searched"}"#.to_vec(),
            vec![at("records.jsonl", 2), "searchable text".into()],
        ),
        (
            "a blank title",
            "records.jsonl",
            br#"{"id": "b", "title": "   "}"#.to_vec(),
            vec![at("records.jsonl", 2), "title".into()],
        ),
        (
            "an id over 256 bytes",
            "records.jsonl",
            json!({"id": "i".repeat(257), "title": "t"})
                .to_string()
                .into_bytes(),
            vec![at("records.jsonl", 2), "id".into()],
        ),
        (
            "a record that is not an object",
            "records.jsonl",
            br#"["id", "title"]"#.to_vec(),
            vec![at("records.jsonl", 2)],
        ),
    ];
    for (case, file, second_line, mentions) in cases {
        let ws = Workspace::new();
        let mut bytes = format!("{valid}\n").into_bytes();
        bytes.extend_from_slice(&second_line);
        bytes.push(b'\n');
        let input = ws.write(file, bytes);
        let run = ws.build("index", &input, &[]);
        run.assert_error("invalid_record", &mentions, case);
        assert_no_index(&ws.path("index"), case);
    }
}

#[test]
fn build_rejects_duplicate_ids_naming_both_locations() {
    let ws = Workspace::new();
    let input = ws.write_records(
        "records.jsonl",
        &[
            json!({"id": "dup", "title": "first"}),
            json!({"id": "other", "title": "middle"}),
            json!({"id": "dup", "title": "second"}),
        ],
    );
    let run = ws.build("index", &input, &[]);
    run.assert_error(
        "invalid_record",
        &["dup".into(), at("records.jsonl", 1), at("records.jsonl", 3)],
        "duplicate ids",
    );
    assert_no_index(&ws.path("index"), "duplicate ids");

    // Across two input files as well.
    let first = ws.write_records("first.jsonl", &[json!({"id": "other", "title": "once"})]);
    let second = ws.write_records("more.jsonl", &[json!({"id": "other", "title": "again"})]);
    let run = reliora(
        &ws.path("index"),
        &[
            "build",
            "--input",
            first.to_str().expect("UTF-8"),
            second.to_str().expect("UTF-8"),
        ],
    );
    run.assert_error(
        "invalid_record",
        &["other".into(), at("first.jsonl", 1), at("more.jsonl", 1)],
        "duplicate ids across files",
    );
}

#[test]
fn build_names_the_array_index_of_a_bad_element_in_a_json_array() {
    let ws = Workspace::new();
    let input = ws.write(
        "records.json",
        "[\n  {\"id\": \"a\", \"title\": \"fine\"},\n  {\"id\": \"b\", \"title\": \"t\", \"confidence\": 2}\n]\n",
    );
    let run = ws.build("index", &input, &[]);
    run.assert_error(
        "invalid_record",
        &["records.json".into(), "confidence".into()],
        "array element",
    );
    let message = run.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains("records.json:3") || message.contains("index 1"),
        "the message names neither the line nor the array index: {message}"
    );
    assert_no_index(&ws.path("index"), "array element");
}

/// After a failed build nothing was written: no index files, and `search` fails (exit 1).
fn assert_no_index(index: &Path, case: &str) {
    if let Ok(entries) = std::fs::read_dir(index) {
        let names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
        assert!(names.is_empty(), "{case}: files left behind: {names:?}");
    }
    let run = reliora(index, &["search", "anything"]);
    assert_eq!(
        run.status, 1,
        "{case}: search after a failed build: {run:?}"
    );
    assert!(run.json().get("error").is_some(), "{case}: {run:?}");
}

#[test]
fn build_accepts_values_at_the_limits() {
    let ws = Workspace::new();
    let tags: Vec<String> = (0..256).map(|i| format!("t{i}")).collect();
    let input = ws.write_records(
        "records.jsonl",
        &[
            json!({"id": "limits", "title": "at the limits", "solution": "x".repeat(64 * 1024),
                   "tags": tags, "confidence": 1, "salience": 0,
                   "createdAt": "2025-06-30T23:59:60Z", "updatedAt": "2025-01-01 00:00:00.123456789-00:00",
                   "feedback": {"success": 3, "partial": null}}),
            json!({"id": "i".repeat(256), "title": "longest id"}),
        ],
    );
    let run = ws.build("index", &input, &[]);
    run.assert_ok("values at the limits");
    assert_eq!(run.json()["records"], json!(2));
}

#[test]
fn build_skip_invalid_reports_every_skipped_record_and_indexes_the_rest() {
    let ws = Workspace::new();
    let lines = [
        r#"{"id": "keep-1", "title": "kept record one"}"#,
        r#"{"id": "bad-json", "title": "#,
        r#"{"id": "keep-2", "title": "kept record two"}"#,
        r#"{"id": "no-title"}"#,
        r#"{"id": "bad-conf", "title": "t", "confidence": 1.5}"#,
        r#"{"id": "bad-feedback", "title": "t", "feedback": {"success": 3.0}}"#,
        r#"{"id": "keep-3", "title": "kept record three"}"#,
    ];
    let input = ws.write("records.jsonl", lines.join("\n") + "\n");
    let run = ws.build("index", &input, &["--skip-invalid"]);
    run.assert_ok("--skip-invalid");
    assert_eq!(run.json()["records"], json!(3));
    for line in [2, 4, 5, 6] {
        assert!(
            run.stderr.contains(&at("records.jsonl", line)),
            "stderr does not report line {line}: {:?}",
            run.stderr
        );
    }
    for line in [1, 3, 7] {
        assert!(
            !run.stderr.contains(&at("records.jsonl", line)),
            "stderr reports valid line {line}: {:?}",
            run.stderr
        );
    }
    let search = reliora(&ws.path("index"), &["search", "kept record", "--now", NOW]);
    search.assert_ok("search after --skip-invalid");
    let ids: Vec<Value> = search.json()["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(ids, [json!("keep-1"), json!("keep-2"), json!("keep-3")]);
}

#[test]
fn build_field_map_renames_input_keys() {
    let ws = Workspace::new();
    let input = ws.write_records(
        "beir.jsonl",
        &[
            json!({"_id": "doc-1", "title": "Parser crash", "text": "segfault in the lexer"}),
            json!({"_id": "doc-2", "title": "Slow startup", "text": "config parsing is slow"}),
        ],
    );
    let run = ws.build(
        "index",
        &input,
        &["--field-map", "_id=id", "--field-map", "text=problems"],
    );
    run.assert_ok("--field-map");
    let index = ws.path("index");
    let search = reliora(&index, &["search", "segfault", "--now", NOW]).json();
    let results = search["results"].as_array().expect("results");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["id"], json!("doc-1"));
    assert_eq!(results[0]["scoreBreakdown"]["problems"], json!(7.0));
    let shown = reliora(&index, &["show", "doc-1"]);
    shown.assert_ok("show a mapped record");
    assert_eq!(shown.json()["problems"], json!(["segfault in the lexer"]));

    // Without the map, _id is an unknown field and the id is derived: "segfault" is not found.
    let run = ws.build("plain", &input, &[]);
    run.assert_ok("build without --field-map");
    let search = reliora(&ws.path("plain"), &["search", "segfault", "--now", NOW]).json();
    assert_eq!(search["results"], json!([]));
}

// ---------------------------------------------------------------------------------------------
// search: invalid options and queries.

#[test]
fn search_rejects_invalid_options_with_their_codes() {
    let (_ws, index) = sample_index();
    // (arguments after `search`, code, what the message must name)
    let cases: [(&[&str], &str, &[&str]); 19] = [
        (&["tokio", "--limit", "0"], "invalid_limit", &["--limit"]),
        (&["tokio", "--limit", "-3"], "invalid_limit", &["--limit"]),
        (
            &["tokio", "--limit", "abc"],
            "invalid_option",
            &["--limit", "abc"],
        ),
        (
            &["tokio", "--min-score", "150"],
            "invalid_min_score",
            &["--min-score", "150"],
        ),
        (
            &["tokio", "--min-score", "-1"],
            "invalid_min_score",
            &["--min-score"],
        ),
        (
            &["tokio", "--min-score", "NaN"],
            "invalid_min_score",
            &["--min-score"],
        ),
        (
            &["tokio", "--min-score", "high"],
            "invalid_option",
            &["--min-score"],
        ),
        (
            &["tokio", "--profile", "nope"],
            "unknown_profile",
            &["nope"],
        ),
        (&["tokio", "--tag", "  "], "invalid_tag", &["--tag"]),
        (&["tokio", "--tag", "/"], "invalid_tag", &["--tag"]),
        (
            &["tokio", "--project-context", "the"],
            "invalid_project_context",
            &["--project-context"],
        ),
        (&["tokio", "--type", " "], "invalid_option", &["--type"]),
        (&["tokio", "--bogus"], "invalid_option", &["--bogus"]),
        (
            &["tokio", "--now", "yesterday"],
            "invalid_option",
            &["--now", "yesterday"],
        ),
        (
            &["tokio", "--now", "2026-01-01"],
            "invalid_option",
            &["--now"],
        ),
        (&[""], "empty_query", &[]),
        (&["the of and"], "empty_query", &[]),
        (&["?!"], "empty_query", &[]),
        // Options are validated before the query.
        (&["", "--limit", "0"], "invalid_limit", &["--limit"]),
    ];
    for (args, code, mentions) in cases {
        let mut full = vec!["search"];
        full.extend_from_slice(args);
        let mentions: Vec<String> = mentions.iter().map(|m| m.to_string()).collect();
        reliora(&index, &full).assert_error(code, &mentions, &format!("{args:?}"));
    }
}

#[test]
fn search_reports_the_first_invalid_option_in_command_line_order() {
    let (_ws, index) = sample_index();
    let cases: [(&[&str], &str); 9] = [
        (&["--min-score", "150", "--limit", "0"], "invalid_min_score"),
        (&["--limit", "0", "--min-score", "150"], "invalid_limit"),
        (&["--tag", " ", "--profile", "nope"], "invalid_tag"),
        (&["--profile", "nope", "--tag", " "], "unknown_profile"),
        (&["--limit", "abc", "--min-score", "150"], "invalid_option"),
        (
            &["--min-score", "150", "--limit", "abc"],
            "invalid_min_score",
        ),
        (
            &["--project-context", "of", "--type", " "],
            "invalid_project_context",
        ),
        (
            &["--type", " ", "--project-context", "of"],
            "invalid_option",
        ),
        (&["--bogus", "--limit", "0"], "invalid_option"),
    ];
    for (options, code) in cases {
        let mut args = vec!["search", "tokio"];
        args.extend_from_slice(options);
        reliora(&index, &args).assert_error(code, &[], &format!("{options:?}"));
    }
}

/// SPEC §6: an unknown flag is just another invalid option; one given after an out-of-range
/// value must not mask it, since the first invalid option in command-line order is reported.
#[test]
fn unknown_flag_after_an_out_of_range_option_does_not_mask_it() {
    let (_ws, index) = sample_index();
    let cases: [(&[&str], &str); 3] = [
        (&["--limit", "0", "--bogus"], "invalid_limit"),
        (&["--min-score", "150", "--bogus", "1"], "invalid_min_score"),
        (&["--tag", " ", "--no-such-flag"], "invalid_tag"),
    ];
    for (options, code) in cases {
        let mut args = vec!["search", "tokio"];
        args.extend_from_slice(options);
        reliora(&index, &args).assert_error(code, &[], &format!("{options:?}"));
    }
}

// ---------------------------------------------------------------------------------------------
// search --queries, show, export, check, stats.

#[test]
fn queries_file_writes_one_response_per_line_with_query_id() {
    let (ws, index) = sample_index();
    let queries = ws.write(
        "queries.txt",
        concat!(
            r#"{"id": "q-json", "query": "tokio runtime", "limit": 1}"#,
            "\n",
            "pytest fixture connections\n",
            "\n",
            r#"{"id": "q-tag", "query": "tokio", "tag": "rust", "minScore": 0.5}"#,
            "\n",
        ),
    );
    let run = reliora(
        &index,
        &[
            "search",
            "--queries",
            queries.to_str().expect("UTF-8"),
            "--now",
            NOW,
        ],
    );
    run.assert_ok("--queries");
    let lines = run.json_lines();
    assert_eq!(lines.len(), 3, "{:?}", run.stdout);
    assert_eq!(lines[0]["queryId"], json!("q-json"));
    assert_eq!(lines[0]["query"], json!("tokio runtime"));
    assert_eq!(lines[0]["results"].as_array().map(Vec::len), Some(1));
    assert!(
        lines[1]["queryId"].is_string(),
        "a plain line has a queryId too: {}",
        lines[1]
    );
    assert_eq!(lines[1]["query"], json!("pytest fixture connections"));
    assert_eq!(lines[1]["results"][0]["id"], json!("py-1"));
    assert_eq!(lines[2]["queryId"], json!("q-tag"));
    for line in &lines {
        assert_eq!(line["now"], json!(NOW));
        assert!(line.get("fingerprint").is_some());
    }
    // Each line answers like the same search run alone.
    let alone = reliora(
        &index,
        &["search", "tokio runtime", "--limit", "1", "--now", NOW],
    )
    .json();
    assert_eq!(lines[0]["results"], alone["results"]);
    assert_eq!(lines[0]["fingerprint"], alone["fingerprint"]);
}

#[test]
fn show_prints_a_record_by_id_and_by_locator() {
    let (_ws, index) = sample_index();
    let by_id = reliora(&index, &["show", "py-1"]);
    by_id.assert_ok("show by id");
    let record = by_id.json();
    assert_eq!(record["id"], json!("py-1"));
    assert_eq!(
        record["title"],
        json!("pytest fixture leaks database connections")
    );
    assert_eq!(record["extraField"], json!({"kept": [1, 2, 3]}));

    let search = reliora(&index, &["search", "pytest", "--now", NOW]).json();
    let locator = search["results"][0]["locator"]
        .as_str()
        .expect("a locator")
        .to_string();
    assert!(locator.contains("sample.jsonl"), "{locator}");
    let by_locator = reliora(&index, &["show", &locator]);
    by_locator.assert_ok("show by locator");
    assert_eq!(by_locator.json(), record);

    let missing = reliora(&index, &["show", "no-such-id"]);
    assert_ne!(missing.status, 0, "{missing:?}");
}

#[test]
fn export_then_build_gives_identical_search_results() {
    let (ws, index) = sample_index();
    let export = ws.path("export.jsonl");
    let run = reliora(
        &index,
        &["export", "--output", export.to_str().expect("UTF-8")],
    );
    run.assert_ok("export --output");
    let exported = std::fs::read_to_string(&export).expect("the export exists");
    assert_eq!(exported.lines().count(), sample_records().len());
    assert!(exported.contains("extraField"), "unknown fields round-trip");
    let stdout_export = reliora(&index, &["export"]);
    stdout_export.assert_ok("export to stdout");
    assert_eq!(stdout_export.stdout, exported);

    ws.build("rebuilt", &export, &[])
        .assert_ok("build from the export");
    let rebuilt = ws.path("rebuilt");
    let queries: [&[&str]; 6] = [
        &["tokio runtime"],
        &["connections"],
        &["race detector map"],
        &["tokio", "--type", "semantic"],
        &["", "--tag", "rust"],
        &["rust tokio payments service", "--limit", "3"],
    ];
    for query in queries {
        let mut args = vec!["search"];
        args.extend_from_slice(query);
        args.extend_from_slice(&["--now", NOW]);
        let before = reliora(&index, &args).json();
        let after = reliora(&rebuilt, &args).json();
        let summary = |response: &Value| -> Vec<Value> {
            response["results"]
                .as_array()
                .expect("results")
                .iter()
                .map(|r| {
                    json!([
                        r["id"],
                        r["score"],
                        r["matchLevel"],
                        r["scoreBreakdown"],
                        r["supersededBy"]
                    ])
                })
                .collect()
        };
        assert_eq!(summary(&after), summary(&before), "{query:?}");
        assert_eq!(after["counts"], before["counts"], "{query:?}");
    }
    // The export of the rebuilt index is the same records.
    let again = reliora(&rebuilt, &["export"]);
    again.assert_ok("export the rebuilt index");
    assert_eq!(again.stdout, exported);
}

#[test]
fn check_exits_0_on_a_sound_index_and_3_naming_a_damaged_file() {
    let (_ws, index) = sample_index();
    let run = reliora(&index, &["check"]);
    run.assert_ok("check on a sound index");
    let files: Vec<PathBuf> = std::fs::read_dir(&index)
        .expect("the index directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n != "MANIFEST" && n != "LOCK")
        })
        .collect();
    assert!(files.len() >= 2, "{files:?}");
    for file in files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .expect("UTF-8 name")
            .to_string();
        let (_ws, index) = sample_index();
        let target = index.join(&name);
        let mut bytes = std::fs::read(&target).expect("the file");
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x01;
        std::fs::write(&target, bytes).expect("the damaged file");
        let run = reliora(&index, &["check"]);
        assert_eq!(
            run.status, 3,
            "check after flipping a byte of {name}: {run:?}"
        );
        assert!(
            run.stdout.contains(&name),
            "the report does not name {name}: {}",
            run.stdout
        );
    }
}

#[test]
fn stats_reports_records_and_settings() {
    let (ws, index) = sample_index();
    let run = reliora(&index, &["stats"]);
    run.assert_ok("stats");
    let stats = run.json();
    assert_eq!(stats["records"], json!(sample_records().len()));
    assert_eq!(stats["stem"], json!(false));
    assert!(
        stats["segments"].as_u64().is_some_and(|n| n >= 1),
        "{stats}"
    );

    let input = ws.write_records("stem.jsonl", &sample_records());
    ws.build("stemmed", &input, &["--stem"])
        .assert_ok("build --stem");
    let stats = reliora(&ws.path("stemmed"), &["stats"]).json();
    assert_eq!(stats["stem"], json!(true));
}

#[test]
fn write_commands_report_bad_input_with_exit_2_and_unknown_ids_with_exit_1() {
    let (ws, index) = sample_index();
    let bad = ws.dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"id": "x", "title": "t", "confidence": 7}"#).unwrap();
    let run = reliora(&index, &["record", bad.to_str().unwrap()]);
    run.assert_error(
        "invalid_record",
        &["bad.json".to_string(), "confidence".to_string()],
        "record with an out-of-range confidence",
    );
    std::fs::write(&bad, "{not json").unwrap();
    reliora(&index, &["record", bad.to_str().unwrap()]).assert_error(
        "invalid_record",
        &["bad.json".to_string()],
        "record with malformed JSON",
    );
    let some_id = sample_records()[0]["id"].as_str().unwrap().to_string();
    reliora(&index, &["feedback", &some_id, "--outcome", "great"]).assert_error(
        "invalid_option",
        &["great".to_string()],
        "feedback with an unknown outcome",
    );
    for args in [
        vec!["feedback", "no-such-id", "--outcome", "success"],
        vec!["delete", "no-such-id"],
    ] {
        let run = reliora(&index, &args);
        assert_eq!(run.status, 1, "{args:?}: {run:?}");
        assert_eq!(run.json()["error"], json!("not_found"), "{args:?}");
    }
    // The rejected writes changed nothing.
    let after = reliora(&index, &["stats"]);
    after.assert_ok("stats");
    assert_eq!(after.json()["logEntries"], json!(0));
}

#[test]
fn a_build_in_segments_answers_like_one_segment_and_finds_duplicates_in_written_ones() {
    let ws = Workspace::new();
    let input = ws.write_records("sample.jsonl", &sample_records());
    ws.build("one", &input, &[]).assert_ok("one segment");
    ws.build("split", &input, &["--segment-records", "1"])
        .assert_ok("a segment per record");
    let stats = reliora(&ws.path("split"), &["stats"]).ok();
    assert_eq!(stats["segments"], 4, "{stats}");
    assert_eq!(stats["records"], 4, "{stats}");
    // rs-2 (segment 2) supersedes rs-1 (segment 0): supersededBy crosses segments.
    for query in ["tokio runtime", "database connections", "race map"] {
        for profile in ["standard", "decay", "recency", "bm25f"] {
            let args = ["search", query, "--profile", profile, "--now", NOW];
            let mut one = reliora(&ws.path("one"), &args).ok();
            let mut split = reliora(&ws.path("split"), &args).ok();
            // The fingerprint names the index generation; everything else must agree.
            one["fingerprint"] = Value::Null;
            split["fingerprint"] = Value::Null;
            assert_eq!(one, split, "{query} / {profile}");
        }
    }
    let tokio = reliora(
        &ws.path("split"),
        &["search", "tokio runtime", "--now", NOW],
    )
    .ok();
    let superseded: Vec<&Value> = tokio["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] == "rs-1")
        .map(|r| &r["supersededBy"])
        .collect();
    assert_eq!(superseded, [&json!("rs-2")]);
    reliora(&ws.path("split"), &["check"]).assert_ok("check a split index");

    // A duplicate of a record in a segment already written names that record's line.
    let mut records = sample_records();
    records.push(json!({"id": "rs-1", "title": "again"}));
    let input = ws.write_records("dup.jsonl", &records);
    let run = ws.build("dup", &input, &["--segment-records", "2"]);
    run.assert_error(
        "invalid_record",
        &["rs-1".into(), at("dup.jsonl", 1), at("dup.jsonl", 5)],
        "duplicate across segments",
    );
    assert_no_index(&ws.path("dup"), "duplicate across segments");

    // An invalid record after the duplicate is still the error reported.
    records.push(json!({"id": "late", "title": 7}));
    let input = ws.write_records("dup_then_bad.jsonl", &records);
    let run = ws.build("dup2", &input, &["--segment-records", "2"]);
    run.assert_error(
        "invalid_record",
        &[at("dup_then_bad.jsonl", 6), "title".into()],
        "invalid record after a duplicate",
    );
    assert_no_index(&ws.path("dup2"), "invalid record after a duplicate");

    let run = ws.build("zero", &input, &["--segment-records", "0"]);
    assert_eq!(run.error_code(), "invalid_option", "--segment-records 0");
}

/// A build in spills merges them into one segment, the very one a build at once writes: every
/// file the same, byte for byte, once the spills choose what a build chooses from its first
/// records (frequent words from the first spill, here all four words; no store dictionary
/// below 16 KiB of records).
#[test]
fn a_build_in_spills_merges_into_the_segment_a_build_at_once_writes() {
    let ws = Workspace::new();
    let records: Vec<Value> = (0..45)
        .map(|i| {
            let mut record = json!({
                "id": format!("m{i:02}"),
                "title": format!("alpha beta gamma delta note{i}"),
                "solution": if i % 2 == 0 { "gamma delta alpha beta" } else { "delta beta alpha gamma" },
                "tags": [format!("t{}", i % 3)],
                "entities": [if i % 4 == 0 { "Postgres" } else { "Redis" }],
                "createdAt": format!("2025-01-{:02}T00:00:00Z", 1 + i % 28),
                "feedback": {"success": i % 5},
            });
            if i == 40 {
                record["supersedes"] = json!("m01");
            }
            record
        })
        .collect();
    let input = ws.write_records("m.jsonl", &records);
    ws.build("one", &input, &[]).assert_ok("one build");
    ws.build("spilled", &input, &["--spill-records", "32"])
        .assert_ok("two spills");
    ws.build("tiny", &input, &["--spill-records", "7"])
        .assert_ok("seven spills");
    let files = |index: &str| -> Vec<(String, Vec<u8>)> {
        let stats = reliora(&ws.path(index), &["stats"]).ok();
        assert_eq!(stats["segments"], 1, "{index}: {stats}");
        assert_eq!(stats["records"], 45, "{index}: {stats}");
        let mut files: Vec<(String, Vec<u8>)> = stats["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let name = f["name"].as_str().unwrap();
                let suffix = name.split_once('.').unwrap().1.to_string();
                (suffix, std::fs::read(ws.path(index).join(name)).unwrap())
            })
            .collect();
        files.sort();
        files
    };
    let one = files("one");
    assert_eq!(
        one.len(),
        10,
        "every file of a segment, its prefix fingerprints too"
    );
    for ((suffix, a), (_, b)) in one.iter().zip(&files("spilled")) {
        assert!(a == b, "{suffix} differs from the one written at once");
    }
    // The pairs compared hold the four words' pairs; seven spills hold none: twelve pairs of
    // at least 8 bytes (second word, place, count, width), four partners blobs of an 8-byte
    // directory entry.
    let pairs_len =
        |files: &[(String, Vec<u8>)]| files.iter().find(|f| f.0 == "pairs").unwrap().1.len();
    assert!(pairs_len(&one) > pairs_len(&files("tiny")) + 12 * 8 + 4 * 8);
    // Spills too small for frequent words merge into a segment without word pairs, which
    // answers the same.
    for index in ["spilled", "tiny"] {
        reliora(&ws.path(index), &["check"]).assert_ok(index);
        for query in ["alpha beta", "\"gamma delta\"", "note7 delta", "beta"] {
            let args = ["search", query, "--now", NOW, "--limit", "50"];
            let mut expected = reliora(&ws.path("one"), &args).ok();
            let mut merged = reliora(&ws.path(index), &args).ok();
            expected["fingerprint"] = Value::Null;
            merged["fingerprint"] = Value::Null;
            assert_eq!(expected, merged, "{index}: {query}");
        }
    }
}
