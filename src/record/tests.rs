//! SPEC §1 rules, one table row each.

use super::*;
use proptest::prelude::*;
use serde_json::json;

fn record(value: Value) -> Record {
    Record::from_json(&value).unwrap_or_else(|e| panic!("{value}: {e}"))
}

/// A record whose compact JSON is exactly `size` bytes: `{"title":"t","pad":"aaa…"}`.
fn record_of_size(size: usize) -> Value {
    let overhead = r#"{"title":"t","pad":""}"#.len();
    json!({"title": "t", "pad": "a".repeat(size - overhead)})
}

#[test]
fn invalid_records_name_the_field() {
    let long = "x".repeat(MAX_TEXT_BYTES + 1);
    let long_multibyte = "é".repeat(MAX_TEXT_BYTES / 2 + 1);
    let many: Vec<String> = (0..=MAX_LIST_ITEMS).map(|i| i.to_string()).collect();
    // (input, field named by the error, part of the reason)
    let cases: Vec<(Value, &str, &str)> = vec![
        // The record itself.
        (json!([]), "(record)", "JSON object"),
        (json!("title"), "(record)", "JSON object"),
        (json!(null), "(record)", "JSON object"),
        (json!(7), "(record)", "JSON object"),
        (
            record_of_size(MAX_RECORD_BYTES + 1),
            "(record)",
            "1048577 bytes",
        ),
        // Some searchable text is required (SPEC §1): a blank string counts as absent, and
        // text that is not searched (verification, entities) does not count.
        (json!({}), "(record)", "no searchable text"),
        (json!({"title": null}), "(record)", "no searchable text"),
        (json!({"title": ""}), "(record)", "no searchable text"),
        (
            json!({"title": " \n\t ", "tags": [" ", ""]}),
            "(record)",
            "no searchable text",
        ),
        (
            json!({"verification": "ran the tests", "entities": ["x"], "task": "  "}),
            "(record)",
            "no searchable text",
        ),
        // title: optional, a string, ≤ 64 KiB.
        (json!({"title": 1}), "title", "must be a string"),
        (json!({"title": ["a"]}), "title", "must be a string"),
        (json!({"title": long}), "title", "65537 bytes"),
        (json!({"title": long_multibyte}), "title", "65538 bytes"),
        // id: a string of 1–256 bytes without control characters.
        (json!({"id": "", "title": "t"}), "id", "empty"),
        (
            json!({"id": "x".repeat(257), "title": "t"}),
            "id",
            "257 bytes",
        ),
        (json!({"id": "a\u{0}b", "title": "t"}), "id", "control"),
        (json!({"id": "a\nb", "title": "t"}), "id", "control"),
        (json!({"id": "a\u{7f}b", "title": "t"}), "id", "control"),
        (json!({"id": "a\u{85}b", "title": "t"}), "id", "control"),
        (json!({"id": 5, "title": "t"}), "id", "must be a string"),
        (json!({"id": ["a"], "title": "t"}), "id", "must be a string"),
        // Both spellings of one name, even when one is null.
        (
            json!({"title": "t", "whyItWorked": "a", "why_it_worked": "b"}),
            "whyItWorked",
            "both",
        ),
        (
            json!({"title": "t", "failed_attempts": [], "failedAttempts": []}),
            "failedAttempts",
            "both",
        ),
        (
            json!({"title": "t", "projectContext": "a", "project_context": null}),
            "projectContext",
            "both",
        ),
        (
            json!({"title": "t", "createdAt": null, "created_at": null}),
            "createdAt",
            "both",
        ),
        (
            json!({"title": "t", "updatedAt": null, "updated_at": "2024-05-01T00:00:00Z"}),
            "updatedAt",
            "both",
        ),
        (
            json!({"title": "t", "memoryType": "a", "memory_type": "a"}),
            "memoryType",
            "both",
        ),
        (
            json!({"title": "t", "decayFactor": 1, "decay_factor": 1}),
            "decayFactor",
            "both",
        ),
        (
            json!({"title": "t", "feedback": {"notApplicable": 1, "not_applicable": 1}}),
            "feedback.notApplicable",
            "both",
        ),
        // Text fields must be strings.
        (json!({"title": "t", "task": 1}), "task", "must be a string"),
        (
            json!({"title": "t", "solution": true}),
            "solution",
            "must be a string",
        ),
        (
            json!({"title": "t", "whyItWorked": []}),
            "whyItWorked",
            "must be a string",
        ),
        (
            json!({"title": "t", "why_it_worked": 1}),
            "whyItWorked",
            "must be a string",
        ),
        (
            json!({"title": "t", "projectContext": {}}),
            "projectContext",
            "must be a string",
        ),
        (
            json!({"title": "t", "applicability": 0.5}),
            "applicability",
            "must be a string",
        ),
        (
            json!({"title": "t", "verification": false}),
            "verification",
            "must be a string",
        ),
        (
            json!({"title": "t", "memoryType": 5}),
            "memoryType",
            "must be a string",
        ),
        (json!({"title": "t", "task": long}), "task", "65537 bytes"),
        (
            json!({"title": "t", "verification": long}),
            "verification",
            "65537 bytes",
        ),
        // List fields: strings, or a single string; ≤ 256 items of ≤ 64 KiB.
        (
            json!({"title": "t", "problems": 1}),
            "problems",
            "list of strings",
        ),
        (
            json!({"title": "t", "problems": [1]}),
            "problems",
            "item 0 must be a string",
        ),
        (
            json!({"title": "t", "problems": ["a", null]}),
            "problems",
            "item 1 must be a string",
        ),
        (
            json!({"title": "t", "failedAttempts": {}}),
            "failedAttempts",
            "list of strings",
        ),
        (
            json!({"title": "t", "failed_attempts": [[]]}),
            "failedAttempts",
            "item 0",
        ),
        (
            json!({"title": "t", "warnings": true}),
            "warnings",
            "list of strings",
        ),
        (json!({"title": "t", "tags": [{"a": 1}]}), "tags", "item 0"),
        (
            json!({"title": "t", "entities": 3}),
            "entities",
            "list of strings",
        ),
        (json!({"title": "t", "tags": many}), "tags", "257 items"),
        (
            json!({"title": "t", "problems": ["ok", long]}),
            "problems",
            "item 1 is 65537 bytes",
        ),
        (
            json!({"title": "t", "warnings": long}),
            "warnings",
            "65537 bytes",
        ),
        // Numbers.
        (
            json!({"title": "t", "confidence": -0.1}),
            "confidence",
            "from 0 to 1",
        ),
        (
            json!({"title": "t", "confidence": 1.5}),
            "confidence",
            "from 0 to 1",
        ),
        (
            json!({"title": "t", "confidence": "0.5"}),
            "confidence",
            "not a string",
        ),
        (
            json!({"title": "t", "confidence": true}),
            "confidence",
            "not a boolean",
        ),
        (
            json!({"title": "t", "salience": 2}),
            "salience",
            "from 0 to 1",
        ),
        (
            json!({"title": "t", "salience": -1}),
            "salience",
            "from 0 to 1",
        ),
        (
            json!({"title": "t", "salience": "high"}),
            "salience",
            "must be a number",
        ),
        (
            json!({"title": "t", "decayFactor": -0.01}),
            "decayFactor",
            "≥ 0",
        ),
        (
            json!({"title": "t", "decay_factor": "1"}),
            "decayFactor",
            "≥ 0",
        ),
        // Timestamps.
        (
            json!({"title": "t", "createdAt": "2024-13-01T00:00:00Z"}),
            "createdAt",
            "month 13",
        ),
        (
            json!({"title": "t", "createdAt": "yesterday"}),
            "createdAt",
            "RFC 3339",
        ),
        (
            json!({"title": "t", "created_at": 1_714_564_800}),
            "createdAt",
            "RFC 3339",
        ),
        (
            json!({"title": "t", "updatedAt": "2024-05-01"}),
            "updatedAt",
            "RFC 3339",
        ),
        (
            json!({"title": "t", "updated_at": "2024-05-01T12:00:00"}),
            "updatedAt",
            "offset",
        ),
        // Feedback.
        (json!({"title": "t", "feedback": "x"}), "feedback", "object"),
        (json!({"title": "t", "feedback": [1]}), "feedback", "object"),
        (json!({"title": "t", "feedback": 3}), "feedback", "object"),
        (
            json!({"title": "t", "feedback": {"success": -1}}),
            "feedback.success",
            "non-negative integer",
        ),
        (
            json!({"title": "t", "feedback": {"success": 3.0}}),
            "feedback.success",
            "non-negative integer",
        ),
        (
            json!({"title": "t", "feedback": {"partial": 1.5}}),
            "feedback.partial",
            "non-negative integer",
        ),
        (
            json!({"title": "t", "feedback": {"failure": "3"}}),
            "feedback.failure",
            "non-negative integer",
        ),
        (
            json!({"title": "t", "feedback": {"outdated": true}}),
            "feedback.outdated",
            "non-negative integer",
        ),
        (
            json!({"title": "t", "feedback": {"not_applicable": -2}}),
            "feedback.notApplicable",
            "non-negative",
        ),
        (
            json!({"title": "t", "feedback": {"helpful": 1}}),
            "feedback.helpful",
            "unknown feedback key",
        ),
        (
            json!({"title": "t", "feedback": {"Success": 1}}),
            "feedback.Success",
            "unknown feedback key",
        ),
        // pinned, supersedes.
        (
            json!({"title": "t", "pinned": "true"}),
            "pinned",
            "true or false",
        ),
        (
            json!({"title": "t", "pinned": 1}),
            "pinned",
            "true or false",
        ),
        (
            json!({"title": "t", "supersedes": 5}),
            "supersedes",
            "must be a string",
        ),
        (
            json!({"title": "t", "supersedes": ""}),
            "supersedes",
            "empty",
        ),
        (
            json!({"title": "t", "supersedes": "a\tb"}),
            "supersedes",
            "control",
        ),
    ];
    for (input, field, reason) in cases {
        let err = Record::from_json(&input).expect_err(&shorten_for_message(&input));
        assert_eq!(err.field, field, "{err}");
        assert!(err.reason.contains(reason), "{err} lacks {reason:?}");
        if field != "(record)" || !err.reason.contains("no searchable text") {
            assert!(err.value.is_some(), "{err} names no value");
        }
    }
}

fn shorten_for_message(value: &Value) -> String {
    value.to_string().chars().take(120).collect()
}

#[test]
fn errors_show_the_value_shortened() {
    let err = Record::from_json(&json!({"title": "t", "salience": 1.25})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "field `salience` = 1.25: must be a number from 0 to 1"
    );
    let err = Record::from_json(&json!({"title": "t", "task": "y".repeat(70_000)})).unwrap_err();
    let value = err.value.unwrap();
    assert!(value.starts_with("\"yyyy") && value.ends_with('…') && value.chars().count() == 81);
}

#[test]
fn limits_are_inclusive_and_in_bytes_after_unescaping() {
    let exact = "é".repeat(MAX_TEXT_BYTES / 2);
    let items: Vec<String> = (0..MAX_LIST_ITEMS).map(|i| i.to_string()).collect();
    let id = "i".repeat(MAX_ID_BYTES);
    let r = record(json!({"id": id, "title": exact, "problems": [exact], "tags": items}));
    assert_eq!(r.title.as_ref().unwrap().len(), MAX_TEXT_BYTES);
    assert_eq!(r.tags.len(), MAX_LIST_ITEMS);
    // 65536 bytes of text written with six-byte escapes in the input is still 65536 bytes.
    let escaped = format!(r#"{{"title": "{}"}}"#, "\\u00e9".repeat(MAX_TEXT_BYTES / 2));
    let value: Value = serde_json::from_str(&escaped).unwrap();
    assert_eq!(record(value).title.unwrap().len(), MAX_TEXT_BYTES);
    // The record limit is on compact JSON.
    let at_limit = record_of_size(MAX_RECORD_BYTES);
    assert_eq!(
        serde_json::to_string(&at_limit).unwrap().len(),
        MAX_RECORD_BYTES
    );
    record(at_limit);
}

#[test]
fn valid_records_normalize() {
    let t = |s: &str| Some(Timestamp::parse(s).unwrap());
    // (input, expected record with id "x")
    let base = || Record::from_json(&json!({"id": "x", "title": "T"})).unwrap();
    let cases: Vec<(Value, Record)> = vec![
        (json!({"id": "x", "title": "T"}), base()),
        (
            json!({"id": "x", "title": "T", "task": null, "problems": null, "solution": null,
                   "whyItWorked": null, "failedAttempts": null, "warnings": null, "tags": null,
                   "entities": null, "projectContext": null, "applicability": null,
                   "verification": null, "confidence": null, "salience": null, "createdAt": null,
                   "updatedAt": null, "feedback": null, "memoryType": null, "decayFactor": null,
                   "pinned": null, "supersedes": null}),
            base(),
        ),
        (
            json!({"id": "x", "title": "T", "problems": "one", "tags": ["a", ""], "warnings": []}),
            Record {
                problems: vec!["one".into()],
                tags: vec!["a".into(), "".into()],
                ..base()
            },
        ),
        (
            json!({"id": "x", "title": "T", "why_it_worked": "w", "failed_attempts": "f",
                   "project_context": "p", "created_at": "2024-05-01t12:00:00z",
                   "updated_at": "2024-05-02 12:00:00-00:00", "memory_type": " Semantic ",
                   "decay_factor": 0, "feedback": {"not_applicable": 4, "success": null}}),
            Record {
                why_it_worked: Some("w".into()),
                failed_attempts: vec!["f".into()],
                project_context: Some("p".into()),
                created_at: t("2024-05-01t12:00:00z"),
                updated_at: t("2024-05-02 12:00:00-00:00"),
                memory_type: Some(" Semantic ".into()),
                decay_factor: Some(0.0),
                feedback: Feedback {
                    not_applicable: 4,
                    ..Feedback::default()
                },
                ..base()
            },
        ),
        (
            json!({"id": "x", "title": "T", "confidence": 1, "salience": 0, "decayFactor": 3.5,
                   "pinned": true, "feedback": {"success": 1, "partial": 2, "failure": 3,
                   "notApplicable": 4, "outdated": 18446744073709551615u64}}),
            Record {
                confidence: Some(1.0),
                salience: Some(0.0),
                decay_factor: Some(3.5),
                pinned: Some(true),
                feedback: Feedback {
                    success: 1,
                    partial: 2,
                    failure: 3,
                    not_applicable: 4,
                    outdated: u64::MAX,
                },
                ..base()
            },
        ),
        // supersedes naming the record itself is ignored.
        (json!({"id": "x", "title": "T", "supersedes": "x"}), base()),
        (
            json!({"id": "x", "title": "T", "supersedes": "y"}),
            Record {
                supersedes: Some("y".into()),
                ..base()
            },
        ),
        (json!({"id": "x", "title": "T", "feedback": {}}), base()),
        // Unknown fields are kept in input order, values untouched.
        (
            json!({"zeta": 1, "id": "x", "Title": "not the title", "title": "T", "alpha": {"b": null}}),
            Record {
                extra: json!({"zeta": 1, "Title": "not the title", "alpha": {"b": null}})
                    .as_object()
                    .unwrap()
                    .clone(),
                ..base()
            },
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(record(input.clone()), expected, "{input}");
    }
}

#[test]
fn extra_fields_keep_input_order() {
    let r = record(json!({"title": "T", "z": 1, "a": 2, "m": 3}));
    let keys: Vec<&str> = r.extra.keys().map(String::as_str).collect();
    assert_eq!(keys, ["z", "a", "m"]);
    let exported = r.to_json();
    let keys: Vec<&str> = exported
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["id", "title", "feedback", "z", "a", "m"]);
}

#[test]
fn derived_ids() {
    let object = json!({"title": "Fix flaky test", "tags": ["ci", "rust"], "feedback": {"success": 3},
                        "salience": 1, "zeta": "last", "Alpha": "first"});
    // Pinned against Python's json.dumps(sort_keys=True, separators=(',', ':')) + sha256.
    assert_eq!(record(object.clone()).id, "r-c37d58d281f1110e");
    // Key order does not matter; `"id": null` is the same as no id.
    let reordered = json!({"Alpha": "first", "zeta": "last", "salience": 1, "feedback": {"success": 3},
                           "tags": ["ci", "rust"], "title": "Fix flaky test", "id": null});
    assert_eq!(record(reordered).id, "r-c37d58d281f1110e");
    // The id is over the object as given: spelling and number form count.
    let camel = record(json!({"title": "t", "whyItWorked": "w"})).id;
    let snake = record(json!({"title": "t", "why_it_worked": "w"})).id;
    assert_ne!(camel, snake);
    assert_eq!(
        camel,
        derived_id(&json!({"title": "t", "whyItWorked": "w"}))
    );
    assert_eq!(
        record(json!({"title": "t", "salience": 1})).id,
        record(json!({"title": "t", "salience": 1.0})).id,
        "1 and 1.0 are one JSON number in RFC 8785"
    );
    assert_ne!(
        record(json!({"title": "t", "tags": "a"})).id,
        record(json!({"title": "t", "tags": ["a"]})).id
    );
    // A derived id can be superseded by itself: ignored.
    let own = record(json!({"title": "t"})).id;
    let r = record(json!({"title": "t", "supersedes": own}));
    assert_ne!(r.id, own);
    assert_eq!(r.supersedes.as_deref(), Some(own.as_str()));
}

#[test]
fn export_form() {
    let r = record(json!({
        "x-extra": [1, 2],
        "supersedes": "old",
        "pinned": false,
        "decay_factor": 0.1,
        "memory_type": "Procedural",
        "feedback": {"outdated": 2},
        "updated_at": "2024-05-02T00:00:00+02:00",
        "created_at": "2024-05-01 00:00:00.50Z",
        "salience": 0.75,
        "confidence": 0.5,
        "verification": "v",
        "applicability": "a",
        "project_context": "pc",
        "entities": "E",
        "tags": ["t1", "t2"],
        "warnings": "w",
        "failed_attempts": ["f"],
        "why_it_worked": "why",
        "solution": "s",
        "problems": ["p"],
        "task": "k",
        "title": "T",
        "id": "r1",
    }));
    let expected = concat!(
        r#"{"id":"r1","title":"T","task":"k","problems":["p"],"solution":"s","whyItWorked":"why","#,
        r#""failedAttempts":["f"],"warnings":["w"],"tags":["t1","t2"],"entities":["E"],"#,
        r#""projectContext":"pc","applicability":"a","verification":"v","confidence":0.5,"#,
        r#""salience":0.75,"createdAt":"2024-05-01 00:00:00.50Z","#,
        r#""updatedAt":"2024-05-02T00:00:00+02:00","#,
        r#""feedback":{"success":0,"partial":0,"failure":0,"notApplicable":0,"outdated":2},"#,
        r#""memoryType":"Procedural","decayFactor":0.1,"pinned":false,"supersedes":"old","#,
        r#""x-extra":[1,2]}"#
    );
    assert_eq!(r.to_json().to_string(), expected);
    assert_eq!(Record::from_json(&r.to_json()), Ok(r));

    let minimal = record(json!({"title": "T"}));
    assert_eq!(
        minimal.to_json(),
        json!({"id": minimal.id, "title": "T", "feedback": {"success": 0, "partial": 0,
               "failure": 0, "notApplicable": 0, "outdated": 0}})
    );
}

#[test]
fn defaults() {
    let r = record(json!({"title": "T"}));
    assert_eq!(r.salience_or_default(), 0.5);
    assert_eq!(r.decay_factor_or_default(), 0.02);
    assert!(!r.pinned_or_default());
    assert_eq!(r.memory_type_normalized(), "episodic");
    let r = record(json!({"title": "T", "salience": 0.9, "decayFactor": 0, "pinned": true}));
    assert_eq!(r.salience_or_default(), 0.9);
    assert_eq!(r.decay_factor_or_default(), 0.0);
    assert!(r.pinned_or_default());
}

#[test]
fn memory_type_is_trimmed_and_lowercased() {
    let cases: &[(Option<&str>, &str)] = &[
        (None, "episodic"),
        (Some(""), "episodic"),
        (Some("   "), "episodic"),
        (Some("Semantic"), "semantic"),
        (Some("  PROCEDURAL\n"), "procedural"),
        (Some("Épisode"), "épisode"),
    ];
    for &(given, expected) in cases {
        let r = record(json!({"title": "T", "memoryType": given}));
        assert_eq!(r.memory_type_normalized(), expected, "{given:?}");
    }
}

#[test]
fn feedback_total_saturates() {
    let cases = [
        (Feedback::default(), 0),
        (
            Feedback {
                success: 1,
                partial: 2,
                failure: 3,
                not_applicable: 4,
                outdated: 5,
            },
            15,
        ),
        (
            Feedback {
                success: u64::MAX,
                outdated: 1,
                ..Feedback::default()
            },
            u64::MAX,
        ),
    ];
    for (feedback, total) in cases {
        assert_eq!(feedback.total(), total);
    }
}

fn full_record() -> Record {
    record(json!({
        "title": "Title", "task": "Task", "problems": ["P1", "", "P2"], "solution": "Sol",
        "whyItWorked": "Why", "failedAttempts": ["F1"], "warnings": ["W1", "W2"],
        "tags": ["tag1", " "], "entities": ["Ent"], "projectContext": "Ctx",
        "applicability": "", "verification": "Ver"
    }))
}

#[test]
fn content_joins_non_empty_fields_in_spec_order() {
    assert_eq!(
        full_record().content(),
        "Title\nTask\nP1\nP2\nSol\nWhy\nF1\nW1\nW2\ntag1\n \nCtx"
    );
    assert_eq!(record(json!({"title": "Only"})).content(), "Only");
}

#[test]
fn group_values_per_group() {
    let r = full_record();
    let cases: &[(FieldGroup, &[&str])] = &[
        (FieldGroup::Tags, &["tag1", " "]),
        (FieldGroup::Title, &["Title"]),
        (FieldGroup::Problems, &["P1", "P2"]),
        (FieldGroup::Task, &["Task"]),
        (FieldGroup::Solution, &["Sol", "Why"]),
        (FieldGroup::ProjectContext, &["Ctx"]),
        (FieldGroup::Applicability, &[]),
        (FieldGroup::FailedAttempts, &["F1"]),
        (FieldGroup::Warnings, &["W1", "W2"]),
    ];
    for &(group, expected) in cases {
        assert_eq!(r.group_values(group), expected, "{group:?}");
    }
    let only_why = record(json!({"title": "T", "why_it_worked": "because"}));
    assert_eq!(only_why.group_values(FieldGroup::Solution), ["because"]);
}

fn text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 ]{0,12}",
        any::<String>().prop_map(|s| s.chars().take(20).collect()),
    ]
}

fn optional<T: std::fmt::Debug + Clone + 'static>(
    inner: impl Strategy<Value = T> + 'static,
) -> impl Strategy<Value = Option<T>> {
    proptest::option::of(inner)
}

fn list_strategy() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        text_strategy().prop_map(Value::String),
        proptest::collection::vec(text_strategy().prop_map(Value::String), 0..4)
            .prop_map(Value::Array),
    ]
}

fn timestamp_strategy() -> impl Strategy<Value = String> {
    (
        -62_167_219_200i64..253_402_300_800,
        0u32..1_000_000_000,
        prop_oneof![Just(""), Just("+05:30"), Just("-00:00"), Just("z")],
    )
        .prop_map(|(seconds, nanos, offset)| {
            let text = Timestamp::from_unix(seconds, nanos).as_str().to_owned();
            match offset {
                "" => text,
                other => format!(
                    "{}{other}",
                    text.trim_end_matches('Z').replacen('T', " ", 1)
                ),
            }
        })
}

fn record_object_strategy() -> impl Strategy<Value = Value> {
    let texts = (
        optional("[a-z0-9-]{1,10}"),
        "[a-zA-Z][a-zA-Z0-9 ]{0,10}",
        optional(text_strategy()),
        list_strategy(),
        optional(text_strategy()),
        optional(text_strategy()),
        list_strategy(),
        list_strategy(),
        list_strategy(),
        list_strategy(),
        optional(text_strategy()),
        optional(text_strategy()),
    );
    let others = (
        optional(0.0f64..=1.0),
        optional(0u8..=1),
        optional(timestamp_strategy()),
        optional(timestamp_strategy()),
        optional(proptest::array::uniform5(optional(any::<u64>()))),
        optional(text_strategy()),
        optional(0.0f64..1e6),
        optional(any::<bool>()),
        optional("[a-z0-9-]{1,10}"),
        proptest::collection::vec(("x_[a-z]{1,6}", any::<i32>()), 0..4),
        any::<bool>(),
    );
    (texts, others).prop_map(|(texts, others)| {
        let (id, title, task, problems, solution, why, failed, warnings, tags, entities, ctx, appl) =
            texts;
        let (confidence, salience, created, updated, feedback, memory, decay, pinned, supersedes, extra, snake) =
            others;
        let mut map = Map::new();
        let mut put = |camel: &str, snake_name: &str, value: Value| {
            map.insert(if snake { snake_name } else { camel }.to_owned(), value);
        };
        put("id", "id", id.map_or(Value::Null, Value::from));
        put("title", "title", Value::from(title));
        put("task", "task", task.map_or(Value::Null, Value::from));
        put("problems", "problems", problems);
        put("solution", "solution", solution.map_or(Value::Null, Value::from));
        put("whyItWorked", "why_it_worked", why.map_or(Value::Null, Value::from));
        put("failedAttempts", "failed_attempts", failed);
        put("warnings", "warnings", warnings);
        put("tags", "tags", tags);
        put("entities", "entities", entities);
        put("projectContext", "project_context", ctx.map_or(Value::Null, Value::from));
        put("applicability", "applicability", appl.map_or(Value::Null, Value::from));
        put("confidence", "confidence", confidence.map_or(Value::Null, Value::from));
        put("salience", "salience", salience.map_or(Value::Null, Value::from));
        put("createdAt", "created_at", created.map_or(Value::Null, Value::from));
        put("updatedAt", "updated_at", updated.map_or(Value::Null, Value::from));
        let feedback = feedback.map_or(Value::Null, |counts| {
            let names = ["success", "partial", "failure", if snake { "not_applicable" } else { "notApplicable" }, "outdated"];
            let mut object = Map::new();
            for (name, count) in names.into_iter().zip(counts) {
                if let Some(count) = count {
                    object.insert(name.to_owned(), Value::from(count));
                }
            }
            Value::Object(object)
        });
        put("feedback", "feedback", feedback);
        put("memoryType", "memory_type", memory.map_or(Value::Null, Value::from));
        put("decayFactor", "decay_factor", decay.map_or(Value::Null, Value::from));
        put("pinned", "pinned", pinned.map_or(Value::Null, Value::from));
        put("supersedes", "supersedes", supersedes.map_or(Value::Null, Value::from));
        for (key, value) in extra {
            map.insert(key, Value::from(value));
        }
        Value::Object(map)
    })
}

proptest! {
    #[test]
    fn export_round_trips(object in record_object_strategy()) {
        let r = Record::from_json(&object).unwrap();
        let exported = r.to_json();
        let again = Record::from_json(&exported).unwrap();
        prop_assert_eq!(&again, &r);
        prop_assert_eq!(again.to_json(), exported);
        // Through text too, as an export file would carry it.
        let text = serde_json::to_string(&r.to_json()).unwrap();
        let reparsed: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(Record::from_json(&reparsed).unwrap(), r);
    }

    #[test]
    fn from_json_owned_agrees(object in record_object_strategy()) {
        prop_assert_eq!(Record::from_json_owned(object.clone()), Record::from_json(&object));
    }

    #[test]
    fn derived_id_ignores_key_order(object in record_object_strategy()) {
        let mut map = object.as_object().unwrap().clone();
        map.shift_remove("id");
        let mut reversed = Map::new();
        for (key, value) in map.iter().rev() {
            reversed.insert(key.clone(), value.clone());
        }
        let forward = Record::from_json(&Value::Object(map)).unwrap();
        let backward = Record::from_json(&Value::Object(reversed)).unwrap();
        prop_assert_eq!(forward.id, backward.id);
    }
}
