//! Sharded search: one collection held as several indexes (shards), searched with the answers
//! one index over the same records would give — same ids, order, scores and counts.
//!
//! Records are routed to shards by a stable hash of their id ([`shard_of`]). A search is two
//! phases, as a distributed engine runs it (the transport — threads, processes or machines —
//! is the caller's):
//!
//! 1. every shard reports what the profile needs of the whole collection for the query
//!    ([`Index::collection_statistics`]: `bm25f`'s N, group lengths and document frequencies,
//!    the entities some record names, `recency`'s best relevance), added up with
//!    [`CollectionStatistics::combine`]; the collection's supersession relations come from
//!    [`Index::superseded_by`] of every shard, combined with [`combine_superseded_by`];
//! 2. every shard scores its records with those values and sends its candidates before the
//!    post-steps ([`Index::shard_candidates`]): for a search whose page bounds what can reach
//!    it, its best `depth` and every candidate that supersedes another; otherwise all.
//!    [`merge`] then runs the post-steps (supersession, MMR), `--min-score`, `--limit` and
//!    `--token-budget` over the union, exactly as one index runs them — or, when a shard's
//!    unsent candidates could still reach the page, names the shards to ask again, deeper.
//!
//! ```
//! use std::collections::BTreeMap;
//! use reliora::shards::{self, combine_superseded_by, CollectionStatistics, Merged, ShardQuery};
//! use reliora::{Index, SearchRequest};
//! # let dir = tempfile::tempdir()?;
//! # let mut indexes = Vec::new();
//! # for s in 0..2 {
//! #     let input = dir.path().join(format!("in{s}.jsonl"));
//! #     std::fs::write(&input, if s == 0 {
//! #         r#"{"id":"a","title":"docker cache misses","solution":"order layers"}"#
//! #     } else {
//! #         r#"{"id":"b","title":"docker build slow","solution":"use a cache mount"}"#
//! #     })?;
//! #     let out = dir.path().join(format!("shard{s}"));
//! #     Index::build(&out, &reliora::BuildOptions { inputs: vec![input], ..Default::default() })?;
//! #     indexes.push(Index::open(&out)?);
//! # }
//! let request = SearchRequest::new("docker cache");
//! let statistics = CollectionStatistics::combine(
//!     &indexes.iter().map(|i| i.collection_statistics(&request)).collect::<Result<Vec<_>, _>>()?,
//! );
//! let maps = indexes.iter().map(|i| i.superseded_by()).collect::<Result<Vec<_>, _>>()?;
//! let mut query = ShardQuery {
//!     statistics: statistics.clone(),
//!     superseded_by: combine_superseded_by(&maps),
//!     depth: Some(request.limit()),
//! };
//! let parts = indexes.iter().map(|i| i.shard_candidates(&request, &query)).collect::<Result<Vec<_>, _>>()?;
//! let Merged::Response(response) = shards::merge(&request, &query, &parts)? else {
//!     unreachable!("two records fit a page of ten");
//! };
//! assert_eq!(response.counts.candidates, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod merged;
mod view;
mod wire;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rayon::prelude::*;

use crate::error::{Error, ErrorCode, Result};
use crate::format::codec::StoredRecord;
use crate::index::Index;
pub use crate::index::{shard_of, Shard};
use crate::record::Record;
use crate::search::backend::{with_index_config, with_source};
use crate::search::entities::query_entities;
use crate::search::filters::Filters;
use crate::search::pipeline;
use crate::search::query::PreparedQuery;
use crate::search::request::{Profile, SearchRequest};
use crate::search::response::{Counts, SearchResponse};
use crate::search::{
    sort_by_score, standard, BoundedOrder, Context, DocRef, Source, TopOrder, DEFAULT_SETTINGS,
};
use crate::settings::Settings;
use crate::text::TextAnalyzer;

use merged::MergedSource;
use view::ShardView;

pub use wire::{
    combine_superseded_by, Bound, CollectionStatistics, SentRecord, ShardCandidates, ShardQuery,
};

/// What [`merge`] found.
#[derive(Debug)]
pub enum Merged {
    /// The answer, as one index over every shard's records gives it.
    Response(Box<SearchResponse>),
    /// Candidates these shards did not send could still reach the page: ask them again with a
    /// larger [`ShardQuery::depth`] (four times, say), then merge again.
    Deeper(Vec<usize>),
}

impl Index {
    /// SPEC §6.1 `supersededBy` of every id this index's live records supersede: the id → the
    /// smallest live id naming it in `supersedes`.
    pub fn superseded_by(&self) -> Result<BTreeMap<String, String>> {
        let map = match self.superseders() {
            Ok(map) => map.clone().into_iter().collect(),
            Err(_) => {
                let records = self.all_records()?;
                crate::record::smallest_superseders(records.iter().map(|r| &r.record))
                    .into_iter()
                    .map(|(target, by)| (target.to_string(), by.to_string()))
                    .collect()
            }
        };
        Ok(map)
    }

    /// Phase one of a sharded search: what this shard adds to the collection-wide values the
    /// request's profile reads (see [`CollectionStatistics`]).
    pub fn collection_statistics(&self, request: &SearchRequest) -> Result<CollectionStatistics> {
        let request = &*with_index_config(self, request)?;
        with_source(self, request, &|source, context| {
            statistics(source, request, &context)
        })
    }

    /// Phase two of a sharded search: this shard's candidates, scored with the collection's
    /// values, before the post-steps (see [`ShardCandidates`]).
    pub fn shard_candidates(
        &self,
        request: &SearchRequest,
        query: &ShardQuery,
    ) -> Result<ShardCandidates> {
        let resolved = with_index_config(self, request)?;
        let settings = match (&request.settings, &resolved.settings) {
            (None, Some((settings, origin))) => Some((
                serde_json::to_string(&**settings).expect("settings serialize"),
                origin.clone(),
            )),
            _ => None,
        };
        let mut request = resolved.into_owned();
        // The shard ranks (and checks phrases) as deep as it is asked to send.
        if let Some(depth) = query.depth {
            request.limit = request.limit.max(depth);
        }
        let stem = self.manifest().stem;
        with_source(self, &request, &|source, context| {
            candidates(source, &request, query, context, (stem, &settings))
        })
    }
}

fn statistics(
    source: &dyn Source,
    request: &SearchRequest,
    context: &Context<'_>,
) -> Result<CollectionStatistics> {
    let collection = source.collection()?;
    let mut out = CollectionStatistics {
        live: collection.live,
        group_length_sums: collection.group_length_sums,
        ..CollectionStatistics::default()
    };
    let query = PreparedQuery::new(&request.query, context.analyzer);
    if query.is_empty() {
        return Ok(out);
    }
    match request.profile {
        Profile::Standard => {}
        Profile::Bm25f => {
            out.document_frequencies = source
                .exact_postings(&query, &[])?
                .iter()
                .map(|p| p.df)
                .collect();
        }
        Profile::Decay => {
            let settings = request
                .settings
                .as_ref()
                .map_or(&*DEFAULT_SETTINGS, |(s, _)| s);
            let mut known = Vec::new();
            query_entities(
                &query.text,
                &request.entities,
                &settings.entities,
                |name| -> Result<bool> {
                    let is = source.entity_known(name)?;
                    if is {
                        known.push(name.to_string());
                    }
                    Ok(is)
                },
            )?;
            known.sort();
            known.dedup();
            out.known_entities = known;
        }
        Profile::Recency => {
            let filters = Filters::new(request, context.analyzer);
            out.best_relevance = best_relevance(source, &query, &filters)?;
        }
    }
    Ok(out)
}

/// The best relevance of any candidate: the first of the candidates ranked by relevance.
fn best_relevance(source: &dyn Source, query: &PreparedQuery, filters: &Filters) -> Result<f64> {
    let order = TopOrder::Bounded(BoundedOrder::DecayCandidates {
        include_superseded: true,
    });
    let hits = match source.top(query, filters, 1, &order)? {
        Some(top) => top.hits,
        None => source.matched(query, filters)?.hits,
    };
    let tokens = query.tokens.len() as u32;
    let relevance = |field_sum: u32, phrase: bool, matched: u32| {
        standard::relevance(field_sum, phrase, matched, tokens).relevance
    };
    let mut best = 0.0f64;
    for hit in &hits {
        let matched = hit.matched;
        let without = relevance(hit.field_sum, false, matched);
        let with = relevance(hit.field_sum, true, matched);
        let phrase = match (hit.phrase, &query.phrase) {
            (Some(known), _) => known,
            (None, Some(phrase)) if with > best => source.verify_phrase(hit.doc, phrase)?,
            (None, _) => false,
        };
        best = best.max(if phrase { with } else { without });
    }
    Ok(best)
}

/// Phase two over the shard's source; `built` is how the shard was built and configured (its
/// `--stem`, and the settings of its `reliora.toml` when the request named none).
fn candidates(
    source: &dyn Source,
    request: &SearchRequest,
    query: &ShardQuery,
    context: Context<'_>,
    built: (bool, &Option<(String, String)>),
) -> Result<ShardCandidates> {
    let view = ShardView {
        inner: source,
        statistics: &query.statistics,
        superseded_by: &query.superseded_by,
        bounded: AtomicBool::new(false),
    };
    let (backend, degraded) = (source.name().to_string(), context.degraded);
    let (notices, generation) = (context.notices.clone(), context.generation.to_string());
    let context = Context {
        best_relevance: (request.profile == Profile::Recency)
            .then_some(query.statistics.best_relevance),
        collection: (request.profile == Profile::Bm25f).then(|| query.statistics.values()),
        ..context
    };
    let mut scored = pipeline::score(&view, request, &context)?;
    // Decay sends its whole `--candidates` list, the unbounded searches every candidate.
    let bounded = scored.plan.top.is_some() && request.profile != Profile::Decay;
    let mut docs: Vec<DocRef> = Vec::new();
    let mut bound = None;
    match query.depth {
        Some(depth) if bounded => {
            sort_by_score(&mut scored.ranked);
            // Ranked under bounds (no supersession anywhere, no post-step that lowers a
            // score), the shard's best `depth` are all the page can take from it: no bound.
            // Otherwise the last record sent bounds the rest, which rank after it.
            if !view.bounded.load(Ordering::Relaxed) && scored.ranked.len() > depth {
                let last = &scored.ranked[depth.max(1) - 1];
                bound = Some(Bound {
                    score: last.score,
                    id: last.hit.id.to_string(),
                });
            }
            docs.extend(
                scored
                    .ranked
                    .iter()
                    .enumerate()
                    .filter(|(i, r)| *i < depth || r.hit.supersedes.is_some())
                    .map(|(_, r)| r.hit.doc),
            );
        }
        _ => {
            docs.extend(scored.ranked.iter().map(|r| r.hit.doc));
            let mut removed: Vec<DocRef> = scored.removed.keys().copied().collect();
            removed.sort_unstable();
            docs.extend(removed);
        }
    }
    if let Some(id) = &request.explain {
        if let Some(doc) = view.find(id)? {
            if !docs.contains(&doc) {
                docs.push(doc);
            }
        }
    }
    let records = docs
        .par_iter()
        .map(|&doc| -> Result<SentRecord> {
            let stored = view.stored(doc)?;
            Ok(SentRecord {
                locator: stored.locator,
                record: stored.record.to_json(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ShardCandidates {
        backend,
        degraded,
        notices,
        generation,
        stem: built.0,
        settings: built.1.clone(),
        live: scored.live,
        passing: scored.passing,
        counts: scored.counts,
        bound,
        records,
    })
}

/// Finishes a sharded search from every shard's [`ShardCandidates`] for `request` (in shard
/// order) and the [`ShardQuery`] they answered: the post-steps, page and response over their
/// union — or, when a shard's unsent candidates could still reach the page, the shards to ask
/// again deeper.
pub fn merge(
    request: &SearchRequest,
    query: &ShardQuery,
    parts: &[ShardCandidates],
) -> Result<Merged> {
    let Some(first) = parts.first() else {
        return Err(invalid("a sharded search needs at least one shard"));
    };
    if let Some(other) = parts.iter().position(|p| p.stem != first.stem) {
        return Err(invalid(format!(
            "shards 0 and {other} were built differently (--stem on one, not the other)"
        )));
    }
    let mut request = request.clone();
    if request.settings.is_none() {
        if let Some((json, origin)) = &first.settings {
            let settings: Settings = serde_json::from_str(json)
                .map_err(|e| invalid(format!("malformed settings from shard 0: {e}")))?;
            request.settings = Some((Arc::new(settings), origin.clone()));
        }
    }
    let mut records: Vec<StoredRecord> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for (s, part) in parts.iter().enumerate() {
        for sent in &part.records {
            let record = Record::from_json(&sent.record).map_err(|e| {
                invalid(format!(
                    "shard {s} sent an invalid record ({}): {e}",
                    sent.locator
                ))
            })?;
            if !seen.insert(record.id.clone()) {
                return Err(invalid(format!(
                    "the id {:?} is in two shards (shard {s} is one): route records with shard_of",
                    record.id
                )));
            }
            records.push(StoredRecord {
                record,
                locator: sent.locator.clone(),
            });
        }
    }
    let statistics = &query.statistics;
    let mut source = MergedSource::new(records, first.stem, &query.superseded_by, statistics);
    let mut counts = Counts::default();
    for part in parts {
        source.live += part.live;
        source.passing += part.passing;
        counts.candidates += part.counts.candidates;
        counts.strong += part.counts.strong;
        counts.moderate += part.counts.moderate;
        counts.weak += part.counts.weak;
    }
    source.counts = counts;
    if parts.iter().any(|p| p.backend == "scan") {
        source.backend = "scan";
    }
    let generation = parts
        .iter()
        .map(|p| p.generation.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut notices: Vec<String> = Vec::new();
    for (s, part) in parts.iter().enumerate() {
        for notice in &part.notices {
            notices.push(format!("shard {s}: {notice}"));
        }
    }
    let analyzer = TextAnalyzer::new(first.stem);
    let context = Context {
        analyzer: &analyzer,
        generation: &generation,
        degraded: parts.iter().any(|p| p.degraded),
        notices,
        best_relevance: (request.profile == Profile::Recency).then_some(statistics.best_relevance),
        collection: None,
    };
    let scored = pipeline::score(&source, &request, &context)?;
    let (response, end) = pipeline::finish(&source, context, scored)?;
    let open = parts
        .iter()
        .enumerate()
        .filter_map(|(s, p)| p.bound.as_ref().map(|bound| (s, bound)));
    let deeper: Vec<usize> = match (&end.last, end.len >= request.limit) {
        // A full page: every unsent candidate must rank after its last result (post-steps
        // only lower scores; ties go by id).
        (Some((score, id)), true) => open
            .filter(|(_, bound)| {
                bound.score > *score || (bound.score == *score && bound.id.as_str() < id.as_str())
            })
            .map(|(s, _)| s)
            .collect(),
        // A short page: no unsent candidate may pass --min-score (a bound that fails it
        // speaks for every candidate under it).
        _ => open
            .filter(|(_, bound)| {
                request
                    .min_score
                    .is_none_or(|m| end.normalizer.normalized(bound.score) >= m)
            })
            .map(|(s, _)| s)
            .collect(),
    };
    if deeper.is_empty() {
        Ok(Merged::Response(Box::new(response)))
    } else {
        Ok(Merged::Deeper(deeper))
    }
}

/// A sharded search of shards open in this process, in parallel: both phases and the merge,
/// asking shards again four times deeper while [`merge`] says so.
pub fn search(shards: &[Index], request: &SearchRequest) -> Result<SearchResponse> {
    let statistics = shards
        .par_iter()
        .map(|shard| shard.collection_statistics(request))
        .collect::<Result<Vec<_>>>()?;
    let maps = shards
        .par_iter()
        .map(Index::superseded_by)
        .collect::<Result<Vec<_>>>()?;
    let mut query = ShardQuery {
        statistics: CollectionStatistics::combine(&statistics),
        superseded_by: combine_superseded_by(&maps),
        depth: None,
    };
    let mut depths = vec![request.limit; shards.len()];
    let ask = |query: &ShardQuery, s: usize, depth: usize| {
        let query = ShardQuery {
            depth: Some(depth),
            ..query.clone()
        };
        shards[s].shard_candidates(request, &query)
    };
    let mut parts = (0..shards.len())
        .into_par_iter()
        .map(|s| ask(&query, s, depths[s]))
        .collect::<Result<Vec<_>>>()?;
    query.depth = Some(request.limit);
    loop {
        match merge(request, &query, &parts)? {
            Merged::Response(response) => return Ok(*response),
            Merged::Deeper(deeper) => {
                for &s in &deeper {
                    depths[s] = depths[s].saturating_mul(4);
                }
                let again = deeper
                    .par_iter()
                    .map(|&s| ask(&query, s, depths[s]))
                    .collect::<Result<Vec<_>>>()?;
                for (s, part) in deeper.into_iter().zip(again) {
                    parts[s] = part;
                }
            }
        }
    }
}

fn invalid(message: impl Into<String>) -> Error {
    Error::query(ErrorCode::InvalidOption, message)
}
