//! SPEC §1 validation of one input object, and the export form of a record.
//!
//! Validation walks the object once, in input order, moving values into the [`Record`]; the
//! first problem found is the error. Checks before the walk: the object's size as compact JSON
//! (at most [`MAX_RECORD_BYTES`]). Checks after it: the record holds some searchable text (SPEC §1), `supersedes` naming the
//! record itself is dropped.

use super::canonical::derived_id_skipping_id;
use super::{
    Feedback, Record, Timestamp, MAX_ID_BYTES, MAX_LIST_ITEMS, MAX_RECORD_BYTES, MAX_TEXT_BYTES,
};
use crate::error::RecordError;
use serde_json::{Map, Value};

/// The known top-level fields of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Id,
    Title,
    Task,
    Problems,
    Solution,
    WhyItWorked,
    FailedAttempts,
    Warnings,
    Tags,
    Entities,
    ProjectContext,
    Applicability,
    Verification,
    Confidence,
    Salience,
    CreatedAt,
    UpdatedAt,
    Feedback,
    MemoryType,
    DecayFactor,
    Pinned,
    Supersedes,
}

const FIELD_COUNT: usize = 22;

impl Field {
    /// The field of a key in either spelling, and whether the key is the snake_case one (for
    /// names that have two spellings).
    fn lookup(key: &str) -> Option<(Field, bool)> {
        let found = match key {
            "id" => (Field::Id, false),
            "title" => (Field::Title, false),
            "task" => (Field::Task, false),
            "problems" => (Field::Problems, false),
            "solution" => (Field::Solution, false),
            "whyItWorked" => (Field::WhyItWorked, false),
            "why_it_worked" => (Field::WhyItWorked, true),
            "failedAttempts" => (Field::FailedAttempts, false),
            "failed_attempts" => (Field::FailedAttempts, true),
            "warnings" => (Field::Warnings, false),
            "tags" => (Field::Tags, false),
            "entities" => (Field::Entities, false),
            "projectContext" => (Field::ProjectContext, false),
            "project_context" => (Field::ProjectContext, true),
            "applicability" => (Field::Applicability, false),
            "verification" => (Field::Verification, false),
            "confidence" => (Field::Confidence, false),
            "salience" => (Field::Salience, false),
            "createdAt" => (Field::CreatedAt, false),
            "created_at" => (Field::CreatedAt, true),
            "updatedAt" => (Field::UpdatedAt, false),
            "updated_at" => (Field::UpdatedAt, true),
            "feedback" => (Field::Feedback, false),
            "memoryType" => (Field::MemoryType, false),
            "memory_type" => (Field::MemoryType, true),
            "decayFactor" => (Field::DecayFactor, false),
            "decay_factor" => (Field::DecayFactor, true),
            "pinned" => (Field::Pinned, false),
            "supersedes" => (Field::Supersedes, false),
            _ => return None,
        };
        Some(found)
    }

    /// The camelCase name, used in errors and in the export form.
    fn name(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Title => "title",
            Field::Task => "task",
            Field::Problems => "problems",
            Field::Solution => "solution",
            Field::WhyItWorked => "whyItWorked",
            Field::FailedAttempts => "failedAttempts",
            Field::Warnings => "warnings",
            Field::Tags => "tags",
            Field::Entities => "entities",
            Field::ProjectContext => "projectContext",
            Field::Applicability => "applicability",
            Field::Verification => "verification",
            Field::Confidence => "confidence",
            Field::Salience => "salience",
            Field::CreatedAt => "createdAt",
            Field::UpdatedAt => "updatedAt",
            Field::Feedback => "feedback",
            Field::MemoryType => "memoryType",
            Field::DecayFactor => "decayFactor",
            Field::Pinned => "pinned",
            Field::Supersedes => "supersedes",
        }
    }
}

/// Check an id (`id`, or the target of `supersedes`): 1 to 256 bytes, no control characters.
/// The error says what is wrong.
///
/// # Example
///
/// ```
/// use reliora::record::validate_id;
///
/// assert!(validate_id("r-0123456789abcdef").is_ok());
/// assert!(validate_id("").is_err());
/// assert!(validate_id("a\tb").is_err());
/// ```
pub fn validate_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("must not be empty".to_owned());
    }
    if id.len() > MAX_ID_BYTES {
        return Err(format!(
            "is {} bytes, more than the limit of {MAX_ID_BYTES}",
            id.len()
        ));
    }
    if let Some(control) = id.chars().find(|c| c.is_control()) {
        return Err(format!(
            "must not contain control characters (found U+{:04X})",
            u32::from(control)
        ));
    }
    Ok(())
}

/// The longest preview of an offending value in an error, in characters.
const PREVIEW_CHARS: usize = 80;

/// The offending value as compact JSON, shortened to [`PREVIEW_CHARS`] characters plus `…`.
pub(crate) fn preview(value: &Value) -> Option<String> {
    Some(shorten(value.to_string()))
}

fn shorten(text: String) -> String {
    match text.char_indices().nth(PREVIEW_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The error for a top-level value that is not an object.
pub(crate) fn not_an_object(value: &Value) -> RecordError {
    RecordError::new(
        "(record)",
        preview(value),
        format!("a record must be a JSON object, not {}", kind(value)),
    )
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn wrong_type(field: &str, value: &Value, expected: &str) -> RecordError {
    RecordError::new(
        field,
        preview(value),
        format!("must be {expected}, not {}", kind(value)),
    )
}

/// Counts the bytes written through it.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The size of `map` as compact JSON in UTF-8.
fn compact_size(map: &Map<String, Value>) -> usize {
    let mut counter = ByteCounter(0);
    // Writing to a counter cannot fail, and a `Map` always serializes.
    let _ = serde_json::to_writer(&mut counter, map);
    counter.0
}

/// How many times longer than its JSON source text the compact JSON of a value can be.
///
/// Compact JSON drops whitespace and never writes a string or key longer than any valid
/// source spelling of it (escapes in the source are at least as long as serde_json's). Only
/// numbers can grow: `1e15` (4 bytes) is written `1000000000000000.0` (18 bytes), and `-0`
/// becomes `-0.0`; no number grows by more than 4.5 times.
const MAX_COMPACT_GROWTH: usize = 5;

/// Validate an input object; see [`Record::from_json`].
pub(crate) fn record_from_object(map: Map<String, Value>) -> Result<Record, RecordError> {
    record_from_parsed_object(map, None)
}

/// An upper bound of the compact JSON size of an object parsed from `source_len` bytes of
/// JSON text whose keys were then renamed, adding at most `renamed_growth` bytes.
pub(crate) fn compact_size_bound(source_len: usize, renamed_growth: usize) -> usize {
    source_len
        .saturating_mul(MAX_COMPACT_GROWTH)
        .saturating_add(renamed_growth)
}

/// [`record_from_object`] for an object whose compact JSON is known to be at most
/// `size_bound` bytes (see [`compact_size_bound`]): when that is within [`MAX_RECORD_BYTES`],
/// the size is not measured.
///
/// Longer than the rest of the crate's functions on purpose: one arm per field of SPEC §1, read
/// top to bottom as the record's table; split, the table would be in pieces.
pub(crate) fn record_from_parsed_object(
    map: Map<String, Value>,
    size_bound: Option<usize>,
) -> Result<Record, RecordError> {
    let surely_small = size_bound.is_some_and(|bound| bound <= MAX_RECORD_BYTES);
    let size = if surely_small { 0 } else { compact_size(&map) };
    if size > MAX_RECORD_BYTES {
        return Err(RecordError::new(
            "(record)",
            preview(&Value::Object(map)),
            format!("the record is {size} bytes as compact JSON, more than the limit of {MAX_RECORD_BYTES}"),
        ));
    }
    let derived_id = match map.get("id") {
        None | Some(Value::Null) => Some(derived_id_skipping_id(&map)),
        Some(_) => None,
    };

    let mut spelled: [Option<bool>; FIELD_COUNT] = [None; FIELD_COUNT];
    let mut id = None;
    let mut record = Record {
        id: String::new(),
        title: None,
        task: None,
        problems: Vec::new(),
        solution: None,
        why_it_worked: None,
        failed_attempts: Vec::new(),
        warnings: Vec::new(),
        tags: Vec::new(),
        entities: Vec::new(),
        project_context: None,
        applicability: None,
        verification: None,
        confidence: None,
        salience: None,
        created_at: None,
        updated_at: None,
        feedback: Feedback::default(),
        memory_type: None,
        decay_factor: None,
        pinned: None,
        supersedes: None,
        extra: Map::new(),
    };

    for (key, value) in map {
        let Some((field, snake)) = Field::lookup(&key) else {
            record.extra.insert(key, value);
            continue;
        };
        if spelled[field as usize].replace(snake).is_some() {
            // Keys are unique, so the other spelling was seen before.
            let (first, second) = if snake {
                (field.name(), key.as_str())
            } else {
                (key.as_str(), field.name())
            };
            return Err(RecordError::new(
                field.name(),
                preview(&value),
                format!("both `{first}` and `{second}` are given; give one spelling"),
            ));
        }
        let name = field.name();
        match field {
            Field::Id => id = id_value(name, value)?,
            Field::Title => record.title = text(name, value)?,
            Field::Task => record.task = text(name, value)?,
            Field::Problems => record.problems = list(name, value)?,
            Field::Solution => record.solution = text(name, value)?,
            Field::WhyItWorked => record.why_it_worked = text(name, value)?,
            Field::FailedAttempts => record.failed_attempts = list(name, value)?,
            Field::Warnings => record.warnings = list(name, value)?,
            Field::Tags => record.tags = list(name, value)?,
            Field::Entities => record.entities = list(name, value)?,
            Field::ProjectContext => record.project_context = text(name, value)?,
            Field::Applicability => record.applicability = text(name, value)?,
            Field::Verification => record.verification = text(name, value)?,
            Field::Confidence => record.confidence = number(name, &value, Some(1.0))?,
            Field::Salience => record.salience = number(name, &value, Some(1.0))?,
            Field::CreatedAt => record.created_at = timestamp(name, &value)?,
            Field::UpdatedAt => record.updated_at = timestamp(name, &value)?,
            Field::Feedback => record.feedback = feedback(value)?,
            Field::MemoryType => record.memory_type = text(name, value)?,
            Field::DecayFactor => record.decay_factor = number(name, &value, None)?,
            Field::Pinned => {
                record.pinned = match value {
                    Value::Null => None,
                    Value::Bool(pinned) => Some(pinned),
                    other => return Err(wrong_type(name, &other, "true or false")),
                }
            }
            Field::Supersedes => record.supersedes = id_value(name, value)?,
        }
    }

    if !record.has_searchable_text() {
        return Err(RecordError::new(
            "(record)",
            None,
            "holds no searchable text: give a non-blank title, task, problems, solution, \
             whyItWorked, failedAttempts, warnings, tags, projectContext or applicability",
        ));
    }
    // `derived_id` is computed exactly when `id` is absent or null, so one of the two is set.
    record.id = id
        .or(derived_id)
        .ok_or_else(|| RecordError::new("id", None, "is missing"))?;
    if record.supersedes.as_deref() == Some(record.id.as_str()) {
        record.supersedes = None;
    }
    Ok(record)
}

fn check_text_size(field: &str, text: &str, item: Option<usize>) -> Result<(), RecordError> {
    if text.len() <= MAX_TEXT_BYTES {
        return Ok(());
    }
    let what = match item {
        Some(index) => format!("item {index}"),
        None => "the text".to_owned(),
    };
    Err(RecordError::new(
        field,
        Some(shorten(Value::from(text).to_string())),
        format!(
            "{what} is {} bytes, more than the limit of {MAX_TEXT_BYTES}",
            text.len()
        ),
    ))
}

fn text(field: &str, value: Value) -> Result<Option<String>, RecordError> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => {
            check_text_size(field, &text, None)?;
            Ok(Some(text))
        }
        other => Err(wrong_type(field, &other, "a string")),
    }
}

fn id_value(field: &str, value: Value) -> Result<Option<String>, RecordError> {
    match value {
        Value::Null => Ok(None),
        Value::String(id) => match validate_id(&id) {
            Ok(()) => Ok(Some(id)),
            Err(reason) => Err(RecordError::new(field, preview(&Value::String(id)), reason)),
        },
        other => Err(wrong_type(field, &other, "a string")),
    }
}

fn list(field: &str, value: Value) -> Result<Vec<String>, RecordError> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::String(item) => {
            check_text_size(field, &item, None)?;
            Ok(vec![item])
        }
        Value::Array(items) => {
            if items.len() > MAX_LIST_ITEMS {
                return Err(RecordError::new(
                    field,
                    Some(shorten(Value::Array(items.clone()).to_string())),
                    format!(
                        "has {} items, more than the limit of {MAX_LIST_ITEMS}",
                        items.len()
                    ),
                ));
            }
            let mut strings = Vec::with_capacity(items.len());
            for (index, item) in items.into_iter().enumerate() {
                match item {
                    Value::String(text) => {
                        check_text_size(field, &text, Some(index))?;
                        strings.push(text);
                    }
                    other => {
                        return Err(RecordError::new(
                            field,
                            preview(&other),
                            format!("item {index} must be a string, not {}", kind(&other)),
                        ))
                    }
                }
            }
            Ok(strings)
        }
        other => Err(wrong_type(field, &other, "a string or a list of strings")),
    }
}

/// A number ≥ 0, and ≤ `max` when given.
fn number(field: &str, value: &Value, max: Option<f64>) -> Result<Option<f64>, RecordError> {
    let expected = match max {
        Some(max) => format!("a number from 0 to {max}"),
        None => "a number ≥ 0".to_owned(),
    };
    match value {
        Value::Null => Ok(None),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x >= 0.0 && max.is_none_or(|max| x <= max) => Ok(Some(x)),
            _ => Err(RecordError::new(
                field,
                preview(value),
                format!("must be {expected}"),
            )),
        },
        other => Err(wrong_type(field, other, &expected)),
    }
}

fn timestamp(field: &str, value: &Value) -> Result<Option<Timestamp>, RecordError> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => Timestamp::parse(text).map(Some).map_err(|reason| {
            RecordError::new(
                field,
                preview(value),
                format!("must be an RFC 3339 timestamp with an offset: {reason}"),
            )
        }),
        other => Err(wrong_type(field, other, "an RFC 3339 timestamp string")),
    }
}

fn feedback(value: Value) -> Result<Feedback, RecordError> {
    let map = match value {
        Value::Null => return Ok(Feedback::default()),
        Value::Object(map) => map,
        other => return Err(wrong_type("feedback", &other, "an object of counts")),
    };
    let mut feedback = Feedback::default();
    let mut spelled: [Option<&str>; 5] = [None; 5];
    for (key, value) in &map {
        let (slot, name) = match key.as_str() {
            "success" => (0, "success"),
            "partial" => (1, "partial"),
            "failure" => (2, "failure"),
            "notApplicable" | "not_applicable" => (3, "notApplicable"),
            "outdated" => (4, "outdated"),
            _ => {
                return Err(RecordError::new(
                    format!("feedback.{key}"),
                    preview(value),
                    "unknown feedback key; the keys are success, partial, failure, \
                     notApplicable and outdated",
                ))
            }
        };
        let field = format!("feedback.{name}");
        if let Some(other) = spelled[slot].replace(key) {
            return Err(RecordError::new(
                field,
                preview(value),
                format!("both `{other}` and `{key}` are given; give one spelling"),
            ));
        }
        let count = match value {
            Value::Null => 0,
            Value::Number(n) => n.as_u64().ok_or_else(|| {
                RecordError::new(
                    field.as_str(),
                    preview(value),
                    "must be a non-negative integer",
                )
            })?,
            other => return Err(wrong_type(&field, other, "a non-negative integer")),
        };
        match slot {
            0 => feedback.success = count,
            1 => feedback.partial = count,
            2 => feedback.failure = count,
            3 => feedback.not_applicable = count,
            _ => feedback.outdated = count,
        }
    }
    Ok(feedback)
}

/// The export form; see [`Record::to_json`].
pub(crate) fn record_to_json(record: &Record) -> Value {
    fn text(map: &mut Map<String, Value>, field: Field, value: &Option<String>) {
        if let Some(value) = value {
            map.insert(field.name().to_owned(), Value::String(value.clone()));
        }
    }
    fn list(map: &mut Map<String, Value>, field: Field, values: &[String]) {
        if !values.is_empty() {
            let items = values.iter().cloned().map(Value::String).collect();
            map.insert(field.name().to_owned(), Value::Array(items));
        }
    }
    fn number(map: &mut Map<String, Value>, field: Field, value: Option<f64>) {
        if let Some(value) = value {
            map.insert(field.name().to_owned(), Value::from(value));
        }
    }
    fn timestamp(map: &mut Map<String, Value>, field: Field, value: &Option<Timestamp>) {
        if let Some(value) = value {
            map.insert(field.name().to_owned(), Value::from(value.as_str()));
        }
    }

    let mut map = Map::new();
    map.insert("id".to_owned(), Value::from(record.id.as_str()));
    text(&mut map, Field::Title, &record.title);
    text(&mut map, Field::Task, &record.task);
    list(&mut map, Field::Problems, &record.problems);
    text(&mut map, Field::Solution, &record.solution);
    text(&mut map, Field::WhyItWorked, &record.why_it_worked);
    list(&mut map, Field::FailedAttempts, &record.failed_attempts);
    list(&mut map, Field::Warnings, &record.warnings);
    list(&mut map, Field::Tags, &record.tags);
    list(&mut map, Field::Entities, &record.entities);
    text(&mut map, Field::ProjectContext, &record.project_context);
    text(&mut map, Field::Applicability, &record.applicability);
    text(&mut map, Field::Verification, &record.verification);
    number(&mut map, Field::Confidence, record.confidence);
    number(&mut map, Field::Salience, record.salience);
    timestamp(&mut map, Field::CreatedAt, &record.created_at);
    timestamp(&mut map, Field::UpdatedAt, &record.updated_at);
    let feedback = &record.feedback;
    let mut counts = Map::new();
    counts.insert("success".to_owned(), feedback.success.into());
    counts.insert("partial".to_owned(), feedback.partial.into());
    counts.insert("failure".to_owned(), feedback.failure.into());
    counts.insert("notApplicable".to_owned(), feedback.not_applicable.into());
    counts.insert("outdated".to_owned(), feedback.outdated.into());
    map.insert("feedback".to_owned(), Value::Object(counts));
    text(&mut map, Field::MemoryType, &record.memory_type);
    number(&mut map, Field::DecayFactor, record.decay_factor);
    if let Some(pinned) = record.pinned {
        map.insert("pinned".to_owned(), Value::Bool(pinned));
    }
    text(&mut map, Field::Supersedes, &record.supersedes);
    for (key, value) in &record.extra {
        map.insert(key.clone(), value.clone());
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn growth_holds(source: &str) -> bool {
        let value: Value = serde_json::from_str(source).unwrap();
        let compact = serde_json::to_string(&value).unwrap();
        compact.len() * 2 <= source.len() * 9
    }

    #[test]
    fn compact_json_grows_at_most_4_5_times() {
        let cases = [
            "1e15",
            "1E15",
            "1e9",
            "-0",
            "-0.0",
            "1e-5",
            "1e-7",
            "1e16",
            "1e2",
            "5e-324",
            "123456789e6",
            "1e+15",
            "0e0",
            "\"\\u00e9\"",
            "\"\\n\"",
            "\"\\/\"",
            "[1e15,1e15]",
            "{\"a\":1e15}",
            "\"\\ud83d\\ude00\"",
            "\"\\u0001\"",
            "true",
            "null",
        ];
        for source in cases {
            assert!(growth_holds(source), "{source}");
        }
    }

    proptest! {
        #[test]
        fn numbers_grow_at_most_4_5_times(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            // The shortest spellings of x that parse back to it.
            prop_assert!(growth_holds(&format!("{x:e}")), "{:e}", x);
            prop_assert!(growth_holds(&format!("{x}")), "{}", x);
        }

        #[test]
        fn integers_grow_at_most_4_5_times(n in any::<i64>(), m in any::<u64>()) {
            prop_assert!(growth_holds(&n.to_string()));
            prop_assert!(growth_holds(&m.to_string()));
        }
    }
}
