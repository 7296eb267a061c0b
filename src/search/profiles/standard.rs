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
