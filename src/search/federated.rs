//! Federated search: one query over several indexes (`--index A --index B`), their rankings
//! fused by reciprocal rank fusion.
//!
//! Each index answers the request on its own (its profile, filters and post-steps, at most
//! `--limit` results, no `--min-score`). A record's fused score is `Σ 1 / (60 + rank)` over the
//! indexes that returned it (a record id returned by two indexes is one result); fused scores
//! below 0.30 × the best are dropped, and the rest are mapped to
//! `0.30 + 0.52 × fused / best`, so the best gets 0.82. The mapped score is both `score` and
//! `normalizedScore`; `--min-score`, `--limit` and `--token-budget` then apply to the fused
//! list. Each result names the index that ranked it best (ties: the first given).
//!
//! ```
//! use reliora::internals::search::federated::fuse;
//!
//! // Index 0 ranked a, b; index 1 ranked b, c.
//! let rankings = [vec!["a", "b"], vec!["b", "c"]];
//! let fused = fuse(&rankings, 60.0);
//! assert_eq!(fused[0].id, "b"); // 1/62 + 1/61
//! assert_eq!(fused[0].ranks, [Some(2), Some(1)]);
//! assert_eq!(fused[0].best_index, 1);
//! ```

use crate::search::breakdown::{FederatedBreakdown, ProfileBreakdown, ScoreBreakdown};
use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::index::Index;
use crate::record::Timestamp;
use crate::search::post_steps::apply_token_budget;
use crate::search::request::SearchRequest;
use crate::search::response::{BackendUsed, Counts, ExplainStatus, SearchResponse, SearchResult};
use crate::search::settings::{FederationSettings, Settings};

/// One fused result.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<'a> {
    /// The record id.
    pub id: &'a str,
    /// `Σ 1 / (k + rank)` over the rankings that hold it.
    pub fused: f64,
    /// Its 1-based rank in each ranking, if it is there.
    pub ranks: Vec<Option<usize>>,
    /// The ranking where it ranked best (ties: the first).
    pub best_index: usize,
}

/// Reciprocal rank fusion of `rankings` (ids, best first), with constant `k`: fused results
/// ordered by fused score descending, then id.
pub fn fuse<'a, S: AsRef<str>>(rankings: &'a [Vec<S>], k: f64) -> Vec<Fused<'a>> {
    let mut by_id: HashMap<&'a str, Fused<'a>> = HashMap::new();
    for (i, ranking) in rankings.iter().enumerate() {
        for (position, id) in ranking.iter().enumerate() {
            let rank = position + 1;
            let entry = by_id.entry(id.as_ref()).or_insert_with(|| Fused {
                id: id.as_ref(),
                fused: 0.0,
                ranks: vec![None; rankings.len()],
                best_index: i,
            });
            if entry.ranks[i].is_none() {
                entry.ranks[i] = Some(rank);
                if entry.ranks[entry.best_index].is_some_and(|best| rank < best) {
                    entry.best_index = i;
                }
            }
        }
    }
    // Sum in ranking order so the result does not depend on hashing.
    let mut out: Vec<Fused<'a>> = by_id.into_values().collect();
    for f in &mut out {
        f.fused = f
            .ranks
            .iter()
            .flatten()
            .map(|&rank| 1.0 / (k + rank as f64))
            .sum();
    }
    out.sort_by(|a, b| b.fused.total_cmp(&a.fused).then_with(|| a.id.cmp(b.id)));
    out
}

/// Maps fused scores into `[floor, ceiling]` relative to the best: `None` for those below
/// `floor × best` (dropped), else `floor + (ceiling − floor) × fused / best`.
pub fn map_score(fused: f64, best: f64, s: &FederationSettings) -> Option<f64> {
    if best <= 0.0 || fused < s.floor * best {
        return None;
    }
    // Written from the ceiling down so that the best gets the ceiling exactly.
    Some(s.ceiling - (s.ceiling - s.floor) * (1.0 - fused / best))
}

/// The breakdown of a fused result: its fused score, its rank in each index, and its score and
/// breakdown in the index it is shown from.
fn fused_breakdown(
    indexes: &[(String, &Index)],
    f: &Fused<'_>,
    original: &SearchResult,
) -> ScoreBreakdown {
    ScoreBreakdown::of(ProfileBreakdown::Federated(FederatedBreakdown {
        rrf: f.fused,
        ranks: indexes
            .iter()
            .zip(&f.ranks)
            .filter_map(|((name, _), rank)| rank.map(|r| (name.clone(), r)))
            .collect(),
        index_score: original.score,
        index_breakdown: Box::new(original.score_breakdown.clone()),
    }))
}

/// Hashes each index's name and fingerprint, the federation settings and the options applied
/// after fusion.
fn federated_fingerprint(
    indexes: &[(String, &Index)],
    responses: &[SearchResponse],
    settings: &FederationSettings,
    request: &SearchRequest,
) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"federated\0");
    for ((name, _), r) in indexes.iter().zip(responses) {
        for part in [name.as_str(), r.fingerprint.as_str()] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
    }
    hasher.update(serde_json::to_vec(settings).expect("settings serialize"));
    hasher.update(format!(
        "{:?}|{:?}|{}",
        request.min_score, request.token_budget, request.limit
    ));
    hasher.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Searches every `(name, index)` and fuses their rankings.
pub fn search_federated(
    indexes: &[(String, &Index)],
    request: &SearchRequest,
) -> Result<SearchResponse> {
    let now = request.now.clone().unwrap_or_else(Timestamp::now);
    let mut sub = request.clone();
    sub.now = Some(now);
    sub.min_score = None;
    sub.token_budget = None;
    let responses = indexes
        .iter()
        .map(|(_, index)| index.search(&sub))
        .collect::<Result<Vec<_>>>()?;

    let default_settings = Settings::default();
    let settings = request
        .settings
        .as_ref()
        .map_or(&default_settings.federation, |(s, _)| &s.federation);
    let rankings: Vec<Vec<&str>> = responses
        .iter()
        .map(|r| r.results.iter().map(|x| x.id.as_str()).collect())
        .collect();
    let fused = fuse(&rankings, settings.rrf_k);
    let best = fused.first().map_or(0.0, |f| f.fused);

    let mut results: Vec<SearchResult> = Vec::new();
    for f in &fused {
        let Some(mapped) = map_score(f.fused, best, settings) else {
            continue;
        };
        if request.min_score.is_some_and(|m| mapped < m) {
            continue;
        }
        if results.len() >= request.limit {
            break;
        }
        let (name, _) = &indexes[f.best_index];
        let rank = f.ranks[f.best_index].expect("the best ranking holds it");
        let original = &responses[f.best_index].results[rank - 1];
        let breakdown = fused_breakdown(indexes, f, original);
        results.push(SearchResult {
            score: mapped,
            normalized_score: mapped,
            score_breakdown: breakdown,
            index: Some(name.clone()),
            ..original.clone()
        });
    }

    let mut notices: Vec<String> = request.notices.clone();
    for ((name, _), response) in indexes.iter().zip(&responses) {
        for notice in &response.notices {
            if !request.notices.contains(notice) {
                notices.push(format!("{name}: {notice}"));
            }
        }
    }
    notices.extend(apply_token_budget(&mut results, request.token_budget));

    let mut counts = Counts::default();
    for r in &responses {
        counts.candidates += r.counts.candidates;
        counts.strong += r.counts.strong;
        counts.moderate += r.counts.moderate;
        counts.weak += r.counts.weak;
        counts.filtered += r.counts.filtered;
    }
    let fingerprint = federated_fingerprint(indexes, &responses, settings, request);

    let explain = responses
        .iter()
        .filter_map(|r| r.explain.clone())
        .find(|e| e.status != ExplainStatus::NotFound)
        .or_else(|| responses.first().and_then(|r| r.explain.clone()));
    let first = responses.first();
    Ok(SearchResponse {
        query_id: None,
        query: request.query.clone(),
        tokens: first.map(|r| r.tokens.clone()).unwrap_or_default(),
        dropped_tokens: first.map(|r| r.dropped_tokens.clone()).unwrap_or_default(),
        analyzer: first.map_or(crate::text::route(&request.query), |r| r.analyzer),
        profile: request.profile,
        now: first.map_or_else(String::new, |r| r.now.clone()),
        backend: if responses.iter().all(|r| r.backend == BackendUsed::Index) {
            BackendUsed::Index
        } else {
            BackendUsed::Scan
        },
        degraded: responses.iter().any(|r| r.degraded),
        notices,
        counts,
        fingerprint,
        results,
        explain,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrf_by_hand() {
        // Ranking 0: a b c d; ranking 1: c a e.
        let rankings = vec![vec!["a", "b", "c", "d"], vec!["c", "a", "e"]];
        let fused = fuse(&rankings, 60.0);
        let got: Vec<(&str, f64)> = fused.iter().map(|f| (f.id, f.fused)).collect();
        let a = 1.0 / 61.0 + 1.0 / 62.0;
        let c = 1.0 / 63.0 + 1.0 / 61.0;
        assert!(a > c);
        assert_eq!(
            got,
            [
                ("a", a),
                ("c", c),
                ("b", 1.0 / 62.0),
                ("e", 1.0 / 63.0),
                ("d", 1.0 / 64.0)
            ]
        );
        let c = &fused[1];
        assert_eq!(c.ranks, [Some(3), Some(1)]);
        assert_eq!(c.best_index, 1);
        // Ties go to the first ranking.
        let rankings = [vec!["x"], vec!["x"]];
        let tie = fuse(&rankings, 60.0);
        assert_eq!(tie[0].best_index, 0);
        assert_eq!(tie[0].fused, 2.0 / 61.0);
    }

    #[test]
    fn equal_fused_scores_order_by_id() {
        let rankings = [vec!["b"], vec!["a"]];
        let fused = fuse(&rankings, 60.0);
        let ids: Vec<&str> = fused.iter().map(|f| f.id).collect();
        assert_eq!(ids, ["a", "b"]);
    }

    #[test]
    fn mapping_table() {
        let s = FederationSettings::default();
        let best = 2.0 / 61.0;
        let cases = [
            (best, Some(0.82)),
            (best * 0.999_999, Some(0.82 - 0.52 * 0.000_001)),
            (best / 2.0, Some(0.30 + 0.52 * 0.5)),
            (best * 0.30, Some(0.30 + 0.52 * 0.30)),
            (best * 0.2999, None),
            (0.0, None),
        ];
        for (fused, expected) in cases {
            let got = map_score(fused, best, &s);
            match (got, expected) {
                (Some(g), Some(e)) => assert!((g - e).abs() < 1e-12, "{fused}: {g} vs {e}"),
                _ => assert_eq!(got, expected, "{fused}"),
            }
        }
        assert_eq!(map_score(1.0, 0.0, &s), None);
        assert_eq!(map_score(best, best, &s), Some(0.82));
    }
}
