//! The four tools as plain functions: JSON arguments in, the CLI's JSON out, or an [`Error`]
//! with its SPEC code. They translate and delegate to [`IndexReader`] and [`IndexWriter`]; no search or
//! write logic lives here.

use std::path::Path;

use rmcp::model::JsonObject;
use serde_json::{Map, Value};

use super::schema;
use crate::error::{Error, ErrorCode, Result};
use crate::handle::searcher::IndexReader;
use crate::handle::writer::IndexWriter;
use crate::record::input::FieldMap;
use crate::record::{parse_record_text, Outcome};
use crate::search::request::SearchRequest;

/// The index directory the tools work on.
pub(crate) struct Memory {
    pub searcher: IndexReader,
    pub writer: IndexWriter,
    /// The ways a message may spell the index directory (as given, absolute, canonical),
    /// longest first, to name files relative to it in tool errors.
    dir_spellings: Vec<String>,
}

impl Memory {
    pub fn new(dir: &Path) -> Memory {
        let mut dir_spellings: Vec<String> = [
            Some(dir.to_path_buf()),
            std::path::absolute(dir).ok(),
            dir.canonicalize().ok(),
        ]
        .into_iter()
        .flatten()
        .map(|path| path.display().to_string())
        .map(|path| path.trim_end_matches('/').to_string())
        .filter(|path| !path.is_empty() && path != ".")
        .collect();
        dir_spellings.sort_by_key(|path| std::cmp::Reverse(path.len()));
        dir_spellings.dedup();
        Memory {
            searcher: IndexReader::new(dir),
            writer: IndexWriter::new(dir),
            dir_spellings,
        }
    }

    /// A tool error's JSON, the CLI's `{"error": CODE, "message": …}`, with the files of the
    /// index named relative to its directory (`g000001.log`, not a machine's absolute path).
    pub fn error_json(&self, error: &Error) -> Value {
        let mut message = error.to_string();
        for dir in &self.dir_spellings {
            message = strip_dir(&message, dir);
        }
        serde_json::json!({"error": error.code().as_str(), "message": message})
    }
}

/// `message` with `dir/` removed before each file it names, and `dir` itself written `.`; a
/// longer name that merely starts like `dir` (`dir2/x`) is left alone.
fn strip_dir(message: &str, dir: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(dir) {
        let after = &rest[at + dir.len()..];
        out.push_str(&rest[..at]);
        let next = after.chars().next();
        if let Some(file) = after.strip_prefix('/') {
            rest = file;
        } else if next.is_none_or(|c| !(c.is_alphanumeric() || "._-".contains(c))) {
            out.push('.');
            rest = after;
        } else {
            out.push_str(dir);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// `search`: `{query, …options}` → the response `reliora search` prints.
pub(crate) fn search(memory: &Memory, arguments: &Map<String, Value>) -> Result<Value> {
    // Options first, in the order given, then the query (SPEC §6).
    check_arguments("search", &schema::search_input(), arguments)?;
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
    check_arguments("record", &schema::record_input(), arguments)?;
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
    check_arguments("feedback", &schema::feedback_input(), arguments)?;
    let id = required_string(arguments, "id", "feedback")?;
    let outcome = Outcome::parse(required_string(arguments, "outcome", "feedback")?)?;
    let report = memory.writer.feedback(id, outcome)?;
    Ok(serde_json::to_value(&report).expect("reports serialize"))
}

/// `show`: `{id}`, an id or a locator → the stored record, as `reliora show` prints it.
pub(crate) fn show(memory: &Memory, arguments: &Map<String, Value>) -> Result<Value> {
    check_arguments("show", &schema::show_input(), arguments)?;
    let id = required_string(arguments, "id", "show")?;
    Ok(memory.searcher.get(id)?.record.to_json())
}

/// Refuses, as `invalid_option`, any argument the tool's input schema does not declare, and
/// a declared one whose JSON type is not the one declared (`null` counts as absent) — before
/// the tool opens or reads anything. The schema is the one `tools/list` shows, so what it
/// declares is what the tool takes.
pub(crate) fn check_arguments(
    tool: &str,
    schema: &JsonObject,
    arguments: &Map<String, Value>,
) -> Result<()> {
    let properties = schema["properties"]
        .as_object()
        .expect("input schemas declare properties");
    for (key, value) in arguments {
        let Some(declared) = properties.get(key) else {
            let shown: String = key.chars().take(80).collect();
            return Err(Error::query(
                ErrorCode::InvalidOption,
                format!(
                    "{tool}: unknown argument {shown:?} (the arguments are {})",
                    properties
                        .keys()
                        .map(|k| format!("{k:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        let fits = match declared.get("type").and_then(Value::as_str) {
            _ if value.is_null() => true,
            Some("string") => value.is_string(),
            Some("integer") => value.is_i64() || value.is_u64(),
            Some("number") => value.is_number(),
            Some("boolean") => value.is_boolean(),
            Some("array") => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
            Some("object") => value.is_object(),
            _ => true,
        };
        if !fits {
            let expected = match declared["type"].as_str() {
                Some("array") => "an array of strings".to_string(),
                Some("integer") => "an integer".to_string(),
                Some(other) => format!("a {other}"),
                None => "as declared".to_string(),
            };
            return Err(wrong_type(key, &expected, value));
        }
    }
    Ok(())
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
    fn a_tool_error_is_the_cli_error_json_with_paths_relative_to_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let memory = Memory::new(dir.path());
        let error = Error::query(ErrorCode::InvalidLimit, "--limit 0: must be at least 1");
        assert_eq!(
            memory.error_json(&error),
            json!({"error": "invalid_limit", "message": "--limit 0: must be at least 1"})
        );
        let canonical = dir.path().canonicalize().unwrap();
        for spelled in [dir.path().to_path_buf(), canonical] {
            let error = Error::io(
                spelled.join("g000001.log"),
                std::io::Error::other("checksum mismatch"),
            );
            let message = memory.error_json(&error)["message"].to_string();
            assert!(message.contains("g000001.log"), "{message}");
            assert!(
                !message.contains(&*spelled.to_string_lossy()),
                "{message} names {spelled:?}"
            );
        }
    }

    #[test]
    fn strip_dir_names_files_relative_to_the_directory() {
        let cases = [
            ("/x/idx/a.store: bad", "a.store: bad"),
            ("in /x/idx: no MANIFEST", "in .: no MANIFEST"),
            ("/x/idx2/a.store and /x/idx/b", "/x/idx2/a.store and b"),
            ("nothing here", "nothing here"),
        ];
        for (message, expected) in cases {
            assert_eq!(strip_dir(message, "/x/idx"), expected, "{message}");
        }
    }

    #[test]
    fn only_declared_arguments_of_the_declared_type_are_taken() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("settings.toml"),
            "secret = \"do-not-echo\"\n",
        )
        .unwrap();
        let memory = Memory::new(&dir.path().join("index"));
        memory.writer.create_if_missing().unwrap();
        let config = dir.path().join("settings.toml");
        // Spellings `--queries` lines accept, and `config`, are not MCP arguments.
        for (name, value) in [
            ("config", json!(config.to_str().unwrap())),
            ("config", json!("/dev/zero")),
            ("tag", json!("rust")),
            ("min-score", json!(0.5)),
            ("project-context", json!("payments")),
            ("token-budget", json!(10)),
            ("include-superseded", json!(true)),
            ("entity", json!("tokio")),
        ] {
            let error = search(&memory, &args(json!({"query": "q", name: value}))).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidOption, "{name}");
            assert!(!error.to_string().contains("do-not-echo"), "{error}");
        }
        // Every declared argument works with a value of its declared type.
        let schema = schema::search_input();
        let mut all = Map::new();
        for (name, declared) in schema["properties"].as_object().unwrap() {
            let value = match declared["type"].as_str().unwrap() {
                "integer" => json!(3),
                "number" => json!(0.5),
                "boolean" => json!(true),
                "array" => json!(["rust"]),
                _ if name == "now" => json!("2026-01-01T00:00:00Z"),
                _ if name == "backend" => json!("auto"),
                _ if name == "profile" => json!("standard"),
                _ if name == "rerank" => json!("relevance=1,temporal=0.5"),
                _ => json!("payments"),
            };
            all.insert(name.clone(), value);
        }
        search(&memory, &all).unwrap();
        // Values of another type than declared.
        for wrong in [
            json!({"query": "q", "limit": "5"}),
            json!({"query": "q", "limit": 2.5}),
            json!({"query": "q", "tags": "rust"}),
            json!({"query": "q", "full": "yes"}),
            json!({"query": "q", "minScore": "0.5"}),
        ] {
            assert_eq!(
                code(search(&memory, &args(wrong.clone()))),
                "invalid_option",
                "{wrong}"
            );
        }
        // `null` is an argument not given.
        search(&memory, &args(json!({"query": "q", "limit": null}))).unwrap();
    }
}
