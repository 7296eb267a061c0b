//! The JSON Schemas the MCP tools declare: what each tool takes (`inputSchema`) and what its
//! structured content holds on success (`outputSchema`).
//!
//! Input names are those of the command line's JSON forms (`--queries` lines, record files).
//! Input schemas are closed (`additionalProperties: false`): the server rejects an unknown
//! argument with `invalid_option`, as the command line rejects an unknown flag. Output schemas
//! name the keys the CLI's JSON always has and leave room for more, so that a client
//! validating structured content (as the official SDKs do) accepts every answer.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{json, Value};

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("schemas are JSON objects"),
    }
}

fn strings() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

/// `search`: a query and the options of SPEC §3–7.
pub fn search_input() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Any text, no syntax: the task you are starting, or the error message you see (paste it as is). \"\" with a filter (projectContext, tags, type) lists the matching records, newest first."
            },
            "limit": {
                "type": "integer", "minimum": 1,
                "description": "At most this many results (default 10; above 200 clamped to 200 with a notice)."
            },
            "minScore": {
                "type": "number", "minimum": 0, "maximum": 100,
                "description": "Keep results whose normalizedScore is at least this: a fraction in [0, 1] or a percentage in (1, 100]."
            },
            "projectContext": {
                "type": "string",
                "description": "Keep records whose projectContext, applicability or tags match a word of this text (e.g. the project or stack)."
            },
            "tags": {
                "type": "array", "items": {"type": "string"},
                "description": "Keep records having every one of these tags."
            },
            "type": {
                "type": "string",
                "description": "Keep records of this memoryType (e.g. episodic, semantic)."
            },
            "profile": {
                "type": "string", "enum": ["standard", "decay", "recency", "bm25f"],
                "description": "Ranking profile: standard (default; fixed field weights), decay (salience and age), recency (recent and pinned first), bm25f (term statistics)."
            },
            "includeSuperseded": {
                "type": "boolean",
                "description": "decay: keep records that a newer record supersedes."
            },
            "candidates": {
                "type": "integer", "minimum": 1,
                "description": "Keep the top N candidates before the post-steps (decay: default 200; above 500 clamped)."
            },
            "mmr": {
                "type": "boolean",
                "description": "Demote near-duplicates (default on only in decay)."
            },
            "tokenBudget": {
                "type": "integer", "minimum": 1,
                "description": "Keep results while their JSON fits in about this many tokens (4 characters each; above 16000 clamped)."
            },
            "entities": {
                "type": "array", "items": {"type": "string"},
                "description": "The query's entities (libraries, services), instead of detecting them."
            },
            "rerank": {
                "type": "string",
                "description": "Replace the score by a weighted mix of features: name=weight,… over relevance, salience, temporal, textMatch, vectorMatch."
            },
            "now": {
                "type": "string", "format": "date-time",
                "description": "Reference time (RFC 3339) instead of the clock, for reproducible answers."
            },
            "explain": {
                "type": "string",
                "description": "A record id: the answer says why it is or is not a result."
            },
            "full": {
                "type": "boolean",
                "description": "Include each result's whole record (solution, warnings, applicability, verification, feedback …)."
            },
            "backend": {
                "type": "string", "enum": ["auto", "index", "scan"],
                "description": "auto (default): the index, falling back to a scan of the stored records when it is damaged."
            }
        },
        "required": ["query"],
        "additionalProperties": false
    }))
}

/// A record (SPEC §1): some searchable text is required — a non-blank title, task, problems,
/// solution, whyItWorked, failedAttempts, warnings, tags, projectContext or applicability (the
/// schema asks for one of them to be present; the server checks it is not blank); unknown
/// fields are kept and returned by `show`.
fn record_schema() -> Value {
    let text = |description: &str| json!({"type": "string", "description": description});
    let list = |description: &str| json!({"type": "array", "items": {"type": "string"}, "description": description});
    let count = json!({"type": "integer", "minimum": 0});
    json!({
        "type": "object",
        "properties": {
            "id": text("Optional: derived from the content when absent. An existing id is replaced."),
            "title": text("One line: the problem and its fix, as someone searching would phrase it."),
            "task": text("What you were doing."),
            "problems": list("The problems met, each as seen: exact error messages, symptoms."),
            "solution": text("What fixed it, concretely."),
            "whyItWorked": text("Why the solution works: the cause."),
            "failedAttempts": list("What was tried and did not work, and why."),
            "warnings": list("Pitfalls and costs of the solution."),
            "tags": list("Short keywords: language, libraries, tools, kind of problem."),
            "entities": list("Named things: libraries, services, products."),
            "projectContext": text("The project, stack and versions."),
            "applicability": text("When this applies and when it does not."),
            "verification": text("How the fix was verified (stored, not searched)."),
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "salience": {"type": "number", "minimum": 0, "maximum": 1},
            "createdAt": text("RFC 3339 timestamp with an offset, e.g. 2026-01-31T09:30:00Z."),
            "updatedAt": text("RFC 3339 timestamp with an offset."),
            "feedback": {
                "type": "object",
                "properties": {
                    "success": count, "partial": count, "failure": count,
                    "notApplicable": count, "outdated": count
                },
                "additionalProperties": false
            },
            "memoryType": text("episodic (default), semantic, …"),
            "decayFactor": {"type": "number", "minimum": 0},
            "pinned": {"type": "boolean"},
            "supersedes": text("The id of a record this one corrects or replaces.")
        },
        "anyOf": SEARCHABLE
            .iter()
            .map(|field| json!({"required": [field]}))
            .collect::<Vec<_>>()
    })
}

/// The searchable fields: a record needs one of them non-blank.
const SEARCHABLE: [&str; 10] = [
    "title",
    "task",
    "problems",
    "solution",
    "whyItWorked",
    "failedAttempts",
    "warnings",
    "tags",
    "projectContext",
    "applicability",
];

/// `record`: one record object.
pub fn record_input() -> Arc<JsonObject> {
    let mut record = record_schema();
    record["type"] = json!(["object", "string"]);
    record["description"] = json!(
        "The experience, as a JSON object with camelCase fields (snake_case accepted), or a string holding that object. It needs some searchable text (a title, task, problems, solution, …); a title is optional."
    );
    object(json!({
        "type": "object",
        "properties": {"record": record},
        "required": ["record"],
        "additionalProperties": false
    }))
}

/// `feedback`: a record id and an outcome.
pub fn feedback_input() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The id of the record you used."},
            "outcome": {
                "type": "string",
                "enum": ["success", "partial", "failure", "not-applicable", "outdated"],
                "description": "How reusing it went."
            }
        },
        "required": ["id", "outcome"],
        "additionalProperties": false
    }))
}

/// `show`: an id or a locator.
pub fn show_input() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "properties": {
            "id": {
                "type": "string",
                "description": "The record's id, or its locator (the `locator` of a search result)."
            }
        },
        "required": ["id"],
        "additionalProperties": false
    }))
}

/// `search` answers with the JSON of `reliora search` (SPEC §7).
pub fn search_output() -> Arc<JsonObject> {
    let number = json!({"type": "number"});
    let result = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "locator": {"type": "string"},
            "title": {"type": ["string", "null"]},
            "score": number,
            "normalizedScore": number,
            "matchLevel": {"type": "string", "enum": ["strong", "moderate", "weak"]},
            "coverage": number,
            "matchedTokens": strings(),
            "supersededBy": {"type": ["string", "null"]},
            "scoreBreakdown": {"type": "object", "additionalProperties": {"type": ["number", "string", "boolean", "array", "null"]}},
            "record": {"type": "object"}
        },
        "required": [
            "id", "locator", "title", "score", "normalizedScore", "matchLevel", "coverage",
            "matchedTokens", "supersededBy", "scoreBreakdown"
        ]
    });
    let count = json!({"type": "integer", "minimum": 0});
    object(json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "tokens": strings(),
            "droppedTokens": strings(),
            "analyzer": {"type": "string", "enum": ["english", "multilingual"]},
            "profile": {"type": "string"},
            "now": {"type": "string"},
            "backend": {"type": "string", "enum": ["index", "scan"]},
            "degraded": {"type": "boolean"},
            "notices": strings(),
            "counts": {
                "type": "object",
                "properties": {
                    "candidates": count, "strong": count, "moderate": count, "weak": count,
                    "filtered": count
                },
                "required": ["candidates", "strong", "moderate", "weak", "filtered"]
            },
            "fingerprint": {"type": "string"},
            "results": {"type": "array", "items": result},
            "explain": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "status": {"type": "string"}},
                "required": ["id", "status"]
            }
        },
        "required": [
            "query", "tokens", "droppedTokens", "analyzer", "profile", "now", "backend",
            "degraded", "notices", "counts", "fingerprint", "results"
        ]
    }))
}

/// `record` answers `{"id", "locator", "replaced", "warnings"}` (SPEC §8).
pub fn record_output() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "locator": {"type": "string"},
            "replaced": {"type": "boolean"},
            "warnings": {
                "type": "array",
                "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {
                        "code": {"const": "SIMILAR_EXPERIENCE_FOUND"},
                        "id": {"type": "string"},
                        "locator": {"type": "string"},
                        "matchLevel": {"type": "string", "enum": ["strong", "moderate"]},
                        "score": {"type": "number"},
                        "title": {"type": ["string", "null"]}
                    },
                    "required": ["code", "id", "locator", "matchLevel", "score", "title"]
                }
            }
        },
        "required": ["id", "locator", "replaced", "warnings"]
    }))
}

/// `feedback` answers the id, the outcome added and the counts after adding it.
pub fn feedback_output() -> Arc<JsonObject> {
    let count = json!({"type": "integer", "minimum": 0});
    object(json!({
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "outcome": {
                "type": "string",
                "enum": ["success", "partial", "failure", "not-applicable", "outdated"]
            },
            "feedback": {
                "type": "object",
                "properties": {
                    "success": count, "partial": count, "failure": count,
                    "notApplicable": count, "outdated": count
                },
                "required": ["success", "partial", "failure", "notApplicable", "outdated"]
            }
        },
        "required": ["id", "outcome", "feedback"]
    }))
}

/// `show` answers the stored record, as `reliora show` and `export` write it.
pub fn show_output() -> Arc<JsonObject> {
    let mut record = record_schema();
    record["required"] = json!(["id", "feedback"]);
    record.as_object_mut().expect("an object").remove("anyOf");
    object(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every property an input schema names is an option the server accepts, and the other way
    /// round for the documented names.
    #[test]
    fn search_input_names_the_cli_options() {
        let schema = search_input();
        let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(
            properties,
            [
                "query",
                "limit",
                "minScore",
                "projectContext",
                "tags",
                "type",
                "profile",
                "includeSuperseded",
                "candidates",
                "mmr",
                "tokenBudget",
                "entities",
                "rerank",
                "now",
                "explain",
                "full",
                "backend"
            ]
        );
        let mut request = crate::SearchRequest::new("q");
        for name in properties.into_iter().filter(|n| *n != "query") {
            let value = match schema["properties"][name]["type"].as_str().unwrap() {
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
            let options = json!({ name: value });
            request
                .apply_json_options(options.as_object().unwrap(), &[])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn record_schema_asks_for_some_searchable_text_and_no_title() {
        let schema = record_input();
        let alternatives = schema["properties"]["record"]["anyOf"].as_array().unwrap();
        assert_eq!(alternatives.len(), SEARCHABLE.len());
        for field in SEARCHABLE {
            // Each alternative alone makes a valid record.
            let value = if matches!(field, "problems" | "failedAttempts" | "warnings" | "tags") {
                json!(["some text"])
            } else {
                json!("some text")
            };
            let record = crate::record::Record::from_json(&json!({ field: value })).unwrap();
            let shown = record.to_json();
            for key in show_output()["required"].as_array().unwrap() {
                assert!(shown.get(key.as_str().unwrap()).is_some(), "{field}: {key}");
            }
        }
    }
}
