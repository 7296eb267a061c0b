//! Decay's page, reading only the records that can reach it (SPEC §5.1, §5.4, §6.2).
//!
//! `decay` ranks its `--candidates` (200) best records by relevance, and two of its steps read
//! a record's stored text: the entity check (SPEC §5.4), which picks one of two scores the
//! record's columns already give, and near-duplicate demotion (SPEC §6.2), which lowers the
//! score of a record whose content prefix equals a higher-ranked one's. Neither raises a score
//! above the greater of the two, its *upper* score.
//!
//! So the candidates are read in the order of their upper scores, a batch at a time, until the
//! page is decided. With `h` the greatest upper score of any unread candidate, a read candidate
//! scoring above `h` ranks above every unread one, and so does every candidate ranked above it:
//! its demotion, which looks only at those, is final. Once `limit` read candidates still score
//! above `h` after demotion, nothing unread can reach the page, and they are the head of the
//! ranking that reading every candidate gives. Ties go by id, as in the full ranking: only
//! scores strictly above `h` are taken as settled.
//!
//! Only for a ranking that nothing after it reads beyond the page (no `--explain`, no
//! `--min-score`, no `--rerank`) and without supersession relations among the candidates,
//! whose clamps read the whole list (see `pipeline.rs`).

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::error::Result;
use crate::search::mmr::{demotion, near_duplicates};
use crate::search::ranking::{Ranked, Step};
use crate::search::sort_by_score;

/// Reorders `ranked` into the head of decay's final ranking — at least `limit` candidates when
/// there are that many, all of them otherwise — and drops the rest, which cannot reach the page.
pub(crate) fn settle(step: &Step<'_>, ranked: &mut Vec<Ranked<'_>>, limit: usize) -> Result<()> {
    let mmr = step.request.mmr_enabled();
    if !mmr && ranked.iter().all(|r| r.undecided.is_none()) {
        sort_by_score(ranked);
        return Ok(());
    }
    let entities = if ranked.iter().any(|r| r.undecided.is_some()) {
        step.query_entities()?
    } else {
        Vec::new()
    };
    // What the postings decide leaves the upper score exact.
    step.decide_entities_unread(ranked, &entities)?;
    ranked.sort_unstable_by(|a, b| by_score_then_id(a.upper(), b.upper(), a, b));
    let (chars, penalty) = (
        step.settings.mmr.prefix_chars,
        step.settings.mmr.decay_penalty,
    );
    // What was read of ranked[..read]: the content prefix, when MMR compares them.
    let mut prefixes: Vec<String> = Vec::with_capacity(ranked.len());
    let mut batch = limit + limit / 2 + 1;
    loop {
        let read = prefixes.len();
        let unread = ranked.get(read).map(Ranked::upper);
        if let Some(head) = head(ranked, &prefixes, unread, (limit, mmr, penalty)) {
            apply(ranked, head, penalty);
            return Ok(());
        }
        let end = (read + batch).min(ranked.len());
        let more = ranked[read..end]
            .par_iter_mut()
            .map(|r| -> Result<String> {
                if r.undecided.is_some() {
                    r.decide(step.entity_check(&entities, r.hit.doc)?);
                }
                if mmr {
                    step.content_prefix(r.hit.doc, chars)
                } else {
                    Ok(String::new())
                }
            })
            .collect::<Result<Vec<String>>>()?;
        prefixes.extend(more);
        batch = limit.max(1);
    }
}

/// The settled head, when it holds the page: the read candidates scoring above `unread` (the
/// greatest upper score of an unread one), in rank order, each with whether it is a near
/// duplicate; of those, the ones still above `unread` after demotion, when there are `limit`
/// of them. When nothing is unread, every candidate.
fn head(
    ranked: &[Ranked<'_>],
    prefixes: &[String],
    unread: Option<f64>,
    (limit, mmr, penalty): (usize, bool, f64),
) -> Option<Vec<(usize, bool)>> {
    let above = |score: f64| unread.is_none_or(|h| score > h);
    let mut order: Vec<usize> = (0..prefixes.len())
        .filter(|&i| above(ranked[i].score))
        .collect();
    order.sort_unstable_by(|&a, &b| {
        by_score_then_id(ranked[a].score, ranked[b].score, &ranked[a], &ranked[b])
    });
    let duplicates = if mmr {
        near_duplicates(order.iter().map(|&i| prefixes[i].as_str()))
    } else {
        vec![false; order.len()]
    };
    let head: Vec<(usize, bool)> = order
        .into_iter()
        .zip(duplicates)
        .filter(|&(i, duplicate)| {
            let demoted = demotion(ranked[i].score, true, penalty, 0.0);
            above(ranked[i].score + if duplicate { demoted } else { 0.0 })
        })
        .collect();
    (unread.is_none() || head.len() >= limit).then_some(head)
}

/// Demotes the head's near duplicates, keeps only the head and sorts it by its final scores.
fn apply(ranked: &mut Vec<Ranked<'_>>, head: Vec<(usize, bool)>, penalty: f64) {
    let mut slots: Vec<Option<Ranked<'_>>> = ranked.drain(..).map(Some).collect();
    ranked.extend(head.iter().filter_map(|&(i, duplicate)| {
        let mut r = slots[i].take()?;
        if duplicate {
            let delta = demotion(r.score, true, penalty, 0.0);
            r.score += delta;
            r.mmr += delta;
        }
        Some(r)
    }));
    sort_by_score(ranked);
}

/// Score descending, then id ascending: the ranking's order.
fn by_score_then_id(x: f64, y: f64, a: &Ranked<'_>, b: &Ranked<'_>) -> Ordering {
    y.total_cmp(&x)
        .then_with(|| a.hit.id.as_bytes().cmp(b.hit.id.as_bytes()))
}
