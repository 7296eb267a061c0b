//! Every call into the `reliora` library's Rust API, in one place: the rest of the binding
//! deals in paths, strings and JSON text, so a change of the library's type names or request
//! fields is answered here alone.
//!
//! Search options reach the library through its string option adapter
//! ([`SearchRequest::set_option`]), the one the command line uses, so values are validated with
//! the same SPEC error codes and messages; responses and reports are serialized with
//! `serde_json`, as `reliora … --format json` prints them.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use reliora::eval::{beir_field_map, run_beir, BeirOptions};
use reliora::record::input::FieldMap;
use reliora::record::{parse_record_text, Outcome};
use reliora::shards::{self, CollectionStatistics, Merged, ShardCandidates, ShardQuery};
use reliora::{
    BuildOptions, DuplicateWarning, Error, ErrorCode, Index, IndexReader, IndexWriter,
    SearchRequest, Shard,
};
use serde::Serialize;

/// Search options as `(name, value)` pairs: a command-line flag name without its dashes
/// (`limit`, `min-score`) and its textual value, `None` for a flag without one (`full`).
pub type Options = [(String, Option<String>)];

/// A library error reduced to what Python needs: the SPEC §9 code and the message.
#[derive(Debug)]
pub struct Failure {
    /// `invalid_limit`, `not_found`, … (SPEC §9).
    pub code: &'static str,
    /// The library's message, as the command line prints it.
    pub message: String,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure {
            code: error.code().as_str(),
            message: error.to_string(),
        }
    }
}

/// The binding's result type.
pub type Result<T> = std::result::Result<T, Failure>;

/// Compact JSON of a library value, as the command line prints it.
fn json(value: &impl Serialize) -> String {
    serde_json::to_string(value).expect("library responses serialize")
}

fn field_map(specs: &[String]) -> Result<FieldMap> {
    let mut map = FieldMap::new();
    for spec in specs {
        map.push_spec(spec)?;
    }
    Ok(map)
}

/// A search request for `query` with `options` applied in order (the first invalid one fails).
fn request(query: &str, options: &Options) -> Result<SearchRequest> {
    let mut request = SearchRequest::new(query);
    for (name, value) in options {
        request.set_option(name, value.as_deref())?;
    }
    Ok(request)
}

/// `reliora build`: a new index generation in `dir`; the build report as JSON.
pub fn build(
    dir: &Path,
    inputs: Vec<PathBuf>,
    field_map_specs: &[String],
    stem: bool,
    skip_invalid: bool,
    replace: bool,
    shard: Option<(u32, u32)>,
) -> Result<String> {
    let options = BuildOptions {
        inputs,
        field_map: field_map(field_map_specs)?,
        skip_invalid,
        stem,
        replace,
        shard: shard.map(|(index, count)| Shard { index, count }),
        ..BuildOptions::default()
    };
    Ok(json(&Index::build(dir, &options)?))
}

/// An index directory searched again and again, reopened whenever a writer — in this process
/// or another — changed it (the library's reopening searcher). Shareable between threads.
pub struct Reader {
    searcher: IndexReader,
}

impl Reader {
    /// Opens the index in `dir` now: fails when there is none.
    pub fn open(dir: &Path) -> Result<Reader> {
        Ok(Reader {
            searcher: IndexReader::open(dir)?,
        })
    }

    /// The index directory.
    pub fn dir(&self) -> &Path {
        self.searcher.dir()
    }

    /// One search; the response as JSON, as `reliora search` prints it.
    pub fn search(&self, query: &str, options: &Options) -> Result<String> {
        let request = request(query, options)?;
        Ok(json(&self.searcher.search(&request)?))
    }

    /// Several queries with the same options, searched in parallel on one snapshot; the
    /// responses in query order, or the error of the first query (in query order) that failed.
    pub fn search_batch(&self, queries: &[String], options: &Options) -> Result<Vec<String>> {
        let template = request("", options)?;
        let index = self.searcher.index()?;
        queries
            .par_iter()
            .map(|query| {
                let mut request = template.clone();
                request.set_query(query.clone());
                Ok(json(&index.search(&request)?))
            })
            .collect()
    }

    /// SPEC §6.1 `supersededBy` of this index's superseded ids, as a JSON object.
    pub fn superseded_by(&self) -> Result<String> {
        Ok(json(&self.searcher.index()?.superseded_by()?))
    }

    /// Phase one of a sharded search on this shard: its collection statistics as JSON.
    pub fn collection_statistics(&self, query: &str, options: &Options) -> Result<String> {
        let request = request(query, options)?;
        let index = self.searcher.index()?;
        Ok(index.collection_statistics(&request)?.to_json())
    }

    /// Phase two of a sharded search on this shard: its candidates as JSON.
    pub fn shard_candidates(
        &self,
        query: &str,
        options: &Options,
        shard_query: &str,
    ) -> Result<String> {
        let request = request(query, options)?;
        let shard_query = ShardQuery::from_json(shard_query)?;
        let index = self.searcher.index()?;
        Ok(index.shard_candidates(&request, &shard_query)?.to_json())
    }

    /// The live record named by an id or a locator: its JSON and its locator.
    pub fn get(&self, id_or_locator: &str) -> Result<(String, String)> {
        let stored = self.searcher.get(id_or_locator)?;
        Ok((json(&stored.record.to_json()), stored.locator))
    }
}

/// `reliora record`: one record given as JSON text; the report as JSON.
pub fn record(dir: &Path, text: &str) -> Result<String> {
    let record = parse_record_text(text, "<record>", &FieldMap::new())?;
    Ok(json(&IndexWriter::new(dir).record(record)?))
}

/// The id of a record given as JSON text (as given, or derived from the object), to route it.
pub fn record_id(text: &str) -> Result<String> {
    Ok(parse_record_text(text, "<record>", &FieldMap::new())?.id)
}

/// The similar records `record` would be warned of in the index in `dir`, as JSON.
pub fn similar(dir: &Path, text: &str) -> Result<String> {
    let record = parse_record_text(text, "<record>", &FieldMap::new())?;
    Ok(json(&IndexWriter::new(dir).similar(&record)?))
}

/// `record` reporting the warnings given (JSON, from [`similar`] on every shard) instead of
/// searching; the report as JSON.
pub fn record_with_warnings(dir: &Path, text: &str, warnings: &str) -> Result<String> {
    let record = parse_record_text(text, "<record>", &FieldMap::new())?;
    let warnings: Vec<DuplicateWarning> = serde_json::from_str(warnings)
        .map_err(|e| Error::query(ErrorCode::InvalidOption, format!("malformed warnings: {e}")))?;
    Ok(json(
        &IndexWriter::new(dir).record_with_warnings(record, warnings)?,
    ))
}

/// The shard of `count` that owns `id`.
pub fn shard_of(id: &str, count: u32) -> u32 {
    shards::shard_of(id, count)
}

/// The collection statistics of every shard (JSON each), added up (JSON).
pub fn combine_statistics(parts: &[String]) -> Result<String> {
    let parts = parts
        .iter()
        .map(|p| CollectionStatistics::from_json(p))
        .collect::<reliora::Result<Vec<_>>>()?;
    Ok(CollectionStatistics::combine(&parts).to_json())
}

/// The `supersededBy` maps of every shard (JSON objects), combined (JSON).
pub fn combine_superseded_by(parts: &[String]) -> Result<String> {
    let maps = parts
        .iter()
        .map(|p| serde_json::from_str(p))
        .collect::<std::result::Result<Vec<std::collections::BTreeMap<String, String>>, _>>()
        .map_err(|e| {
            Error::query(
                ErrorCode::InvalidOption,
                format!("malformed supersededBy map: {e}"),
            )
        })?;
    Ok(json(&shards::combine_superseded_by(&maps)))
}

/// Merges every shard's candidates (JSON, in shard order) for `query`: the response as JSON,
/// or the shards to ask again deeper.
pub fn merge(
    query: &str,
    options: &Options,
    shard_query: &str,
    parts: &[String],
) -> Result<(Option<String>, Vec<usize>)> {
    let request = request(query, options)?;
    let shard_query = ShardQuery::from_json(shard_query)?;
    let parts = parts
        .iter()
        .map(|p| ShardCandidates::from_json(p))
        .collect::<reliora::Result<Vec<_>>>()?;
    Ok(match shards::merge(&request, &shard_query, &parts)? {
        Merged::Response(response) => (Some(json(&*response)), Vec::new()),
        Merged::Deeper(deeper) => (None, deeper),
    })
}

/// `reliora feedback ID --outcome OUTCOME`; the report as JSON.
pub fn feedback(dir: &Path, id: &str, outcome: &str) -> Result<String> {
    let outcome = Outcome::parse(outcome)?;
    Ok(json(&IndexWriter::new(dir).feedback(id, outcome)?))
}

/// `reliora delete ID`; the report as JSON.
pub fn delete(dir: &Path, id: &str) -> Result<String> {
    Ok(json(&IndexWriter::new(dir).delete(id)?))
}

/// `reliora compact`; the report as JSON.
pub fn compact(dir: &Path) -> Result<String> {
    Ok(json(&IndexWriter::new(dir).compact()?))
}

/// `reliora eval --beir DIR`: the metrics as JSON. `options` are search options (`profile`,
/// `config`, `rerank`, `candidates`, `mmr`, `now`).
pub fn eval_beir(
    dir: PathBuf,
    split: String,
    field_map_specs: &[String],
    stem: bool,
    skip_invalid: bool,
    options: &Options,
) -> Result<String> {
    let report = run_beir(&BeirOptions {
        dir,
        split,
        field_map: beir_field_map(field_map_specs)?,
        stem,
        skip_invalid,
        request: request("", options)?,
    })?;
    Ok(json(&report))
}
