//! The `standard` profile (SPEC §4) as pure functions of plain values.

use crate::search::breakdown::StandardBreakdown;
use serde::{Deserialize, Serialize};

use crate::record::Feedback;
use crate::schema::{FieldGroup, GROUP_COUNT};

/// The bonus for an exact phrase occurrence, before the coverage multiplier.
pub const EXACT_PHRASE_BONUS: u32 = 12;

/// How strongly a result matched (SPEC §4): retrieval evidence, not correctness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchLevel {
    /// coverage ≥ 0.75 and relevance ≥ 18.
    Strong,
    /// coverage ≥ 0.4 and relevance ≥ 8.
    Moderate,
    /// Anything else.
    Weak,
}

impl MatchLevel {
    /// The level's name as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchLevel::Strong => "strong",
            MatchLevel::Moderate => "moderate",
            MatchLevel::Weak => "weak",
        }
    }
}

/// The standard relevance of one record and the values it was computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Relevance {
    /// `Σ_g field[g]`, an integer.
    pub field_sum: u32,
    /// 12 when the exact phrase occurs, else 0.
    pub exact_phrase: u32,
    /// matched query tokens ÷ query tokens.
    pub coverage: f64,
    /// `0.6 + 0.4 × coverage`.
    pub coverage_multiplier: f64,
    /// `(Σ field + exactPhrase) × coverageMultiplier`.
    pub relevance: f64,
}

/// Computes the standard relevance from the group sum, the phrase flag and token counts.
pub fn relevance(field_sum: u32, phrase: bool, matched: u32, token_count: u32) -> Relevance {
    let exact_phrase = if phrase { EXACT_PHRASE_BONUS } else { 0 };
    let coverage = if token_count == 0 {
        0.0
    } else {
        f64::from(matched) / f64::from(token_count)
    };
    let coverage_multiplier = 0.6 + 0.4 * coverage;
    Relevance {
        field_sum,
        exact_phrase,
        coverage,
        coverage_multiplier,
        relevance: f64::from(field_sum + exact_phrase) * coverage_multiplier,
    }
}

/// `Σ_g weight[g] × |tokens matching g|` from per-group token masks.
pub fn field_sum(group_masks: &[u32; GROUP_COUNT]) -> u32 {
    FieldGroup::ALL
        .iter()
        .map(|&g| g.weight() * group_masks[g as usize].count_ones())
        .sum()
}

/// The feedback term: `(2.5 (s + 0.5p) − 1.5 (f + 0.5n + 0.5o)) / (T + 2)`, 0 without feedback.
pub fn feedback_score(feedback: &Feedback) -> f64 {
    let total = feedback.total();
    if total == 0 {
        return 0.0;
    }
    let [s, p, f, n, o] = [
        feedback.success,
        feedback.partial,
        feedback.failure,
        feedback.not_applicable,
        feedback.outdated,
    ]
    .map(|c| c as f64);
    (2.5 * (s + 0.5 * p) - 1.5 * (f + 0.5 * n + 0.5 * o)) / (total as f64 + 2.0)
}

/// Where the feedback term of some records lies: bounds a search ranks with before it reads
/// their counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedbackRange {
    /// No record's term is below this.
    pub least: f64,
    /// No record's term is above this.
    pub most: f64,
}

impl FeedbackRange {
    /// Whatever the counts: the term lies strictly inside (−1.5, 2.5).
    pub const ANY: FeedbackRange = FeedbackRange {
        least: -1.5,
        most: 2.5,
    };

    /// The least and the greatest term of records whose every count lies between its value in
    /// `least` and in `most`.
    ///
    /// With the other counts fixed, the term is `(a·x + c) / (x + d)` in any one count `x`,
    /// with `d` > 0: monotonic. So over the box of counts its extremes lie at corners, and the
    /// 32 corners are scored as [`feedback_score`] scores a record. A corner's term is then
    /// one a record may have, bit for bit, and a record's term inside the box passes the
    /// corners' by rounding at most (a few units in the last place, far below the slack that
    /// search bounds keep). Counts past 2^50, where `f64` would round the total, give
    /// [`FeedbackRange::ANY`].
    ///
    /// # Example
    ///
    /// ```
    /// use reliora::record::Feedback;
    /// use reliora::internals::search::profiles::standard::FeedbackRange;
    ///
    /// let most = Feedback { success: 3, failure: 1, ..Feedback::default() };
    /// let range = FeedbackRange::of(&Feedback::default(), &most);
    /// assert_eq!(range, FeedbackRange { least: -0.5, most: 1.5 });
    /// ```
    pub fn of(least: &Feedback, most: &Feedback) -> FeedbackRange {
        let (lo, hi) = (least.counts(), most.counts());
        if hi.iter().any(|&c| c > 1 << 50) || lo.iter().zip(&hi).any(|(l, h)| l > h) {
            return FeedbackRange::ANY;
        }
        let mut range = FeedbackRange {
            least: f64::INFINITY,
            most: f64::NEG_INFINITY,
        };
        for corner in 0..32u32 {
            let pick = |i: usize| if corner >> i & 1 == 0 { lo[i] } else { hi[i] };
            let term = feedback_score(&Feedback::from_counts(std::array::from_fn(pick)));
            range.least = range.least.min(term);
            range.most = range.most.max(term);
        }
        range
    }

    /// The range holding both.
    pub fn union(self, other: FeedbackRange) -> FeedbackRange {
        FeedbackRange {
            least: self.least.min(other.least),
            most: self.most.max(other.most),
        }
    }
}

/// The match level from coverage and relevance (before feedback).
pub fn match_level(coverage: f64, relevance: f64) -> MatchLevel {
    if coverage >= 0.75 && relevance >= 18.0 {
        MatchLevel::Strong
    } else if coverage >= 0.4 && relevance >= 8.0 {
        MatchLevel::Moderate
    } else {
        MatchLevel::Weak
    }
}

/// The standard `scoreBreakdown` entries: each group's `field[g] × coverageMultiplier`,
/// `exactPhrase`, `coverageMultiplier` and `feedback`, in SPEC order.
pub fn breakdown(
    group_masks: &[u32; GROUP_COUNT],
    relevance: &Relevance,
    feedback: f64,
) -> StandardBreakdown {
    let mut groups = [0.0; GROUP_COUNT];
    for g in FieldGroup::ALL {
        let field = g.weight() * group_masks[g as usize].count_ones();
        groups[g as usize] = f64::from(field) * relevance.coverage_multiplier;
    }
    StandardBreakdown {
        groups,
        exact_phrase: f64::from(relevance.exact_phrase) * relevance.coverage_multiplier,
        coverage_multiplier: relevance.coverage_multiplier,
        feedback,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every term of counts inside the box lies in the range computed from its corners,
        /// and the range is reached: some corner's term is each end.
        #[test]
        fn a_feedback_range_holds_every_term_inside_its_box(
            a in prop::array::uniform5(0u64..40),
            b in prop::array::uniform5(0u64..40),
            at in prop::array::uniform5(0.0f64..=1.0),
        ) {
            let lo: [u64; 5] = std::array::from_fn(|i| a[i].min(b[i]));
            let hi: [u64; 5] = std::array::from_fn(|i| a[i].max(b[i]));
            let range = FeedbackRange::of(&Feedback::from_counts(lo), &Feedback::from_counts(hi));
            let inside: [u64; 5] =
                std::array::from_fn(|i| lo[i] + ((hi[i] - lo[i]) as f64 * at[i]).round() as u64);
            let term = feedback_score(&Feedback::from_counts(inside));
            // Rounding may pass a corner's term by a few units in the last place.
            let ulps = 1e-12;
            prop_assert!(
                range.least - ulps <= term && term <= range.most + ulps,
                "{term} outside {range:?}"
            );
            prop_assert!(FeedbackRange::ANY.least < range.least);
            prop_assert!(range.most < FeedbackRange::ANY.most);
            // Every count between its bounds, exhaustively, on a small box.
            let small: [u64; 5] = std::array::from_fn(|i| hi[i].min(lo[i] + 2));
            let mut seen = (f64::INFINITY, f64::NEG_INFINITY);
            for n in 0..3u32.pow(5) {
                let counts: [u64; 5] = std::array::from_fn(|i| {
                    (lo[i] + u64::from(n / 3u32.pow(i as u32) % 3)).min(small[i])
                });
                let term = feedback_score(&Feedback::from_counts(counts));
                seen = (seen.0.min(term), seen.1.max(term));
            }
            // The corners are among the points: the ends are reached exactly.
            let corners = FeedbackRange::of(&Feedback::from_counts(lo), &Feedback::from_counts(small));
            prop_assert!(seen.0 <= corners.least && corners.most <= seen.1);
            prop_assert!(corners.least - ulps <= seen.0 && seen.1 <= corners.most + ulps);
        }
    }

    /// Counts too large for the total to be exact, or bounds the wrong way round, bound
    /// nothing.
    #[test]
    fn a_feedback_range_past_exact_counts_is_any() {
        let none = Feedback::default();
        let huge = Feedback::from_counts([u64::MAX, 0, 0, 0, 0]);
        assert_eq!(FeedbackRange::of(&none, &huge), FeedbackRange::ANY);
        assert_eq!(
            FeedbackRange::of(&Feedback::from_counts([2, 0, 0, 0, 0]), &none),
            FeedbackRange::ANY
        );
        assert_eq!(
            FeedbackRange::of(&none, &none),
            FeedbackRange {
                least: 0.0,
                most: 0.0
            }
        );
    }
}
