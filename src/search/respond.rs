//! The response: the page's records decoded into results with their breakdowns, `--explain`,
//! and the fingerprint of the search.

use crate::search::breakdown::ScoreBreakdown;
use std::collections::HashMap;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::record::Timestamp;
use crate::schema::GROUP_COUNT;
use crate::search::filters::Filters;
use crate::search::plan::Plan;
use crate::search::post_steps::Normalizer;
use crate::search::ranking::{Ranked, Removal};
use crate::search::request::SearchRequest;
use crate::search::response::{
    BackendUsed, Counts, Explain, ExplainStatus, SearchResponse, SearchResult,
};
use crate::search::{Context, DocRef, Source, TokenGroups, DEFAULT_SETTINGS};
use crate::settings::Settings;

/// The page's results, with their breakdowns: of each record its head (locator and title),
/// unless the record is asked for or has no title to show (its label is then read from its
/// content), so that only the page's records are read, and of them only what is shown.
pub(crate) fn results(
    source: &dyn Source,
    plan: &Plan<'_>,
    page: &[Ranked<'_>],
    normalizer: &Normalizer,
    breakdown_of: &(dyn Fn(&Ranked<'_>) -> ScoreBreakdown + Sync),
) -> Result<Vec<SearchResult>> {
    let query = &plan.query;
    let hits: Vec<_> = page.iter().map(|r| &r.hit).collect();
    let coverage_masks = source.coverage_masks(query, &hits)?;
    page.par_iter()
        .zip(coverage_masks)
        .map(|(r, coverage_mask)| -> Result<SearchResult> {
            let head = match plan.request.full {
                false => Some(source.stored_head(r.hit.doc, 0)?)
                    .filter(|head| head.title.as_deref().is_some_and(|t| !t.trim().is_empty())),
                true => None,
            };
            let (locator, title, label, record) = match head {
                Some(head) => {
                    let title = head.title.unwrap_or_default();
                    (head.locator, Some(title.clone()), title, None)
                }
                None => {
                    let stored = source.stored(r.hit.doc)?;
                    let record = plan.request.full.then(|| stored.record.to_json());
                    let title = stored.record.display_title().map(str::to_string);
                    (stored.locator, title, stored.record.label(), record)
                }
            };
            Ok(SearchResult {
                id: r.hit.id.to_string(),
                locator,
                title,
                label,
                score: r.score,
                normalized_score: normalizer.normalized(r.score),
                match_level: r.level,
                coverage: r.relevance.coverage,
                matched_tokens: query
                    .tokens
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| coverage_mask & (1 << i) != 0)
                    .map(|(_, t)| t.text.clone())
                    .collect(),
                superseded_by: r.hit.superseded_by.map(str::to_string),
                score_breakdown: breakdown_of(r),
                record,
                index: None,
            })
        })
        .collect()
}

/// The response of a search.
pub(crate) fn response(
    source: &dyn Source,
    plan: &Plan<'_>,
    context: &Context<'_>,
    notices: Vec<String>,
    counts: Counts,
    results: Vec<SearchResult>,
    explain: Option<Explain>,
) -> SearchResponse {
    let (request, query) = (plan.request, &plan.query);
    SearchResponse {
        query_id: None,
        fingerprint: fingerprint(request, plan.settings, context, &plan.now),
        query: request.query.clone(),
        tokens: query.tokens.iter().map(|t| t.text.clone()).collect(),
        dropped_tokens: query.dropped.clone(),
        analyzer: query.analyzer,
        profile: request.profile,
        now: plan.now.as_str().to_string(),
        backend: BackendUsed::from_name(source.name()),
        degraded: context.degraded,
        notices,
        counts,
        results,
        explain,
    }
}

/// Per-group token masks of one record, from the per-token group sets.
pub(crate) fn group_masks(
    token_groups: &[TokenGroups],
    doc: DocRef,
    tokens: usize,
) -> [u32; GROUP_COUNT] {
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

/// Where the candidates stand after the post-steps, for `--explain`.
pub(crate) struct Standing<'r, 'a> {
    pub ranked: &'r [Ranked<'a>],
    pub removed: &'r HashMap<DocRef, Removal>,
    /// Results passing `--min-score`.
    pub kept: usize,
    /// Results shown (after `--limit` and `--token-budget`).
    pub shown: usize,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn explain(
    source: &dyn Source,
    id: &str,
    standing: Standing<'_, '_>,
    filters: &Filters,
    context: &Context<'_>,
    normalizer: &Normalizer,
    breakdown_of: &dyn Fn(&Ranked<'_>) -> ScoreBreakdown,
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
    explain.normalized_score = Some(normalizer.normalized(r.score));
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
