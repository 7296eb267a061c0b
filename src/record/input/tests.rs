//! Input reading: forms, locators, errors, `--field-map`, `--skip-invalid`.

use super::*;
use crate::record::{derived_id, MAX_RECORD_BYTES};
use serde_json::json;
use std::fs;

/// A temporary directory with files written into it.
struct Inputs {
    dir: tempfile::TempDir,
}

impl Inputs {
    fn new() -> Self {
        Inputs {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn file(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&path, contents).unwrap();
        path
    }
}

fn read(paths: &[PathBuf], skip_invalid: bool) -> Result<InputBatch, Error> {
    read_inputs(paths, &FieldMap::new(), skip_invalid)
}

fn titles(batch: &InputBatch) -> Vec<&str> {
    batch
        .records
        .iter()
        .map(|r| r.record.title.as_deref().unwrap_or(""))
        .collect()
}

fn locators(batch: &InputBatch) -> Vec<String> {
    batch.records.iter().map(|r| r.locator.clone()).collect()
}

#[test]
fn json_lines_locators_count_every_line() {
    let inputs = Inputs::new();
    let path = inputs.file(
        "a.jsonl",
        "\u{feff}{\"title\": \"one\"}\r\n\r\n   \n{\"title\": \"two\"}\n{\"title\": \"three\"}",
    );
    let batch = read(std::slice::from_ref(&path), false).unwrap();
    assert_eq!(titles(&batch), ["one", "two", "three"]);
    let p = path.display();
    assert_eq!(
        locators(&batch),
        [format!("{p}:1"), format!("{p}:4"), format!("{p}:5")]
    );
}

#[test]
fn array_elements_get_their_own_lines() {
    let inputs = Inputs::new();
    let path = inputs.file(
        "a.json",
        "[\n  {\"title\": \"one\"},\n\n  {\n    \"title\": \"two\"\n  }, {\"title\": \"three\"}\n]\n",
    );
    let batch = read(std::slice::from_ref(&path), false).unwrap();
    assert_eq!(titles(&batch), ["one", "two", "three"]);
    let p = path.display();
    assert_eq!(
        locators(&batch),
        [format!("{p}:2"), format!("{p}:4"), format!("{p}:6")]
    );
}

#[test]
fn forms_are_chosen_by_content_and_extension() {
    let inputs = Inputs::new();
    // (file name, contents, titles, start lines)
    let cases: &[(&str, &str, &[&str], &[usize])] = &[
        (
            "pretty.json",
            "\n{\n  \"title\": \"p\",\n  \"tags\": [\"a\"]\n}\n",
            &["p"],
            &[2],
        ),
        (
            "lines.json",
            "{\"title\": \"a\"}\n{\"title\": \"b\"}\n",
            &["a", "b"],
            &[1, 2],
        ),
        ("one.json", "{\"title\": \"a\"}", &["a"], &[1]),
        ("pretty-two.json", "{\"title\":\n \"a\"}\n", &["a"], &[1]),
        ("array.jsonl", "  [{\"title\": \"a\"}]", &["a"], &[1]),
        (
            "lines.txt",
            "{\"title\": \"a\"}\n\n{\"title\": \"b\"}",
            &["a", "b"],
            &[1, 3],
        ),
        ("empty.jsonl", "", &[], &[]),
        ("blank.json", " \n\t\n", &[], &[]),
        ("empty-array.json", "[]", &[], &[]),
    ];
    for &(name, contents, expected_titles, lines) in cases {
        let path = inputs.file(name, contents);
        let batch =
            read(std::slice::from_ref(&path), false).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(titles(&batch), expected_titles, "{name}");
        let expected: Vec<String> = lines
            .iter()
            .map(|line| format!("{}:{line}", path.display()))
            .collect();
        assert_eq!(locators(&batch), expected, "{name}");
    }
}

#[test]
fn directories_are_read_recursively_in_path_order() {
    let inputs = Inputs::new();
    inputs.file("d/b.jsonl", "{\"title\": \"b\"}\n");
    inputs.file("d/a.json", "[{\"title\": \"a\"}]");
    inputs.file("d/a/z.json", "{\"title\": \"a/z\"}");
    inputs.file("d/c/d/e.JSONL", "{\"title\": \"c/d/e\"}");
    inputs.file("d/notes.txt", "{\"title\": \"ignored\"}");
    inputs.file("d/c/readme.md", "ignored");
    let single = inputs.file("single.jsonl", "{\"title\": \"single\"}");
    let dir = inputs.dir.path().join("d");
    let batch = read(&[single, dir.clone()], false).unwrap();
    assert_eq!(titles(&batch), ["single", "a/z", "a", "b", "c/d/e"]);
    assert_eq!(
        batch.records[1].locator,
        format!("{}:1", dir.join("a").join("z.json").display())
    );
}

#[test]
fn malformed_json_names_file_and_line() {
    let inputs = Inputs::new();
    // (contents of a .jsonl file, line of the bad record, part of the message)
    let cases: &[(&[u8], usize, &str)] = &[
        (
            b"{\"title\": \"a\"}\n{\"title\": NaN}\n",
            2,
            "expected value at column 11",
        ),
        (b"{\"title\": \"a\", \"x\": Infinity}", 1, "expected value"),
        (b"{\"title\": \"a\", \"x\": -Infinity}", 1, "invalid number"),
        (
            b"\n\n{\"title\": \"a\", \"x\": 1e999}",
            3,
            "number out of range",
        ),
        (
            b"{\"title\": \"a\", \"title\": \"b\"}",
            1,
            "duplicate key \"title\"",
        ),
        (
            b"{\"title\": \"a\", \"x\": {\"k\": 1, \"k\": 2}}",
            1,
            "duplicate key \"k\"",
        ),
        (
            b"{\"title\": \"a\"} {\"title\": \"b\"}",
            1,
            "trailing characters",
        ),
        (b"{\"title\": \"a\"\n", 1, "EOF"),
        (b"{\"title\": \"a\xff\"}", 1, "invalid UTF-8 at column 13"),
    ];
    for &(contents, line, needle) in cases {
        let path = inputs.file("bad.jsonl", contents);
        let err = read(std::slice::from_ref(&path), false).unwrap_err();
        match &err {
            Error::MalformedJson { locator, message } => {
                assert_eq!(locator, &format!("{}:{line}", path.display()), "{err}");
                assert!(message.contains(needle), "{err} lacks {needle:?}");
            }
            other => panic!("expected MalformedJson, got {other}"),
        }
        assert_eq!(err.exit_status(), 2);
    }
}

#[test]
fn invalid_records_name_file_line_field_and_value() {
    let inputs = Inputs::new();
    let path = inputs.file(
        "r.jsonl",
        "{\"title\": \"ok\"}\n{\"title\": \"t\", \"salience\": 7}\n",
    );
    let err = read(std::slice::from_ref(&path), false).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:2: invalid record: field `salience` = 7: must be a number from 0 to 1",
            path.display()
        )
    );
    let path = inputs.file("top.jsonl", "[1]\n");
    let path2 = inputs.file("top2.jsonl", "\"text\"\n");
    for path in [path, path2] {
        match read(&[path], false).unwrap_err() {
            Error::InvalidRecord { source, .. } => assert_eq!(source.field, "(record)"),
            other => panic!("{other}"),
        }
    }
}

#[test]
fn array_errors_mention_the_index() {
    let inputs = Inputs::new();
    let path = inputs.file(
        "a.json",
        "[\n  {\"title\": \"ok\"},\n  {\"title\": \"t\",\n   \"pinned\": \"yes\"},\n  5,\n  {\"a\": 1, \"a\": 2}\n]",
    );
    let batch = read(std::slice::from_ref(&path), true).unwrap();
    assert_eq!(titles(&batch), ["ok"]);
    let p = path.display();
    let skipped: Vec<(String, String)> = batch
        .skipped
        .iter()
        .map(|s| (s.locator.clone(), s.error.to_string()))
        .collect();
    assert_eq!(
        skipped,
        [
            (
                format!("{p}:3"),
                format!("{p}:3 (array index 1): invalid record: field `pinned` = \"yes\": must be true or false, not a string")
            ),
            (
                format!("{p}:5"),
                format!("{p}:5 (array index 2): invalid record: field `(record)` = 5: a record must be a JSON object, not a number")
            ),
            (
                format!("{p}:6"),
                format!("{p}:6 (array index 3): malformed JSON: duplicate key \"a\" at line 6 column 14")
            ),
        ]
    );
    // Without --skip-invalid the first one fails the read.
    let err = read(&[path], false).unwrap_err();
    assert!(err.to_string().contains("(array index 1)"), "{err}");
}

#[test]
fn file_level_failures_ignore_skip_invalid() {
    let inputs = Inputs::new();
    // (name, contents, part of the error)
    let cases: &[(&str, &[u8], &str)] = &[
        (
            "bad-array.json",
            b"[{\"title\": \"a\"},\n {\"title\": }]",
            "not a JSON array of records",
        ),
        ("open-array.json", b"[{\"title\": \"a\"}", "EOF"),
        (
            "tail-array.json",
            b"[{\"title\": \"a\"}] x",
            "trailing characters",
        ),
        (
            "utf8-array.json",
            b"[\n{\"title\": \"\xc3\"}]",
            ":2: malformed JSON: invalid UTF-8 at line 2 column 12",
        ),
    ];
    for &(name, contents, needle) in cases {
        let path = inputs.file(name, contents);
        let err = read(&[path], true).unwrap_err();
        assert!(matches!(err, Error::MalformedJson { .. }), "{name}: {err}");
        assert!(err.to_string().contains(needle), "{name}: {err}");
    }
    let missing = inputs.dir.path().join("missing.jsonl");
    match read(std::slice::from_ref(&missing), true).unwrap_err() {
        Error::Io { path, .. } => assert_eq!(path, missing),
        other => panic!("{other}"),
    }
}

#[test]
fn skip_invalid_reports_every_skipped_record_in_order() {
    let inputs = Inputs::new();
    let first = inputs.file(
        "1.jsonl",
        "{\"title\": \"a\"}\n{\"title\": \"\"}\nnot json\n{\"title\": \"b\"}\n{\"tags\": 1}\n",
    );
    let second = inputs.file("2.json", "{\n  \"title\": 5\n}\n");
    let third = inputs.file("3.json", "{\n  \"title\": \"c\",\n}\n");
    // A .json file of JSON Lines whose first line is broken is still read line by line.
    let fourth = inputs.file("4.json", "{\"title\": NaN}\n{\"title\": \"d\"}\n");
    let batch = read(
        &[first.clone(), second.clone(), third.clone(), fourth.clone()],
        true,
    )
    .unwrap();
    assert_eq!(titles(&batch), ["a", "b", "d"]);
    let skipped: Vec<&str> = batch.skipped.iter().map(|s| s.locator.as_str()).collect();
    let expected = [
        format!("{}:2", first.display()),
        format!("{}:3", first.display()),
        format!("{}:5", first.display()),
        format!("{}:1", second.display()),
        format!("{}:1", third.display()),
        format!("{}:1", fourth.display()),
    ];
    assert_eq!(skipped, expected);
    assert!(matches!(
        batch.skipped[1].error,
        Error::MalformedJson { .. }
    ));
    assert!(
        batch.skipped[4]
            .error
            .to_string()
            .contains("at line 3 column 1"),
        "{}",
        batch.skipped[4].error
    );
    match &batch.skipped[2].error {
        Error::InvalidRecord { source, .. } => assert_eq!(source.field, "tags"),
        other => panic!("{other}"),
    }
    // Without it, the first bad record in input order is the error.
    let err = read(std::slice::from_ref(&first), false).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{}:2:", first.display())),
        "{err}"
    );
}

#[test]
fn field_map_specs() {
    // (spec, accepted)
    let cases = [
        ("_id=id", true),
        ("text=problems", true),
        ("a=b=c", true),
        ("noequals", false),
        ("=id", false),
        ("id=", false),
        ("=", false),
        ("", false),
    ];
    for (spec, ok) in cases {
        let result = FieldMap::new().push_spec(spec);
        assert_eq!(result.is_ok(), ok, "{spec}");
        if let Err(err) = result {
            assert_eq!(err.code(), ErrorCode::InvalidOption);
            assert!(err.to_string().contains(&format!("{spec:?}")), "{err}");
        }
    }
    let mut map = FieldMap::new();
    map.push_spec("a=b=c").unwrap();
    assert_eq!(map.pairs().collect::<Vec<_>>(), [("a", "b=c")]);
    let err = map.push_spec("a=d").unwrap_err();
    assert!(err.to_string().contains("already mapped"), "{err}");
}

fn field_map(specs: &[&str]) -> FieldMap {
    let mut map = FieldMap::new();
    for spec in specs {
        map.push_spec(spec).unwrap();
    }
    map
}

#[test]
fn field_map_renames_top_level_keys_in_place() {
    // (specs, input, output)
    let cases: Vec<(&[&str], Value, Value)> = vec![
        (&[], json!({"a": 1}), json!({"a": 1})),
        (
            &["a=b"],
            json!({"x": 0, "a": 1, "y": 2}),
            json!({"x": 0, "b": 1, "y": 2}),
        ),
        (
            &["a=b", "b=a"],
            json!({"a": 1, "b": 2}),
            json!({"b": 1, "a": 2}),
        ),
        (
            &["a=b", "b=c"],
            json!({"a": 1, "b": 2}),
            json!({"b": 1, "c": 2}),
        ),
        (&["a=b"], json!({"n": {"a": 1}}), json!({"n": {"a": 1}})),
        (&["a=b"], json!({"a": 1, "b": 2}), json!({"b": 2})),
    ];
    for (specs, input, output) in cases {
        let mut object = input.as_object().unwrap().clone();
        field_map(specs).apply(&mut object);
        let keys: Vec<&String> = object.keys().collect();
        let expected: Vec<&String> = output.as_object().unwrap().keys().collect();
        assert_eq!(keys, expected, "{specs:?} {input}");
        assert_eq!(Value::Object(object), output, "{specs:?} {input}");
    }
}

#[test]
fn field_map_collisions_are_errors() {
    // (specs, input, field named)
    let cases: Vec<(&[&str], Value, &str)> = vec![
        (&["a=b"], json!({"a": 1, "b": 2}), "b"),
        (&["b=x"], json!({"x": 2, "b": 1}), "x"),
        (&["a=x", "b=x"], json!({"a": 1, "b": 2}), "x"),
        (&["a=b", "b=c"], json!({"a": 1, "b": 2, "c": 3}), "c"),
    ];
    for (specs, input, field) in cases {
        let mut object = input.as_object().unwrap().clone();
        let err = field_map(specs).try_apply(&mut object).unwrap_err();
        assert_eq!(err.field, field, "{specs:?} {input}");
        assert_eq!(Value::Object(object), input, "left unchanged");
    }
    let mut object = json!({"a": 1, "b": 2}).as_object().unwrap().clone();
    field_map(&["a=b", "b=a"]).try_apply(&mut object).unwrap();
}

#[test]
fn field_map_applies_before_validation_and_id_derivation() {
    let inputs = Inputs::new();
    let path = inputs.file(
        "corpus.jsonl",
        "{\"_id\": \"doc1\", \"name\": \"T\", \"text\": \"body\"}\n{\"name\": \"U\", \"text\": [\"x\"]}\n{\"name\": \"V\", \"title\": \"W\"}\n",
    );
    let map = field_map(&["_id=id", "name=title", "text=problems"]);
    let batch = read_inputs(std::slice::from_ref(&path), &map, true).unwrap();
    let first = &batch.records[0].record;
    assert_eq!(
        (first.id.as_str(), first.title.as_deref().unwrap_or("")),
        ("doc1", "T")
    );
    assert_eq!(first.problems, ["body"]);
    let second = &batch.records[1].record;
    assert_eq!(
        second.id,
        derived_id(&json!({"title": "U", "problems": ["x"]})),
        "the id is derived after --field-map"
    );
    match &batch.skipped[0].error {
        Error::InvalidRecord { locator, source } => {
            assert_eq!(locator, &format!("{}:3", path.display()));
            assert_eq!(source.field, "title");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn parse_record_text_reads_one_object() {
    let map = field_map(&["name=title"]);
    let record = parse_record_text(
        "\u{feff}{\n  \"name\": \"T\",\n  \"tags\": \"a\"\n}\n",
        "note.json",
        &map,
    )
    .unwrap();
    assert_eq!(
        (
            record.title.as_deref().unwrap_or(""),
            record.tags.as_slice()
        ),
        ("T", &["a".to_owned()][..])
    );
    // (text, error kind is MalformedJson, part of the message)
    let cases = [
        ("{\"title\": \"a\"} {}", true, "trailing characters"),
        ("", true, "EOF"),
        ("{\"title\": NaN}", true, "expected value"),
        ("[{\"title\": \"a\"}]", false, "field `(record)`"),
        ("{\"name\": \"\"}", false, "no searchable text"),
    ];
    for (text, malformed, needle) in cases {
        let err = parse_record_text(text, "-", &map).unwrap_err();
        assert_eq!(
            matches!(err, Error::MalformedJson { .. }),
            malformed,
            "{text}: {err}"
        );
        assert!(err.to_string().starts_with("-: "), "{err}");
        assert!(err.to_string().contains(needle), "{text}: {err}");
    }
}

#[test]
fn parallel_parsing_keeps_input_order() {
    let inputs = Inputs::new();
    let mut lines = String::new();
    let mut array = String::from("[\n");
    for i in 0..5000 {
        lines.push_str(&format!("{{\"title\": \"t{i}\", \"tags\": [\"{i}\"]}}\n"));
        if i % 7 == 0 {
            lines.push_str(&format!("{{\"title\": {i}}}\n"));
        }
        array.push_str(&format!(
            "{}{{\"title\": \"t{i}\"}}\n",
            if i > 0 { "," } else { "" }
        ));
    }
    array.push(']');
    let jsonl = inputs.file("many.jsonl", lines);
    let json = inputs.file("many.json", array);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| read(&[jsonl.clone(), json.clone()], true).unwrap())
    };
    let one = run(1);
    let four = run(4);
    assert_eq!(one.records, four.records);
    assert_eq!(one.records.len(), 10_000);
    let expected: Vec<String> = (0..5000).map(|i| format!("t{i}")).collect();
    assert_eq!(titles(&one)[..5000], expected[..]);
    assert_eq!(titles(&one)[5000..], expected[..]);
    assert_eq!(one.records[5001].locator, format!("{}:3", json.display()));
    let skipped: Vec<&str> = four.skipped.iter().map(|s| s.locator.as_str()).collect();
    let one_skipped: Vec<&str> = one.skipped.iter().map(|s| s.locator.as_str()).collect();
    assert_eq!(skipped, one_skipped);
    assert_eq!(skipped.len(), 715);
    assert_eq!(skipped[1], format!("{}:10", jsonl.display()));
}

#[test]
fn record_size_is_measured_on_compact_json() {
    let inputs = Inputs::new();
    let pad = "a".repeat(MAX_RECORD_BYTES);
    let big = inputs.file(
        "big.jsonl",
        format!("{{\"title\": \"t\", \"pad\": \"{pad}\"}}\n"),
    );
    match read(&[big], false).unwrap_err() {
        Error::InvalidRecord { source, .. } => {
            assert_eq!(source.field, "(record)");
            assert!(source.reason.contains("1048598 bytes"), "{}", source.reason);
        }
        other => panic!("{other}"),
    }
    // 1.5 MiB of indentation around a record of well under 1 MiB is fine.
    let spaces = " ".repeat(MAX_RECORD_BYTES / 2);
    let padded = inputs.file(
        "padded.json",
        format!(
            "{{\n{spaces}\"title\":\n{spaces}\"t\",{spaces}\"pad\": \"{}\"}}",
            &pad[..1000]
        ),
    );
    let batch = read(&[padded], false).unwrap();
    assert_eq!(titles(&batch), ["t"]);
}

/// Reads `path` handing JSON Lines over `lines` lines at a time; returns the batches.
fn batches(path: &Path, skip_invalid: bool, lines: usize) -> (Vec<InputBatch>, Option<Error>) {
    let mut got = Vec::new();
    let outcome = read_file_batched(path, &FieldMap::new(), skip_invalid, lines, &mut |b| {
        got.push(b);
        Ok(())
    });
    (got, outcome.err())
}

#[test]
fn json_lines_in_batches_keep_lines_order_and_locators() {
    let inputs = Inputs::new();
    // A byte order mark, blank lines (also before the first record), CRLF endings, no final
    // newline: the same records and locators whatever the batch size.
    let text = "\u{feff}\n  \n{\"title\": \"a\"}\r\n\n{\"title\": \"b\"}\n{\"title\": \"c\"}\n\n\
                {\"title\": \"d\"}\n{\"title\": \"e\"}";
    let path = inputs.file("in.jsonl", text);
    let whole = read(std::slice::from_ref(&path), false).unwrap();
    assert_eq!(titles(&whole), ["a", "b", "c", "d", "e"]);
    let name = path.display();
    let expected: Vec<String> = [3, 5, 6, 8, 9]
        .iter()
        .map(|l| format!("{name}:{l}"))
        .collect();
    assert_eq!(locators(&whole), expected);
    for size in 1..=4 {
        let (got, error) = batches(&path, false, size);
        assert!(error.is_none());
        assert!(got.iter().all(|b| b.records.len() <= size), "size {size}");
        let merged = InputBatch {
            records: got.into_iter().flat_map(|b| b.records).collect(),
            skipped: Vec::new(),
        };
        assert_eq!(titles(&merged), titles(&whole), "size {size}");
        assert_eq!(locators(&merged), expected, "size {size}");
    }
}

#[test]
fn an_invalid_line_in_a_later_batch_fails_after_the_records_before_it() {
    let inputs = Inputs::new();
    let path = inputs.file(
        "in.jsonl",
        "{\"title\": \"a\"}\n{\"title\": \"b\"}\n{\"title\": 7}\n{\"title\": \"d\"}\n",
    );
    let (got, error) = batches(&path, false, 1);
    let delivered: Vec<String> = got
        .iter()
        .flat_map(|b| b.records.iter().filter_map(|r| r.record.title.clone()))
        .collect();
    assert_eq!(delivered, ["a", "b"]);
    let error = error.expect("line 3 is invalid").to_string();
    assert!(
        error.contains("in.jsonl:3") && error.contains("title"),
        "{error}"
    );

    // With skip_invalid the line is reported, in order, and reading goes on.
    let (got, error) = batches(&path, true, 2);
    assert!(error.is_none());
    let skipped: Vec<&str> = got
        .iter()
        .flat_map(|b| b.skipped.iter().map(|s| s.locator.as_str()))
        .collect();
    assert_eq!(skipped, [format!("{}:3", path.display())]);
    assert_eq!(got.iter().map(|b| b.records.len()).sum::<usize>(), 3);
}
