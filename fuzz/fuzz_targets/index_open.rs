//! Arbitrary bytes in place of one file of a small index, with or without valid checksums,
//! then open, search, show, stats, export and check. The first two input bytes choose the file
//! and whether checksums are fixed up; the rest is the file (or its body).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// The template index, built once per fuzzing process.
fn template() -> &'static PathBuf {
    static TEMPLATE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &TEMPLATE
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let input = dir.path().join("records.jsonl");
            let records: String = [
                r#"{"id": "r-01", "title": "tokio runtime panics", "tags": ["rust"], "memoryType": "semantic"}"#,
                r#"{"id": "r-02", "title": "connection pool timeout", "tags": ["postgres"], "supersedes": "r-01"}"#,
                r#"{"id": "r-03", "title": "docker cache 数据库 连接", "projectContext": "payments"}"#,
            ]
            .join("\n");
            std::fs::write(&input, records).expect("input");
            let path = dir.path().join("index");
            let options = reliora::BuildOptions { inputs: vec![input], ..Default::default() };
            reliora::Index::build(&path, &options).expect("the template builds");
            let record: serde_json::Value =
                serde_json::json!({"id": "r-04", "title": "logged record", "tags": ["rust"]});
            reliora::index::writer::record(&path, reliora::Record::from_json(&record).unwrap())
                .expect("recorded");
            (dir, path)
        })
        .1
}

fuzz_target!(|data: &[u8]| {
    let (Some(&which), Some(&fix)) = (data.first(), data.get(1)) else {
        return;
    };
    let work = tempfile::tempdir().expect("a temporary directory");
    let dir = work.path().join("index");
    std::fs::create_dir(&dir).expect("the copy");
    for entry in std::fs::read_dir(template()).expect("the template").flatten() {
        std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("copied");
    }
    reliora::fuzzing::index_file(&dir, which as usize, fix & 1 == 1, &data[2..]);
});
