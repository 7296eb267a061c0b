//! Entry points for fuzzing (the `fuzz/` targets) and the robustness property tests: each takes
//! arbitrary bytes and drives one untrusted-input path of Reliora. None may panic, whatever the
//! bytes; errors are the expected outcome. Not part of the stable API.

use std::path::{Path, PathBuf};

use crate::format::footer::{write_file, FileKind};
use crate::format::manifest::Manifest;
use crate::index::check::check;
use crate::record::{parse_record_text, FieldMap};
use crate::{Index, SearchRequest};

/// Parses `bytes` as the text of one record (`reliora record`) and, when that succeeds, checks
/// that the record survives the store codec and the JSON export unchanged.
pub fn record_text(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    if let Ok(record) = parse_record_text(&text, "fuzz", &FieldMap::new()) {
        let encoded = crate::format::codec::encode(&record, "fuzz:1");
        let decoded = crate::format::codec::decode(&encoded).expect("what was encoded decodes");
        assert_eq!(decoded.record, record, "the store codec changed the record");
        assert_eq!(
            crate::format::codec::decode_text(&encoded),
            Ok(crate::format::codec::RecordText::of(&record)),
            "the text read in place is not the record's"
        );
        assert_eq!(
            crate::Record::from_json(&record.to_json()).as_ref(),
            Ok(&record),
            "export then import changed the record"
        );
    }
    let _ = crate::format::codec::decode(bytes);
    let _ = crate::format::codec::decode_text(bytes);
    let _ = crate::format::codec::decode_head(bytes);
    let _ = crate::format::codec::decode_log_entry(bytes);
    let _ = crate::format::postings::decode_bitmap(bytes);
}

/// Replaces file number `which` (in name order, the writer lock left out) of the index in `dir`
/// with `bytes` and uses the index: open, searches, `show`, `stats`, `export` and `check`.
///
/// With `fix_checksums`, `bytes` become the *body* of the file: its footer is written for them
/// and the manifest updated to match, so the bytes get past every checksum and reach the
/// parsers behind them (blob directories, columns, postings, bitmaps, records, the FST).
pub fn index_file(dir: &Path, which: usize, fix_checksums: bool, bytes: &[u8]) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "LOCK")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    if names.is_empty() {
        return;
    }
    let name = &names[which % names.len()];
    let path = dir.join(name);
    let kind = kind_of(name);
    match (fix_checksums, kind, Manifest::load(dir)) {
        (true, Some(kind), Ok(mut manifest)) => {
            let _ = std::fs::remove_file(&path);
            let Ok(footer) = write_file(&path, kind, bytes) else {
                return;
            };
            if kind == FileKind::Manifest {
                // A manifest body is JSON: nothing else to update.
            } else if let Some((segment, suffix)) = name.split_once('.') {
                for entry in manifest.segments.iter_mut().filter(|s| s.name == segment) {
                    entry.files.insert(suffix.to_string(), footer.into());
                }
                if manifest.store(dir).is_err() {
                    return;
                }
            }
        }
        _ => {
            if std::fs::write(&path, bytes).is_err() {
                return;
            }
        }
    }
    if let Ok(index) = Index::open(dir) {
        for (query, option) in [
            ("tokio runtime panic", None),
            ("connection pool", Some(("tag", "postgres"))),
            ("", Some(("type", "semantic"))),
            ("数据库 连接 docker", Some(("explain", "r-03"))),
            ("configuration", Some(("project-context", "payments"))),
            // Capitalized words are entities: decay's entity check reads records' text.
            ("Docker Tokio 数据库", Some(("profile", "decay"))),
        ] {
            let mut request = SearchRequest::new(query);
            if let Some((name, value)) = option {
                let _ = request.set_option(name, Some(value));
            }
            let _ = index.search(&request);
        }
        let _ = index.get("r-05");
        let _ = index.stats();
        let _ = index.export(&mut std::io::sink(), Path::new("-"));
    }
    let report = check(dir);
    // A write over whatever the bytes made of the index: refused when it is damaged, and then
    // nothing may change.
    let before = snapshot(dir);
    let record = crate::Record::from_json(&serde_json::json!({"id": "fuzz", "title": "after"}))
        .expect("a valid record");
    let written = crate::handle::writer::record(dir, record);
    if written.is_err() && !report.sound {
        assert_eq!(snapshot(dir), before, "a refused write changed the index");
    }
}

/// Builds the template index of the `index_open` fuzz target in `dir` (an existing directory)
/// and returns its path: three built records and one record in the log.
pub fn template_index(dir: &Path) -> PathBuf {
    let input = dir.join("records.jsonl");
    let records: String = [
        r#"{"id": "r-01", "title": "tokio runtime panics", "tags": ["rust"], "memoryType": "semantic"}"#,
        r#"{"id": "r-02", "title": "connection pool timeout", "tags": ["postgres"], "supersedes": "r-01"}"#,
        r#"{"id": "r-03", "title": "docker cache 数据库 连接", "projectContext": "payments"}"#,
    ]
    .join("\n");
    std::fs::write(&input, records).expect("the template's input");
    let path = dir.join("index");
    let options = crate::BuildOptions {
        inputs: vec![input],
        ..Default::default()
    };
    Index::build(&path, &options).expect("the template builds");
    let record = serde_json::json!({"id": "r-04", "title": "logged record", "tags": ["rust"]});
    crate::handle::writer::record(&path, crate::Record::from_json(&record).expect("a record"))
        .expect("the template's logged record");
    path
}

/// One input of the `index_open` fuzz target: the first byte chooses the file, the low bit of
/// the second whether checksums are fixed up, and the rest is the file (or its body). Copies
/// the index at `template` (see [`template_index`]) into `scratch` (an existing, empty
/// directory) and runs [`index_file`] on the copy. Inputs shorter than two bytes do nothing.
pub fn index_input(template: &Path, scratch: &Path, data: &[u8]) {
    let (Some(&which), Some(&fix)) = (data.first(), data.get(1)) else {
        return;
    };
    let dir = scratch.join("index");
    std::fs::create_dir(&dir).expect("the copy");
    for entry in std::fs::read_dir(template).expect("the template").flatten() {
        std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("copied");
    }
    index_file(&dir, which as usize, fix & 1 == 1, &data[2..]);
}

/// Every file of `dir` but the writer lock, with its bytes.
fn snapshot(dir: &Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name() != "LOCK")
                .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// The footer kind of an index file, by name; `None` for the record log (no footer).
fn kind_of(name: &str) -> Option<FileKind> {
    let suffix = name.split_once('.').map_or(name, |(_, s)| s);
    Some(match suffix {
        "MANIFEST" => FileKind::Manifest,
        "terms.fst" | "facets.fst" | "ids.fst" | "entities.fst" => FileKind::Fst,
        "terms.post" | "facets.post" | "pairs" => FileKind::Postings,
        "store" => FileKind::Store,
        "columns" => FileKind::Columns,
        "prefixes" => FileKind::Prefixes,
        _ => return None,
    })
}
