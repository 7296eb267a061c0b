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
//! Where the index stores a fingerprint of each record's content prefix (`format/prefixes.rs`)
//! of the length MMR compares, a read candidate's prefix is its fingerprint: candidates whose
//! fingerprints differ cannot repeat one another, and only those sharing one are read as text to
//! tell (see [`duplicates`]).
//!
//! Only for a ranking that nothing after it reads beyond the page (no `--explain`, no
//! `--min-score`, no `--rerank`) and without supersession relations among the candidates,
//! whose clamps read the whole list (see `pipeline.rs`).

use std::cmp::Ordering;
use std::collections::HashMap;

use rayon::prelude::*;

use crate::error::Result;
use crate::search::entities::Needles;
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
        &[]
    };
    // What the postings decide leaves the upper score exact.
    step.decide_entities_unread(ranked, entities)?;
    let needles = Needles::new(entities);
    ranked.sort_unstable_by(|a, b| by_score_then_id(a.upper(), b.upper(), a, b));
    let (chars, penalty) = (
        step.settings.mmr.prefix_chars,
        step.settings.mmr.decay_penalty,
    );
    // What was read of ranked[..read]: the content prefix (or its fingerprint), when MMR
    // compares them.
    let mut prefixes: Vec<Prefix> = Vec::with_capacity(ranked.len());
    // The page and one more, then a third of a page at a time: a read past what the page
    // needs is wasted, and an undecided candidate's read decodes its whole record (over the
    // real-text questions at 100k, most pages settle within the first `limit + 1`).
    let mut batch = limit + 1;
    loop {
        let read = prefixes.len();
        let unread = ranked.get(read).map(Ranked::upper);
        let text = |i: usize| step.content_prefix(ranked[i].hit.doc, chars);
        let settled = head(ranked, &mut prefixes, unread, (limit, mmr, penalty), text)?;
        if let Some(head) = settled {
            apply(ranked, head, penalty);
            return Ok(());
        }
        let end = (read + batch).min(ranked.len());
        let more = ranked[read..end]
            .par_iter_mut()
            .map(|r| -> Result<Prefix> {
                if r.undecided.is_some() {
                    let occurs = step.entity_check(&needles, r.hit.doc)?;
                    step.decide(r, occurs)?;
                }
                if !mmr {
                    return Ok(Prefix::text(String::new()));
                }
                match step.source.prefix_fingerprint(r.hit.doc, chars)? {
                    Some(fingerprint) => Ok(Prefix::Fingerprint(fingerprint)),
                    None => step.content_prefix(r.hit.doc, chars).map(Prefix::text),
                }
            })
            .collect::<Result<Vec<Prefix>>>()?;
        prefixes.extend(more);
        batch = (limit / 3).max(1);
    }
}

/// A read candidate's content prefix as MMR compares it, or the fingerprint of it that the
/// index stores (equal prefixes have equal fingerprints).
enum Prefix {
    Fingerprint(u32),
    /// The prefix read, with its fingerprint where it was read for one.
    Text {
        text: String,
        fingerprint: Option<u32>,
    },
}

impl Prefix {
    /// A prefix read where no fingerprint stands for it (a segment without them).
    fn text(text: String) -> Prefix {
        Prefix::Text {
            text,
            fingerprint: None,
        }
    }
}

/// For the candidates at `order` (places in `prefixes`, in rank order): whether each one's
/// prefix equals a higher-ranked one's ([`near_duplicates`]). A fingerprint no other of them
/// has is no one's duplicate and has none; the others are read as text (`text` of a place),
/// and all of them when a prefix without a fingerprint is among them (a segment without
/// fingerprints).
fn duplicates(
    order: &[usize],
    prefixes: &mut [Prefix],
    text: impl Fn(usize) -> Result<String>,
) -> Result<Vec<bool>> {
    let mut shared: HashMap<u32, u32> = HashMap::new();
    let mut unfingerprinted = false;
    for &i in order {
        match prefixes[i] {
            Prefix::Fingerprint(f)
            | Prefix::Text {
                fingerprint: Some(f),
                ..
            } => *shared.entry(f).or_default() += 1,
            Prefix::Text {
                fingerprint: None, ..
            } => unfingerprinted = true,
        }
    }
    for &i in order {
        if let Prefix::Fingerprint(f) = prefixes[i] {
            if unfingerprinted || shared[&f] > 1 {
                prefixes[i] = Prefix::Text {
                    text: text(i)?,
                    fingerprint: Some(f),
                };
            }
        }
    }
    let texts: Vec<Option<&str>> = (order.iter())
        .map(|&i| match &prefixes[i] {
            Prefix::Text { text, .. } => Some(text.as_str()),
            Prefix::Fingerprint(_) => None,
        })
        .collect();
    let mut duplicates = vec![false; order.len()];
    let read: Vec<usize> = (0..order.len()).filter(|&k| texts[k].is_some()).collect();
    let found = near_duplicates(read.iter().filter_map(|&k| texts[k]));
    for (k, duplicate) in read.into_iter().zip(found) {
        duplicates[k] = duplicate;
    }
    Ok(duplicates)
}

/// The settled head, when it holds the page: the read candidates scoring above `unread` (the
/// greatest upper score of an unread one), in rank order, each with whether it is a near
/// duplicate; of those, the ones still above `unread` after demotion, when there are `limit`
/// of them. When nothing is unread, every candidate.
fn head(
    ranked: &[Ranked<'_>],
    prefixes: &mut [Prefix],
    unread: Option<f64>,
    (limit, mmr, penalty): (usize, bool, f64),
    text: impl Fn(usize) -> Result<String>,
) -> Result<Option<Vec<(usize, bool)>>> {
    let above = |score: f64| unread.is_none_or(|h| score > h);
    let mut order: Vec<usize> = (0..prefixes.len())
        .filter(|&i| above(ranked[i].score))
        .collect();
    order.sort_unstable_by(|&a, &b| {
        by_score_then_id(ranked[a].score, ranked[b].score, &ranked[a], &ranked[b])
    });
    let duplicates = if mmr {
        duplicates(&order, prefixes, text)?
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
    Ok((unread.is_none() || head.len() >= limit).then_some(head))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// The prefixes of `texts` after a call read the pair sharing a fingerprint.
    fn prefixes_after_a_pair() -> Vec<Prefix> {
        let fp = crate::format::prefixes::fingerprint;
        let read = |t: &str| Prefix::Text {
            text: t.to_string(),
            fingerprint: Some(fp(t)),
        };
        vec![
            read("alpha"),
            Prefix::Fingerprint(fp("beta")),
            read("alpha"),
            Prefix::Fingerprint(fp("gamma")),
            Prefix::Fingerprint(fp("delta")),
        ]
    }

    #[test]
    fn fingerprints_read_the_text_only_where_they_are_shared() {
        let texts = ["alpha", "beta", "alpha", "gamma", "delta"];
        let fp = |t: &str| crate::format::prefixes::fingerprint(t);
        let reads = RefCell::new(Vec::new());
        let text = |i: usize| -> Result<String> {
            reads.borrow_mut().push(i);
            Ok(texts[i].to_string())
        };
        // Distinct fingerprints: nothing read, nothing a duplicate.
        let mut prefixes: Vec<Prefix> = [0, 1, 3]
            .iter()
            .map(|&i| Prefix::Fingerprint(fp(texts[i])))
            .collect();
        assert_eq!(
            duplicates(&[0, 1, 2], &mut prefixes, |k| text([0, 1, 3][k])).unwrap(),
            [false; 3]
        );
        assert!(reads.borrow().is_empty());
        // A shared fingerprint: those two read, the later one a duplicate.
        let mut prefixes: Vec<Prefix> = texts.iter().map(|t| Prefix::Fingerprint(fp(t))).collect();
        assert_eq!(
            duplicates(&[0, 1, 2, 3, 4], &mut prefixes, text).unwrap(),
            [false, false, true, false, false]
        );
        assert_eq!(*reads.borrow(), [0, 2]);
        // Two prefixes that differ under one fingerprint (a collision): read, not duplicates.
        reads.borrow_mut().clear();
        let mut prefixes = vec![Prefix::Fingerprint(7), Prefix::Fingerprint(7)];
        assert_eq!(
            duplicates(&[1, 0], &mut prefixes, text).unwrap(),
            [false, false]
        );
        assert_eq!(*reads.borrow(), [1, 0]);
        // Read for a shared fingerprint, a prefix keeps it: fingerprints another call meets
        // beside it are read only where shared.
        reads.borrow_mut().clear();
        let order = [0, 1, 2, 3, 4];
        assert_eq!(
            duplicates(&order, &mut prefixes_after_a_pair(), text).unwrap(),
            [false, false, true, false, false]
        );
        assert!(reads.borrow().is_empty(), "{:?}", reads.borrow());
        // A prefix without a fingerprint (a segment without them): every one is read.
        reads.borrow_mut().clear();
        let mut prefixes = vec![
            Prefix::text("alpha".into()),
            Prefix::Fingerprint(fp("beta")),
            Prefix::Fingerprint(fp("alpha")),
        ];
        let order = [0, 1, 2];
        assert_eq!(
            duplicates(&order, &mut prefixes, |i| text([0, 1, 2][i])).unwrap(),
            [false, false, true]
        );
        assert_eq!(*reads.borrow(), [1, 2]);
    }
}
