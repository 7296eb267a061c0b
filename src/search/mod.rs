//! Search: candidates from a source (the index or a scan of the stored records), the filters,
//! the scoring profiles, the post-steps and the response.
//!
//! Both sources hand the same plain values to the same pure scoring code, so the index and the
//! degraded scan answer identically (a property the tests check).

pub mod builder;
pub mod filters;
pub(crate) mod index_source;
pub mod query;
pub mod request;
pub mod response;
pub(crate) mod scan;
pub mod standard;

use std::cmp::Ordering;
use std::collections::HashMap;

use rayon::prelude::*;
use roaring::RoaringBitmap;
use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorCode, Result};
use crate::format::codec::StoredRecord;
use crate::record::{Feedback, Timestamp};
use crate::schema::GROUP_COUNT;
use crate::text::TextAnalyzer;

use filters::Filters;
use query::PreparedQuery;
use request::SearchRequest;
use response::{Counts, Explain, SearchResponse, SearchResult};
use standard::{MatchLevel, Relevance};

/// Where a record lives: a segment and a record number within it (for a scan, segment 0 and
/// the position in the scan).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DocRef {
    /// The segment.
    pub segment: u32,
    /// The record number in the segment.
    pub doc: u32,
}

/// One candidate as a source reports it: match evidence and the column values scoring needs.
#[derive(Debug, Clone)]
pub(crate) struct Hit<'a> {
    pub doc: DocRef,
    pub id: &'a str,
    /// `Σ_g weight[g] × |tokens matching g|`.
    pub field_sum: u32,
    /// Bit i set ⇔ query token i matched some group.
    pub coverage_mask: u32,
    /// Whether the exact phrase occurs.
    pub phrase: bool,
    pub feedback: Feedback,
    pub created_at: Option<(i64, u32)>,
    pub supersedes: Option<&'a str>,
    pub superseded_by: Option<&'a str>,
}

/// Per token, per group: the records of one segment that the token matches there.
pub(crate) type TokenGroups = Vec<[RoaringBitmap; GROUP_COUNT]>;

/// What a source found for one query.
pub(crate) struct Matched<'a> {
    /// Live records.
    pub live: usize,
    /// Live records passing the filters.
    pub passing: usize,
    /// The candidates (relevance > 0), or for an empty query every record passing the filters.
    pub hits: Vec<Hit<'a>>,
    /// Per segment, per token, per group: matching records (for breakdowns of final results).
    pub token_groups: Vec<TokenGroups>,
}

/// A source of candidates and stored records.
pub(crate) trait Source: Sync {
    /// `index` or `scan`.
    fn name(&self) -> &'static str;
    /// The candidates of `query` under `filters`.
    fn matched(&self, query: &PreparedQuery, filters: &Filters) -> Result<Matched<'_>>;
    /// The stored record at `doc`.
    fn stored(&self, doc: DocRef) -> Result<StoredRecord>;
    /// The live record with this id.
    fn find(&self, id: &str) -> Result<Option<DocRef>>;
}

/// What the caller knows that the source does not.
pub(crate) struct Context<'a> {
    pub analyzer: &'a TextAnalyzer,
    /// Identifies the index generation and its settings, for the fingerprint.
    pub generation: &'a str,
    pub degraded: bool,
    pub notices: Vec<String>,
}

struct Ranked<'a> {
    hit: Hit<'a>,
    relevance: Relevance,
    feedback: f64,
    score: f64,
    level: MatchLevel,
    supersession: f64,
}

fn by_score_then_id(a: &Ranked<'_>, b: &Ranked<'_>) -> Ordering {
    b.score
        .total_cmp(&a.score)
        .then_with(|| a.hit.id.as_bytes().cmp(b.hit.id.as_bytes()))
}

fn by_created_desc_then_id(a: &Ranked<'_>, b: &Ranked<'_>) -> Ordering {
    match (a.hit.created_at, b.hit.created_at) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
    .then_with(|| a.hit.id.as_bytes().cmp(b.hit.id.as_bytes()))
}

/// Runs `request` against `source`.
pub(crate) fn execute(
    source: &dyn Source,
    request: &SearchRequest,
    context: Context<'_>,
) -> Result<SearchResponse> {
    let now = request.now.clone().unwrap_or_else(Timestamp::now);
    let query = PreparedQuery::new(&request.query, context.analyzer);
    let filters = Filters::new(request, context.analyzer);
    let empty = query.is_empty();
    if empty && !filters.any() {
        return Err(Error::query(
            ErrorCode::EmptyQuery,
            format!(
                "the query {:?} has no searchable tokens (and no filter was given)",
                request.query
            ),
        ));
    }

    let matched = source.matched(&query, &filters)?;
    let token_count = query.tokens.len() as u32;
    let mut ranked: Vec<Ranked<'_>> = matched
        .hits
        .par_iter()
        .map(|hit| {
            if empty {
                return Ranked {
                    hit: hit.clone(),
                    relevance: standard::relevance(0, false, 0, 0),
                    feedback: 0.0,
                    score: 0.0,
                    level: MatchLevel::Weak,
                    supersession: 0.0,
                };
            }
            let relevance = standard::relevance(
                hit.field_sum,
                hit.phrase,
                hit.coverage_mask.count_ones(),
                token_count,
            );
            let feedback = standard::feedback_score(&hit.feedback);
            Ranked {
                hit: hit.clone(),
                relevance,
                feedback,
                score: relevance.relevance + feedback,
                level: standard::match_level(relevance.coverage, relevance.relevance),
                supersession: 0.0,
            }
        })
        .collect();

    let mut counts = Counts {
        candidates: ranked.len(),
        filtered: matched.live - matched.passing,
        ..Counts::default()
    };
    for r in &ranked {
        match r.level {
            MatchLevel::Strong => counts.strong += 1,
            MatchLevel::Moderate => counts.moderate += 1,
            MatchLevel::Weak => counts.weak += 1,
        }
    }

    if empty {
        ranked.par_sort_unstable_by(by_created_desc_then_id);
    } else {
        ranked.par_sort_unstable_by(by_score_then_id);
        apply_supersession(&mut ranked);
        apply_supersession(&mut ranked);
    }

    let best = ranked.first().map_or(0.0, |r| r.score);
    let normalized = |score: f64| if best > 0.0 { score / best } else { 0.0 };
    let kept = ranked
        .iter()
        .take_while(|r| request.min_score.is_none_or(|m| normalized(r.score) >= m))
        .count();
    // min-score keeps a prefix: normalizedScore falls along the ranking.
    let page = &ranked[..kept.min(request.limit)];

    let breakdown_of = |r: &Ranked<'_>| {
        let masks = group_masks(&matched.token_groups, r.hit.doc, query.tokens.len());
        let mut map = standard::breakdown(&masks, &r.relevance, r.feedback);
        if r.supersession != 0.0 {
            map.insert("supersession".into(), r.supersession.into());
        }
        map
    };

    let results: Vec<SearchResult> = page
        .par_iter()
        .map(|r| -> Result<SearchResult> {
            let stored = source.stored(r.hit.doc)?;
            Ok(SearchResult {
                id: r.hit.id.to_string(),
                locator: stored.locator,
                title: stored.record.title.clone(),
                score: r.score,
                normalized_score: normalized(r.score),
                match_level: r.level,
                coverage: r.relevance.coverage,
                matched_tokens: query
                    .tokens
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| r.hit.coverage_mask & (1 << i) != 0)
                    .map(|(_, t)| t.text.clone())
                    .collect(),
                superseded_by: r.hit.superseded_by.map(str::to_string),
                score_breakdown: breakdown_of(r),
                record: request.full.then(|| stored.record.to_json()),
            })
        })
        .collect::<Result<_>>()?;

    let explain = match &request.explain {
        None => None,
        Some(id) => Some(explain(
            source,
            id,
            &ranked,
            kept,
            request,
            &filters,
            &context,
            normalized,
            &breakdown_of,
        )?),
    };

    Ok(SearchResponse {
        query_id: None,
        fingerprint: fingerprint(request, &context, &now),
        query: request.query.clone(),
        tokens: query.tokens.iter().map(|t| t.text.clone()).collect(),
        dropped_tokens: query.dropped.clone(),
        analyzer: query.analyzer,
        profile: request.profile.as_str(),
        now: now.as_str().to_string(),
        backend: source.name(),
        degraded: context.degraded,
        notices: context
            .notices
            .iter()
            .chain(&request.notices)
            .cloned()
            .collect(),
        counts,
        results,
        explain,
    })
}

/// Per-group token masks of one record, from the per-token group sets.
fn group_masks(token_groups: &[TokenGroups], doc: DocRef, tokens: usize) -> [u32; GROUP_COUNT] {
    let mut masks = [0u32; GROUP_COUNT];
    if let Some(groups) = token_groups.get(doc.segment as usize) {
        for (t, per_group) in groups.iter().enumerate().take(tokens) {
            for (g, records) in per_group.iter().enumerate() {
                if records.contains(doc.doc) {
                    masks[g] |= 1 << t;
                }
            }
        }
    }
    masks
}

/// SPEC §6.1: clamp each superseded candidate just below its candidate superseders, in passes
/// over the list in its current order, then re-sort.
fn apply_supersession(ranked: &mut [Ranked<'_>]) {
    let mut superseders: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, r) in ranked.iter().enumerate() {
        if let Some(target) = r.hit.supersedes {
            superseders.entry(target).or_default().push(i);
        }
    }
    if superseders.is_empty() {
        return;
    }
    // (superseded candidate, its candidate superseders in id order), in list order.
    let mut relations: Vec<(usize, Vec<usize>)> = Vec::new();
    for (x, r) in ranked.iter().enumerate() {
        if let Some(ys) = superseders.get(r.hit.id) {
            let mut ys = ys.clone();
            ys.sort_by(|&a, &b| ranked[a].hit.id.as_bytes().cmp(ranked[b].hit.id.as_bytes()));
            relations.push((x, ys));
        }
    }
    if relations.is_empty() {
        return;
    }
    for _pass in 0..ranked.len() {
        let mut changed = false;
        for (x, ys) in &relations {
            for &y in ys {
                if ranked[*x].score >= ranked[y].score {
                    let clamped = ranked[y].score - 0.001;
                    ranked[*x].supersession += clamped - ranked[*x].score;
                    ranked[*x].score = clamped;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    ranked.sort_by(by_score_then_id);
}

#[allow(clippy::too_many_arguments)]
fn explain(
    source: &dyn Source,
    id: &str,
    ranked: &[Ranked<'_>],
    kept: usize,
    request: &SearchRequest,
    filters: &Filters,
    context: &Context<'_>,
    normalized: impl Fn(f64) -> f64,
    breakdown_of: &dyn Fn(&Ranked<'_>) -> serde_json::Map<String, serde_json::Value>,
) -> Result<Explain> {
    let mut explain = Explain {
        id: id.to_string(),
        status: "not_found",
        rank: None,
        filter: None,
        score: None,
        normalized_score: None,
        match_level: None,
        score_breakdown: None,
    };
    let Some(doc) = source.find(id)? else {
        return Ok(explain);
    };
    let stored = source.stored(doc)?;
    if let Some(filter) = filters.rejects(&stored.record, context.analyzer) {
        explain.status = "filtered";
        explain.filter = Some(filter);
        return Ok(explain);
    }
    let Some(position) = ranked.iter().position(|r| r.hit.doc == doc) else {
        explain.status = "no_token_matched";
        return Ok(explain);
    };
    let r = &ranked[position];
    explain.rank = Some(position + 1);
    explain.score = Some(r.score);
    explain.normalized_score = Some(normalized(r.score));
    explain.match_level = Some(r.level);
    explain.score_breakdown = Some(breakdown_of(r));
    explain.status = if position >= kept {
        "below_min_score"
    } else if position >= request.limit {
        "beyond_limit"
    } else {
        "result"
    };
    Ok(explain)
}

/// Hashes the index generation, the effective settings, `now` and the query.
fn fingerprint(request: &SearchRequest, context: &Context<'_>, now: &Timestamp) -> String {
    let mut hasher = Sha256::new();
    let mut field = |name: &str, value: &str| {
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update((value.len() as u64).to_le_bytes());
        hasher.update(value.as_bytes());
    };
    field("generation", context.generation);
    field("profile", request.profile.as_str());
    field("limit", &request.limit.to_string());
    field(
        "minScore",
        &request
            .min_score
            .map_or(String::new(), |m| m.to_bits().to_string()),
    );
    field(
        "projectContext",
        request.project_context.as_deref().unwrap_or("\u{0}"),
    );
    for tag in &request.tags {
        field("tag", tag);
    }
    field("type", request.memory_type.as_deref().unwrap_or("\u{0}"));
    field(
        "now",
        &format!("{}.{:09}", now.unix_seconds(), now.subsec_nanos()),
    );
    field("query", &request.query);
    let digest = hasher.finalize();
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}
