//! The record codec: how one record is turned into bytes for the store, and back.
//!
//! This is the only module that knows the serialization crate (bincode 2, standard config:
//! little-endian, variable-length integers), so the codec can be swapped by changing it alone.
//! Decoding has a size limit, so a damaged length prefix cannot ask for unbounded memory.
//!
//! Two layouts are read. Records written since `title` became optional start with the byte
//! [`OPTIONAL_TITLE`] (0xFF, which never starts the older layout: there the first byte is the
//! bincode length of the locator, and bincode's variable-length integers never begin with
//! 0xFF), and carry the title as an option. Records without it carry a title string and decode
//! with that title, so stores and logs written before keep their meaning.

use serde::{Deserialize, Serialize};

use crate::record::{Feedback, Outcome, Record, Timestamp};

/// Upper bound on the memory one decode may allocate, and so on the encoded size of a record
/// (the store refuses to decompress more): twice the 1 MiB record limit.
pub const DECODE_LIMIT: usize = 2 << 20;

/// A record with the place it came from, as it is kept in the store.
pub(crate) use crate::record::LocatedRecord as StoredRecord;

/// The first byte of a record in the layout with an optional title.
pub const OPTIONAL_TITLE: u8 = 0xFF;

/// A decoded record; `T` is the title's type: `Option<String>`, or `String` in the older
/// layout.
#[derive(Deserialize)]
struct Wire<T> {
    locator: String,
    id: String,
    title: T,
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

/// The borrowed twin of [`Wire`]: serde encodes `&str`/`&[String]` exactly as
/// `String`/`Vec<String>`, so encoding needs no copy of the record.
#[derive(Serialize)]
struct WireRef<'a> {
    locator: &'a str,
    id: &'a str,
    title: Option<&'a str>,
    task: Option<&'a str>,
    problems: &'a [String],
    solution: Option<&'a str>,
    why_it_worked: Option<&'a str>,
    failed_attempts: &'a [String],
    warnings: &'a [String],
    tags: &'a [String],
    entities: &'a [String],
    project_context: Option<&'a str>,
    applicability: Option<&'a str>,
    verification: Option<&'a str>,
    confidence: Option<f64>,
    salience: Option<f64>,
    created_at: Option<&'a str>,
    updated_at: Option<&'a str>,
    feedback: [u64; 5],
    memory_type: Option<&'a str>,
    decay_factor: Option<f64>,
    pinned: Option<bool>,
    supersedes: Option<&'a str>,
    extra: String,
}

/// Encodes a record and its locator.
pub fn encode(r: &Record, locator: &str) -> Vec<u8> {
    let f = r.feedback;
    let wire = WireRef {
        locator,
        id: &r.id,
        title: r.title.as_deref(),
        task: r.task.as_deref(),
        problems: &r.problems,
        solution: r.solution.as_deref(),
        why_it_worked: r.why_it_worked.as_deref(),
        failed_attempts: &r.failed_attempts,
        warnings: &r.warnings,
        tags: &r.tags,
        entities: &r.entities,
        project_context: r.project_context.as_deref(),
        applicability: r.applicability.as_deref(),
        verification: r.verification.as_deref(),
        confidence: r.confidence,
        salience: r.salience,
        created_at: r.created_at.as_ref().map(|t| t.as_str()),
        updated_at: r.updated_at.as_ref().map(|t| t.as_str()),
        feedback: [
            f.success,
            f.partial,
            f.failure,
            f.not_applicable,
            f.outdated,
        ],
        memory_type: r.memory_type.as_deref(),
        decay_factor: r.decay_factor,
        pinned: r.pinned,
        supersedes: r.supersedes.as_deref(),
        extra: serde_json::to_string(&r.extra).expect("JSON values serialize"),
    };
    let mut bytes = vec![OPTIONAL_TITLE];
    bincode::serde::encode_into_std_write(&wire, &mut bytes, config())
        .expect("encoding to a Vec cannot fail");
    bytes
}

/// Decodes what [`encode`] wrote; any inconsistency is reported as a message.
pub fn decode(bytes: &[u8]) -> Result<StoredRecord, String> {
    match bytes.split_first() {
        Some((&OPTIONAL_TITLE, rest)) => decode_wire::<Option<String>>(rest, |title| title),
        _ => decode_wire::<String>(bytes, Some),
    }
}

fn decode_wire<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    title: fn(T) -> Option<String>,
) -> Result<StoredRecord, String> {
    let (wire, used): (Wire<T>, usize) = bincode::serde::decode_from_slice(bytes, config())
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
            title: title(wire.title),
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

/// One change in the record log.
#[derive(Debug, Clone, PartialEq)]
pub enum LogEntry {
    /// A record added or replaced, with its locator.
    Record(Box<StoredRecord>),
    /// One feedback outcome for a record.
    Feedback {
        /// The record's id.
        id: String,
        /// What happened.
        outcome: Outcome,
    },
    /// A record removed.
    Delete {
        /// The record's id.
        id: String,
    },
}

const TAG_RECORD: u8 = 1;
const TAG_FEEDBACK: u8 = 2;
const TAG_DELETE: u8 = 3;

/// Encodes a log entry: a tag byte, then the record (as in the store) or the id and outcome.
pub fn encode_log_entry(entry: &LogEntry) -> Vec<u8> {
    let (tag, body) = match entry {
        LogEntry::Record(stored) => (TAG_RECORD, encode(&stored.record, &stored.locator)),
        LogEntry::Feedback { id, outcome } => {
            let index = Outcome::ALL
                .iter()
                .position(|o| o == outcome)
                .expect("known") as u8;
            let body = bincode::serde::encode_to_vec((id, index), config())
                .expect("encoding to a Vec cannot fail");
            (TAG_FEEDBACK, body)
        }
        LogEntry::Delete { id } => (
            TAG_DELETE,
            bincode::serde::encode_to_vec(id, config()).expect("encoding to a Vec cannot fail"),
        ),
    };
    let mut out = Vec::with_capacity(body.len() + 1);
    out.push(tag);
    out.extend_from_slice(&body);
    out
}

/// Decodes what [`encode_log_entry`] wrote.
pub fn decode_log_entry(bytes: &[u8]) -> Result<LogEntry, String> {
    let (&tag, body) = bytes.split_first().ok_or("empty log entry")?;
    let whole = |used: usize| {
        if used == body.len() {
            Ok(())
        } else {
            Err(format!(
                "log entry decodes from {used} of {} bytes",
                body.len()
            ))
        }
    };
    match tag {
        TAG_RECORD => decode(body).map(|stored| LogEntry::Record(Box::new(stored))),
        TAG_FEEDBACK => {
            let ((id, index), used): ((String, u8), usize) =
                bincode::serde::decode_from_slice(body, config())
                    .map_err(|e| format!("feedback entry does not decode: {e}"))?;
            whole(used)?;
            let outcome = *Outcome::ALL
                .get(index as usize)
                .ok_or_else(|| format!("unknown outcome {index}"))?;
            Ok(LogEntry::Feedback { id, outcome })
        }
        TAG_DELETE => {
            let (id, used): (String, usize) = bincode::serde::decode_from_slice(body, config())
                .map_err(|e| format!("delete entry does not decode: {e}"))?;
            whole(used)?;
            Ok(LogEntry::Delete { id })
        }
        other => Err(format!("unknown log entry kind {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_every_field_and_rejects_damage() {
        let value = serde_json::json!({
            "id": "x-1", "title": "T", "task": "do", "problems": ["p1", "p2"],
            "solution": "s", "whyItWorked": "w", "failedAttempts": ["f"], "warnings": ["careful"],
            "tags": ["a", "b"], "entities": ["Tokio"], "projectContext": "ctx",
            "applicability": "when", "verification": "cargo test", "confidence": 0.5,
            "salience": 0.9, "createdAt": "2025-01-02T03:04:05.5+02:00",
            "updatedAt": "2025-01-03T00:00:00Z", "feedback": {"success": 2, "outdated": 1},
            "memoryType": "Semantic", "decayFactor": 0.01, "pinned": true, "supersedes": "x-0",
            "agent": {"name": "claude"}
        });
        let record = Record::from_json(&value).unwrap();
        let bytes = encode(&record, "f.jsonl:3");
        let stored = decode(&bytes).unwrap();
        assert_eq!(stored.record, record);
        assert_eq!(stored.locator, "f.jsonl:3");
        assert!(decode(&bytes[..bytes.len() - 1]).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        // A huge length prefix is refused by the size limit instead of allocated.
        assert!(decode(&[0xFF; 16]).is_err());
    }

    /// Records written before the title became optional (no leading 0xFF, a title string)
    /// decode with that title; untitled and blank-titled records round-trip as given.
    #[test]
    fn the_older_layout_decodes_and_titles_round_trip_as_given() {
        let record = Record::from_json(&serde_json::json!({
            "id": "old-1", "title": "written before", "tags": ["t"], "feedback": {"success": 1}
        }))
        .unwrap();
        let new_layout = encode(&record, "old.jsonl:1");
        assert_eq!(new_layout[0], OPTIONAL_TITLE);
        // The older layout is the same fields with the title as a plain string: the option's
        // tag byte (1, Some) removed from after the id.
        let (_, id_end) =
            bincode::serde::decode_from_slice::<(String, String), _>(&new_layout[1..], config())
                .unwrap();
        let mut old_layout = new_layout[1..1 + id_end].to_vec();
        assert_eq!(new_layout[1 + id_end], 1, "Some");
        old_layout.extend_from_slice(&new_layout[2 + id_end..]);
        assert_ne!(old_layout[0], OPTIONAL_TITLE);
        let decoded = decode(&old_layout).unwrap();
        assert_eq!(decoded.record, record);
        assert_eq!(decoded.locator, "old.jsonl:1");

        for title in [None, Some(""), Some("  ")] {
            let mut value = serde_json::json!({"id": "u", "problems": ["p"]});
            if let Some(title) = title {
                value["title"] = title.into();
            }
            let record = Record::from_json(&value).unwrap();
            assert_eq!(record.title.as_deref(), title);
            let decoded = decode(&encode(&record, "l")).unwrap().record;
            assert_eq!(decoded, record);
            assert_eq!(
                decoded.to_json().get("title"),
                value.get("title"),
                "{title:?}"
            );
        }
    }

    #[test]
    fn log_entries_round_trip() {
        let record = Record::from_json(&serde_json::json!({"id": "a", "title": "T"})).unwrap();
        let entries = [
            LogEntry::Record(Box::new(StoredRecord {
                record,
                locator: "g000001.log@16".into(),
            })),
            LogEntry::Feedback {
                id: "a".into(),
                outcome: Outcome::NotApplicable,
            },
            LogEntry::Delete { id: "a".into() },
        ];
        for entry in entries {
            let bytes = encode_log_entry(&entry);
            assert_eq!(decode_log_entry(&bytes).unwrap(), entry);
            assert!(decode_log_entry(&bytes[..bytes.len() - 1]).is_err());
        }
        assert!(decode_log_entry(&[9, 1, 2]).is_err());
    }
}
