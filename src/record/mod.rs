//! Records: the experience-memory entries Reliora stores and searches (SPEC §1).
//!
//! A record is a JSON object with camelCase names (snake_case accepted on input). This module
//! owns everything about one record before it reaches an index:
//!
//! - [`Record`] and [`Feedback`], the validated form, with [`Record::from_json`] (validation,
//!   SPEC §1 rules and limits) and [`Record::to_json`] (the export form);
//! - [`Timestamp`], RFC 3339 timestamps that keep their text (`timestamp`);
//! - [`canonical_json`] and [`derived_id`], RFC 8785 canonical JSON and the id of a record given
//!   without one (`canonical`);
//! - [`read_inputs`], [`parse_record_text`] and [`FieldMap`], reading JSON array, JSON and JSON
//!   Lines inputs with `--field-map` and `--skip-invalid` (SPEC §10) (`input`).
//!
//! # Example
//!
//! ```
//! use reliora::record::Record;
//! use reliora::schema::FieldGroup;
//! use serde_json::json;
//!
//! let record = Record::from_json(&json!({
//!     "title": "Cargo build fails offline",
//!     "problems": "failed to fetch crates.io index",
//!     "solution": "use `cargo vendor`",
//!     "why_it_worked": "sources are local",
//!     "feedback": {"success": 2, "not_applicable": null},
//! }))
//! .unwrap();
//! assert!(record.id.starts_with("r-"));
//! assert_eq!(record.problems, ["failed to fetch crates.io index"]);
//! assert_eq!(record.group_values(FieldGroup::Solution), ["use `cargo vendor`", "sources are local"]);
//! assert_eq!(record.feedback.total(), 2);
//! assert_eq!(Record::from_json(&record.to_json()), Ok(record));
//! ```

pub mod canonical;
pub mod input;
pub mod outcome;
mod strict_json;
pub mod timestamp;
mod validate;

pub use canonical::{canonical_json, derived_id};
pub(crate) use input::SourcedRecord;
pub use input::{parse_record_text, read_inputs, FieldMap, InputBatch, LocatedRecord, Skipped};
pub use outcome::Outcome;
pub use timestamp::Timestamp;
pub use validate::validate_id;

use crate::error::RecordError;
use crate::schema::FieldGroup;
use serde_json::{Map, Value};

/// The most bytes (UTF-8, after JSON unescaping) of one text field or one list item: 64 KiB.
pub const MAX_TEXT_BYTES: usize = 65_536;
/// The most items of one list field.
pub const MAX_LIST_ITEMS: usize = 256;
/// The most bytes of one record, measured as the compact JSON (UTF-8) of its input object.
pub const MAX_RECORD_BYTES: usize = 1_048_576;
/// The most bytes of an id.
pub const MAX_ID_BYTES: usize = 256;
/// The salience of a record that gives none.
pub const DEFAULT_SALIENCE: f64 = 0.5;
/// The decay factor (per day) of a record that gives none.
pub const DEFAULT_DECAY_FACTOR: f64 = 0.02;
/// The memory type of a record that gives none, or an empty one.
pub const DEFAULT_MEMORY_TYPE: &str = "episodic";

/// The feedback counts of a record; each defaults to 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Feedback {
    /// Times the record's advice worked.
    pub success: u64,
    /// Times it partly worked.
    pub partial: u64,
    /// Times it failed.
    pub failure: u64,
    /// Times it did not apply (`notApplicable`).
    pub not_applicable: u64,
    /// Times it was found outdated.
    pub outdated: u64,
}

impl Feedback {
    /// The five counts in SPEC's order: success, partial, failure, notApplicable, outdated.
    pub fn counts(&self) -> [u64; 5] {
        [
            self.success,
            self.partial,
            self.failure,
            self.not_applicable,
            self.outdated,
        ]
    }

    /// The feedback of five counts in the order of [`Feedback::counts`].
    ///
    /// # Example
    ///
    /// ```
    /// use reliora::record::Feedback;
    ///
    /// let feedback = Feedback { success: 3, failure: 1, ..Feedback::default() };
    /// assert_eq!(Feedback::from_counts(feedback.counts()), feedback);
    /// ```
    pub fn from_counts(
        [success, partial, failure, not_applicable, outdated]: [u64; 5],
    ) -> Feedback {
        Feedback {
            success,
            partial,
            failure,
            not_applicable,
            outdated,
        }
    }

    /// The sum of the five counts (saturating at `u64::MAX`).
    ///
    /// # Example
    ///
    /// ```
    /// use reliora::record::Feedback;
    ///
    /// let feedback = Feedback { success: 3, failure: 1, ..Feedback::default() };
    /// assert_eq!(feedback.total(), 4);
    /// ```
    pub fn total(&self) -> u64 {
        [
            self.partial,
            self.failure,
            self.not_applicable,
            self.outdated,
        ]
        .into_iter()
        .fold(self.success, u64::saturating_add)
    }
}

/// One validated record (SPEC §1).
///
/// Optional text fields are `None` when absent or `null`; list fields are empty then. Build one
/// with [`Record::from_json`], write it back with [`Record::to_json`].
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The id: as given, or derived from the input object (see [`derived_id`]).
    pub id: String,
    /// The title, if any: optional (SPEC §1); a blank one is kept as given but counts as
    /// absent (see [`Record::display_title`]).
    pub title: Option<String>,
    /// `task`.
    pub task: Option<String>,
    /// `problems`.
    pub problems: Vec<String>,
    /// `solution`.
    pub solution: Option<String>,
    /// `whyItWorked`.
    pub why_it_worked: Option<String>,
    /// `failedAttempts`.
    pub failed_attempts: Vec<String>,
    /// `warnings`.
    pub warnings: Vec<String>,
    /// `tags`.
    pub tags: Vec<String>,
    /// `entities`.
    pub entities: Vec<String>,
    /// `projectContext`.
    pub project_context: Option<String>,
    /// `applicability`.
    pub applicability: Option<String>,
    /// `verification`: stored, not searched.
    pub verification: Option<String>,
    /// `confidence`, in [0, 1].
    pub confidence: Option<f64>,
    /// `salience`, in [0, 1]; see [`Record::salience_or_default`].
    pub salience: Option<f64>,
    /// `createdAt`; `None` means the age is unknown.
    pub created_at: Option<Timestamp>,
    /// `updatedAt`.
    pub updated_at: Option<Timestamp>,
    /// `feedback` counts; zeros when absent.
    pub feedback: Feedback,
    /// `memoryType` as given; see [`Record::memory_type_normalized`].
    pub memory_type: Option<String>,
    /// `decayFactor` per day, ≥ 0; see [`Record::decay_factor_or_default`].
    pub decay_factor: Option<f64>,
    /// `pinned`; see [`Record::pinned_or_default`].
    pub pinned: Option<bool>,
    /// The id this record corrects or replaces; `None` when it names the record itself.
    pub supersedes: Option<String>,
    /// Unknown top-level fields, in input order; kept and exported, never searched.
    pub extra: Map<String, Value>,
}

impl Record {
    /// Validate one input object (after `--field-map`) against SPEC §1, deriving the id when it
    /// is absent or `null`.
    ///
    /// The error names the field (camelCase; `feedback.KEY` inside feedback; `(record)` for the
    /// whole record) and the offending value.
    ///
    /// # Example
    ///
    /// ```
    /// use reliora::record::Record;
    /// use serde_json::json;
    ///
    /// let err = Record::from_json(&json!({"title": "t", "salience": 2})).unwrap_err();
    /// assert_eq!(err.field, "salience");
    /// assert_eq!(err.value.as_deref(), Some("2"));
    /// ```
    pub fn from_json(value: &Value) -> Result<Record, RecordError> {
        match value {
            Value::Object(map) => validate::record_from_object(map.clone()),
            other => Err(validate::not_an_object(other)),
        }
    }

    /// [`Record::from_json`] taking the value by ownership, so that its strings move into the
    /// record instead of being copied. The input readers use this one.
    pub fn from_json_owned(value: Value) -> Result<Record, RecordError> {
        match value {
            Value::Object(map) => validate::record_from_object(map),
            other => Err(validate::not_an_object(&other)),
        }
    }

    /// The export form: camelCase keys in SPEC §1 order, `id` always present, absent optional
    /// fields and empty lists omitted, `feedback` always written with all five counts,
    /// timestamps as originally given, unknown fields last in their input order.
    ///
    /// `Record::from_json(&r.to_json()) == Ok(r)` holds for every valid record (but see
    /// [`MAX_RECORD_BYTES`]: the export form of a record within about 200 bytes of the limit
    /// can exceed it, since it adds the id and all feedback counts).
    pub fn to_json(&self) -> Value {
        validate::record_to_json(self)
    }

    /// `salience`, or 0.5 when absent.
    pub fn salience_or_default(&self) -> f64 {
        self.salience.unwrap_or(DEFAULT_SALIENCE)
    }

    /// `decayFactor`, or 0.02 when absent.
    pub fn decay_factor_or_default(&self) -> f64 {
        self.decay_factor.unwrap_or(DEFAULT_DECAY_FACTOR)
    }

    /// `memoryType` trimmed and lowercased; `episodic` when missing or empty after trimming.
    pub fn memory_type_normalized(&self) -> String {
        match self.memory_type.as_deref().map(str::trim) {
            Some(kind) if !kind.is_empty() => kind.to_lowercase(),
            _ => DEFAULT_MEMORY_TYPE.to_owned(),
        }
    }

    /// `pinned`, or false when absent.
    pub fn pinned_or_default(&self) -> bool {
        self.pinned.unwrap_or(false)
    }

    /// The record's content (SPEC §1): title, task, each problem, solution, whyItWorked, each
    /// failed attempt, each warning, each tag, projectContext, applicability, skipping empty
    /// strings (whitespace-only ones are kept), joined with `"\n"`.
    ///
    /// # Example
    ///
    /// ```
    /// use reliora::record::Record;
    /// use serde_json::json;
    ///
    /// let record = Record::from_json(&json!({
    ///     "title": "T", "tags": ["a", "", "b"], "task": "", "applicability": "X"
    /// })).unwrap();
    /// assert_eq!(record.content(), "T\na\nb\nX");
    /// ```
    pub fn content(&self) -> String {
        self.content_parts().collect::<Vec<_>>().join("\n")
    }

    /// [`content_prefix`](crate::text::prefix::content_prefix) of the record's content, read
    /// part by part: the parts are joined by a newline, whitespace, so the content's words are
    /// the parts' words in order.
    pub fn content_prefix(&self, chars: usize) -> String {
        crate::text::prefix::prefix_of_words(
            self.content_parts().flat_map(str::split_whitespace),
            chars,
        )
        .0
    }

    /// The non-empty searchable texts in SPEC order, which [`Record::content`] joins with
    /// `\n`: read part by part, a record's content is never copied whole.
    pub fn content_parts(&self) -> impl Iterator<Item = &str> + '_ {
        self.title
            .as_deref()
            .into_iter()
            .chain(self.task.as_deref())
            .chain(self.problems.iter().map(String::as_str))
            .chain(self.solution.as_deref())
            .chain(self.why_it_worked.as_deref())
            .chain(self.failed_attempts.iter().map(String::as_str))
            .chain(self.warnings.iter().map(String::as_str))
            .chain(self.tags.iter().map(String::as_str))
            .chain(self.project_context.as_deref())
            .chain(self.applicability.as_deref())
            .filter(|part| !part.is_empty())
    }

    /// The title a result shows: `None` when the record has none or a blank one (SPEC §1).
    pub fn display_title(&self) -> Option<&str> {
        self.title.as_deref().filter(|t| !t.trim().is_empty())
    }

    /// A one-line label for people: the title, or, for an untitled record, the start of its
    /// first non-blank searchable text (task, first problem, solution, …), cut at 80
    /// characters.
    pub fn label(&self) -> String {
        if let Some(title) = self.display_title() {
            return title.to_string();
        }
        let first = self
            .content()
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or("")
            .to_string();
        match first.char_indices().nth(80) {
            Some((cut, _)) => format!("{}…", &first[..cut]),
            None => first,
        }
    }

    /// Whether the record holds some searchable text (SPEC §1): a non-blank title, task,
    /// solution, whyItWorked, projectContext or applicability, or a non-blank item of problems,
    /// failedAttempts, warnings or tags.
    pub fn has_searchable_text(&self) -> bool {
        let blank = |t: &str| t.trim().is_empty();
        [
            &self.title,
            &self.task,
            &self.solution,
            &self.why_it_worked,
            &self.project_context,
            &self.applicability,
        ]
        .into_iter()
        .any(|t| t.as_deref().is_some_and(|t| !blank(t)))
            || [
                &self.problems,
                &self.failed_attempts,
                &self.warnings,
                &self.tags,
            ]
            .into_iter()
            .any(|items| items.iter().any(|t| !blank(t)))
    }

    /// The searchable values of `group`, in field order (for [`FieldGroup::Solution`]:
    /// `solution`, then `whyItWorked`), each list item its own value. Empty strings are
    /// skipped; whitespace-only strings are kept.
    pub fn group_values(&self, group: FieldGroup) -> Vec<&str> {
        let values: Vec<&str> = match group {
            FieldGroup::Tags => self.tags.iter().map(String::as_str).collect(),
            FieldGroup::Title => self.title.as_deref().into_iter().collect(),
            FieldGroup::Problems => self.problems.iter().map(String::as_str).collect(),
            FieldGroup::Task => self.task.as_deref().into_iter().collect(),
            FieldGroup::Solution => self
                .solution
                .as_deref()
                .into_iter()
                .chain(self.why_it_worked.as_deref())
                .collect(),
            FieldGroup::ProjectContext => self.project_context.as_deref().into_iter().collect(),
            FieldGroup::Applicability => self.applicability.as_deref().into_iter().collect(),
            FieldGroup::FailedAttempts => self.failed_attempts.iter().map(String::as_str).collect(),
            FieldGroup::Warnings => self.warnings.iter().map(String::as_str).collect(),
        };
        let mut values = values;
        values.retain(|value| !value.is_empty());
        values
    }
}

#[cfg(test)]
mod tests;

/// For each id that some of `records` supersede, the smallest (bytewise) id among the records
/// superseding it: `supersededBy` of SPEC §6.1 when `records` are the live records.
pub fn smallest_superseders<'a>(
    records: impl IntoIterator<Item = &'a Record>,
) -> std::collections::HashMap<&'a str, &'a str> {
    let mut smallest: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for record in records {
        if let Some(target) = record.supersedes.as_deref() {
            let id = record.id.as_str();
            smallest
                .entry(target)
                .and_modify(|s| {
                    if id.as_bytes() < s.as_bytes() {
                        *s = id;
                    }
                })
                .or_insert(id);
        }
    }
    smallest
}
