//! The bad-input catalogue (SPEC §1, §6, §9): one case per class of bad input, for `build`,
//! `record` and `search`. Each exits 2 with `{"error": CODE, "message": …}` naming the problem,
//! never panics, and writes nothing: a failed `build` leaves the previous index as it was, a
//! failed `record` leaves the log byte for byte as it was. (`cli_errors.rs` covers more `build`
//! cases with their locators; this file adds the classes it lacks and the `record` and
//! resource-cap cases.)

use serde_json::json;

use crate::support::*;

/// One bad record: (class, JSON text, what the message must name).
fn bad_records() -> Vec<(&'static str, Vec<u8>, Vec<&'static str>)> {
    let huge = "x".repeat(64 * 1024 + 1);
    let many: Vec<String> = (0..257).map(|i| format!("t{i}")).collect();
    let big_record = json!({
        "id": "big", "title": "t",
        "problems": (0..17).map(|_| "y".repeat(64 * 1024)).collect::<Vec<_>>(),
    });
    vec![
        (
            "malformed JSON",
            br#"{"id": "b", "title": }"#.to_vec(),
            vec![],
        ),
        (
            "trailing garbage",
            br#"{"id": "b", "title": "t"} x"#.to_vec(),
            vec![],
        ),
        (
            "NaN literal",
            br#"{"id": "b", "title": "t", "confidence": NaN}"#.to_vec(),
            vec![],
        ),
        (
            "Infinity literal",
            br#"{"id": "b", "title": "t", "salience": Infinity}"#.to_vec(),
            vec![],
        ),
        (
            "-Infinity literal",
            br#"{"id": "b", "title": "t", "decayFactor": -Infinity}"#.to_vec(),
            vec![],
        ),
        (
            "a number beyond f64",
            br#"{"id": "b", "title": "t", "confidence": 1e400}"#.to_vec(),
            vec![],
        ),
        (
            "a wrong type",
            br#"{"id": "b", "title": 5}"#.to_vec(),
            vec!["title"],
        ),
        (
            "a wrong list item type",
            br#"{"id": "b", "title": "t", "tags": ["a", 1]}"#.to_vec(),
            vec!["tags"],
        ),
        (
            "confidence out of range",
            br#"{"id": "b", "title": "t", "confidence": 1.5}"#.to_vec(),
            vec!["confidence", "1.5"],
        ),
        (
            "negative decay factor",
            br#"{"id": "b", "title": "t", "decayFactor": -0.5}"#.to_vec(),
            vec!["decayFactor"],
        ),
        (
            "a feedback count beyond u64",
            br#"{"id": "b", "title": "t", "feedback": {"success": 18446744073709551616}}"#.to_vec(),
            vec!["success"],
        ),
        (
            "a fractional feedback count",
            br#"{"id": "b", "title": "t", "feedback": {"failure": 3.0}}"#.to_vec(),
            vec!["failure"],
        ),
        (
            "an unknown feedback key",
            br#"{"id": "b", "title": "t", "feedback": {"sucess": 1}}"#.to_vec(),
            vec!["sucess"],
        ),
        (
            "a text field over 64 KiB",
            json!({"id": "b", "title": "t", "solution": huge})
                .to_string()
                .into_bytes(),
            vec!["solution"],
        ),
        (
            "257 list items",
            json!({"id": "b", "title": "t", "tags": many})
                .to_string()
                .into_bytes(),
            vec!["tags"],
        ),
        (
            "a record over 1 MiB",
            big_record.to_string().into_bytes(),
            vec!["1"],
        ),
        (
            "invalid UTF-8",
            b"{\"id\": \"b\", \"title\": \"caf\xff\"}".to_vec(),
            vec!["UTF-8"],
        ),
        (
            "a timestamp without offset",
            br#"{"id": "b", "title": "t", "createdAt": "2025-01-01T00:00:00"}"#.to_vec(),
            vec!["createdAt"],
        ),
        (
            "an impossible date",
            br#"{"id": "b", "title": "t", "updatedAt": "2025-02-30T00:00:00Z"}"#.to_vec(),
            vec!["updatedAt"],
        ),
        (
            "a timestamp that is not a string",
            br#"{"id": "b", "title": "t", "createdAt": 1735689600}"#.to_vec(),
            vec!["createdAt"],
        ),
        (
            "a control character in the id",
            br#"{"id": "a\u0007b", "title": "t"}"#.to_vec(),
            vec!["id"],
        ),
        (
            "an empty id",
            br#"{"id": "", "title": "t"}"#.to_vec(),
            vec!["id"],
        ),
        (
            "a duplicate key",
            br#"{"id": "b", "title": "t", "title": "u"}"#.to_vec(),
            vec!["title"],
        ),
        (
            "both spellings of one field",
            br#"{"id": "b", "title": "t", "memoryType": "a", "memory_type": "b"}"#.to_vec(),
            vec!["memoryType", "memory_type"],
        ),
        (
            "no searchable text",
            br#"{"id": "b"}"#.to_vec(),
            vec!["searchable text"],
        ),
        ("not an object", br#"["id", "title"]"#.to_vec(), vec![]),
    ]
}

fn assert_bad(run: &Run, code: &str, mentions: &[&str], case: &str) {
    assert_eq!(run.status, 2, "{case}: {run:?}");
    let json = run.json();
    assert_eq!(json["error"], code, "{case}: {json}");
    let message = json["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty(), "{case}: no message");
    for mention in mentions {
        assert!(
            message.contains(mention),
            "{case}: the message {message:?} does not name {mention:?}"
        );
    }
}

/// Every file of the index with its bytes, to show a failed command changed nothing.
#[test]
fn record_rejects_every_class_of_bad_input_and_writes_nothing() {
    let work = tempdir();
    let index = work.path().join("index");
    build_small_index(&index);
    let before = snapshot(&index);
    for (case, bytes, mentions) in bad_records() {
        // From stdin …
        let run = reliora(&index, &["record", "-"], Some(&bytes));
        assert_bad(&run, "invalid_record", &mentions, case);
        assert!(
            run.json()["message"].as_str().unwrap().contains("<stdin>"),
            "{case}"
        );
        // … and from a file, whose name the message gives.
        let file = work.path().join("bad-record.json");
        std::fs::write(&file, &bytes).unwrap();
        let run = reliora(&index, &["record", arg(&file)], None);
        assert_bad(&run, "invalid_record", &mentions, case);
        assert!(
            run.json()["message"]
                .as_str()
                .unwrap()
                .contains("bad-record.json"),
            "{case}"
        );
        assert_eq!(snapshot(&index), before, "{case}: the index changed");
    }
    // Empty input and two records at once are bad input too.
    for (case, bytes) in [
        ("empty input", &b""[..]),
        (
            "two records",
            &b"{\"title\": \"a\"}\n{\"title\": \"b\"}"[..],
        ),
    ] {
        assert_bad(
            &reliora(&index, &["record", "-"], Some(bytes)),
            "invalid_record",
            &[],
            case,
        );
    }
    assert_eq!(snapshot(&index), before);
}

#[test]
fn record_input_is_bounded_in_size() {
    let work = tempdir();
    let index = work.path().join("index");
    build_small_index(&index);
    let before = snapshot(&index);
    // 17 MiB of whitespace around nothing: refused without being held whole.
    let mut bytes = vec![b' '; 17 << 20];
    bytes.extend_from_slice(br#"{"title": "t"}"#);
    let run = reliora(&index, &["record", "-"], Some(&bytes));
    assert_bad(&run, "invalid_record", &["larger than"], "oversized input");
    assert_eq!(snapshot(&index), before);
}

#[test]
fn build_rejects_every_class_of_bad_input_and_keeps_the_previous_index() {
    let work = tempdir();
    let index = work.path().join("index");
    build_small_index(&index);
    let before = snapshot(&index);
    let valid = br#"{"id": "ok", "title": "a valid record"}"#;
    let mut cases = bad_records();
    cases.push((
        "duplicate ids",
        br#"{"id": "ok", "title": "the same id again"}"#.to_vec(),
        vec!["ok"],
    ));
    for (case, bytes, mentions) in cases {
        let mut input = valid.to_vec();
        input.push(b'\n');
        input.extend_from_slice(&bytes);
        input.push(b'\n');
        let file = work.path().join("input.jsonl");
        std::fs::write(&file, &input).unwrap();
        // --replace: the index holds recorded writes, and even a build allowed to drop them
        // keeps the previous index when its input is bad.
        let run = reliora(&index, &["build", "--input", arg(&file), "--replace"], None);
        assert_bad(&run, "invalid_record", &mentions, case);
        assert!(
            run.json()["message"]
                .as_str()
                .unwrap()
                .contains("input.jsonl"),
            "{case}"
        );
        assert_eq!(
            snapshot(&index),
            before,
            "{case}: the previous index changed"
        );
    }
    // The index still answers.
    let run = reliora(&index, &["search", "tokio runtime", "--now", NOW], None);
    assert_eq!(run.status, 0, "{run:?}");
    assert_eq!(run.json()["backend"], "index");
}

#[test]
fn search_rejects_bad_options_and_caps_hostile_sizes() {
    let work = tempdir();
    let index = work.path().join("index");
    build_small_index(&index);
    let long = "x".repeat(8193);
    let cases: Vec<(Vec<&str>, &str, Vec<&str>)> = vec![
        (vec!["q", "--limit", "0"], "invalid_limit", vec!["--limit"]),
        (
            vec!["q", "--limit", "-99999999999999999999"],
            "invalid_limit",
            vec!["--limit"],
        ),
        (
            vec!["q", "--limit", "ten"],
            "invalid_option",
            vec!["--limit"],
        ),
        (
            vec!["q", "--min-score", "150"],
            "invalid_min_score",
            vec!["--min-score", "150"],
        ),
        (
            vec!["q", "--min-score", "NaN"],
            "invalid_min_score",
            vec!["--min-score"],
        ),
        (
            vec!["q", "--min-score", "inf"],
            "invalid_min_score",
            vec!["--min-score"],
        ),
        (
            vec!["q", "--min-score", "1e400"],
            "invalid_min_score",
            vec!["--min-score"],
        ),
        (
            vec!["q", "--min-score", "-0.5"],
            "invalid_min_score",
            vec!["--min-score"],
        ),
        (
            vec!["q", "--profile", "fastest"],
            "unknown_profile",
            vec!["fastest"],
        ),
        (
            vec!["q", "--backend", "disk"],
            "invalid_option",
            vec!["--backend"],
        ),
        (
            vec!["q", "--now", "2026-13-01T00:00:00Z"],
            "invalid_option",
            vec!["--now"],
        ),
        (
            vec!["q", "--tag", &long],
            "invalid_tag",
            vec!["--tag", "8192"],
        ),
        (
            vec!["q", "--project-context", &long],
            "invalid_project_context",
            vec!["8192"],
        ),
        (
            vec!["q", "--explain", &long],
            "invalid_option",
            vec!["--explain"],
        ),
        (vec!["", "--limit", "3"], "empty_query", vec![]),
    ];
    for (args, code, mentions) in cases {
        let mut full = vec!["search"];
        full.extend_from_slice(&args);
        let run = reliora(&index, &full, None);
        let case = format!("{:?}", &args[1..]);
        assert_bad(&run, code, &mentions, &case);
    }
    // Out-of-range values that SPEC clamps: a notice, not an error.
    let run = reliora(
        &index,
        &["search", "tokio", "--limit", "99999999999999999999999"],
        None,
    );
    assert_eq!(run.status, 0, "{run:?}");
    assert!(
        run.json()["notices"].to_string().contains("clamped"),
        "{run:?}"
    );
    // A huge query is cut to its first 8192 characters, with a notice.
    let query = format!("tokio runtime {}", "panic ".repeat(10_000));
    let run = reliora(&index, &["search", &query, "--now", NOW], None);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let response = run.json();
    let notices = response["notices"].to_string();
    assert!(notices.contains("8192"), "{notices}");
    assert_eq!(response["tokens"], json!(["tokio", "runtime", "panic"]));
    assert!(!response["results"].as_array().unwrap().is_empty());
}

#[test]
fn a_query_that_is_not_utf8_is_bad_input() {
    use std::os::unix::ffi::OsStrExt;
    let work = tempdir();
    let index = work.path().join("index");
    build_small_index(&index);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_reliora"))
        .args(["--format", "json", "--index", arg(&index), "search"])
        .arg(std::ffi::OsStr::from_bytes(b"caf\xff"))
        .env_remove("RELIORA_INDEX")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["error"], "invalid_option");
}

#[test]
fn a_queries_file_reports_each_bad_line_and_answers_the_others() {
    let work = tempdir();
    let index = work.path().join("index");
    build_small_index(&index);
    let file = work.path().join("queries.jsonl");
    std::fs::write(
        &file,
        concat!(
            "{\"id\": \"ok\", \"query\": \"tokio runtime\"}\n",
            "{\"id\": \"limit\", \"query\": \"tokio\", \"limit\": 0}\n",
            "{\"id\": \"score\", \"query\": \"tokio\", \"minScore\": 150}\n",
            "{\"id\": \"profile\", \"query\": \"tokio\", \"profile\": \"nope\"}\n",
            "{\"id\": \"nan\", \"query\": \"tokio\", \"minScore\": NaN}\n",
            "{\"id\": \"type\", \"query\": 5}\n",
            "plain line about docker cache\n",
        ),
    )
    .unwrap();
    let run = reliora(
        &index,
        &["search", "--queries", arg(&file), "--now", NOW],
        None,
    );
    assert_eq!(run.status, 2, "{run:?}");
    let lines: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(lines.len(), 7, "{run:?}");
    let errors: Vec<&str> = lines
        .iter()
        .map(|l| l["error"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        errors,
        [
            "",
            "invalid_limit",
            "invalid_min_score",
            "unknown_profile",
            "invalid_option",
            "invalid_option",
            ""
        ]
    );
    assert!(lines[0]["results"]
        .as_array()
        .is_some_and(|r| !r.is_empty()));
    assert!(lines[6]["results"]
        .as_array()
        .is_some_and(|r| !r.is_empty()));
}
