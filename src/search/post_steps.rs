//! The post-steps after a profile has scored: the `--candidates` cap, supersession (SPEC §6.1),
//! the normalized score `--min-score` compares, and the `--token-budget` cut (SPEC §6.6).

use std::collections::{HashMap, HashSet};

use crate::search::budget;
use crate::search::ranking::{Ranked, Removal};
use crate::search::request::Profile;
use crate::search::response::SearchResult;
use crate::search::{sort_by_score, DocRef};

/// `normalizedScore`: the score clamped to [0, 1] in `decay`, else divided by the best score.
pub(crate) struct Normalizer {
    decay: bool,
    best: f64,
}

impl Normalizer {
    /// The normalization of a ranking in its final order.
    pub(crate) fn new(profile: Profile, ranked: &[Ranked<'_>]) -> Normalizer {
        Normalizer {
            decay: profile == Profile::Decay,
            best: ranked.first().map_or(0.0, |r| r.score),
        }
    }

    /// The normalized `score`.
    pub(crate) fn normalized(&self, score: f64) -> f64 {
        if self.decay {
            score.clamp(0.0, 1.0)
        } else if self.best > 0.0 {
            score / self.best
        } else {
            0.0
        }
    }
}

/// `--candidates`: keeps the first `cap` of the ranking, noting where the others stood.
pub(crate) fn cap_candidates(
    ranked: &mut Vec<Ranked<'_>>,
    cap: usize,
    removed: &mut HashMap<DocRef, Removal>,
) {
    for (i, r) in ranked.iter().enumerate().skip(cap) {
        removed.insert(r.hit.doc, Removal::BeyondCandidates(i + 1));
    }
    ranked.truncate(cap);
}

/// Whether some candidate supersedes another candidate (SPEC §6.1 then clamps).
pub(crate) fn any_supersession(ranked: &[Ranked<'_>]) -> bool {
    let ids: HashSet<&str> = ranked.iter().map(|r| r.hit.id).collect();
    ranked
        .iter()
        .any(|r| r.hit.supersedes.is_some_and(|target| ids.contains(target)))
}

/// SPEC §6.1: clamp each superseded candidate just below its candidate superseders, in passes
/// over the list in its current order, then re-sort.
/// `passes` is the number of candidates (the list may hold only the top of them).
pub(crate) fn apply_supersession(ranked: &mut [Ranked<'_>], passes: usize) {
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
