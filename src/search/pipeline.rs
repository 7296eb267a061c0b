//! One search as a pipeline of named stages over a [`Source`]:
//!
//! 1. [`prepare`]: the query analyzed, the filters, the settings, the notices so far;
//! 2. [`candidates`]: what the source matches (for the plain standard profile, only what can
//!    reach the page);
//! 3. [`check_phrases`]: the exact phrase read from stored text where it can change the answer;
//! 4. [`standard_scores`]: every kept candidate's standard score, level and the counts;
//! 5. [`apply_profile`]: the chosen profile and `--rerank`;
//! 6. [`post_steps`]: the order, `--candidates`, supersession, MMR;
//! 7. [`page`]: `--min-score` and `--limit`;
//! 8. [`respond::results`], [`respond::explain`], [`respond::fingerprint`]: the response.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::error::{Error, ErrorCode, Result};
use crate::record::Timestamp;
use crate::search::decay_page;
use crate::search::decoded::Decoded;
use crate::search::filters::Filters;
use crate::search::phrase_checks::{self, PhraseChecks};
use crate::search::plan::Plan;
use crate::search::post_steps::{self, apply_supersession, apply_token_budget, Normalizer};
use crate::search::query::PreparedQuery;
use crate::search::ranking::{self, Ranked, Removal};
use crate::search::request::{Profile, SearchRequest};
use crate::search::respond::{self, Standing};
use crate::search::response::{Counts, SearchResponse};
use crate::search::standard::{self, MatchLevel};
use crate::search::{
    by_created_desc_then_id, sort_by_score, standard_score, BoundedOrder, Context, DocRef, Hit,
    Matched, Source, TokenGroups, TopOrder, DEFAULT_SETTINGS,
};
use crate::settings::Settings;

/// Runs `request` against `source`.
pub(crate) fn execute(
    source: &dyn Source,
    request: &SearchRequest,
    context: Context<'_>,
) -> Result<SearchResponse> {
    // What the page's records need is readied on another worker while the candidates are
    // scored, and no longer than that.
    let scored_all = AtomicBool::new(false);
    let score_all = || {
        let scored = score(source, request, &context);
        scored_all.store(true, Ordering::Relaxed);
        scored
    };
    let (scored, ()) = rayon::join(score_all, || source.warm(&scored_all));
    Ok(finish(source, context, scored?)?.0)
}

/// A search through its profile (stages 1–5): every kept candidate scored, in no particular
/// order, with the counts of all. [`finish`] runs the rest; a shard of a sharded index hands
/// its candidates on instead (`shards.rs`).
pub(crate) struct Scored<'r, 's> {
    pub plan: Plan<'r>,
    pub notices: Vec<String>,
    pub token_groups: Vec<TokenGroups>,
    /// Live records, and those passing the filters.
    pub live: usize,
    pub passing: usize,
    pub counts: Counts,
    pub ranked: Vec<Ranked<'s>>,
    pub removed: HashMap<DocRef, Removal>,
    /// Records the profile decoded, for the post-steps to read again.
    pub records: Decoded,
    /// The query's entities, when the profile found them, for the post-steps.
    pub entities: OnceLock<Vec<String>>,
}

/// Stages 1–5: the plan, the candidates, their phrases, standard scores and the profile.
pub(crate) fn score<'r, 's>(
    source: &'s dyn Source,
    request: &'r SearchRequest,
    context: &Context<'r>,
) -> Result<Scored<'r, 's>> {
    let (plan, notices) = prepare(request, context)?;
    let matched = candidates(source, &plan)?;
    let precounted = matched.counts;
    let mut hits = matched.hits;
    let involved = supersession_involved(&hits);
    if precounted.is_none() {
        check_phrases(source, &plan, &mut hits, &involved)?;
    }
    let mut counts = Counts {
        candidates: hits.len(),
        filtered: matched.live - matched.passing,
        ..precounted.unwrap_or_default()
    };
    let ranked = standard_scores(&plan, &hits, &involved, precounted.as_ref(), &mut counts);
    let mut removed: HashMap<DocRef, Removal> = HashMap::new();
    let (ranked, records, entities) = if plan.empty {
        let mut ranked = ranked;
        ranked.par_sort_unstable_by(by_created_desc_then_id);
        (ranked, Decoded::default(), OnceLock::new())
    } else {
        let carried = (Decoded::default(), OnceLock::new());
        let step = step(source, &plan, context.best_relevance, carried);
        let ranked = apply_profile(&step, &plan, ranked, &mut removed)?;
        (ranked, step.records, step.entities)
    };
    Ok(Scored {
        plan,
        notices,
        token_groups: matched.token_groups,
        live: matched.live,
        passing: matched.passing,
        counts,
        ranked,
        removed,
        records,
        entities,
    })
}

/// Where the page ended, before `--token-budget`: how many results, the last one's score, and
/// the normalization `--min-score` compared with.
pub(crate) struct PageEnd {
    pub len: usize,
    /// The last result's score and id.
    pub last: Option<(f64, String)>,
    pub normalizer: Normalizer,
}

/// Stages 6–8 after [`score`]: the post-steps, the page and the response.
pub(crate) fn finish(
    source: &dyn Source,
    context: Context<'_>,
    scored: Scored<'_, '_>,
) -> Result<(SearchResponse, PageEnd)> {
    let Scored {
        plan,
        mut notices,
        token_groups,
        counts,
        mut ranked,
        mut removed,
        records,
        entities,
        ..
    } = scored;
    let request = plan.request;
    if !plan.empty {
        let step = step(source, &plan, context.best_relevance, (records, entities));
        post_steps(&step, &plan, &mut ranked, &mut removed, counts.candidates)?;
    }
    let normalizer = Normalizer::new(request.profile, &ranked);
    let (kept, page) = page(&plan, &ranked, &normalizer);

    let breakdown_of = |r: &Ranked<'_>| {
        let masks = respond::group_masks(&token_groups, r.hit.doc, plan.query.tokens.len());
        r.breakdown(&masks)
    };
    let mut results = respond::results(source, &plan, page, &normalizer, &breakdown_of)?;
    notices.extend(apply_token_budget(&mut results, request.token_budget));
    let explain = match &request.explain {
        None => None,
        Some(id) => Some(respond::explain(
            source,
            id,
            Standing {
                ranked: &ranked,
                removed: &removed,
                kept,
                shown: results.len(),
            },
            &plan.filters,
            &context,
            &normalizer,
            &breakdown_of,
        )?),
    };
    let end = PageEnd {
        len: page.len(),
        last: page.last().map(|r| (r.score, r.hit.id.to_string())),
        normalizer,
    };
    let response = respond::response(source, &plan, &context, notices, counts, results, explain);
    Ok((response, end))
}

/// What the profile passes and post-steps read.
fn step<'s>(
    source: &'s dyn Source,
    plan: &'s Plan<'_>,
    best_relevance: Option<f64>,
    (records, entities): (Decoded, OnceLock<Vec<String>>),
) -> ranking::Step<'s> {
    ranking::Step {
        source,
        request: plan.request,
        settings: plan.settings,
        query: &plan.query,
        now: (plan.now.unix_seconds(), plan.now.subsec_nanos()),
        best_relevance,
        records,
        entities,
    }
}

/// Stage 1: the analyzed query, the filters and settings, the `now` of the search, and the
/// notices known before matching. An empty query without filters is an error.
fn prepare<'r>(
    request: &'r SearchRequest,
    context: &Context<'r>,
) -> Result<(Plan<'r>, Vec<String>)> {
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
    let plain = request.rerank.is_none() && !request.mmr_enabled();
    let plain_standard =
        plain && request.profile == Profile::Standard && request.candidates.is_none();
    // Decay's list is its `--candidates` by relevance before anything else (rerank and MMR
    // included) reads it; the other profiles' rerank and MMR read every candidate.
    let bounded = request.profile == Profile::Decay || plain;
    let top = match request.profile {
        _ if !bounded || request.explain.is_some() || empty => None,
        Profile::Standard if request.candidates.is_none() => {
            Some((TopOrder::Bounded(BoundedOrder::Standard), request.limit))
        }
        Profile::Recency if request.candidates.is_none() => Some((
            TopOrder::Bounded(BoundedOrder::Recency {
                settings: &settings.recency,
                now: (now.unix_seconds(), now.subsec_nanos()),
                best_relevance: context.best_relevance,
            }),
            request.limit,
        )),
        Profile::Bm25f if request.candidates.is_none() => Some((
            TopOrder::Bm25f {
                settings: &settings.bm25f,
                collection: context.collection,
            },
            request.limit,
        )),
        Profile::Decay => Some((
            TopOrder::Bounded(BoundedOrder::DecayCandidates {
                include_superseded: request.include_superseded,
            }),
            request.candidates.unwrap_or(settings.decay.candidates),
        )),
        Profile::Standard | Profile::Recency | Profile::Bm25f => None,
    };
    let decay_page_only = request.profile == Profile::Decay
        && request.rerank.is_none()
        && request.explain.is_none()
        && request.min_score.is_none();
    let plan = Plan {
        request,
        settings,
        token_count: query.tokens.len() as u32,
        top,
        plain_standard,
        decay_page_only,
        empty,
        query,
        filters,
        now,
    };
    Ok((plan, notices))
}

/// Stage 2: the candidates — for an order the source can bound (see [`Plan::top`]) only those
/// that can reach the page (with the counts of all), when the source knows how.
fn candidates<'s>(source: &'s dyn Source, plan: &Plan<'_>) -> Result<Matched<'s>> {
    let top = match &plan.top {
        Some((order, limit)) => source.top(&plan.query, &plan.filters, *limit, order)?,
        None => None,
    };
    match top {
        Some(top) => Ok(top),
        None => source.matched(&plan.query, &plan.filters),
    }
}

/// Stage 3: phrase checks. Phrase checks read stored text, so they are done only where they can
/// change what is reported: a match level (counts), a supersession relation, the explained
/// record, or a place on the page. Everything else keeps its phrase-less score, a lower bound.
/// Bounds are only sound for the standard profile's own ranking; any other profile or ranking
/// option checks every candidate the postings allow.
fn check_phrases(
    source: &dyn Source,
    plan: &Plan<'_>,
    hits: &mut [Hit<'_>],
    involved: &HashSet<usize>,
) -> Result<()> {
    let Some(phrase) = plan.query.phrase.as_deref().filter(|_| !plan.empty) else {
        return Ok(());
    };
    let token_count = plan.token_count;
    let checks = PhraseChecks {
        phrase,
        limit: plan.request.limit,
        token_count,
        first: |i: usize, hit: &Hit<'_>| {
            !plan.plain_standard
                || plan.request.explain.is_some()
                || involved.contains(&i)
                || standard_score(hit, false, token_count).1
                    != standard_score(hit, true, token_count).1
        },
        involved: |i: usize, _: &Hit<'_>| involved.contains(&i),
    };
    phrase_checks::check_phrases(source, hits, checks, std::iter::empty())
}

/// Stage 4: the standard score of every candidate kept, and the counts of their levels. The
/// plain standard profile keeps only what can reach the page: the best `limit + |involved|` and
/// the records in supersession relations (supersession only lowers the scores of those).
/// Everything else is counted, never materialized. Another order the source bounded keeps
/// what it returned: the counts came with it.
fn standard_scores<'a>(
    plan: &Plan<'_>,
    hits: &[Hit<'a>],
    involved: &HashSet<usize>,
    precounted: Option<&Counts>,
    counts: &mut Counts,
) -> Vec<Ranked<'a>> {
    let (empty, token_count) = (plan.empty, plan.token_count);
    let standard_top = matches!(
        plan.top,
        Some((TopOrder::Bounded(BoundedOrder::Standard), _))
    );
    if !standard_top || precounted.is_none() {
        let ranked: Vec<Ranked<'_>> = hits
            .par_iter()
            .map(|hit| score_hit(hit, hit.phrase == Some(true), empty, token_count))
            .collect();
        match precounted {
            Some(all) => counts.candidates = all.candidates,
            None => {
                for r in &ranked {
                    counts.add(r.level);
                }
            }
        }
        return ranked;
    }
    let scored: Vec<(f64, MatchLevel)> = hits
        .par_iter()
        .map(|hit| standard_score(hit, hit.phrase == Some(true), token_count))
        .collect();
    match precounted {
        Some(all) => counts.candidates = all.candidates,
        None => {
            for (_, level) in &scored {
                counts.add(*level);
            }
        }
    }
    top_positions(&scored, hits, plan.request.limit + involved.len(), involved)
        .into_iter()
        .map(|i| score_hit(&hits[i], hits[i].phrase == Some(true), empty, token_count))
        .collect()
}

/// Stage 5: the chosen profile's scores, then `--rerank`.
fn apply_profile<'a>(
    step: &ranking::Step<'_>,
    plan: &Plan<'_>,
    mut ranked: Vec<Ranked<'a>>,
    removed: &mut HashMap<DocRef, Removal>,
) -> Result<Vec<Ranked<'a>>> {
    match plan.request.profile {
        Profile::Standard => {}
        Profile::Decay => step.decay(&mut ranked, removed, !plan.decay_page_only)?,
        Profile::Recency => step.recency(&mut ranked)?,
        Profile::Bm25f => ranked = step.bm25f(ranked)?,
    }
    if let Some(weights) = &plan.request.rerank {
        step.rerank(&mut ranked, weights)?;
    }
    Ok(ranked)
}

/// Stage 6: the order (score, then id), the `--candidates` cap, supersession (SPEC §6.1) and
/// near-duplicate demotion (MMR), supersession again after it. Decay's entity checks are made
/// here, and when only the page is read ([`Plan::decay_page_only`]) and no supersession clamp
/// applies, only those records are read that can reach the page (`decay_page.rs`); the list
/// is then the head of the ranking.
fn post_steps(
    step: &ranking::Step<'_>,
    plan: &Plan<'_>,
    ranked: &mut Vec<Ranked<'_>>,
    removed: &mut HashMap<DocRef, Removal>,
    candidates: usize,
) -> Result<()> {
    if plan.request.profile == Profile::Decay {
        if plan.decay_page_only && !post_steps::any_supersession(ranked) {
            return decay_page::settle(step, ranked, plan.request.limit);
        }
        if ranked.iter().any(|r| r.undecided.is_some()) {
            step.decide_entities(ranked, step.query_entities()?)?;
        }
    }
    sort_by_score(ranked);
    if plan.request.profile != Profile::Decay {
        if let Some(cap) = plan.request.candidates {
            post_steps::cap_candidates(ranked, cap, removed);
        }
    }
    apply_supersession(ranked, candidates);
    if plan.request.mmr_enabled() {
        step.mmr(ranked)?;
    }
    apply_supersession(ranked, candidates);
    Ok(())
}

/// Stage 7: the results passing `--min-score` (how many) and the page of them. min-score keeps
/// a prefix: normalizedScore falls along the ranking.
fn page<'r, 'a>(
    plan: &Plan<'_>,
    ranked: &'r [Ranked<'a>],
    normalizer: &Normalizer,
) -> (usize, &'r [Ranked<'a>]) {
    let min_score = plan.request.min_score;
    let kept = ranked
        .iter()
        .take_while(|r| min_score.is_none_or(|m| normalizer.normalized(r.score) >= m))
        .count();
    (kept, &ranked[..kept.min(plan.request.limit)])
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
    let relevance = standard::relevance(hit.field_sum, phrase, hit.matched, token_count);
    let feedback = standard::feedback_score(&hit.feedback);
    let level = standard::match_level(relevance.coverage, relevance.relevance);
    Ranked::new(hit.clone(), relevance, feedback, level)
}

/// Positions of the `n` best hits by score then id, plus those in `also`, ascending.
fn top_positions(
    scored: &[(f64, MatchLevel)],
    hits: &[Hit<'_>],
    n: usize,
    also: &HashSet<usize>,
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
fn supersession_involved(hits: &[Hit<'_>]) -> HashSet<usize> {
    let targets: HashSet<&str> = hits.iter().filter_map(|h| h.supersedes).collect();
    (0..hits.len())
        .filter(|&i| hits[i].supersedes.is_some() || targets.contains(hits[i].id))
        .collect()
}
