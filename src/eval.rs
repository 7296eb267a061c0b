//! `reliora eval --beir DIR` (SPEC §10): relevance metrics on a BEIR-format folder.
//!
//! The folder holds `corpus.jsonl` (documents), `queries.jsonl` (`{"_id", "text"}`) and
//! `qrels/SPLIT.tsv` (a header, then `query-id<TAB>corpus-id<TAB>score` rows, LF or CRLF). The
//! corpus is built into a temporary index with BEIR's conventions — `_id` → `id`, `text` →
//! `problems` ([`BEIR_FIELD_MAP`]; `--field-map` overrides a source name) — and an invalid
//! document fails the run naming it, unless `--skip-invalid` makes skipping explicit (each
//! skipped document is reported with its reason): a corpus is never silently shrunk. Every
//! judged query is searched once, in query-id order, for its top 100, and the means over the
//! queries with at least one relevant document are reported: nDCG@10 (gain = the qrels score,
//! discount log2(rank + 1), as BEIR and `trec_eval` compute it), Recall@10, Recall@100, MRR@10,
//! and queries per second (those queries ÷ the wall time of their searches). A query whose
//! judgments are all 0 is counted apart, never averaged in as a zero.
//!
//! ```
//! use std::collections::HashMap;
//! use reliora::eval::{mrr_at, ndcg_at, recall_at};
//!
//! let judged: HashMap<String, u32> = [("d1".to_string(), 1), ("d3".to_string(), 1)].into();
//! let ranking = ["d2", "d1", "d3"];
//! assert_eq!(recall_at(&ranking, &judged, 2), 0.5);
//! assert_eq!(mrr_at(&ranking, &judged, 10), 0.5);
//! let ideal = 1.0 + 1.0 / 3f64.log2();
//! assert_eq!(ndcg_at(&ranking, &judged, 10), (1.0 / 3f64.log2() + 0.5) / ideal);
//! ```

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::error::{Error, ErrorCode, Result};
use crate::index::{BuildOptions, Index};
use crate::record::FieldMap;
use crate::search::request::SearchRequest;

/// Results fetched per query: enough for Recall@100.
pub const DEPTH: usize = 100;

/// BEIR's corpus keys, renamed to record fields unless a `--field-map` names the same source.
pub const BEIR_FIELD_MAP: [(&str, &str); 2] = [("_id", "id"), ("text", "problems")];

/// The field map of a BEIR corpus: the user's `SRC=DST` specs, then [`BEIR_FIELD_MAP`] for
/// every source they do not name.
pub fn beir_field_map(specs: &[String]) -> Result<FieldMap> {
    let mut map = FieldMap::new();
    for spec in specs {
        map.push_spec(spec)?;
    }
    for (source, target) in BEIR_FIELD_MAP {
        let named = specs
            .iter()
            .any(|spec| spec.split_once('=').is_some_and(|(s, _)| s == source));
        if !named {
            map.push_spec(&format!("{source}={target}"))?;
        }
    }
    Ok(map)
}

/// What to evaluate.
#[derive(Debug, Clone)]
pub struct BeirOptions {
    /// The BEIR folder.
    pub dir: PathBuf,
    /// The qrels split (`test`).
    pub split: String,
    /// Input key renames for the corpus.
    pub field_map: FieldMap,
    /// Build the temporary index with stemming.
    pub stem: bool,
    /// Skip (and report) invalid documents instead of failing.
    pub skip_invalid: bool,
    /// The search options (profile, …); its query and limit are set per query.
    pub request: SearchRequest,
}

/// The metrics of one run, averaged over the judged queries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    /// The BEIR folder.
    pub dataset: PathBuf,
    /// The qrels split.
    pub split: String,
    /// The profile used.
    pub profile: crate::search::request::Profile,
    /// Whether the index was stemmed.
    pub stem: bool,
    /// Documents indexed.
    pub documents: usize,
    /// Documents skipped as invalid records (`--skip-invalid`).
    pub skipped: usize,
    /// Each skipped document and why.
    #[serde(rename = "skippedDocuments")]
    pub skipped_documents: Vec<crate::index::SkippedRecord>,
    /// Judged queries searched and averaged: those with at least one relevant document.
    pub queries: usize,
    /// Judged queries whose judgments are all 0: searched for nothing, not averaged.
    #[serde(rename = "queriesWithoutRelevant")]
    pub queries_without_relevant: usize,
    /// Mean nDCG@10.
    #[serde(rename = "nDCG@10")]
    pub ndcg_at_10: f64,
    /// Mean Recall@10.
    #[serde(rename = "Recall@10")]
    pub recall_at_10: f64,
    /// Mean Recall@100.
    #[serde(rename = "Recall@100")]
    pub recall_at_100: f64,
    /// Mean MRR@10.
    #[serde(rename = "MRR@10")]
    pub mrr_at_10: f64,
    /// Judged queries per second of search time.
    #[serde(rename = "queriesPerSecond")]
    pub queries_per_second: f64,
    /// Seconds spent building the temporary index.
    #[serde(rename = "buildSeconds")]
    pub build_seconds: f64,
}

/// nDCG@k: `Σ_{i ≤ k} gain(d_i) / log2(i + 1)` divided by the same sum over the ideal order of
/// the judged gains; 0 when no judged gain is positive.
pub fn ndcg_at<S: AsRef<str>>(ranking: &[S], judged: &HashMap<String, u32>, k: usize) -> f64 {
    let dcg: f64 = ranking
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, d)| {
            f64::from(judged.get(d.as_ref()).copied().unwrap_or(0)) / ((i + 2) as f64).log2()
        })
        .sum();
    let mut ideal: Vec<u32> = judged.values().copied().filter(|&g| g > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, &g)| f64::from(g) / ((i + 2) as f64).log2())
        .sum();
    if idcg > 0.0 {
        dcg / idcg
    } else {
        0.0
    }
}

/// Recall@k: relevant documents (gain > 0) in the top k ÷ relevant documents; 0 when none is.
pub fn recall_at<S: AsRef<str>>(ranking: &[S], judged: &HashMap<String, u32>, k: usize) -> f64 {
    let relevant = judged.values().filter(|&&g| g > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = ranking
        .iter()
        .take(k)
        .filter(|d| judged.get(d.as_ref()).is_some_and(|&g| g > 0))
        .count();
    found as f64 / relevant as f64
}

/// MRR@k: 1 / the rank of the first relevant document within the top k, else 0.
pub fn mrr_at<S: AsRef<str>>(ranking: &[S], judged: &HashMap<String, u32>, k: usize) -> f64 {
    ranking
        .iter()
        .take(k)
        .position(|d| judged.get(d.as_ref()).is_some_and(|&g| g > 0))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

fn invalid(message: String) -> Error {
    Error::query(ErrorCode::InvalidOption, message)
}

/// Reads `qrels/SPLIT.tsv`: query id → (document id → score). A first line that does not end
/// in a number is a header.
pub fn read_qrels(path: &Path) -> Result<BTreeMap<String, HashMap<String, u32>>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut qrels: BTreeMap<String, HashMap<String, u32>> = BTreeMap::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| Error::io(path, e))?;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        let parsed = match fields.as_slice() {
            [q, d, score] | [q, _, d, score] => score.parse::<i64>().ok().map(|s| (*q, *d, s)),
            _ => None,
        };
        match parsed {
            Some((q, d, score)) => {
                qrels
                    .entry(q.to_string())
                    .or_default()
                    .insert(d.to_string(), score.max(0) as u32);
            }
            None if n == 0 => {} // the header
            None => {
                return Err(invalid(format!(
                    "{}:{}: expected query-id, corpus-id and an integer score separated by tabs",
                    path.display(),
                    n + 1
                )))
            }
        }
    }
    Ok(qrels)
}

/// Reads `queries.jsonl`: query id → text.
pub fn read_queries(path: &Path) -> Result<HashMap<String, String>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut queries = HashMap::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| Error::io(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| Error::MalformedJson {
                locator: format!("{}:{}", path.display(), n + 1),
                message: e.to_string(),
            })?;
        let id = match &value["_id"] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(n) => n.to_string(),
            _ => {
                return Err(invalid(format!(
                    "{}:{}: a query needs an \"_id\"",
                    path.display(),
                    n + 1
                )))
            }
        };
        let text = value["text"].as_str().unwrap_or_default().to_string();
        queries.insert(id, text);
    }
    Ok(queries)
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path =
            std::env::temp_dir().join(format!("reliora-eval-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).map_err(|e| Error::io(&path, e))?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Builds the corpus into a temporary index, runs every judged query and averages the metrics.
pub fn run_beir(options: &BeirOptions) -> Result<EvalReport> {
    let dir = &options.dir;
    let qrels = read_qrels(&dir.join("qrels").join(format!("{}.tsv", options.split)))?;
    let queries = read_queries(&dir.join("queries.jsonl"))?;
    let temp = TempDir::new()?;
    let started = Instant::now();
    let report = Index::build(
        &temp.0.join("index"),
        &BuildOptions {
            inputs: vec![dir.join("corpus.jsonl")],
            field_map: options.field_map.clone(),
            skip_invalid: options.skip_invalid,
            stem: options.stem,
            progress: None,
            segment_records: 0,
            spill_records: 0,
            replace: false,
            shard: None,
        },
    )?;
    let build_seconds = started.elapsed().as_secs_f64();
    let index = Index::open(&temp.0.join("index"))?;

    let mut judged_queries = Vec::with_capacity(qrels.len());
    let mut queries_without_relevant = 0;
    for (id, judged) in &qrels {
        if !judged.values().any(|&gain| gain > 0) {
            queries_without_relevant += 1;
            continue;
        }
        let text = queries.get(id).ok_or_else(|| {
            invalid(format!(
                "{}: query {id:?} of the qrels is not in queries.jsonl",
                dir.display()
            ))
        })?;
        judged_queries.push((text.as_str(), judged));
    }
    let mut request = options.request.clone();
    request.limit = DEPTH;
    let started = Instant::now();
    let mut sums = [0.0f64; 4];
    for (text, judged) in &judged_queries {
        request.query = text.to_string();
        let ranking: Vec<String> = match index.search(&request) {
            Ok(response) => response.results.into_iter().map(|r| r.id).collect(),
            Err(e) if e.code() == ErrorCode::EmptyQuery => Vec::new(),
            Err(e) => return Err(e),
        };
        sums[0] += ndcg_at(&ranking, judged, 10);
        sums[1] += recall_at(&ranking, judged, 10);
        sums[2] += recall_at(&ranking, judged, 100);
        sums[3] += mrr_at(&ranking, judged, 10);
    }
    let search_seconds = started.elapsed().as_secs_f64();
    let n = judged_queries.len();
    let mean = |sum: f64| if n == 0 { 0.0 } else { sum / n as f64 };
    Ok(EvalReport {
        dataset: dir.clone(),
        split: options.split.clone(),
        profile: options.request.profile,
        stem: options.stem,
        documents: report.records,
        skipped: report.skipped.len(),
        skipped_documents: report.skipped,
        queries: n,
        queries_without_relevant,
        ndcg_at_10: mean(sums[0]),
        recall_at_10: mean(sums[1]),
        recall_at_100: mean(sums[2]),
        mrr_at_10: mean(sums[3]),
        queries_per_second: if search_seconds > 0.0 {
            n as f64 / search_seconds
        } else {
            0.0
        },
        build_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(pairs: &[(&str, u32)]) -> HashMap<String, u32> {
        pairs.iter().map(|(d, g)| (d.to_string(), *g)).collect()
    }

    #[test]
    fn metric_table() {
        let log2 = |x: f64| x.log2();
        // (ranking, judgments, nDCG@10, Recall@10, MRR@10)
        type Case<'a> = (Vec<&'a str>, HashMap<String, u32>, f64, f64, f64);
        let cases: Vec<Case> = vec![
            (vec!["a", "b"], judged(&[("a", 1)]), 1.0, 1.0, 1.0),
            (
                vec!["b", "a"],
                judged(&[("a", 1)]),
                1.0 / log2(3.0),
                1.0,
                0.5,
            ),
            (vec!["x", "y"], judged(&[("a", 1)]), 0.0, 0.0, 0.0),
            (vec![], judged(&[("a", 1)]), 0.0, 0.0, 0.0),
            (
                vec!["a", "x", "b"],
                judged(&[("a", 1), ("b", 1), ("c", 1)]),
                (1.0 + 0.5) / (1.0 + 1.0 / log2(3.0) + 0.5),
                2.0 / 3.0,
                1.0,
            ),
            // Graded: gains 2 and 1, ranked in the wrong order.
            (
                vec!["b", "a"],
                judged(&[("a", 2), ("b", 1)]),
                (1.0 + 2.0 / log2(3.0)) / (2.0 + 1.0 / log2(3.0)),
                1.0,
                1.0,
            ),
            // A zero judgment is not relevant.
            (
                vec!["z", "a"],
                judged(&[("a", 1), ("z", 0)]),
                1.0 / log2(3.0),
                1.0,
                0.5,
            ),
            (vec!["a"], judged(&[("z", 0)]), 0.0, 0.0, 0.0),
        ];
        for (ranking, j, ndcg, recall, mrr) in cases {
            assert!(
                (ndcg_at(&ranking, &j, 10) - ndcg).abs() < 1e-12,
                "{ranking:?}"
            );
            assert!(
                (recall_at(&ranking, &j, 10) - recall).abs() < 1e-12,
                "{ranking:?}"
            );
            assert!(
                (mrr_at(&ranking, &j, 10) - mrr).abs() < 1e-12,
                "{ranking:?}"
            );
        }
    }

    #[test]
    fn cutoffs_ignore_documents_below_k() {
        let ranking: Vec<String> = (0..20).map(|i| format!("d{i}")).collect();
        let j = judged(&[("d12", 1)]);
        assert_eq!(ndcg_at(&ranking, &j, 10), 0.0);
        assert_eq!(recall_at(&ranking, &j, 10), 0.0);
        assert_eq!(recall_at(&ranking, &j, 100), 1.0);
        assert_eq!(mrr_at(&ranking, &j, 10), 0.0);
        assert_eq!(mrr_at(&ranking, &j, 13), 1.0 / 13.0);
    }

    #[test]
    fn qrels_accept_a_header_crlf_and_the_four_column_layout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("test.tsv");
        std::fs::write(
            &path,
            "query-id\tcorpus-id\tscore\r\n1\td1\t1\r\n1\td2\t2\r\n2\t0\td3\t1\n",
        )
        .unwrap();
        let qrels = read_qrels(&path).unwrap();
        assert_eq!(qrels["1"], judged(&[("d1", 1), ("d2", 2)]));
        assert_eq!(qrels["2"], judged(&[("d3", 1)]));
        std::fs::write(&path, "query-id\tcorpus-id\tscore\n1\td1\n").unwrap();
        let err = read_qrels(&path).unwrap_err();
        assert!(err.to_string().contains("test.tsv:2"), "{err}");
    }
}
