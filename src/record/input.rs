//! Reading records from input files (SPEC §10 `build --input`, `--field-map`, `--skip-invalid`).
//!
//! Each input path is a file or a directory. A directory contributes its `.json` and `.jsonl`
//! files (any letter case), recursively, following symbolic links, sorted by path. A file is
//! read as one of three forms, after skipping a UTF-8 byte order mark:
//!
//! | form | when | one record per |
//! |---|---|---|
//! | JSON array | the first non-whitespace character is `[` | array element |
//! | JSON document | a `.json` file whose first non-blank line ends inside a JSON value (a pretty-printed object) | file |
//! | JSON Lines | anything else (blank lines skipped) | line |
//!
//! Every record carries a locator `PATH:LINE`: the path as given (or as joined from its
//! directory) and the 1-based line where the record starts. Errors about an array element add
//! `(array index N)` to the locator. Records keep input order; JSON Lines and array elements
//! are parsed in parallel, and the result is the same on any number of threads.
//!
//! Errors: JSON that does not parse (NaN, `1e999`, a duplicate key, invalid UTF-8, …) is
//! [`Error::MalformedJson`]; a record that breaks a SPEC §1 rule is [`Error::InvalidRecord`].
//! With `skip_invalid`, both go to [`InputBatch::skipped`] when they concern one record (one
//! line, one array element, one JSON document); a file that cannot be read, or a JSON array
//! file that does not parse as an array, still fails the whole read.

use super::strict_json::parse_value;
use super::validate::{compact_size_bound, not_an_object, preview, record_from_parsed_object};
use super::Record;
use crate::error::{Error, ErrorCode, RecordError};
use rayon::prelude::*;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// The `--field-map SRC=DST` renamings, in the order given.
///
/// # Example
///
/// ```
/// use reliora::record::FieldMap;
/// use serde_json::json;
///
/// let mut map = FieldMap::new();
/// map.push_spec("_id=id").unwrap();
/// map.push_spec("text=problems").unwrap();
/// let mut object = json!({"_id": "a", "text": "b", "title": "c"}).as_object().unwrap().clone();
/// map.apply(&mut object);
/// assert_eq!(serde_json::Value::Object(object), json!({"id": "a", "problems": "b", "title": "c"}));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldMap {
    pairs: Vec<(String, String)>,
}

impl FieldMap {
    /// A map that renames nothing.
    pub fn new() -> Self {
        FieldMap::default()
    }

    /// Add one `SRC=DST` renaming (split at the first `=`).
    ///
    /// A spec without `=`, with an empty side, or whose `SRC` is already mapped is
    /// [`Error::InvalidQuery`] with [`ErrorCode::InvalidOption`], naming the spec.
    pub fn push_spec(&mut self, spec: &str) -> Result<(), Error> {
        let invalid = |why: String| {
            Error::query(
                ErrorCode::InvalidOption,
                format!("--field-map {spec:?}: {why}"),
            )
        };
        let Some((source, target)) = spec.split_once('=') else {
            return Err(invalid("expected SRC=DST".to_owned()));
        };
        if source.is_empty() {
            return Err(invalid("the source name (before '=') is empty".to_owned()));
        }
        if target.is_empty() {
            return Err(invalid("the target name (after '=') is empty".to_owned()));
        }
        if let Some(earlier) = self.target(source) {
            return Err(invalid(format!(
                "{source:?} is already mapped to {earlier:?}"
            )));
        }
        self.pairs.push((source.to_owned(), target.to_owned()));
        Ok(())
    }

    /// The renamings, in the order given.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(s, d)| (s.as_str(), d.as_str()))
    }

    /// True when the map renames nothing.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// More bytes than renaming can add to an object's JSON: each key is renamed at most once,
    /// and each byte of a target name takes at most 6 bytes escaped.
    fn max_growth(&self) -> usize {
        self.pairs.iter().map(|(_, target)| 6 * target.len()).sum()
    }

    fn target(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(source, _)| source == key)
            .map(|(_, target)| target.as_str())
    }

    /// Rename the top-level keys of an input object; every key is renamed at most once (so
    /// `a=b` with `b=a` swaps), and keeps its position. When two keys end up with one name,
    /// the value later in input order wins at the earlier one's position; the input reader
    /// uses [`FieldMap::try_apply`], which rejects that instead.
    pub fn apply(&self, object: &mut Map<String, Value>) {
        if self.pairs.is_empty() || !object.keys().any(|key| self.target(key).is_some()) {
            return;
        }
        let original = std::mem::take(object);
        for (key, value) in original {
            let key = match self.target(&key) {
                Some(target) => target.to_owned(),
                None => key,
            };
            object.insert(key, value);
        }
    }

    /// [`FieldMap::apply`], but an object in which two keys would end up with one name is left
    /// unchanged and rejected, naming the target field.
    pub fn try_apply(&self, object: &mut Map<String, Value>) -> Result<(), RecordError> {
        let present: Vec<&(String, String)> = self
            .pairs
            .iter()
            .filter(|(source, _)| object.contains_key(source))
            .collect();
        for (i, (source, target)) in present.iter().enumerate() {
            // The target is already a key that stays, or another present key maps to it too.
            let clash = if object.contains_key(target) && self.target(target).is_none() {
                Some(target.as_str())
            } else {
                present[..i]
                    .iter()
                    .find(|(_, other_target)| other_target == target)
                    .map(|(other_source, _)| other_source.as_str())
            };
            if let Some(other) = clash {
                return Err(RecordError::new(
                    target.as_str(),
                    object.get(source).and_then(preview),
                    format!(
                        "--field-map renames `{source}` to `{target}`, which the record \
                         also has from `{other}`"
                    ),
                ));
            }
        }
        self.apply(object);
        Ok(())
    }
}

/// A valid record and where it came from: the one record-with-locator type, for records read
/// from input files, kept in the store and returned by
/// [`IndexReader::get`](crate::IndexReader::get).
#[derive(Debug, Clone, PartialEq)]
pub struct LocatedRecord {
    /// The record.
    pub record: Record,
    /// Where it came from: `PATH:LINE` of the line where the record starts, or, for a record
    /// written by `record`, its position in the record log; `show` accepts it.
    pub locator: String,
}

/// The name the build code uses for a [`LocatedRecord`] read from input.
pub(crate) type SourcedRecord = LocatedRecord;

/// A record left out under `--skip-invalid`, and why.
#[derive(Debug)]
pub struct Skipped {
    /// `PATH:LINE` of the line where the record starts.
    pub locator: String,
    /// Why it was left out: [`Error::InvalidRecord`] or [`Error::MalformedJson`].
    pub error: Error,
}

/// Everything read from the inputs of one build.
#[derive(Debug, Default)]
pub struct InputBatch {
    /// The valid records, in input order.
    pub records: Vec<SourcedRecord>,
    /// The records skipped (only with `skip_invalid`), in input order.
    pub skipped: Vec<Skipped>,
}

/// Read every input path in order (see the module docs for the forms and errors).
///
/// Without `skip_invalid`, the first invalid record (in input order) is the error. Duplicate
/// ids are not checked here.
///
/// # Example
///
/// ```
/// use reliora::record::{read_inputs, FieldMap};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("notes.jsonl");
/// std::fs::write(&path, "{\"title\": \"one\"}\n\n{\"title\": \"two\"}\n").unwrap();
/// let batch = read_inputs(&[path.clone()], &FieldMap::new(), false).unwrap();
/// assert_eq!(batch.records.len(), 2);
/// assert_eq!(batch.records[1].locator, format!("{}:3", path.display()));
/// ```
pub fn read_inputs(
    paths: &[PathBuf],
    field_map: &FieldMap,
    skip_invalid: bool,
) -> Result<InputBatch, Error> {
    let mut batch = InputBatch::default();
    read_inputs_in_batches(paths, field_map, skip_invalid, |part| {
        batch.records.extend(part.records);
        batch.skipped.extend(part.skipped);
        Ok(())
    })?;
    Ok(batch)
}

/// Lines of JSON Lines input parsed (in parallel) per batch.
const LINES_PER_BATCH: usize = 16_384;
/// Bytes of JSON Lines input read per batch at most (a batch ends after the line crossing it).
const BYTES_PER_BATCH: usize = 32 << 20;

/// Like [`read_inputs`], but hands the records to `visit` in batches, in input order, so that
/// memory stays bounded whatever the input size: JSON Lines files are read a batch of lines at a
/// time (JSON arrays and documents are read whole). Stops at the first error, from reading or
/// from `visit`.
pub fn read_inputs_in_batches(
    paths: &[PathBuf],
    field_map: &FieldMap,
    skip_invalid: bool,
    mut visit: impl FnMut(InputBatch) -> Result<(), Error>,
) -> Result<(), Error> {
    for path in paths {
        let metadata = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if metadata.is_dir() {
            for file in input_files_in(path)? {
                read_file(&file, field_map, skip_invalid, &mut visit)?;
            }
        } else {
            read_file(path, field_map, skip_invalid, &mut visit)?;
        }
    }
    Ok(())
}

/// Parse one record from JSON text (`reliora record FILE|-`); `locator` names the source in
/// errors. The text is one JSON object, possibly pretty-printed.
///
/// # Example
///
/// ```
/// use reliora::record::{parse_record_text, FieldMap};
///
/// let record = parse_record_text("{\"title\": \"t\"}", "-", &FieldMap::new()).unwrap();
/// assert_eq!(record.title.as_deref(), Some("t"));
/// let err = parse_record_text("{\"title\": 1}", "-", &FieldMap::new()).unwrap_err();
/// assert_eq!(err.to_string(), "-: invalid record: field `title` = 1: must be a string, not a number");
/// ```
pub fn parse_record_text(text: &str, locator: &str, field_map: &FieldMap) -> Result<Record, Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value = parse_value(text).map_err(|e| Error::MalformedJson {
        locator: locator.to_owned(),
        message: e.to_string(),
    })?;
    record_from_value(value, text.len(), field_map).map_err(|source| Error::InvalidRecord {
        locator: locator.to_owned(),
        source,
    })
}

/// Field-map and validate one value parsed from `source_len` bytes of text.
fn record_from_value(
    value: Value,
    source_len: usize,
    field_map: &FieldMap,
) -> Result<Record, RecordError> {
    match value {
        Value::Object(mut map) => {
            field_map.try_apply(&mut map)?;
            let bound = compact_size_bound(source_len, field_map.max_growth());
            record_from_parsed_object(map, Some(bound))
        }
        other => Err(not_an_object(&other)),
    }
}

/// The `.json` and `.jsonl` files under `dir`, recursively, sorted by path.
fn input_files_in(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    let mut visited = HashSet::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        // Guard against symbolic-link cycles.
        let canonical = std::fs::canonicalize(&dir).map_err(|e| Error::io(&dir, e))?;
        if !visited.insert(canonical) {
            continue;
        }
        for entry in std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? {
            let path = entry.map_err(|e| Error::io(&dir, e))?.path();
            let metadata = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
            if metadata.is_dir() {
                pending.push(path);
            } else if has_extension(&path, &["json", "jsonl"]) {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn has_extension(path: &Path, extensions: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| extensions.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

fn is_json_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// The outcome of one record of a file: the record, or why it is skipped.
type Outcome = Result<SourcedRecord, Skipped>;

fn read_file(
    path: &Path,
    field_map: &FieldMap,
    skip_invalid: bool,
    visit: &mut impl FnMut(InputBatch) -> Result<(), Error>,
) -> Result<(), Error> {
    read_file_batched(path, field_map, skip_invalid, LINES_PER_BATCH, visit)
}

/// The input's first lines up to its first non-blank one (after a byte order mark), which
/// tells the form: the bytes read, the number of lines read, and where the last one starts.
fn read_head(reader: &mut impl BufRead) -> std::io::Result<(Vec<u8>, usize, usize)> {
    let mut head: Vec<u8> = Vec::new();
    let mut line_number = 0;
    loop {
        let start = head.len();
        if reader.read_until(b'\n', &mut head)? == 0 {
            return Ok((head, line_number, start));
        }
        line_number += 1;
        let line = &head[start..];
        let line = if line_number == 1 {
            line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
        } else {
            line
        };
        if !line.iter().all(|&b| is_json_space(b)) {
            return Ok((head, line_number, start));
        }
    }
}

/// [`read_file`] with JSON Lines handed over `lines_per_batch` lines at a time at most.
fn read_file_batched(
    path: &Path,
    field_map: &FieldMap,
    skip_invalid: bool,
    lines_per_batch: usize,
    visit: &mut impl FnMut(InputBatch) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut deliver = |outcomes: Vec<Outcome>| {
        let mut batch = InputBatch::default();
        for outcome in outcomes {
            match outcome {
                Ok(record) => batch.records.push(record),
                Err(skipped) if skip_invalid => batch.skipped.push(skipped),
                Err(skipped) => {
                    // The records before the invalid one are still handed over: the caller
                    // sees input order, then the error.
                    visit(batch)?;
                    return Err(skipped.error);
                }
            }
        }
        visit(batch)
    };
    let name = path.display().to_string();
    let io = |e| Error::io(path, e);
    let mut reader = std::io::BufReader::with_capacity(1 << 20, File::open(path).map_err(io)?);
    let (mut head, mut line_number, head_line_start) = read_head(&mut reader).map_err(io)?;
    let body = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    let Some(first) = body.iter().position(|&b| !is_json_space(b)) else {
        return Ok(()); // empty or whitespace only: no records
    };
    let whole = body[first] == b'['
        || (has_extension(path, &["json"]) && first_line_is_incomplete(body, first));
    if whole {
        let mut bytes = head.clone();
        reader.read_to_end(&mut bytes).map_err(io)?;
        let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let outcomes = if body[first] == b'[' {
            read_array(&name, body, field_map)?
        } else {
            vec![read_document(&name, body, first, field_map)]
        };
        return deliver(outcomes);
    }
    // JSON Lines: batches of lines, each parsed in parallel.
    let mut text = head.split_off(head_line_start);
    drop(head);
    let mut starts: Vec<(usize, usize)> = vec![(line_number, 0)]; // (line, offset in text)
    let mut offsets_done = false;
    while !offsets_done {
        while starts.len() < lines_per_batch && text.len() < BYTES_PER_BATCH {
            let start = text.len();
            if reader.read_until(b'\n', &mut text).map_err(io)? == 0 {
                offsets_done = true;
                break;
            }
            line_number += 1;
            starts.push((line_number, start));
        }
        let lines: Vec<(usize, &[u8])> = starts
            .iter()
            .enumerate()
            .map(|(i, &(line, start))| {
                let end = starts.get(i + 1).map_or(text.len(), |next| next.1);
                let bytes = &text[start..end];
                let bytes = if line == 1 {
                    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
                } else {
                    bytes
                };
                (line, bytes.strip_suffix(b"\n").unwrap_or(bytes))
            })
            .filter(|(_, line)| !line.iter().all(|&b| is_json_space(b)))
            .collect();
        let outcomes = read_lines(&name, &lines, field_map);
        deliver(outcomes)?;
        text.clear();
        starts.clear();
    }
    Ok(())
}

/// Whether the line holding byte `first` ends inside a JSON value (the start of a
/// pretty-printed document) rather than holding a whole value or a broken one (JSON Lines).
fn first_line_is_incomplete(body: &[u8], first: usize) -> bool {
    let end = body[first..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(body.len(), |n| first + n);
    serde_json::from_slice::<serde::de::IgnoredAny>(&body[first..end]).is_err_and(|e| e.is_eof())
}

/// 1-based line and column (in bytes) of byte `offset` of `body`.
fn line_and_column(body: &[u8], offset: usize) -> (usize, usize) {
    let before = &body[..offset];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |n| n + 1);
    (line, offset - line_start + 1)
}

/// A serde_json error's message with its position moved to where the parsed text starts in
/// the file (`line`, `column`, both 1-based).
fn relocate(error: &serde_json::Error, line: usize, column: usize) -> String {
    let message = error.to_string();
    if error.line() == 0 {
        return message;
    }
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    let bare = message.strip_suffix(&suffix).unwrap_or(&message);
    let (line, column) = if error.line() == 1 {
        (line, column - 1 + error.column())
    } else {
        (line + error.line() - 1, error.column())
    };
    format!("{bare} at line {line} column {column}")
}

fn invalid_utf8_message(body: &[u8], error: &std::str::Utf8Error) -> (usize, String) {
    let (line, column) = line_and_column(body, error.valid_up_to());
    (
        line,
        format!("invalid UTF-8 at line {line} column {column}"),
    )
}

/// A JSON array file: one record per element.
fn read_array(name: &str, body: &[u8], field_map: &FieldMap) -> Result<Vec<Outcome>, Error> {
    let text = std::str::from_utf8(body).map_err(|e| {
        let (line, message) = invalid_utf8_message(body, &e);
        Error::MalformedJson {
            locator: format!("{name}:{line}"),
            message,
        }
    })?;
    let elements: Vec<&RawValue> =
        serde_json::from_str(text).map_err(|e| Error::MalformedJson {
            locator: format!("{name}:{}", e.line()),
            message: format!("not a JSON array of records: {e}"),
        })?;

    // Each element's starting line and column, from its offset in the text.
    let mut starts = Vec::with_capacity(elements.len());
    let (mut line, mut line_start, mut scanned) = (1, 0, 0);
    for element in &elements {
        let offset = element.get().as_ptr() as usize - text.as_ptr() as usize;
        for (i, &b) in body[scanned..offset].iter().enumerate() {
            if b == b'\n' {
                line += 1;
                line_start = scanned + i + 1;
            }
        }
        scanned = offset;
        starts.push((line, offset - line_start + 1));
    }

    let outcomes = elements
        .par_iter()
        .zip(starts.par_iter())
        .enumerate()
        .with_min_len(64)
        .map(|(index, (element, &(line, column)))| {
            let locator = format!("{name}:{line}");
            let skipped = |error| Skipped {
                locator: locator.clone(),
                error,
            };
            let where_ = || format!("{name}:{line} (array index {index})");
            let text = element.get();
            let value = parse_value(text).map_err(|e| {
                skipped(Error::MalformedJson {
                    locator: where_(),
                    message: relocate(&e, line, column),
                })
            })?;
            let record = record_from_value(value, text.len(), field_map).map_err(|source| {
                skipped(Error::InvalidRecord {
                    locator: where_(),
                    source,
                })
            })?;
            Ok(SourcedRecord {
                record,
                locator: locator.clone(),
            })
        })
        .collect();
    Ok(outcomes)
}

/// A `.json` file holding one (pretty-printed) record.
fn read_document(name: &str, body: &[u8], first: usize, field_map: &FieldMap) -> Outcome {
    let (line, _) = line_and_column(body, first);
    let locator = format!("{name}:{line}");
    let skipped = |error| Skipped {
        locator: locator.clone(),
        error,
    };
    let text = std::str::from_utf8(body).map_err(|e| {
        let (line, message) = invalid_utf8_message(body, &e);
        skipped(Error::MalformedJson {
            locator: format!("{name}:{line}"),
            message,
        })
    })?;
    let value = parse_value(text).map_err(|e| {
        skipped(Error::MalformedJson {
            locator: locator.clone(),
            message: e.to_string(),
        })
    })?;
    let record = record_from_value(value, text.len(), field_map).map_err(|source| {
        skipped(Error::InvalidRecord {
            locator: locator.clone(),
            source,
        })
    })?;
    Ok(SourcedRecord {
        record,
        locator: locator.clone(),
    })
}

/// A JSON Lines file: one record per non-blank line.
/// Parses numbered, non-blank lines of JSON Lines input, in parallel, keeping their order.
fn read_lines(name: &str, lines: &[(usize, &[u8])], field_map: &FieldMap) -> Vec<Outcome> {
    lines
        .par_iter()
        .with_min_len(64)
        .map(|&(line, bytes)| {
            let locator = format!("{name}:{line}");
            let skipped = |error| Skipped {
                locator: locator.clone(),
                error,
            };
            let text = std::str::from_utf8(bytes).map_err(|e| {
                skipped(Error::MalformedJson {
                    locator: locator.clone(),
                    message: format!("invalid UTF-8 at column {}", e.valid_up_to() + 1),
                })
            })?;
            let value = parse_value(text).map_err(|e| {
                let message = e.to_string();
                let suffix = format!(" at line {} column {}", e.line(), e.column());
                let message = match message.strip_suffix(&suffix) {
                    Some(bare) => format!("{bare} at column {}", e.column()),
                    None => message,
                };
                skipped(Error::MalformedJson {
                    locator: locator.clone(),
                    message,
                })
            })?;
            let record = record_from_value(value, text.len(), field_map).map_err(|source| {
                skipped(Error::InvalidRecord {
                    locator: locator.clone(),
                    source,
                })
            })?;
            Ok(SourcedRecord {
                record,
                locator: locator.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
