//! The three engines, measured the same way on the same corpus and the same query tokens (the
//! SPEC tokens of each query: stop words removed).

use std::path::Path;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde_json::{json, Value};

/// The ten searchable fields and the SPEC group weights, used as boosts by the peers.
const FIELDS: [(&str, f32); 10] = [
    ("tags", 9.0),
    ("title", 8.0),
    ("problems", 7.0),
    ("task", 5.0),
    ("solution", 4.0),
    ("whyItWorked", 4.0),
    ("projectContext", 4.0),
    ("applicability", 4.0),
    ("failedAttempts", 3.0),
    ("warnings", 2.0),
];

const NOW: &str = "2026-06-01T00:00:00Z";

struct Workload {
    queries: Vec<String>,
    tokens: Vec<Vec<String>>,
}

fn workload(corpus: &Path) -> Workload {
    let analyzer = reliora::text::TextAnalyzer::new(false);
    let text = std::fs::read_to_string(corpus.join("queries.jsonl")).expect("queries.jsonl");
    let queries: Vec<String> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("query line");
            v["query"].as_str().expect("query").to_string()
        })
        .collect();
    let tokens = queries
        .iter()
        .map(|q| {
            analyzer
                .tokens(q, reliora::text::route(q))
                .into_iter()
                .map(|t| t.text)
                .collect()
        })
        .collect();
    Workload { queries, tokens }
}

fn records(corpus: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(corpus.join("records.jsonl")).expect("records.jsonl");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("record line"))
        .collect()
}

fn values(record: &Value, field: &str) -> Vec<String> {
    match &record[field] {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let meta = e.metadata().expect("metadata");
                    if meta.is_dir() {
                        dir_bytes(&e.path())
                    } else {
                        meta.len()
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|v| v.parse().unwrap_or(0)))
        })
        .unwrap_or(0)
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    percentile(&xs, 50.0)
}

/// Latency percentiles and QPS: `run(i)` answers query `i`. One thread runs every query once
/// (after a warm-up pass over a tenth of them); then all threads share the workload.
fn latencies(n: usize, run: &(dyn Fn(usize) + Sync)) -> Value {
    for i in 0..n / 10 {
        run(i);
    }
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let mut times: Vec<f64> = one.install(|| {
        (0..n)
            .map(|i| {
                let t = Instant::now();
                run(i);
                millis(t.elapsed())
            })
            .collect()
    });
    let total: f64 = times.iter().sum();
    times.sort_by(f64::total_cmp);
    let started = Instant::now();
    (0..n).into_par_iter().for_each(run);
    let all = started.elapsed().as_secs_f64();
    json!({
        "latency_ms": {"p50": percentile(&times, 50.0), "p90": percentile(&times, 90.0),
                       "p99": percentile(&times, 99.0)},
        "qps_1_thread": n as f64 / (total / 1e3),
        "qps_all_threads": n as f64 / all,
        "threads": rayon::current_num_threads(),
    })
}

/// Measures `engine` and returns one JSON object.
pub fn measure(engine: &str, corpus: &Path, work: &Path, reliora_bin: Option<&Path>) -> Value {
    let work_load = workload(corpus);
    let mut result = match engine {
        "reliora" => reliora_engine(corpus, work, &work_load, reliora_bin),
        "tantivy" => tantivy_engine(corpus, work, &work_load),
        "sqlite" => sqlite_engine(corpus, work, &work_load),
        other => panic!("unknown engine {other}"),
    };
    let input_bytes = std::fs::metadata(corpus.join("records.jsonl"))
        .map(|m| m.len())
        .unwrap_or(0);
    result["engine"] = engine.into();
    result["input_bytes"] = input_bytes.into();
    result["index_to_input"] =
        (result["index_bytes"].as_f64().unwrap_or(0.0) / input_bytes as f64).into();
    result["queries"] = work_load.queries.len().into();
    result["peak_rss_mib"] = (peak_rss_kib() as f64 / 1024.0).into();
    result
}

/// Reliora's query latency on an index already built: for quick comparisons while working on
/// the search path (`reliora-bench query --index DIR --corpus DIR`).
pub fn query_only(index_dir: &Path, corpus: &Path) -> Value {
    let index = reliora::Index::open(index_dir).expect("open");
    reliora_latencies(&index, &workload(corpus))
}

/// Latency of the workload's queries through the library API, top 10: the `standard` profile
/// at the top level, and with `RELIORA_BENCH_PROFILES` (e.g. `bm25f,decay,recency`) each of
/// those profiles under its name.
fn reliora_latencies(index: &reliora::Index, workload: &Workload) -> Value {
    let mut result = profile_latencies(index, workload, "standard");
    let others = std::env::var("RELIORA_BENCH_PROFILES").unwrap_or_default();
    for profile in others.split(',').filter(|p| !p.is_empty()) {
        result[profile] = profile_latencies(index, workload, profile);
    }
    result
}

fn profile_latencies(index: &reliora::Index, workload: &Workload, profile: &str) -> Value {
    let requests: Vec<reliora::SearchRequest> = workload
        .queries
        .iter()
        .map(|q| {
            let mut r = reliora::SearchRequest::new(q.clone());
            r.set_option("now", Some(NOW)).expect("now");
            r.set_option("profile", Some(profile)).expect("profile");
            r
        })
        .collect();
    let run = |i: usize| {
        // Queries whose words are all stop words are an error (empty_query): skip them. Any
        // other error would time a search that did not happen: stop there.
        if let Err(e) = index.search(&requests[i]) {
            assert!(
                e.code() == reliora::ErrorCode::EmptyQuery,
                "{profile} query {:?} failed: {e}",
                workload.queries[i]
            );
        }
    };
    latencies(requests.len(), &run)
}

/// What the workload's queries ask of an index, one query at a time through the library API
/// (`profile`, top 10), from each answer's counts and the engine's work counters
/// (`reliora::internals::work`): candidates as a fraction of the live records, the terms a
/// token expands to, phrases checked in stored text, records decoded whole or in part, records
/// whose matched tokens were looked up.
pub fn workload_statistics(index_dir: &Path, corpus: &Path, profile: &str) -> Value {
    use reliora::internals::work;
    let index = reliora::Index::open(index_dir).expect("open");
    let live = index.stats().expect("stats").records as f64;
    let workload = workload(corpus);
    let (mut fractions, mut expansions, mut checks, mut records, mut heads, mut coverages) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    let (mut tokens, mut terms, mut failed) = (0u64, 0u64, 0usize);
    for query in &workload.queries {
        let mut request = reliora::SearchRequest::new(query.clone());
        request.set_option("now", Some(NOW)).expect("now");
        request
            .set_option("profile", Some(profile))
            .expect("profile");
        let before = work::snapshot();
        let Ok(response) = index.search(&request) else {
            // Queries whose words are all stop words are an error (empty_query).
            failed += 1;
            continue;
        };
        let done = work::snapshot() - before;
        fractions.push(response.counts.candidates as f64 / live);
        if done.tokens > 0 {
            expansions.push(done.terms as f64 / done.tokens as f64);
        }
        tokens += done.tokens;
        terms += done.terms;
        checks.push(done.phrase_checks as f64);
        records.push(done.records as f64);
        heads.push(done.heads as f64);
        coverages.push(done.coverages as f64);
    }
    let summary = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        let mean = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
        json!({
            "mean": mean,
            "p50": percentile(&xs, 50.0),
            "p90": percentile(&xs, 90.0),
            "max": xs.last().copied().unwrap_or(0.0),
        })
    };
    json!({
        "profile": profile,
        "queries": workload.queries.len(),
        "refused": failed,
        "live_records": live,
        "candidates_fraction": summary(fractions),
        "terms_per_token": terms as f64 / tokens.max(1) as f64,
        "terms_per_token_by_query": summary(expansions),
        "phrase_checks_per_query": summary(checks),
        "records_decoded_per_query": summary(records),
        "heads_decoded_per_query": summary(heads),
        "coverages_per_query": summary(coverages),
    })
}

fn reliora_engine(
    corpus: &Path,
    work: &Path,
    workload: &Workload,
    reliora_bin: Option<&Path>,
) -> Value {
    use reliora::{BuildOptions, Index};
    let dir = work.join("index");
    let started = Instant::now();
    let report = Index::build(
        &dir,
        &BuildOptions {
            inputs: vec![corpus.join("records.jsonl")],
            ..BuildOptions::default()
        },
    )
    .expect("reliora build");
    let build = started.elapsed().as_secs_f64();
    let open_ms = median(
        (0..20)
            .map(|_| {
                let t = Instant::now();
                let index = Index::open(&dir).expect("open");
                let ms = millis(t.elapsed());
                drop(index);
                ms
            })
            .collect(),
    );
    let index = Index::open(&dir).expect("open");
    let mut result = reliora_latencies(&index, workload);
    result["records"] = report.records.into();
    result["build_seconds"] = build.into();
    result["records_per_second"] = (report.records as f64 / build).into();
    result["index_bytes"] = dir_bytes(&dir).into();
    result["open_ms"] = open_ms.into();
    if let Some(bin) = reliora_bin {
        let times: Vec<f64> = workload
            .queries
            .iter()
            .take(30)
            .map(|q| {
                let t = Instant::now();
                let status = std::process::Command::new(bin)
                    .args(["--format", "json", "--index"])
                    .arg(&dir)
                    .args(["search", q, "--now", NOW])
                    .stdout(std::process::Stdio::null())
                    .status()
                    .expect("reliora process");
                assert!(status.success() || status.code() == Some(2));
                millis(t.elapsed())
            })
            .collect();
        result["process_ms_p50"] = median(times).into();
    }
    result
}

fn tantivy_engine(corpus: &Path, work: &Path, workload: &Workload) -> Value {
    use tantivy::collector::TopDocs;
    use tantivy::query::QueryParser;
    use tantivy::schema::{Schema, Value as _, STORED, STRING, TEXT};
    use tantivy::{Index, IndexWriter, TantivyDocument};

    let mut builder = Schema::builder();
    let id = builder.add_text_field("id", STRING | STORED);
    let fields: Vec<_> = FIELDS
        .iter()
        .map(|(name, boost)| (builder.add_text_field(name, TEXT), *boost))
        .collect();
    let schema = builder.build();
    let dir = work.join("index");
    std::fs::create_dir_all(&dir).expect("dir");

    let started = Instant::now();
    let records = records(corpus);
    let index = Index::create_in_dir(&dir, schema).expect("tantivy index");
    let threads = rayon::current_num_threads();
    let mut writer: IndexWriter = index
        .writer_with_num_threads(threads, threads * 200_000_000)
        .expect("writer");
    for record in &records {
        let mut doc = TantivyDocument::default();
        doc.add_text(id, record["id"].as_str().unwrap_or(""));
        for ((name, _), (field, _)) in FIELDS.iter().zip(&fields) {
            for value in values(record, name) {
                doc.add_text(*field, value);
            }
        }
        writer.add_document(doc).expect("add");
    }
    writer.commit().expect("commit");
    writer.wait_merging_threads().expect("merge");
    let build = started.elapsed().as_secs_f64();

    let open_ms = median(
        (0..20)
            .map(|_| {
                let t = Instant::now();
                let index = Index::open_in_dir(&dir).expect("open");
                let reader = index.reader().expect("reader");
                let _ = reader.searcher();
                millis(t.elapsed())
            })
            .collect(),
    );
    let index = Index::open_in_dir(&dir).expect("open");
    let reader = index.reader().expect("reader");
    let searcher = reader.searcher();
    let mut parser = QueryParser::for_index(&index, fields.iter().map(|f| f.0).collect());
    for (field, boost) in &fields {
        parser.set_field_boost(*field, *boost);
    }
    let queries: Vec<_> = workload
        .tokens
        .iter()
        .map(|t| parser.parse_query(&t.join(" ")).ok())
        .collect();
    let run = |i: usize| {
        if let Some(query) = &queries[i] {
            let top = searcher
                .search(query, &TopDocs::with_limit(10))
                .expect("search");
            for (_, address) in top {
                let doc: TantivyDocument = searcher.doc(address).expect("doc");
                let _ = doc.get_first(id).and_then(|v| v.as_str().map(str::len));
            }
        }
    };
    let mut result = latencies(queries.len(), &run);
    result["records"] = records.len().into();
    result["build_seconds"] = build.into();
    result["records_per_second"] = (records.len() as f64 / build).into();
    result["index_bytes"] = dir_bytes(&dir).into();
    result["open_ms"] = open_ms.into();
    result
}

fn sqlite_engine(corpus: &Path, work: &Path, workload: &Workload) -> Value {
    use rusqlite::Connection;
    let path = work.join("fts.sqlite");
    let started = Instant::now();
    let records = records(corpus);
    {
        let mut conn = Connection::open(&path).expect("sqlite");
        conn.execute_batch(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
             CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, tags, title, problems, task,
               solution, why, project, applicability, failed, warnings);",
        )
        .expect("schema");
        let tx = conn.transaction().expect("transaction");
        {
            let mut insert = tx
                .prepare("INSERT INTO docs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)")
                .expect("insert");
            for r in &records {
                let f: Vec<String> = FIELDS
                    .iter()
                    .map(|(n, _)| values(r, n).join("\n"))
                    .collect();
                insert
                    .execute(rusqlite::params![
                        r["id"].as_str().unwrap_or(""),
                        f[0],
                        f[1],
                        f[2],
                        f[3],
                        f[4],
                        f[5],
                        f[6],
                        f[7],
                        f[8],
                        f[9]
                    ])
                    .expect("row");
            }
        }
        tx.commit().expect("commit");
    }
    let build = started.elapsed().as_secs_f64();
    let open_ms = median(
        (0..20)
            .map(|_| {
                let t = Instant::now();
                let conn = Connection::open(&path).expect("open");
                conn.prepare("SELECT 1 FROM docs LIMIT 1").expect("prepare");
                millis(t.elapsed())
            })
            .collect(),
    );
    let weights: Vec<String> = FIELDS.iter().map(|(_, w)| format!("{w:.1}")).collect();
    let sql = format!(
        "SELECT id FROM docs WHERE docs MATCH ?1 ORDER BY bm25(docs, 0.0, {}) LIMIT 10",
        weights.join(", ")
    );
    let matches: Vec<Option<String>> = workload
        .tokens
        .iter()
        .map(|t| {
            (!t.is_empty()).then(|| {
                t.iter()
                    .map(|w| format!("\"{w}\""))
                    .collect::<Vec<_>>()
                    .join(" OR ")
            })
        })
        .collect();
    thread_local! {
        static CONN: std::cell::RefCell<Option<Connection>> = const { std::cell::RefCell::new(None) };
    }
    let run = |i: usize| {
        let Some(m) = &matches[i] else { return };
        CONN.with(|c| {
            let mut c = c.borrow_mut();
            let conn = c.get_or_insert_with(|| Connection::open(&path).expect("open"));
            let mut statement = conn.prepare_cached(&sql).expect("prepare");
            let ids: Vec<String> = statement
                .query_map([m], |row| row.get(0))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows");
            std::hint::black_box(ids);
        });
    };
    let mut result = latencies(matches.len(), &run);
    result["records"] = records.len().into();
    result["build_seconds"] = build.into();
    result["records_per_second"] = (records.len() as f64 / build).into();
    result["index_bytes"] = std::fs::metadata(&path)
        .map(|m| m.len())
        .unwrap_or(0)
        .into();
    result["open_ms"] = open_ms.into();
    result
}
