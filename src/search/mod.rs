//! Search: candidates from a source (the index or a scan of the stored records), the filters,
//! the scoring profiles, the post-steps and the response.
//!
//! Both sources hand the same plain values to the same pure scoring code, so the index and the
//! degraded scan answer identically (a property the tests check).

pub mod budget;
pub mod builder;
pub mod entities;
pub mod federated;
pub mod filters;
pub(crate) mod index_source;
mod index_statistics;
pub mod mmr;
pub mod profiles;
pub mod query;
mod ranking;
pub mod request;
pub mod response;
pub(crate) mod scan;
mod scan_statistics;
mod scratch;
pub mod settings;
pub mod standard;

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::LazyLock;

use rayon::prelude::*;
use roaring::RoaringBitmap;
use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorCode, Result};
use crate::format::codec::StoredRecord;
use crate::record::{Feedback, Timestamp};
use crate::schema::GROUP_COUNT;
use crate::text::TextAnalyzer;

use filters::Filters;
use profiles::bm25f::Collection;
use query::PreparedQuery;
use ranking::{Ranked, Removal};
use request::{Profile, SearchRequest};
use response::{BackendUsed, Counts, Explain, ExplainStatus, SearchResponse, SearchResult};
use settings::Settings;
use standard::MatchLevel;

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
    /// Whether the exact phrase occurs; `None` when the postings allow it but the stored text
    /// has not been checked yet (see [`Source::verify_phrase`]).
    pub phrase: Option<bool>,
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
    /// Set by [`Source::standard_top`]: the number and levels of all candidates, of which
    /// `hits` holds only those that can reach the page.
    pub counts: Option<Counts>,
}

/// A source of candidates and stored records.
pub(crate) trait Source: Sync {
    /// `index` or `scan`.
    fn name(&self) -> &'static str;
    /// The candidates of `query` under `filters`.
    fn matched(&self, query: &PreparedQuery, filters: &Filters) -> Result<Matched<'_>>;
    /// For the standard profile's own order (no ranking option, no `--explain`, a non-empty
    /// query): the candidates that can reach the first `limit` places or take part in a
    /// supersession relation, their phrases checked wherever that can change the page or a
    /// match level, and in [`Matched::counts`] the number and levels of all candidates. `None`
    /// when the source knows no faster way than [`Source::matched`].
    fn standard_top(
        &self,
        _query: &PreparedQuery,
        _filters: &Filters,
        _limit: usize,
    ) -> Result<Option<Matched<'_>>> {
        Ok(None)
    }
    /// The stored record at `doc`.
    fn stored(&self, doc: DocRef) -> Result<StoredRecord>;
    /// The live record with this id.
    fn find(&self, id: &str) -> Result<Option<DocRef>>;
    /// Whether `phrase` occurs in the stored text of `doc` (SPEC §4), for hits whose phrase
    /// flag is still unknown.
    fn verify_phrase(&self, doc: DocRef, phrase: &str) -> Result<bool> {
        Ok(index_source::record_has_phrase(
            &self.stored(doc)?.record,
            phrase,
        ))
    }
    /// Which of `docs` hold the two-word `phrase` (SPEC §4), in the order given: for `bm25f`'s
    /// proximity signal, asked once per query word pair for the records holding both words.
    fn pair_occurs(&self, phrase: &str, docs: &[DocRef]) -> Result<Vec<bool>> {
        docs.iter()
            .map(|&doc| self.verify_phrase(doc, phrase))
            .collect()
    }
    /// The column values of the record at `doc` that the profiles need, without decoding it.
    fn values(&self, doc: DocRef) -> Result<RecordValues<'_>>;
    /// The live records and their summed group lengths (for `bm25f`), in O(segments).
    fn collection(&self) -> Result<Collection>;
    /// Per query token, its exact matches over every live record (no filters): document
    /// frequency and term frequencies per group (for `bm25f`). An `english` query ignores
    /// stop-word tokens of the records, as in matching (SPEC §3).
    fn exact_postings(&self, query: &PreparedQuery) -> Result<Vec<ExactPostings>>;
    /// Whether some live record names this entity (given lowercased) in its `entities`.
    fn entity_known(&self, name: &str) -> Result<bool>;
}

/// The column values of one record that profiles need.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RecordValues<'a> {
    pub salience: f64,
    pub decay_factor: f64,
    pub memory_type: Cow<'a, str>,
    pub pinned: bool,
    pub group_lengths: [u32; GROUP_COUNT],
}

/// One query token's exact matches.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ExactPostings {
    /// Live records containing the token in any group.
    pub df: u64,
    /// Per record (ascending), the token's frequency in each group.
    pub docs: Vec<(DocRef, [u32; GROUP_COUNT])>,
}

/// What the caller knows that the source does not.
pub(crate) struct Context<'a> {
    pub analyzer: &'a TextAnalyzer,
    /// Identifies the index generation and its settings, for the fingerprint.
    pub generation: &'a str,
    pub degraded: bool,
    pub notices: Vec<String>,
}

/// The settings used when a request names none: the SPEC numbers.
static DEFAULT_SETTINGS: LazyLock<Settings> = LazyLock::new(Settings::default);

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
    let settings: &Settings = match &request.settings {
        Some((settings, _)) => settings,
        None => &DEFAULT_SETTINGS,
    };
    let mut notices: Vec<String> = context
        .notices
        .iter()
        .chain(&request.notices)
        .cloned()
        .chain(query.truncation_notice())
        .collect();
    if let Some((settings, origin)) = &request.settings {
        let changed = settings.changed_keys();
        if !changed.is_empty() {
            notices.push(format!(
                "non-default settings from {origin}: {}",
                changed.join(", ")
            ));
        }
    }

    let token_count = query.tokens.len() as u32;
    // The standard profile without ranking options: its order is score then id, so only the
    // top of the list needs sorting and only some phrases need checking.
    let plain_standard = request.profile == Profile::Standard
        && request.rerank.is_none()
        && request.candidates.is_none()
        && !request.mmr_enabled();
    let top_only = plain_standard && request.explain.is_none() && !empty;
    let top = match top_only {
        true => source.standard_top(&query, &filters, request.limit)?,
        false => None,
    };
    let matched = match top {
        Some(top) => top,
        None => source.matched(&query, &filters)?,
    };
    let precounted = matched.counts;
    let mut hits = matched.hits;
    let involved = supersession_involved(&hits);
    // Phrase checks read stored text, so they are done only where they can change what is
    // reported: a match level (counts), a supersession relation, the explained record, or a
    // place on the page. Everything else keeps its phrase-less score, a lower bound.
    let phrase_to_check = query
        .phrase
        .as_deref()
        .filter(|_| !empty && precounted.is_none());
    if let Some(phrase) = phrase_to_check {
        // Bounds are only sound for the standard profile's own ranking; any other profile or
        // ranking option checks every candidate the postings allow.
        let must_verify = |i: usize, hit: &Hit<'_>| {
            !plain_standard
                || request.explain.is_some()
                || involved.contains(&i)
                || standard_score(hit, false, token_count).1
                    != standard_score(hit, true, token_count).1
        };
        let first: Vec<usize> = (0..hits.len())
            .filter(|&i| hits[i].phrase.is_none() && must_verify(i, &hits[i]))
            .collect();
        verify_phrases(source, &mut hits, &first, phrase)?;
        // The limit-th best lower bound among records outside supersession relations: at least
        // `limit` records score that much or more in the end, so a record whose phrase bonus
        // cannot lift it to there stays off the page whatever its text says.
        let mut lower: Vec<f64> = (0..hits.len())
            .filter(|i| !involved.contains(i))
            .map(|i| {
                let hit = &hits[i];
                standard_score(hit, hit.phrase == Some(true), token_count).0
            })
            .collect();
        let threshold = match request.limit.checked_sub(1) {
            Some(k) if k < lower.len() => {
                let (_, kth, _) = lower.select_nth_unstable_by(k, |a, b| b.total_cmp(a));
                Some(*kth)
            }
            _ => None,
        };
        let second: Vec<usize> = (0..hits.len())
            .filter(|&i| {
                hits[i].phrase.is_none()
                    && threshold.is_none_or(|t| standard_score(&hits[i], true, token_count).0 >= t)
            })
            .collect();
        verify_phrases(source, &mut hits, &second, phrase)?;
    }

    let mut counts = Counts {
        candidates: hits.len(),
        filtered: matched.live - matched.passing,
        ..precounted.unwrap_or_default()
    };
    // The standard profile without ranking options keeps only what can reach the page: the
    // best `limit + |involved|` and the records in supersession relations (supersession only
    // lowers the scores of those). Everything else is counted, never materialized.
    let mut ranked: Vec<Ranked<'_>> = if top_only {
        let scored: Vec<(f64, MatchLevel)> = hits
            .par_iter()
            .map(|hit| standard_score(hit, hit.phrase == Some(true), token_count))
            .collect();
        match &precounted {
            Some(all) => counts.candidates = all.candidates,
            None => {
                for (_, level) in &scored {
                    counts.add(*level);
                }
            }
        }
        top_positions(&scored, &hits, request.limit + involved.len(), &involved)
            .into_iter()
            .map(|i| score_hit(&hits[i], hits[i].phrase == Some(true), empty, token_count))
            .collect()
    } else {
        let ranked: Vec<Ranked<'_>> = hits
            .par_iter()
            .map(|hit| score_hit(hit, hit.phrase == Some(true), empty, token_count))
            .collect();
        for r in &ranked {
            counts.add(r.level);
        }
        ranked
    };

    let mut removed: HashMap<DocRef, Removal> = HashMap::new();
    if empty {
        ranked.par_sort_unstable_by(by_created_desc_then_id);
    } else {
        let step = ranking::Step {
            source,
            request,
            settings,
            query: &query,
            now: (now.unix_seconds(), now.subsec_nanos()),
        };
        match request.profile {
            Profile::Standard => {}
            Profile::Decay => step.decay(&mut ranked, &mut removed)?,
            Profile::Recency => step.recency(&mut ranked)?,
            Profile::Bm25f => ranked = step.bm25f(ranked)?,
        }
        if let Some(weights) = &request.rerank {
            step.rerank(&mut ranked, weights)?;
        }
        let candidates = counts.candidates;
        sort_by_score(&mut ranked);
        if request.profile != Profile::Decay {
            if let Some(cap) = request.candidates {
                for (i, r) in ranked.iter().enumerate().skip(cap) {
                    removed.insert(r.hit.doc, Removal::BeyondCandidates(i + 1));
                }
                ranked.truncate(cap);
            }
        }
        apply_supersession(&mut ranked, candidates);
        if request.mmr_enabled() {
            step.mmr(&mut ranked)?;
        }
        apply_supersession(&mut ranked, candidates);
    }

    let decay = request.profile == Profile::Decay;
    let best = ranked.first().map_or(0.0, |r| r.score);
    let normalized = |score: f64| {
        if decay {
            score.clamp(0.0, 1.0)
        } else if best > 0.0 {
            score / best
        } else {
            0.0
        }
    };
    let kept = ranked
        .iter()
        .take_while(|r| request.min_score.is_none_or(|m| normalized(r.score) >= m))
        .count();
    // min-score keeps a prefix: normalizedScore falls along the ranking.
    let page = &ranked[..kept.min(request.limit)];

    let breakdown_of = |r: &Ranked<'_>| {
        let masks = group_masks(&matched.token_groups, r.hit.doc, query.tokens.len());
        r.breakdown(&masks)
    };

    let mut results: Vec<SearchResult> = page
        .par_iter()
        .map(|r| -> Result<SearchResult> {
            let stored = source.stored(r.hit.doc)?;
            Ok(SearchResult {
                id: r.hit.id.to_string(),
                locator: stored.locator,
                title: stored.record.display_title().map(str::to_string),
                label: stored.record.label(),
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
                index: None,
            })
        })
        .collect::<Result<_>>()?;
    if let Some(cut) = apply_token_budget(&mut results, request.token_budget) {
        notices.push(cut);
    }

    let explain = match &request.explain {
        None => None,
        Some(id) => Some(explain(
            source,
            id,
            Standing {
                ranked: &ranked,
                removed: &removed,
                kept,
                shown: results.len(),
            },
            &filters,
            &context,
            normalized,
            &breakdown_of,
        )?),
    };

    Ok(SearchResponse {
        query_id: None,
        fingerprint: fingerprint(request, settings, &context, &now),
        query: request.query.clone(),
        tokens: query.tokens.iter().map(|t| t.text.clone()).collect(),
        dropped_tokens: query.dropped.clone(),
        analyzer: query.analyzer,
        profile: request.profile,
        now: now.as_str().to_string(),
        backend: BackendUsed::from_name(source.name()),
        degraded: context.degraded,
        notices,
        counts,
        results,
        explain,
    })
}

/// The standard score of one hit (zeros for an empty query with filters).
fn score_hit<'a>(hit: &Hit<'a>, phrase: bool, empty: bool, token_count: u32) -> Ranked<'a> {
    if empty {
        return Ranked::new(
            hit.clone(),
            standard::relevance(0, false, 0, 0),
            0.0,
            MatchLevel::Weak,
        );
    }
    let relevance = standard::relevance(
        hit.field_sum,
        phrase,
        hit.coverage_mask.count_ones(),
        token_count,
    );
    let feedback = standard::feedback_score(&hit.feedback);
    let level = standard::match_level(relevance.coverage, relevance.relevance);
    Ranked::new(hit.clone(), relevance, feedback, level)
}

/// Orders candidates by score descending, then id ascending bytewise (SPEC §4). Candidates are
/// large; sorting small keys and then moving each candidate once is several times faster than
/// sorting the candidates themselves.
pub(crate) fn sort_by_score(ranked: &mut [Ranked<'_>]) {
    let mut keys: Vec<(f64, &str, u32)> = ranked
        .iter()
        .enumerate()
        .map(|(i, r)| (r.score, r.hit.id, i as u32))
        .collect();
    keys.par_sort_unstable_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
    });
    // Apply the permutation in place: position i takes the candidate first at keys[i].2, which
    // earlier swaps may have moved; follow them.
    let order: Vec<u32> = keys.into_iter().map(|(_, _, i)| i).collect();
    for i in 0..order.len() {
        let mut j = order[i] as usize;
        while j < i {
            j = order[j] as usize;
        }
        ranked.swap(i, j);
    }
}

/// The score and level of a hit in the standard profile, without building its breakdown.
pub(crate) fn standard_score(hit: &Hit<'_>, phrase: bool, token_count: u32) -> (f64, MatchLevel) {
    standard_parts(
        hit.field_sum,
        hit.coverage_mask.count_ones(),
        phrase,
        token_count,
        standard::feedback_score(&hit.feedback),
    )
}

/// The standard score and level from a record's match evidence and feedback term.
pub(crate) fn standard_parts(
    field_sum: u32,
    matched: u32,
    phrase: bool,
    token_count: u32,
    feedback: f64,
) -> (f64, MatchLevel) {
    let relevance = standard::relevance(field_sum, phrase, matched, token_count);
    (
        relevance.relevance + feedback,
        standard::match_level(relevance.coverage, relevance.relevance),
    )
}

/// Positions of the `n` best hits by score then id, plus those in `also`, ascending.
fn top_positions(
    scored: &[(f64, MatchLevel)],
    hits: &[Hit<'_>],
    n: usize,
    also: &std::collections::HashSet<usize>,
) -> Vec<usize> {
    let mut keys: Vec<(f64, &str, u32)> = scored
        .iter()
        .zip(hits)
        .enumerate()
        .map(|(i, ((score, _), hit))| (*score, hit.id, i as u32))
        .collect();
    if keys.len() > n {
        keys.select_nth_unstable_by(n, |a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
        });
        keys.truncate(n);
    }
    let mut positions: Vec<usize> = keys.into_iter().map(|(_, _, i)| i as usize).collect();
    positions.extend(also.iter().copied());
    positions.sort_unstable();
    positions.dedup();
    positions
}

/// Positions of the hits in a supersession relation with another hit.
fn supersession_involved(hits: &[Hit<'_>]) -> std::collections::HashSet<usize> {
    let targets: std::collections::HashSet<&str> =
        hits.iter().filter_map(|h| h.supersedes).collect();
    (0..hits.len())
        .filter(|&i| hits[i].supersedes.is_some() || targets.contains(hits[i].id))
        .collect()
}

/// Checks the phrase in the stored text of the hits at `positions`, in parallel.
fn verify_phrases(
    source: &dyn Source,
    hits: &mut [Hit<'_>],
    positions: &[usize],
    phrase: &str,
) -> Result<()> {
    let found: Vec<bool> = positions
        .par_iter()
        .map(|&i| source.verify_phrase(hits[i].doc, phrase))
        .collect::<Result<_>>()?;
    for (&i, found) in positions.iter().zip(found) {
        hits[i].phrase = Some(found);
    }
    Ok(())
}

/// SPEC §6.6 `--token-budget`: keeps the results whose compact JSON fits; returns the notice
/// when some were cut.
pub(crate) fn apply_token_budget(
    results: &mut Vec<SearchResult>,
    budget: Option<u64>,
) -> Option<String> {
    let budget = budget?;
    let lengths: Vec<usize> = results
        .iter()
        .map(|r| {
            serde_json::to_string(r)
                .expect("results serialize")
                .chars()
                .count()
        })
        .collect();
    let kept = budget::kept_within(&lengths, budget * budget::CHARS_PER_TOKEN);
    let cut = results.len() - kept;
    results.truncate(kept);
    (cut > 0).then(|| {
        format!(
            "--token-budget {budget}: {cut} result{} cut to fit {} characters",
            if cut == 1 { "" } else { "s" },
            budget * budget::CHARS_PER_TOKEN
        )
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
/// `passes` is the number of candidates (the list may hold only the top of them).
fn apply_supersession(ranked: &mut [Ranked<'_>], passes: usize) {
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
    for _pass in 0..passes {
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
    sort_by_score(ranked);
}

/// Where the candidates stand after the post-steps, for `--explain`.
struct Standing<'r, 'a> {
    ranked: &'r [Ranked<'a>],
    removed: &'r HashMap<DocRef, Removal>,
    /// Results passing `--min-score`.
    kept: usize,
    /// Results shown (after `--limit` and `--token-budget`).
    shown: usize,
}

fn explain(
    source: &dyn Source,
    id: &str,
    standing: Standing<'_, '_>,
    filters: &Filters,
    context: &Context<'_>,
    normalized: impl Fn(f64) -> f64,
    breakdown_of: &dyn Fn(&Ranked<'_>) -> serde_json::Map<String, serde_json::Value>,
) -> Result<Explain> {
    let mut explain = Explain {
        id: id.to_string(),
        status: ExplainStatus::NotFound,
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
        explain.status = ExplainStatus::Filtered;
        explain.filter = Some(filter);
        return Ok(explain);
    }
    let Some(position) = standing.ranked.iter().position(|r| r.hit.doc == doc) else {
        match standing.removed.get(&doc) {
            Some(Removal::Superseded) => explain.status = ExplainStatus::Superseded,
            Some(Removal::BeyondCandidates(rank)) => {
                explain.status = ExplainStatus::BeyondLimit;
                explain.rank = Some(*rank);
            }
            None => explain.status = ExplainStatus::NoTokenMatched,
        }
        return Ok(explain);
    };
    let r = &standing.ranked[position];
    explain.rank = Some(position + 1);
    explain.score = Some(r.score);
    explain.normalized_score = Some(normalized(r.score));
    explain.match_level = Some(r.level);
    explain.score_breakdown = Some(breakdown_of(r));
    explain.status = if position >= standing.kept {
        ExplainStatus::BelowMinScore
    } else if position >= standing.shown {
        ExplainStatus::BeyondLimit
    } else {
        ExplainStatus::Result
    };
    Ok(explain)
}

/// Hashes the index generation, the effective settings, `now` and the query.
fn fingerprint(
    request: &SearchRequest,
    settings: &Settings,
    context: &Context<'_>,
    now: &Timestamp,
) -> String {
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
    // Settings added by the profiles; each is hashed only when it differs from its default, so
    // fingerprints of plain `standard` searches stay as they were.
    if request.include_superseded {
        field("includeSuperseded", "true");
    }
    if let Some(n) = request.candidates {
        field("candidates", &n.to_string());
    }
    if let Some(mmr) = request.mmr {
        field("mmr", if mmr { "true" } else { "false" });
    }
    if let Some(n) = request.token_budget {
        field("tokenBudget", &n.to_string());
    }
    for entity in &request.entities {
        field("entity", entity);
    }
    if let Some(weights) = &request.rerank {
        field("rerank", &weights.canonical());
    }
    if *settings != *DEFAULT_SETTINGS {
        field("settings", &settings.canonical());
    }
    let digest = hasher.finalize();
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}
