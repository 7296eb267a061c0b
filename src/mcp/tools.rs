//! The four tools as plain functions: JSON arguments in, the CLI's JSON out, or an [`Error`]
//! with its SPEC code. They translate and delegate to [`Searcher`] and [`Writer`]; no search or
//! write logic lives here.

use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::index::searcher::Searcher;
use crate::index::writer::Writer;
use crate::record::input::FieldMap;
use crate::record::{parse_record_text, Outcome};
use crate::search::request::SearchRequest;

/// The index directory the tools work on.
pub(crate) struct Memory {
    pub searcher: Searcher,
    pub writer: Writer,
}

impl Memory {
    pub fn new(dir: &std::path::Path) -> Memory {
        Memory {
            searcher: Searcher::new(dir),
            writer: Writer::new(dir),
        }
    }
}

/// `search`: `{query, …options}` → the response `reliora search` prints.
pub(crate) fn search(memory: &Memory, arguments: &Map<String, Value>) -> Result<Value> {
    // Options first, in the order given, then the query (SPEC §6).
    let mut request = SearchRequest::new(String::new());
    request.apply_json_options(arguments, &["query"])?;
    request.query = match arguments.get("query") {
        Some(Value::String(query)) => query.clone(),
        None | Some(Value::Null) => return Err(Error::query(
            ErrorCode::InvalidOption,
            "search needs a \"query\" (any text; \"\" with a filter lists the records it keeps)",
        )),
        Some(other) => return Err(wrong_type("query", "a string", other)),
    };
    let response = memory.searcher.search(&request)?;
    Ok(serde_json::to_value(&response).expect("responses serialize"))
}

/// `record`: `{record}` → `{"id", "locator", "replaced", "warnings"}`.
///
/// The record is a JSON object, or a string holding one (then parsed as strictly as a record
/// file: a duplicate key is an error).
pub(crate) fn record(memory: &Memory, arguments: &Map<String, Value>) -> Result<Value> {
    only_known(arguments, &["record"], "record")?;
    let report = match arguments.get("record") {
        None | Some(Value::Null) => {
            return Err(Error::query(
                ErrorCode::InvalidOption,
                "record needs a \"record\": the experience as a JSON object, e.g. {\"record\": {\"title\": …}}",
            ))
        }
        Some(Value::String(text)) => memory
            .writer
            .record(parse_record_text(text, "record", &FieldMap::new())?)?,
        Some(value) => memory.writer.record_json(value)?,
    };
    Ok(serde_json::to_value(&report).expect("reports serialize"))
}

/// `feedback`: `{id, outcome}` → the id, the outcome and the counts after adding it.
pub(crate) fn feedback(memory: &Memory, arguments: &Map<String, Value>) -> Result<Value> {
    only_known(arguments, &["id", "outcome"], "feedback")?;
    let id = required_string(arguments, "id", "feedback")?;
    let outcome = Outcome::parse(required_string(arguments, "outcome", "feedback")?)?;
    let report = memory.writer.feedback(id, outcome)?;
    Ok(serde_json::to_value(&report).expect("reports serialize"))
}

/// `show`: `{id}`, an id or a locator → the stored record, as `reliora show` prints it.
pub(crate) fn show(memory: &Memory, arguments: &Map<String, Value>) -> Result<Value> {
    only_known(arguments, &["id"], "show")?;
    let id = required_string(arguments, "id", "show")?;
    Ok(memory.searcher.get(id)?.record.to_json())
}

/// The structured content of a tool error: the CLI's `{"error": CODE, "message": …}`.
pub(crate) fn error_json(error: &Error) -> Value {
    serde_json::json!({
        "error": error.code().as_str(),
        "message": error.to_string(),
    })
}

fn only_known(arguments: &Map<String, Value>, known: &[&str], tool: &str) -> Result<()> {
    match arguments.keys().find(|key| !known.contains(&key.as_str())) {
        None => Ok(()),
        Some(key) => Err(Error::query(
            ErrorCode::InvalidOption,
            format!(
                "{tool}: unknown argument {key:?} (expected {})",
                known
                    .iter()
                    .map(|k| format!("{k:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

fn required_string<'a>(
    arguments: &'a Map<String, Value>,
    name: &str,
    tool: &str,
) -> Result<&'a str> {
    match arguments.get(name) {
        Some(Value::String(value)) => Ok(value),
        None | Some(Value::Null) => Err(Error::query(
            ErrorCode::InvalidOption,
            format!("{tool} needs {name:?}"),
        )),
        Some(other) => Err(wrong_type(name, "a string", other)),
    }
}

/// The error for an argument of the wrong JSON type, e.g. a `query` that is not a string.
fn wrong_type(name: &str, expected: &str, value: &Value) -> Error {
    let shown: String = value.to_string().chars().take(80).collect();
    Error::query(
        ErrorCode::InvalidOption,
        format!("{name:?} must be {expected}, not {shown}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn code(result: Result<Value>) -> &'static str {
        result.unwrap_err().code().as_str()
    }

    #[test]
    fn tools_answer_with_the_cli_json_and_fail_with_spec_codes() {
        let dir = tempfile::tempdir().unwrap();
        let memory = Memory::new(dir.path());
        memory.writer.create_if_missing().unwrap();

        let empty = search(&memory, &args(json!({"query": "anything"}))).unwrap();
        assert_eq!(empty["results"], json!([]));

        let recorded = record(
            &memory,
            &args(
                json!({"record": {"id": "k8s-1", "title": "CrashLoopBackOff after config change",
                "problems": ["Back-off restarting failed container"], "tags": ["kubernetes"]}}),
            ),
        )
        .unwrap();
        assert_eq!(recorded["id"], "k8s-1");
        assert_eq!(recorded["replaced"], false);
        assert_eq!(recorded["warnings"], json!([]));

        let again = record(
            &memory,
            &args(json!({"record": r#"{"id": "k8s-1", "title": "CrashLoopBackOff after a config change"}"#})),
        )
        .unwrap();
        assert_eq!(again["replaced"], true);

        let found = search(
            &memory,
            &args(json!({"query": "CrashLoopBackOff", "limit": 1, "full": true})),
        )
        .unwrap();
        assert_eq!(found["results"][0]["id"], "k8s-1");
        assert_eq!(found["results"][0]["record"]["id"], "k8s-1");

        let counted =
            feedback(&memory, &args(json!({"id": "k8s-1", "outcome": "success"}))).unwrap();
        assert_eq!(counted["feedback"]["success"], 1);
        assert_eq!(counted["outcome"], "success");

        let shown = show(&memory, &args(json!({"id": "k8s-1"}))).unwrap();
        assert_eq!(shown["feedback"]["success"], 1);
        let locator = found["results"][0]["locator"].as_str().unwrap();
        assert_eq!(
            show(&memory, &args(json!({"id": locator}))).unwrap()["id"],
            "k8s-1"
        );

        let cases: Vec<(&str, Result<Value>)> = vec![
            (
                "invalid_limit",
                search(&memory, &args(json!({"query": "q", "limit": 0}))),
            ),
            (
                "invalid_option",
                search(&memory, &args(json!({"query": "q", "limit": "x"}))),
            ),
            (
                "invalid_tag",
                search(&memory, &args(json!({"query": "q", "tags": ["!"]}))),
            ),
            (
                "invalid_min_score",
                search(&memory, &args(json!({"query": "q", "minScore": 101}))),
            ),
            (
                "unknown_profile",
                search(&memory, &args(json!({"query": "q", "profile": "x"}))),
            ),
            (
                "invalid_option",
                search(&memory, &args(json!({"query": "q", "bogus": 1}))),
            ),
            (
                "invalid_option",
                search(&memory, &args(json!({"limit": 3}))),
            ),
            (
                "invalid_option",
                search(&memory, &args(json!({"query": 3}))),
            ),
            (
                "empty_query",
                search(&memory, &args(json!({"query": "the of"}))),
            ),
            (
                "invalid_record",
                record(&memory, &args(json!({"record": {"title": " "}}))),
            ),
            (
                "invalid_record",
                record(
                    &memory,
                    &args(json!({"record": {"title": "t", "salience": 2}})),
                ),
            ),
            (
                "invalid_record",
                record(&memory, &args(json!({"record": "{\"title\": 1"}))),
            ),
            (
                "invalid_record",
                record(&memory, &args(json!({"record": [1]}))),
            ),
            ("invalid_option", record(&memory, &args(json!({})))),
            (
                "invalid_option",
                record(&memory, &args(json!({"title": "flat"}))),
            ),
            (
                "invalid_option",
                feedback(&memory, &args(json!({"id": "k8s-1", "outcome": "great"}))),
            ),
            (
                "invalid_option",
                feedback(&memory, &args(json!({"id": "k8s-1"}))),
            ),
            (
                "invalid_option",
                feedback(&memory, &args(json!({"id": 5, "outcome": "success"}))),
            ),
            (
                "not_found",
                feedback(&memory, &args(json!({"id": "nope", "outcome": "success"}))),
            ),
            ("not_found", show(&memory, &args(json!({"id": "nope"})))),
            (
                "invalid_option",
                show(&memory, &args(json!({"locator": "x"}))),
            ),
        ];
        for (i, (expected, result)) in cases.into_iter().enumerate() {
            assert_eq!(code(result), expected, "case {i}");
        }
    }

    #[test]
    fn a_tool_error_is_the_cli_error_json() {
        let error = Error::query(ErrorCode::InvalidLimit, "--limit 0: must be at least 1");
        assert_eq!(
            error_json(&error),
            json!({"error": "invalid_limit", "message": "--limit 0: must be at least 1"})
        );
    }
}
