//! Phrase checks under a bound — one algorithm for every source and path.
//!
//! Whether the exact phrase occurs is known from the postings for some records only; for the
//! rest the stored text is read, which is slow. So it is read only where it can change what is
//! reported: first the candidates a caller must know (a match level, a supersession relation,
//! the explained record, any profile other than the standard one), then those whose phrase
//! bonus could lift them to the `limit`-th best lower bound among the candidates outside
//! supersession relations. At least `limit` records score that much or more in the end, so a
//! record that cannot reach it stays off the page whatever its text says.

use rayon::prelude::*;

use crate::error::Result;
use crate::search::{standard_score, DocRef, Hit, Source};

/// A candidate whose phrase flag may still be unknown.
pub(crate) trait PhraseBound: Sync {
    /// Where its record lives.
    fn doc(&self) -> DocRef;
    /// Whether the phrase occurs; `None` until checked.
    fn phrase(&self) -> Option<bool>;
    /// Records what the stored text said.
    fn set_phrase(&mut self, found: bool);
    /// The score with the phrase as checked, or without it when unchecked: a lower bound.
    fn lower(&self, token_count: u32) -> f64;
    /// The score with the phrase unless it was checked absent: an upper bound.
    fn upper(&self, token_count: u32) -> f64;
}

impl PhraseBound for Hit<'_> {
    fn doc(&self) -> DocRef {
        self.doc
    }

    fn phrase(&self) -> Option<bool> {
        self.phrase
    }

    fn set_phrase(&mut self, found: bool) {
        self.phrase = Some(found);
    }

    fn lower(&self, token_count: u32) -> f64 {
        standard_score(self, self.phrase == Some(true), token_count).0
    }

    fn upper(&self, token_count: u32) -> f64 {
        standard_score(self, self.phrase != Some(false), token_count).0
    }
}

/// What a caller tells [`check_phrases`].
pub(crate) struct PhraseChecks<'p, F, I> {
    pub phrase: &'p str,
    /// The page size.
    pub limit: usize,
    /// The query's token count.
    pub token_count: u32,
    /// The candidates checked first whatever the bound: `(position, candidate)`.
    pub first: F,
    /// The candidates in a supersession relation (their scores may still be lowered, so they
    /// give no bound).
    pub involved: I,
}

/// Checks the phrase of the candidates that need it, in two passes (see the module docs).
/// `others` are exact scores of records outside supersession relations that take part in the
/// bound without being in `candidates` (the log's records, for the index's top-k).
pub(crate) fn check_phrases<C, F, I>(
    source: &dyn Source,
    candidates: &mut [C],
    checks: PhraseChecks<'_, F, I>,
    others: impl Iterator<Item = f64>,
) -> Result<()>
where
    C: PhraseBound,
    F: Fn(usize, &C) -> bool,
    I: Fn(usize, &C) -> bool,
{
    let PhraseChecks {
        phrase,
        limit,
        token_count,
        first,
        involved,
    } = checks;
    verify(source, candidates, phrase, first)?;
    let mut lower: Vec<f64> = candidates
        .iter()
        .enumerate()
        .filter(|(i, c)| !involved(*i, c))
        .map(|(_, c)| c.lower(token_count))
        .chain(others)
        .collect();
    match nth_best(&mut lower, limit) {
        Some(threshold) => verify(source, candidates, phrase, |_, c| {
            c.upper(token_count) >= threshold
        }),
        None => verify(source, candidates, phrase, |_, _| true),
    }
}

/// Checks, in parallel, the phrase of the unchecked candidates `pick` accepts.
pub(crate) fn verify<C: PhraseBound>(
    source: &dyn Source,
    candidates: &mut [C],
    phrase: &str,
    pick: impl Fn(usize, &C) -> bool,
) -> Result<()> {
    let picked: Vec<usize> = (0..candidates.len())
        .filter(|&i| candidates[i].phrase().is_none() && pick(i, &candidates[i]))
        .collect();
    let found: Vec<bool> = picked
        .par_iter()
        .map(|&i| source.verify_phrase(candidates[i].doc(), phrase))
        .collect::<Result<_>>()?;
    for (i, found) in picked.into_iter().zip(found) {
        candidates[i].set_phrase(found);
    }
    Ok(())
}

/// The `n`-th best (largest) of `values`, 1-based; `None` when there are fewer than `n`.
pub(crate) fn nth_best(values: &mut [f64], n: usize) -> Option<f64> {
    let k = n.checked_sub(1).filter(|&k| k < values.len())?;
    Some(*values.select_nth_unstable_by(k, |a, b| b.total_cmp(a)).1)
}
