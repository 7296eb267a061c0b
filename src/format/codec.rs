//! The record codec: how one record is turned into bytes for the store, and back.
//!
//! This is the only module that knows the serialization crate (bincode 2, standard config:
//! little-endian, variable-length integers), so the codec can be swapped by changing it alone.
//! Decoding has a size limit, so a damaged length prefix cannot ask for unbounded memory.

use serde::{Deserialize, Serialize};

use crate::record::{Feedback, Record, Timestamp};

/// Upper bound on the memory one decode may allocate: twice the 1 MiB record limit.
const DECODE_LIMIT: usize = 2 << 20;

/// A record with the place it came from, as it is kept in the store.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRecord {
    /// The record.
    pub record: Record,
    /// Where it came from (`file:line`, or a log position).
    pub locator: String,
}

#[derive(Serialize, Deserialize)]
struct Wire {
    locator: String,
    id: String,
    title: String,
    task: Option<String>,
    problems: Vec<String>,
    solution: Option<String>,
    why_it_worked: Option<String>,
    failed_attempts: Vec<String>,
    warnings: Vec<String>,
    tags: Vec<String>,
    entities: Vec<String>,
    project_context: Option<String>,
    applicability: Option<String>,
    verification: Option<String>,
    confidence: Option<f64>,
    salience: Option<f64>,
    created_at: Option<String>,
    updated_at: Option<String>,
    feedback: [u64; 5],
    memory_type: Option<String>,
    decay_factor: Option<f64>,
    pinned: Option<bool>,
    supersedes: Option<String>,
    /// Unknown fields as compact JSON text (bincode cannot carry `serde_json::Value`).
    extra: String,
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<DECODE_LIMIT>()
}

/// Encodes a record and its locator.
pub fn encode(record: &Record, locator: &str) -> Vec<u8> {
    let r = record.clone();
    let f = r.feedback;
    let wire = Wire {
        locator: locator.to_string(),
        id: r.id,
        title: r.title,
        task: r.task,
        problems: r.problems,
        solution: r.solution,
        why_it_worked: r.why_it_worked,
        failed_attempts: r.failed_attempts,
        warnings: r.warnings,
        tags: r.tags,
        entities: r.entities,
        project_context: r.project_context,
        applicability: r.applicability,
        verification: r.verification,
        confidence: r.confidence,
        salience: r.salience,
        created_at: r.created_at.map(|t| t.as_str().to_string()),
        updated_at: r.updated_at.map(|t| t.as_str().to_string()),
        feedback: [
            f.success,
            f.partial,
            f.failure,
            f.not_applicable,
            f.outdated,
        ],
        memory_type: r.memory_type,
        decay_factor: r.decay_factor,
        pinned: r.pinned,
        supersedes: r.supersedes,
        extra: serde_json::Value::Object(r.extra).to_string(),
    };
    bincode::serde::encode_to_vec(&wire, config()).expect("encoding to a Vec cannot fail")
}

/// Decodes what [`encode`] wrote; any inconsistency is reported as a message.
pub fn decode(bytes: &[u8]) -> Result<StoredRecord, String> {
    let (wire, used): (Wire, usize) = bincode::serde::decode_from_slice(bytes, config())
        .map_err(|e| format!("record does not decode: {e}"))?;
    if used != bytes.len() {
        return Err(format!(
            "record decodes from {used} of its {} bytes",
            bytes.len()
        ));
    }
    let timestamp = |t: Option<String>| -> Result<Option<Timestamp>, String> {
        t.map(|t| Timestamp::parse(&t).map_err(|e| format!("stored timestamp {t:?}: {e}")))
            .transpose()
    };
    let extra = match serde_json::from_str(&wire.extra) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => return Err("stored unknown fields are not a JSON object".into()),
    };
    let [success, partial, failure, not_applicable, outdated] = wire.feedback;
    Ok(StoredRecord {
        locator: wire.locator,
        record: Record {
            id: wire.id,
            title: wire.title,
            task: wire.task,
            problems: wire.problems,
            solution: wire.solution,
            why_it_worked: wire.why_it_worked,
            failed_attempts: wire.failed_attempts,
            warnings: wire.warnings,
            tags: wire.tags,
            entities: wire.entities,
            project_context: wire.project_context,
            applicability: wire.applicability,
            verification: wire.verification,
            confidence: wire.confidence,
            salience: wire.salience,
            created_at: timestamp(wire.created_at)?,
            updated_at: timestamp(wire.updated_at)?,
            feedback: Feedback {
                success,
                partial,
                failure,
                not_applicable,
                outdated,
            },
            memory_type: wire.memory_type,
            decay_factor: wire.decay_factor,
            pinned: wire.pinned,
            supersedes: wire.supersedes,
            extra,
        },
    })
}
