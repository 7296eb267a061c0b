//! SPEC §1 as amended: `title` is optional. A record needs some searchable text; a blank string
//! is stored as given but counts as absent; a result's `title` is `null` without one; the
//! duplicate warnings' equality rule needs a non-blank title, solution or applicability.

use serde_json::{json, Value};

use crate::support::{self, arg, reliora, tempdir, NOW};

fn records() -> Vec<Value> {
    vec![
        json!({"id": "body-only", "problems": ["gadget overheats after the firmware update"]}),
        json!({"id": "blank-title", "title": "", "task": "calibrate the gadget sensor"}),
        json!({"id": "spaces-title", "title": "   ", "solution": "reflash the gadget firmware",
               "tags": ["gadgets"]}),
        json!({"id": "titled", "title": "Gadget battery drains overnight",
               "problems": ["battery at 0 % in the morning"]}),
    ]
}

fn write_jsonl(path: &std::path::Path, values: &[Value]) {
    let lines: String = values.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(path, lines).unwrap();
}

fn titles(response: &Value) -> Vec<(String, Value)> {
    let mut titles: Vec<(String, Value)> = response["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_string(), r["title"].clone()))
        .collect();
    titles.sort_by(|a, b| a.0.cmp(&b.0));
    titles
}

#[test]
fn untitled_records_build_search_show_and_export() {
    let work = tempdir();
    let input = work.path().join("records.jsonl");
    write_jsonl(&input, &records());
    let index = work.path().join("index");
    let built = reliora(&index, &["build", "--input", arg(&input)], None).ok();
    assert_eq!(built["records"], 4);

    let search = |index: &std::path::Path| {
        reliora(
            index,
            &[
                "search",
                "gadget firmware sensor",
                "--now",
                NOW,
                "--limit",
                "10",
            ],
            None,
        )
        .ok()
    };
    let response = search(&index);
    assert_eq!(
        titles(&response),
        [
            ("blank-title".to_string(), Value::Null),
            ("body-only".to_string(), Value::Null),
            ("spaces-title".to_string(), Value::Null),
            (
                "titled".to_string(),
                json!("Gadget battery drains overnight")
            ),
        ]
    );
    // The table shows the start of an untitled record's text instead.
    let table = std::process::Command::new(env!("CARGO_BIN_EXE_reliora"))
        .args(["--format", "text", "--index", arg(&index)])
        .args(["search", "gadget overheats", "--now", NOW])
        .output()
        .unwrap();
    assert!(table.status.success(), "{table:?}");
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("gadget overheats after the firmware update"),
        "{table}"
    );
    // A blank title is stored as given; an absent one stays absent.
    let shown = reliora(&index, &["show", "blank-title"], None).ok();
    assert_eq!(shown["title"], json!(""));
    let shown = reliora(&index, &["show", "body-only"], None).ok();
    assert!(shown.get("title").is_none(), "{shown}");

    // export round-trips: a build from the export answers the same.
    let export = work.path().join("export.jsonl");
    reliora(&index, &["export", "--output", arg(&export)], None).assert_ok("export");
    let rebuilt = work.path().join("rebuilt");
    reliora(&rebuilt, &["build", "--input", arg(&export)], None).assert_ok("rebuild");
    let mut before = search(&index);
    let mut after = search(&rebuilt);
    for response in [&mut before, &mut after] {
        response.as_object_mut().unwrap().remove("fingerprint");
        for result in response["results"].as_array_mut().unwrap() {
            result.as_object_mut().unwrap().remove("locator");
        }
    }
    assert_eq!(before, after);
}

#[test]
fn record_takes_untitled_records_and_equality_needs_some_text_to_compare() {
    let work = tempdir();
    let index = work.path().join("index");
    let first = json!({"id": "a", "problems": ["gadget overheats"]});
    let answer = reliora(&index, &["record", "-"], Some(first.to_string().as_bytes())).ok();
    assert_eq!(answer["id"], "a");
    // The same problems, no title, solution or applicability: nothing makes the two equal, so
    // the warning keeps its search level (coverage 1, relevance 14: moderate), not strong.
    let second = json!({"id": "b", "problems": ["gadget overheats"]});
    let answer = reliora(
        &index,
        &["record", "-"],
        Some(second.to_string().as_bytes()),
    )
    .ok();
    let warnings = answer["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{answer}");
    assert_eq!(warnings[0]["id"], "a");
    assert_eq!(warnings[0]["matchLevel"], "moderate", "{answer}");
    assert_eq!(warnings[0]["title"], Value::Null);
    // With an equal non-blank solution they are the same experience: strong.
    let solved = json!({"id": "c", "problems": ["gadget overheats"], "solution": "let it cool"});
    reliora(
        &index,
        &["record", "-"],
        Some(solved.to_string().as_bytes()),
    )
    .assert_ok("c");
    let again = json!({"id": "d", "problems": ["gadget overheats"], "solution": "let it cool"});
    let answer = reliora(&index, &["record", "-"], Some(again.to_string().as_bytes())).ok();
    let strong: Vec<&Value> = answer["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["id"] == "c")
        .collect();
    assert_eq!(strong[0]["matchLevel"], "strong", "{answer}");
    // Nothing searchable is still refused.
    let empty = json!({"id": "e", "title": " ", "verification": "checked"});
    let refused = reliora(&index, &["record", "-"], Some(empty.to_string().as_bytes()));
    assert_eq!(refused.error_code(), "invalid_record");
    assert!(refused.stdout.contains("searchable text"), "{refused:?}");
}

#[test]
fn eval_on_a_corpus_with_empty_titles_evaluates_every_document() {
    let work = tempdir();
    let beir = work.path().join("beir");
    std::fs::create_dir_all(beir.join("qrels")).unwrap();
    write_jsonl(
        &beir.join("corpus.jsonl"),
        &[
            json!({"_id": "d1", "title": "", "text": "how to hedge currency risk"}),
            json!({"_id": "d2", "title": "", "text": "index funds and their fees"}),
            json!({"_id": "d3", "title": "", "text": "paying off a mortgage early"}),
        ],
    );
    write_jsonl(
        &beir.join("queries.jsonl"),
        &[
            json!({"_id": "q1", "text": "currency hedge"}),
            json!({"_id": "q2", "text": "mortgage"}),
        ],
    );
    std::fs::write(
        beir.join("qrels").join("test.tsv"),
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n",
    )
    .unwrap();
    let report = support::run_binary(&["eval", "--beir", arg(&beir)], None).ok();
    assert_eq!(report["documents"], 3, "{report}");
    assert_eq!(report["skipped"], 0);
    assert_eq!(report["nDCG@10"], 1.0, "{report}");
}

/// A result reads only the head of its record (locator and title) where that shows all it
/// needs: what it shows must be what the whole record says — for a title longer than the
/// bytes a head decodes, blank and missing titles (the label then comes from the content), in
/// a built segment and in the log.
#[test]
fn a_result_shows_the_locator_title_and_label_of_its_whole_record() {
    use reliora::{BuildOptions, Index, IndexWriter, Record, SearchRequest};

    let long_title = "Ünïcödé gadget title ".repeat(30);
    let records = [
        json!({"id": "long", "title": long_title, "task": "gadget"}),
        json!({"id": "blank", "title": "  ", "task": "gadget\n\nwith a first line of many words"}),
        json!({"id": "none", "problems": ["", " gadget".repeat(60)]}),
        json!({"id": "short", "title": "Gadget", "solution": "gadget ".repeat(200)}),
    ];
    let work = tempdir();
    let input = work.path().join("records.jsonl");
    write_jsonl(&input, &records[..2]);
    let dir = work.path().join("index");
    let options = BuildOptions {
        inputs: vec![input],
        ..BuildOptions::default()
    };
    Index::build(&dir, &options).unwrap();
    let writer = IndexWriter::new(dir.clone());
    for value in &records[2..] {
        writer.record(Record::from_json(value).unwrap()).unwrap();
    }
    let index = Index::open(&dir).unwrap();
    for full in [false, true] {
        let mut request = SearchRequest::new("gadget");
        request.set_option("limit", Some("10")).unwrap();
        if full {
            request.set_option("full", Some("true")).unwrap();
        }
        let response = index.search(&request).unwrap();
        assert_eq!(response.results.len(), 4);
        for result in &response.results {
            let stored = index.get(&result.id).unwrap();
            assert_eq!(result.locator, stored.locator, "{}", result.id);
            assert_eq!(
                result.title.as_deref(),
                stored.record.display_title(),
                "{}",
                result.id
            );
            assert_eq!(result.label, stored.record.label(), "{}", result.id);
            assert_eq!(result.record.is_some(), full);
        }
    }
}
