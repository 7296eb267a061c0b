//! Counters of the work searches do that is not proportional to the answer: the terms a query
//! token expands to, phrases checked in stored text, records decoded whole or in part, records
//! whose matched tokens were looked up. They
//! give the benchmarks' workload statistics (`reliora-bench workload`) and let tests see what
//! a search read.
//!
//! Process-wide and relaxed: a reader takes a [`snapshot`] before and after a search and
//! subtracts, which counts that search alone only while no other search runs.

use std::ops::Sub;
use std::sync::atomic::{AtomicU64, Ordering};

static TOKENS: AtomicU64 = AtomicU64::new(0);
static TERMS: AtomicU64 = AtomicU64::new(0);
static PHRASE_CHECKS: AtomicU64 = AtomicU64::new(0);
static RECORDS: AtomicU64 = AtomicU64::new(0);
static HEADS: AtomicU64 = AtomicU64::new(0);
static COVERAGES: AtomicU64 = AtomicU64::new(0);

/// The counts since the process started (or, subtracted, between two snapshots).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    /// Query tokens looked up in a segment's term dictionary (one per token per segment).
    pub tokens: u64,
    /// The terms those lookups found (a token's prefix expansions; in the multilingual
    /// analyzer also each word's stop-word twin).
    pub terms: u64,
    /// Records whose stored text was read to tell whether a phrase occurs in them.
    pub phrase_checks: u64,
    /// Records decoded whole.
    pub records: u64,
    /// Records of which only the head was decoded (a result's locator and title, MMR's
    /// content prefix).
    pub heads: u64,
    /// Records whose matched query tokens were looked up in the tokens' postings (a result's
    /// `matched_tokens`; the index keeps only their number per record).
    pub coverages: u64,
}

impl Sub for Work {
    type Output = Work;

    fn sub(self, earlier: Work) -> Work {
        Work {
            tokens: self.tokens - earlier.tokens,
            terms: self.terms - earlier.terms,
            phrase_checks: self.phrase_checks - earlier.phrase_checks,
            records: self.records - earlier.records,
            heads: self.heads - earlier.heads,
            coverages: self.coverages - earlier.coverages,
        }
    }
}

/// The counts now.
pub fn snapshot() -> Work {
    Work {
        tokens: TOKENS.load(Ordering::Relaxed),
        terms: TERMS.load(Ordering::Relaxed),
        phrase_checks: PHRASE_CHECKS.load(Ordering::Relaxed),
        records: RECORDS.load(Ordering::Relaxed),
        heads: HEADS.load(Ordering::Relaxed),
        coverages: COVERAGES.load(Ordering::Relaxed),
    }
}

/// A token looked up, and the terms it expanded to.
pub(crate) fn token_expanded(terms: usize) {
    TOKENS.fetch_add(1, Ordering::Relaxed);
    TERMS.fetch_add(terms as u64, Ordering::Relaxed);
}

/// A phrase checked in a record's stored text.
pub(crate) fn phrase_checked() {
    PHRASE_CHECKS.fetch_add(1, Ordering::Relaxed);
}

/// A record decoded whole.
pub(crate) fn record_decoded() {
    RECORDS.fetch_add(1, Ordering::Relaxed);
}

/// A record's head decoded.
pub(crate) fn head_decoded() {
    HEADS.fetch_add(1, Ordering::Relaxed);
}

/// The matched tokens of `records` records looked up.
pub(crate) fn coverages_looked_up(records: usize) {
    COVERAGES.fetch_add(records as u64, Ordering::Relaxed);
}
