//! Helpers shared by the integration tests: a small index with a non-empty record log, copies of
//! it, and runs of the real binary that must never panic.

#![allow(dead_code)] // each test binary sharing it uses a different part

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use reliora::handle::writer;
use reliora::record::{LocatedRecord, Outcome, Record};
use reliora::{Index, SearchRequest};
use serde_json::{json, Value};

/// A fixed reference time, so answers do not depend on the clock.
pub const NOW: &str = "2026-01-01T00:00:00Z";

/// The 20 records of the small index: tags, types, supersession, CJK text, feedback, pins.
pub fn small_records() -> Vec<Value> {
    let topics = [
        ("tokio runtime panics inside async drop", "rust", "episodic"),
        ("sqlx pool timed out under load", "postgres", "episodic"),
        (
            "pgbouncer transaction mode breaks prepared statements",
            "postgres",
            "semantic",
        ),
        (
            "docker layer cache invalidated by COPY",
            "docker",
            "procedural",
        ),
        (
            "flaky playwright test waits for network idle",
            "ci",
            "episodic",
        ),
        ("数据库 连接 超时 在 高 负载 下", "postgres", "episodic"),
        ("redis eviction under maxmemory policy", "redis", "semantic"),
        (
            "cargo build fails offline without vendored crates",
            "rust",
            "procedural",
        ),
        (
            "github actions cache key collides across branches",
            "ci",
            "episodic",
        ),
        (
            "kubernetes liveness probe kills slow JVM startup",
            "k8s",
            "episodic",
        ),
        (
            "pytest fixture leaks database connections",
            "python",
            "episodic",
        ),
        (
            "go race detector flags concurrent map writes",
            "go",
            "semantic",
        ),
        (
            "migration locks the orders table for minutes",
            "postgres",
            "episodic",
        ),
        (
            "TLS handshake fails behind corporate proxy",
            "network",
            "episodic",
        ),
        (
            "webpack chunk hash changes on every build",
            "javascript",
            "procedural",
        ),
        (
            "Müller café encoding breaks CSV export",
            "python",
            "episodic",
        ),
        (
            "tokio runtime shutdown hangs on blocking task",
            "rust",
            "semantic",
        ),
        (
            "connection refused when the pool is exhausted",
            "postgres",
            "episodic",
        ),
        (
            "terraform state lock left behind after crash",
            "terraform",
            "episodic",
        ),
        ("nginx buffers large uploads to disk", "nginx", "episodic"),
    ];
    topics
        .iter()
        .enumerate()
        .map(|(i, (title, tag, kind))| {
            let mut record = json!({
                "id": format!("r-{i:02}"),
                "title": title,
                "problems": [format!("problem {i}: {title}")],
                "solution": format!("solution for {title}"),
                "tags": [tag, "sample"],
                "memoryType": kind,
                "projectContext": if i % 2 == 0 { "payments service" } else { "search service" },
                "createdAt": format!("2025-{:02}-{:02}T10:00:00Z", 1 + i % 12, 1 + i),
                "feedback": {"success": i % 3, "failure": i % 2},
                "pinned": i % 7 == 0,
            });
            if i == 16 {
                record["supersedes"] = json!("r-00");
            }
            record
        })
        .collect()
}

/// Builds the small index in `dir` (20 records in a segment) and then writes through the log:
/// two new records, a replacement, feedback and a delete — so every file, log included, holds
/// something a search depends on.
pub fn build_small_index(dir: &Path) {
    build_small_index_keeping(dir, |_| true);
}

/// How many entries [`build_small_index`] writes to the log.
pub const SMALL_LOG_ENTRIES: usize = 6;

/// [`build_small_index`] writing only the log entries `keep` accepts (by position): what the
/// index must answer when the others are lost to damage. An entry about a record that is not
/// there (feedback for a record whose entry was lost) is left out, as replaying the log skips it.
pub fn build_small_index_keeping(dir: &Path, keep: impl Fn(usize) -> bool) {
    let records = small_records()
        .into_iter()
        .enumerate()
        .map(|(i, value)| LocatedRecord {
            record: Record::from_json(&value).expect("a valid sample record"),
            locator: format!("small.jsonl:{}", i + 1),
        })
        .collect();
    Index::build_from_records(dir, records, &reliora::BuildOptions::default())
        .expect("the small index builds");
    let logged = [
        json!({"id": "log-1", "title": "tokio runtime blocked by a synchronous mutex",
               "tags": ["rust"], "problems": ["runtime stalls"]}),
        json!({"id": "log-2", "title": "postgres pool timeout after failover",
               "tags": ["postgres", "sample"], "supersedes": "r-01"}),
        json!({"id": "r-03", "title": "docker layer cache invalidated by ARG changes",
               "tags": ["docker"], "memoryType": "semantic"}),
    ];
    for (i, value) in logged.into_iter().enumerate() {
        if keep(i) {
            writer::record(dir, Record::from_json(&value).expect("valid")).expect("recorded");
        }
    }
    let not_found_is_fine = |outcome: reliora::Result<()>| match outcome {
        Ok(()) | Err(reliora::Error::NotFound(_)) => {}
        Err(other) => panic!("{other}"),
    };
    if keep(3) {
        not_found_is_fine(writer::feedback(dir, "r-02", Outcome::Success).map(drop));
    }
    if keep(4) {
        not_found_is_fine(writer::feedback(dir, "log-1", Outcome::Failure).map(drop));
    }
    if keep(5) {
        not_found_is_fine(writer::delete(dir, "r-19").map(drop));
    }
}

/// The searches every damage case runs: the index paths (terms, prefixes, phrases, facets,
/// columns, ids, the store and the log overlay) each get used by at least one of them.
pub fn sample_requests() -> Vec<SearchRequest> {
    // The `decay` search with entities comes twice: the second time, each segment reads which
    // records its postings cannot decide an entity check for (a pass over its terms). The
    // `bm25f` search reads the postings' term frequencies, chunk by chunk, and its word pairs.
    let specs: [(&str, &[(&str, &str)]); 10] = [
        ("Kafka runtime panic in Tokio", &[("profile", "decay")]),
        ("Kafka runtime panic in Tokio", &[("profile", "decay")]),
        ("tokio runtime panic in the pool", &[("profile", "bm25f")]),
        ("tokio runtime panic", &[]),
        ("connection pool timeout", &[("tag", "postgres")]),
        ("", &[("type", "semantic")]),
        ("数据库 连接", &[]),
        ("docker cache", &[("explain", "r-03"), ("full", "")]),
        (
            "migration orders table",
            &[("min-score", "50"), ("limit", "3")],
        ),
        (
            "service",
            &[("project-context", "payments"), ("limit", "50")],
        ),
    ];
    specs
        .iter()
        .map(|(query, options)| {
            let mut request = SearchRequest::new(*query);
            request.set_option("now", Some(NOW)).expect("valid now");
            for (name, value) in options.iter() {
                let value = (!value.is_empty()).then_some(*value);
                request.set_option(name, value).expect("valid option");
            }
            request
        })
        .collect()
}

/// A response without what legitimately differs between two copies of one index or between
/// the index and the scan: the fingerprint (it hashes the directory), backend, degraded and
/// notices.
pub fn comparable(response: &reliora::SearchResponse) -> Value {
    let mut value = serde_json::to_value(response).expect("responses serialize");
    let object = value.as_object_mut().expect("an object");
    for key in ["fingerprint", "backend", "degraded", "notices"] {
        object.remove(key);
    }
    value
}

/// [`comparable`] without locators, which shift when a log entry before them is lost.
pub fn comparable_without_locators(response: &reliora::SearchResponse) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(object) => {
                object.remove("locator");
                object.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value = comparable(response);
    strip(&mut value);
    value
}

/// Copies every file of `from` into `to` (created).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("the copy's directory");
    for entry in std::fs::read_dir(from).expect("the template").flatten() {
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copied");
    }
}

/// The index files of `dir` worth damaging (everything but the writer lock), sorted by name.
pub fn index_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the index")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "LOCK")
        .collect();
    names.sort();
    names
}

/// Every file of `dir` but the writer lock, with its bytes, sorted by name: what a refused
/// command must leave unchanged.
pub fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    index_files(dir)
        .into_iter()
        .map(|name| {
            let bytes = std::fs::read(dir.join(&name)).unwrap_or_default();
            (name, bytes)
        })
        .collect()
}

/// A small deterministic random number generator (xorshift64*), so failures replay from
/// their seed.
pub struct Rng(pub u64);

impl Rng {
    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

/// What one run of the binary produced.
#[derive(Debug)]
pub struct Run {
    /// The exit status.
    pub status: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// The single JSON document on stdout.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e}): {:?}; stderr {:?}",
                self.stdout, self.stderr
            )
        })
    }

    /// Each stdout line as JSON.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|line| serde_json::from_str(line).expect("each line is JSON"))
            .collect()
    }

    /// Exit status 0.
    pub fn assert_ok(&self, what: &str) {
        assert_eq!(self.status, 0, "{what}: {self:?}");
    }

    /// Exit status 0, and the JSON document on stdout.
    pub fn ok(&self) -> Value {
        assert_eq!(
            self.status, 0,
            "stdout {:?} stderr {:?}",
            self.stdout, self.stderr
        );
        self.json()
    }

    /// Exit status 2, and the SPEC error code on stdout.
    pub fn error_code(&self) -> String {
        assert_eq!(
            self.status, 2,
            "stdout {:?} stderr {:?}",
            self.stdout, self.stderr
        );
        self.json()["error"].as_str().unwrap().to_string()
    }

    /// Exit status 2 and `{"error": code, "message": …}` whose message contains every `mention`.
    pub fn assert_error(&self, code: &str, mentions: &[String], what: &str) {
        assert_eq!(self.status, 2, "{what}: exit status; {self:?}");
        let error = self.json();
        assert_eq!(error["error"], json!(code), "{what}: code; {error}");
        let message = error["message"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: no message in {error}"));
        for mention in mentions {
            assert!(
                message.contains(mention.as_str()),
                "{what}: the message {message:?} does not name {mention:?}"
            );
        }
    }
}

/// Runs `reliora --format json --index INDEX ARGS…` with `stdin`, and fails the test if the
/// process panicked (exit 101) or died by a signal.
pub fn reliora(index: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut with_index = vec!["--index", arg(index)];
    with_index.extend_from_slice(args);
    run_binary(&with_index, stdin)
}

/// Runs `reliora --format json ARGS…` with `stdin` (no implied `--index`), under the same
/// checks as [`reliora`].
pub fn run_binary(args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reliora"));
    command
        .arg("--format")
        .arg("json")
        .args(args)
        .env_remove("RELIORA_INDEX")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the binary starts");
    if let Some(bytes) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin is piped");
        // The binary may refuse before reading everything; a broken pipe is fine then.
        let _ = pipe.write_all(bytes);
    }
    let output = child.wait_with_output().expect("the binary runs");
    let run = Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    assert!(
        output.status.code().is_some(),
        "reliora {args:?} died by a signal: {output:?}"
    );
    assert_ne!(run.status, 101, "reliora {args:?} panicked: {run:?}");
    assert!(
        !run.stderr.contains("panicked"),
        "reliora {args:?} panicked (and recovered): {run:?}"
    );
    run
}

/// A path as `&str` for command lines.
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

/// `dir/name`.
pub fn join(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// The ids of the results whose score the `entity` adjustment changed (a query entity occurs in
/// them, SPEC §5.4), sorted.
pub fn entity_adjusted(response: &reliora::SearchResponse) -> Vec<String> {
    let mut ids: Vec<String> = (response.results.iter())
        .filter(|r| {
            r.score_breakdown.to_map()["adjustments"]
                .to_string()
                .contains("entity")
        })
        .map(|r| r.id.clone())
        .collect();
    ids.sort();
    ids
}
