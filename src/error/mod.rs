//! The one error type of Reliora.
//!
//! Every variant carries what a user needs to act: the file, the line or array index, the field
//! and the offending value. [`Error::code`] gives the stable machine-readable code of SPEC §6 and
//! [`Error::exit_status`] the process exit status of SPEC §9 (2 for bad input, 1 for everything
//! else).

use std::path::PathBuf;

mod format;
pub use format::FormatError;

/// A `Result` whose error is Reliora's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a single record was rejected, without knowing where it came from.
///
/// The input reader wraps it into [`Error::InvalidRecord`] together with the record's locator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}`{}: {reason}", value_suffix(.value))]
pub struct RecordError {
    /// The field at fault, in its camelCase spelling (or the spelling given, for unknown keys);
    /// `(record)` when the whole record is at fault.
    pub field: String,
    /// The offending value, as compact JSON, shortened to a readable length.
    pub value: Option<String>,
    /// What is wrong with it.
    pub reason: String,
}

fn value_suffix(value: &Option<String>) -> String {
    match value {
        Some(v) => format!(" = {v}"),
        None => String::new(),
    }
}

impl RecordError {
    /// A record error about `field`, with the offending `value` when there is one.
    pub fn new(field: impl Into<String>, value: Option<String>, reason: impl Into<String>) -> Self {
        RecordError {
            field: field.into(),
            value,
            reason: reason.into(),
        }
    }
}

/// The machine-readable error codes of SPEC §6, printed as `{"error": CODE, …}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The query has no tokens and no filter was given.
    EmptyQuery,
    /// `--min-score` is NaN, infinite, negative or above 100.
    InvalidMinScore,
    /// `--limit` is below 1.
    InvalidLimit,
    /// `--candidates` is below 1.
    InvalidCandidates,
    /// `--token-budget` is below 1.
    InvalidTokenBudget,
    /// `--project-context` has no tokens.
    InvalidProjectContext,
    /// A `--tag` whose phrase is empty.
    InvalidTag,
    /// `--profile` names no profile.
    UnknownProfile,
    /// A record failed validation.
    InvalidRecord,
    /// An unknown flag, an unparsable value, or another bad option.
    InvalidOption,
    /// The index is damaged, missing or foreign.
    IndexDamaged,
    /// An I/O failure.
    Io,
    /// The requested record does not exist.
    NotFound,
}

impl ErrorCode {
    /// The code as printed in JSON (`"invalid_limit"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::EmptyQuery => "empty_query",
            ErrorCode::InvalidMinScore => "invalid_min_score",
            ErrorCode::InvalidLimit => "invalid_limit",
            ErrorCode::InvalidCandidates => "invalid_candidates",
            ErrorCode::InvalidTokenBudget => "invalid_token_budget",
            ErrorCode::InvalidProjectContext => "invalid_project_context",
            ErrorCode::InvalidTag => "invalid_tag",
            ErrorCode::UnknownProfile => "unknown_profile",
            ErrorCode::InvalidRecord => "invalid_record",
            ErrorCode::InvalidOption => "invalid_option",
            ErrorCode::IndexDamaged => "index_damaged",
            ErrorCode::Io => "io_error",
            ErrorCode::NotFound => "not_found",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything that can go wrong in Reliora.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A record in an input failed validation.
    #[error("{locator}: invalid record: {source}")]
    InvalidRecord {
        /// Where the record came from: `file:line` or `file#index`.
        locator: String,
        /// What is wrong with it.
        #[source]
        source: RecordError,
    },
    /// An input is not valid JSON (or JSON Lines).
    #[error("{locator}: malformed JSON: {message}")]
    MalformedJson {
        /// Where: `file:line` (JSON Lines) or `file` with line and column in the message.
        locator: String,
        /// The parser's description.
        message: String,
    },
    /// Two records of one build share an id.
    #[error("duplicate id {id:?}: at {first} and at {second}")]
    DuplicateId {
        /// The id given twice.
        id: String,
        /// Where it was first seen.
        first: String,
        /// Where it was seen again.
        second: String,
    },
    /// A query or option is invalid (SPEC §6 codes).
    #[error("{message}")]
    InvalidQuery {
        /// The SPEC error code.
        code: ErrorCode,
        /// What was wrong, naming the option and its value.
        message: String,
    },
    /// A record named by id or locator does not exist.
    #[error("no record with id or locator {0:?}")]
    NotFound(String),
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying failure.
        #[source]
        source: std::io::Error,
    },
    /// An index file failed a check: it is damaged, truncated, missing or foreign.
    #[error("{}: {problem}", file.display())]
    Corrupt {
        /// The file at fault.
        file: PathBuf,
        /// What the check found (also this error's source).
        #[source]
        problem: FormatError,
    },
}

impl Error {
    /// An invalid-query error with its SPEC code.
    pub fn query(code: ErrorCode, message: impl Into<String>) -> Self {
        Error::InvalidQuery {
            code,
            message: message.into(),
        }
    }

    /// An I/O error about `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// A damage report about `file`: a [`FormatError`], or a description of the problem.
    pub fn corrupt(file: impl Into<PathBuf>, problem: impl Into<FormatError>) -> Self {
        Error::Corrupt {
            file: file.into(),
            problem: problem.into(),
        }
    }

    /// The machine-readable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::InvalidRecord { .. }
            | Error::MalformedJson { .. }
            | Error::DuplicateId { .. } => ErrorCode::InvalidRecord,
            Error::InvalidQuery { code, .. } => *code,
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::Io { .. } => ErrorCode::Io,
            Error::Corrupt { .. } => ErrorCode::IndexDamaged,
        }
    }

    /// The process exit status for this error: 2 for invalid input, 1 for other failures
    /// (a damaged index included; `reliora check` exits 3 on damage).
    pub fn exit_status(&self) -> i32 {
        match self {
            Error::InvalidRecord { .. }
            | Error::MalformedJson { .. }
            | Error::DuplicateId { .. }
            | Error::InvalidQuery { .. } => 2,
            Error::Corrupt { .. } | Error::NotFound(_) | Error::Io { .. } => 1,
        }
    }
}
