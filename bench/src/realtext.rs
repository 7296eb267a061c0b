//! The real-text workload: experience records whose fields are real English sentences, and
//! real questions.
//!
//! Sentences come from `bench/realtext/sentences.py` (Debian's documentation packages and
//! SciFact's abstracts, one per line, in document order). A record takes a run of consecutive
//! sentences from one place of that file — so a record's fields share a topic, as a real
//! record's do — and spreads them over the ten fields in the shape of `data/`: a short title
//! cut from a sentence, one task sentence, one to three problems, a solution of two or three
//! sentences, why it worked, failed attempts and warnings, an applicability sentence, tags,
//! entities and a project context from a realistic vocabulary, a creation date over three
//! years, salience and feedback counts.
//!
//! The queries are SciFact's claims (natural-language questions of biomedical text) and the
//! agent-memory benchmark's queries (pasted errors, failing commands, tasks, questions), in
//! file order.

use std::io::{self, BufRead, Write};
use std::path::Path;

use crate::corpus::Rng;

/// Tags as coding agents write them, most frequent first (drawn with a Zipf-like skew).
const TAGS: &[&str] = &[
    "python",
    "rust",
    "postgres",
    "linux",
    "ci",
    "docker",
    "testing",
    "performance",
    "security",
    "networking",
    "build",
    "git",
    "javascript",
    "typescript",
    "kubernetes",
    "sql",
    "api",
    "concurrency",
    "memory",
    "debugging",
    "packaging",
    "dependencies",
    "configuration",
    "logging",
    "async",
    "database",
    "migrations",
    "shell",
    "bash",
    "systemd",
    "tls",
    "http",
    "json",
    "unicode",
    "filesystem",
    "permissions",
    "cargo",
    "pip",
    "npm",
    "go",
    "java",
    "c",
    "cpp",
    "cmake",
    "make",
    "compiler",
    "linker",
    "glibc",
    "ssl",
    "dns",
    "proxy",
    "cache",
    "redis",
    "nginx",
    "aws",
    "gcp",
    "azure",
    "terraform",
    "ansible",
    "github-actions",
    "gitlab-ci",
    "jenkins",
    "pytest",
    "cargo-test",
    "jest",
    "flaky-test",
    "timeouts",
    "deadlock",
    "oom",
    "profiling",
    "benchmarks",
    "regex",
    "parsing",
    "serialization",
    "encoding",
    "locale",
    "timezone",
    "datetime",
    "floating-point",
    "numpy",
    "pandas",
    "machine-learning",
    "gpu",
    "cuda",
    "wasm",
    "ffi",
    "unsafe",
    "lifetimes",
    "traits",
    "generics",
    "macros",
    "orm",
    "sqlalchemy",
    "django",
    "flask",
    "fastapi",
    "react",
    "node",
    "webpack",
    "vite",
    "eslint",
    "formatting",
    "linting",
    "documentation",
    "man-pages",
    "posix",
    "signals",
    "threads",
    "processes",
    "sockets",
    "ipc",
    "mmap",
    "io",
    "compression",
    "backup",
    "replication",
    "indexing",
    "query-planning",
    "vacuum",
    "locks",
    "transactions",
    "isolation",
    "upgrades",
    "release",
    "versioning",
    "windows",
    "macos",
    "arm64",
    "cross-compilation",
    "musl",
];

/// Project contexts: a product area and a stack.
const AREAS: &[&str] = &[
    "billing service",
    "search backend",
    "data pipeline",
    "mobile API",
    "internal CLI",
    "reporting job",
    "auth gateway",
    "ingest workers",
    "web dashboard",
    "ML training jobs",
    "payments ledger",
    "notification service",
    "build farm",
    "analytics warehouse",
    "customer portal",
    "edge proxy",
    "log shipper",
    "scheduler",
    "feature store",
    "docs site",
];
const STACKS: &[&str] = &[
    "Python 3.11 on Ubuntu 22.04",
    "Rust 1.80 with tokio",
    "PostgreSQL 15 on RDS",
    "Go 1.22 in Kubernetes",
    "Node 20 and TypeScript",
    "Java 17 with Spring",
    "Debian 12 containers",
    "GitHub Actions runners",
    "GitLab CI with Docker-in-Docker",
    "C++17 built with CMake",
    "Django 4 and Celery",
    "FastAPI behind nginx",
];
const TYPES: &[&str] = &["episodic", "semantic", "procedural"];

/// Entities as `data/`'s records name them (tools, services, libraries), most frequent first
/// (drawn with a Zipf-like skew, one to four a record as in `data/`).
const ENTITIES: &[&str] = &[
    "GitHub Actions",
    "PostgreSQL",
    "Kubernetes",
    "Docker",
    "Python",
    "Node.js",
    "TypeScript",
    "Rust",
    "React",
    "tokio",
    "Terraform",
    "pip",
    "pandas",
    "Redis",
    "Vite",
    "npm",
    "Amazon S3",
    "Next.js",
    "nginx",
    "Linux",
    "systemd",
    "Git",
    "cargo",
    "pytest",
    "webpack",
    "Django",
    "FastAPI",
    "SQLite",
    "MySQL",
    "Kafka",
    "gRPC",
    "OpenSSL",
    "Bash",
    "Go",
    "Gradle",
    "AWS Lambda",
    "Helm",
    "Prometheus",
    "Grafana",
    "Elasticsearch",
    "RabbitMQ",
    "Celery",
    "Jest",
    "ESLint",
    "glibc",
    "CMake",
    "Ubuntu",
    "Debian",
    "SciPy",
    "NumPy",
];

/// The seed of the entities' own stream, mixed into the records' seed: the entities were added
/// to the records after the workload's first figures, and drawing them apart leaves every
/// other field of every record as it was.
const ENTITY_STREAM: u64 = 0x656e_7469_7469_6573;

/// Sentences in document order.
pub fn read_sentences(path: &Path) -> io::Result<Vec<String>> {
    let file = std::fs::File::open(path)?;
    io::BufReader::new(file)
        .lines()
        .filter(|line| line.as_ref().map_or(true, |l| !l.trim().is_empty()))
        .collect()
}

/// Generates records from sentences.
pub struct Generator<'a> {
    rng: Rng,
    /// The entities' stream (see [`ENTITY_STREAM`]).
    entity_rng: Rng,
    sentences: &'a [String],
    at: usize,
}

impl<'a> Generator<'a> {
    /// A generator over `sentences` for `seed`.
    pub fn new(sentences: &'a [String], seed: u64) -> Generator<'a> {
        Generator {
            rng: Rng::new(seed),
            entity_rng: Rng::new(seed ^ ENTITY_STREAM),
            sentences,
            at: 0,
        }
    }

    /// The next sentence of the current run.
    fn next(&mut self) -> String {
        let s = self.sentences[self.at % self.sentences.len()].clone();
        self.at += 1;
        s
    }

    fn list(&mut self, lo: usize, hi: usize) -> Vec<String> {
        let n = self.rng.between(lo, hi);
        (0..n).map(|_| self.next()).collect()
    }

    /// The first words of a sentence (at most 12), without its final punctuation.
    fn title(&mut self) -> String {
        let sentence = self.next();
        let words: Vec<&str> = sentence.split_whitespace().take(12).collect();
        words
            .join(" ")
            .trim_end_matches(['.', ',', ';', ':', '!', '?'])
            .to_string()
    }

    /// Record number `i` as a JSON object.
    pub fn record(&mut self, i: usize) -> serde_json::Value {
        // A run of consecutive sentences from a random place: one topic per record.
        self.at = self.rng.below(self.sentences.len());
        let tag_count = self.rng.between(2, 5);
        let mut tags: Vec<&str> = (0..tag_count)
            .map(|_| {
                let r = (self.rng.unit().powi(2) * TAGS.len() as f64) as usize;
                TAGS[r.min(TAGS.len() - 1)]
            })
            .collect();
        tags.sort_unstable();
        tags.dedup();
        let context = format!(
            "{}, {}",
            AREAS[self.rng.below(AREAS.len())],
            STACKS[self.rng.below(STACKS.len())]
        );
        let entity_count = self.entity_rng.between(1, 4);
        let mut entities: Vec<&str> = (0..entity_count)
            .map(|_| {
                let r = (self.entity_rng.unit().powi(2) * ENTITIES.len() as f64) as usize;
                ENTITIES[r.min(ENTITIES.len() - 1)]
            })
            .collect();
        entities.sort_unstable();
        entities.dedup();
        let created = self.rng.created_at(1_095);
        let title = self.title();
        let solution = self.list(2, 3).join(" ");
        let why = self.list(1, 2).join(" ");
        serde_json::json!({
            "id": format!("rt-{i:08}"),
            "title": title,
            "task": self.next(),
            "problems": self.list(1, 3),
            "solution": solution,
            "whyItWorked": why,
            "failedAttempts": self.list(0, 2),
            "warnings": self.list(0, 1),
            "tags": tags,
            "entities": entities,
            "projectContext": context,
            "applicability": self.next(),
            "memoryType": TYPES[self.rng.below(TYPES.len())],
            "createdAt": created,
            "salience": (self.rng.below(100) as f64) / 100.0,
            "feedback": {"success": self.rng.below(4), "failure": self.rng.below(2)},
        })
    }

    /// Writes `n` records as JSON Lines.
    pub fn write_records(&mut self, n: usize, out: &mut impl Write) -> io::Result<()> {
        for i in 0..n {
            serde_json::to_writer(&mut *out, &self.record(i))?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// Copies the `text` of every line of BEIR-style query files into the harness's
/// `{"query": …}` lines, in order; returns how many.
pub fn write_queries(sources: &[&Path], out: &mut impl Write) -> io::Result<usize> {
    let mut n = 0;
    for source in sources {
        let file = std::fs::File::open(source)?;
        for line in io::BufReader::new(file).lines() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let value: serde_json::Value = serde_json::from_str(&line)
                .map_err(|e| io::Error::other(format!("{}: {e}", source.display())))?;
            let text = value["text"].as_str().ok_or_else(|| {
                io::Error::other(format!("{}: a line without text", source.display()))
            })?;
            serde_json::to_writer(&mut *out, &serde_json::json!({ "query": text }))?;
            out.write_all(b"\n")?;
            n += 1;
        }
    }
    Ok(n)
}
