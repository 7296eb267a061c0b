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

/// The searchable text of a record, borrowed: its `entities`, and the parts of its content
/// that [`Record::content`] joins with `\n` (the non-empty ones, in
/// [`Record::content_parts`]' order). What the entity check (SPEC §5.4) reads, taken from a
/// record or straight from its encoding ([`decode_text`]) without building the record.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RecordText<'a> {
    pub entities: Vec<&'a str>,
    pub parts: Vec<&'a str>,
}

impl<'a> RecordText<'a> {
    /// The searchable text of `record`.
    pub fn of(record: &'a Record) -> RecordText<'a> {
        RecordText {
            entities: record.entities.iter().map(String::as_str).collect(),
            parts: record.content_parts().collect(),
        }
    }
}

/// The fields of [`Wire`] up to the last one of the content, borrowed from the encoding; `T`
/// is the title's type as in [`Wire`].
#[derive(Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
struct WireText<'a, T> {
    #[serde(borrow)]
    _locator: &'a str,
    #[serde(borrow)]
    _id: &'a str,
    title: T,
    #[serde(borrow)]
    task: Option<&'a str>,
    #[serde(borrow)]
    problems: Vec<&'a str>,
    #[serde(borrow)]
    solution: Option<&'a str>,
    #[serde(borrow)]
    why_it_worked: Option<&'a str>,
    #[serde(borrow)]
    failed_attempts: Vec<&'a str>,
    #[serde(borrow)]
    warnings: Vec<&'a str>,
    #[serde(borrow)]
    tags: Vec<&'a str>,
    #[serde(borrow)]
    entities: Vec<&'a str>,
    #[serde(borrow)]
    project_context: Option<&'a str>,
    #[serde(borrow)]
    applicability: Option<&'a str>,
}

/// The searchable text of an encoded record ([`RecordText`]), read in place: the fields after
/// the content are not read, so they are not checked here ([`decode`] checks them).
pub fn decode_text(bytes: &[u8]) -> Result<RecordText<'_>, String> {
    fn text<'a, T: Deserialize<'a>>(
        bytes: &'a [u8],
        title: fn(T) -> Option<&'a str>,
    ) -> Result<RecordText<'a>, String> {
        let (wire, _): (WireText<'a, T>, usize) =
            bincode::serde::borrow_decode_from_slice(bytes, config())
                .map_err(|e| format!("record does not decode: {e}"))?;
        let mut parts = Vec::with_capacity(
            6 + wire.problems.len()
                + wire.failed_attempts.len()
                + wire.warnings.len()
                + wire.tags.len(),
        );
        parts.extend(title(wire.title));
        parts.extend(wire.task);
        parts.extend(wire.problems);
        parts.extend(wire.solution);
        parts.extend(wire.why_it_worked);
        parts.extend(wire.failed_attempts);
        parts.extend(wire.warnings);
        parts.extend(wire.tags);
        parts.extend(wire.project_context);
        parts.extend(wire.applicability);
        parts.retain(|part| !part.is_empty());
        Ok(RecordText {
            entities: wire.entities,
            parts,
        })
    }
    match bytes.split_first() {
        Some((&OPTIONAL_TITLE, rest)) => text::<Option<&str>>(rest, |title| title),
        _ => text::<&str>(bytes, Some),
    }
}

/// The start of a stored record: what a result shows of it (locator and title) and the start
/// of its content, read without decoding the rest.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredHead {
    pub locator: String,
    /// As the whole record has it (an older layout's title is always present).
    pub title: Option<String>,
    /// The start of [`Record::content`](crate::record::Record::content): all of it when
    /// `content_complete`, else cut back to its last whitespace, so that every word it holds
    /// is whole and is a word of the whole content.
    pub content: String,
    pub content_complete: bool,
}

impl StoredHead {
    /// The head of a whole record.
    pub fn of(stored: &StoredRecord) -> StoredHead {
        StoredHead {
            locator: stored.locator.clone(),
            title: stored.record.title.clone(),
            content: stored.record.content(),
            content_complete: true,
        }
    }
}

/// The head of a record from the first bytes of its encoding, which are not all of it (a
/// whole encoding goes through [`decode`]): `None` when they end before its title does.
/// What they hold is checked as [`decode`] checks it.
pub fn decode_head(bytes: &[u8]) -> Result<Option<StoredHead>, String> {
    let (title_optional, rest) = match bytes.split_first() {
        None => return Ok(None),
        Some((&OPTIONAL_TITLE, rest)) => (true, rest),
        Some(_) => (false, bytes),
    };
    let mut wire = WirePrefix { bytes: rest };
    let Some(locator) = wire.whole_string()? else {
        return Ok(None);
    };
    if wire.whole_string()?.is_none() {
        return Ok(None); // the id
    }
    let title = if title_optional {
        match wire.option()? {
            None => return Ok(None),
            Some(false) => None,
            Some(true) => match wire.whole_string()? {
                Some(title) => Some(title),
                None => return Ok(None),
            },
        }
    } else {
        match wire.whole_string()? {
            Some(title) => Some(title),
            None => return Ok(None),
        }
    };
    let mut head = StoredHead {
        locator,
        title,
        content: String::new(),
        content_complete: false,
    };
    if let Some(title) = &head.title {
        push_part(&mut head.content, title);
    }
    // The content's fields in the order of the encoding (and of `Record::content`), entities
    // (not content) between tags and the project context.
    use ContentField::{List, Optional, Skipped};
    let fields = [
        Optional, // task
        List,     // problems
        Optional, // solution
        Optional, // why_it_worked
        List,     // failed_attempts
        List,     // warnings
        List,     // tags
        Skipped,  // entities
        Optional, // project_context
        Optional, // applicability
    ];
    for field in fields {
        let whole = match field {
            Optional => match wire.option()? {
                None => false,
                Some(false) => true,
                Some(true) => wire.content_string(&mut head.content, true)?,
            },
            List | Skipped => match wire.varint()? {
                None => false,
                Some(items) => {
                    let mut whole = true;
                    for _ in 0..items {
                        whole = wire.content_string(&mut head.content, field == List)?;
                        if !whole {
                            break;
                        }
                    }
                    whole
                }
            },
        };
        if !whole {
            return Ok(Some(head));
        }
    }
    head.content_complete = true;
    Ok(Some(head))
}

/// How [`decode_head`] reads a field of the encoding.
#[derive(Clone, Copy, PartialEq)]
enum ContentField {
    Optional,
    List,
    Skipped,
}

/// Adds a non-empty part to a content as [`Record::content`](crate::record::Record::content)
/// joins them.
fn push_part(content: &mut String, part: &str) {
    if !part.is_empty() {
        if !content.is_empty() {
            content.push('\n');
        }
        content.push_str(part);
    }
}

/// The first bytes of a bincode encoding (standard configuration), read as far as they go.
struct WirePrefix<'a> {
    bytes: &'a [u8],
}

impl<'a> WirePrefix<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (taken, rest) = self.bytes.split_at_checked(n)?;
        self.bytes = rest;
        Some(taken)
    }

    /// An unsigned variable-length integer, `None` when the bytes end in it.
    fn varint(&mut self) -> Result<Option<u64>, String> {
        let Some(&[first]) = self.take(1) else {
            return Ok(None);
        };
        let width = match first {
            0..=250 => return Ok(Some(u64::from(first))),
            251 => 2,
            252 => 4,
            253 => 8,
            other => return Err(format!("record does not decode: integer tag {other}")),
        };
        Ok(self.take(width).map(|b| {
            let mut le = [0u8; 8];
            le[..width].copy_from_slice(b);
            u64::from_le_bytes(le)
        }))
    }

    /// An option's tag: whether it holds a value.
    fn option(&mut self) -> Result<Option<bool>, String> {
        match self.take(1) {
            None => Ok(None),
            Some([0]) => Ok(Some(false)),
            Some([1]) => Ok(Some(true)),
            Some(other) => Err(format!("record does not decode: option tag {}", other[0])),
        }
    }

    /// A string, `None` unless it is whole.
    fn whole_string(&mut self) -> Result<Option<String>, String> {
        let Some(len) = self.varint()? else {
            return Ok(None);
        };
        if len > DECODE_LIMIT as u64 {
            return Err(format!("record does not decode: a string of {len} bytes"));
        }
        match self.take(len as usize) {
            None => Ok(None),
            Some(bytes) => std::str::from_utf8(bytes)
                .map(str::to_string)
                .map(Some)
                .map_err(|e| format!("record does not decode: {e}")),
        }
    }

    /// A string of the content, added to `content` (when `shown`) as far as it goes: whether
    /// it was whole. A string cut short leaves `content` cut back to its last whitespace.
    fn content_string(&mut self, content: &mut String, shown: bool) -> Result<bool, String> {
        let Some(len) = self.varint()? else {
            return Ok(false);
        };
        if len > DECODE_LIMIT as u64 {
            return Err(format!("record does not decode: a string of {len} bytes"));
        }
        let (bytes, whole) = match self.take(len as usize) {
            Some(bytes) => (bytes, true),
            None => (std::mem::take(&mut self.bytes), false),
        };
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            // A character the bytes end within.
            Err(e) if !whole && e.error_len().is_none() => {
                std::str::from_utf8(&bytes[..e.valid_up_to()]).expect("valid up to there")
            }
            Err(e) => return Err(format!("record does not decode: {e}")),
        };
        if !shown || text.is_empty() {
            return Ok(whole);
        }
        push_part(content, text);
        if !whole {
            let end = content
                .char_indices()
                .rev()
                .find(|(_, c)| c.is_whitespace())
                .map_or(0, |(at, _)| at);
            content.truncate(end);
        }
        Ok(whole)
    }
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
pub(crate) mod tests {
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

    /// Words that lowercase, collapse and cut in every way MMR's prefix can tell apart:
    /// several widths of UTF-8, Unicode whitespace, a final sigma, runs past 250 bytes (a
    /// length of three bytes).
    fn text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            "[a-zA-Z]{1,9}",
            Just(" ".to_string()),
            Just("\n".to_string()),
            Just("\u{3000}".to_string()),
            Just("ΟΔΟΣ".to_string()),
            Just("İé".to_string()),
            Just("日本語".to_string()),
            Just("🦀".to_string()),
            "[a-z ]{240,320}",
        ];
        prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
    }

    /// Records of every field drawn from [`text`], and whether to encode them in the older
    /// layout.
    pub(crate) fn record_strategy() -> impl proptest::strategy::Strategy<Value = (Record, bool)> {
        use proptest::prelude::*;
        let optional = || proptest::option::of(text());
        let list = || prop::collection::vec(text(), 0..3);
        (
            (optional(), optional(), list(), optional(), optional()),
            (list(), list(), list(), list(), optional(), optional()),
            any::<bool>(),
        )
            .prop_map(
                |(
                    (title, task, problems, solution, why_it_worked),
                    (failed_attempts, warnings, tags, entities, project_context, applicability),
                    older,
                )| {
                    let mut record =
                        Record::from_json(&serde_json::json!({"id": "head-1", "task": "t"}))
                            .unwrap();
                    // The older layout always has a title.
                    record.title = if older {
                        Some(title.unwrap_or_default())
                    } else {
                        title
                    };
                    record.task = task;
                    record.problems = problems;
                    record.solution = solution;
                    record.why_it_worked = why_it_worked;
                    record.failed_attempts = failed_attempts;
                    record.warnings = warnings;
                    record.tags = tags;
                    record.entities = entities;
                    record.project_context = project_context;
                    record.applicability = applicability;
                    (record, older)
                },
            )
    }

    /// The encoding in the layout written before the title became optional.
    pub(crate) fn older_layout(bytes: &[u8]) -> Vec<u8> {
        let (_, id_end) =
            bincode::serde::decode_from_slice::<(String, String), _>(&bytes[1..], config())
                .unwrap();
        let mut old = bytes[1..1 + id_end].to_vec();
        old.extend_from_slice(&bytes[2 + id_end..]);
        old
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

        /// Every prefix of a record's encoding gives its head or nothing: the locator and
        /// title whole, the content a start of the whole content ending between two words (or
        /// all of it, said so). (`search::mmr`'s tests read MMR's prefix from these heads.)
        #[test]
        fn every_prefix_of_a_record_gives_its_head_or_nothing((record, older) in record_strategy()) {
            let mut bytes = encode(&record, "records.jsonl:17");
            if older {
                bytes = older_layout(&bytes);
            }
            let stored = decode(&bytes).unwrap();
            proptest::prop_assert_eq!(&stored.record, &record);
            let content = record.content();
            let whole = StoredHead::of(&stored);
            let mut title_end = None;
            for end in 0..bytes.len() {
                let Some(head) = decode_head(&bytes[..end]).unwrap() else {
                    proptest::prop_assert!(title_end.is_none(), "no head after one at {:?}", title_end);
                    continue;
                };
                title_end.get_or_insert(end);
                proptest::prop_assert_eq!(&head.locator, &whole.locator);
                proptest::prop_assert_eq!(&head.title, &whole.title);
                proptest::prop_assert!(content.starts_with(&head.content));
                if head.content_complete {
                    proptest::prop_assert_eq!(&head.content, &content);
                } else {
                    let next = content[head.content.len()..].chars().next();
                    proptest::prop_assert!(
                        head.content.is_empty() || next.is_none_or(char::is_whitespace),
                        "{:?} ends inside a word of {:?}", head.content, content
                    );
                }
            }
            // A head is given from the end of the title on, and at the end the whole content.
            proptest::prop_assert!(title_end.is_some());
            let last = decode_head(&bytes[..bytes.len() - 1]).unwrap().unwrap();
            proptest::prop_assert!(last.content_complete);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

        /// The text read in place is the whole record's, in both layouts: its entities and its
        /// content's parts in order; an encoding cut inside it is refused.
        #[test]
        fn the_text_read_in_place_is_the_records((record, older) in record_strategy()) {
            let mut bytes = encode(&record, "records.jsonl:17");
            if older {
                bytes = older_layout(&bytes);
            }
            let text = decode_text(&bytes).unwrap();
            proptest::prop_assert_eq!(&text, &RecordText::of(&record));
            proptest::prop_assert_eq!(text.parts.join("\n"), record.content());
            let content_end = bytes.len() - 16;
            proptest::prop_assert!(decode_text(&bytes[..content_end / 2]).is_err());
        }
    }

    #[test]
    fn a_damaged_head_is_refused() {
        let record = Record::from_json(&serde_json::json!({
            "id": "d", "title": "T", "task": "a task"
        }))
        .unwrap();
        let bytes = encode(&record, "l");
        // The option tag of the task (after the title) set to neither 0 nor 1.
        let mut damaged = bytes.clone();
        let at = bytes.len() - bytes.iter().rev().position(|&b| b == b'T').unwrap();
        damaged[at] = 7;
        assert!(decode_head(&damaged[..at + 3]).is_err());
        // A length past the decode limit, and a string that is not UTF-8.
        assert!(decode_head(&[OPTIONAL_TITLE, 253, 0, 0, 0, 0, 1, 0, 0, 0]).is_err());
        assert!(decode_head(&[OPTIONAL_TITLE, 2, 0xC3, 0x28, 1]).is_err());
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
