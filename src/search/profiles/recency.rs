//! The `recency` profile (SPEC §5.2): text match relative to the best, a half-life on age, a
//! bonus for pinned records and a penalty for superseded ones.
//!
//! ```
//! use reliora::internals::search::profiles::recency::{score, RecencyInput};
//! use reliora::internals::search::settings::RecencySettings;
//!
//! let s = score(&RecencyInput { relevance: 10.0, r_max: 20.0, age_days: Some(30.0),
//!     pinned: true, superseded: false }, &RecencySettings::default());
//! assert_eq!(s.text, 0.5);
//! assert_eq!(s.recency, 0.5);
//! assert_eq!(s.score, 0.5 + 0.3 * 0.5 + 0.5);
//! ```

use crate::search::breakdown::RecencyBreakdown;

use crate::settings::RecencySettings;

/// What the recency formula needs to know about one candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecencyInput {
    /// The standard relevance r.
    pub relevance: f64,
    /// The best r among all candidates.
    pub r_max: f64,
    /// Age in days, `None` when unknown.
    pub age_days: Option<f64>,
    /// Whether the record is pinned.
    pub pinned: bool,
    /// Whether some live record supersedes it.
    pub superseded: bool,
}

/// The recency score of one candidate and its parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecencyScore {
    /// r.
    pub relevance: f64,
    /// `r / r_max`.
    pub text: f64,
    /// Age in days, `None` when unknown.
    pub age_days: Option<f64>,
    /// `0.5^(age / 30)`, 0 when the age is unknown (before its weight).
    pub recency: f64,
    /// Whether the pin bonus was added.
    pub pinned: bool,
    /// Whether the superseded penalty was subtracted.
    pub superseded: bool,
    /// `text + 0.3 × recency + (pinned ? 0.5 : 0) − (superseded ? 10 : 0)`.
    pub score: f64,
}

/// Scores one candidate.
pub fn score(input: &RecencyInput, s: &RecencySettings) -> RecencyScore {
    let text = if input.r_max > 0.0 {
        input.relevance / input.r_max
    } else {
        0.0
    };
    let recency = input
        .age_days
        .map_or(0.0, |age| 0.5f64.powf(age / s.half_life_days));
    let mut score = text + s.weight * recency;
    if input.pinned {
        score += s.pin_bonus;
    }
    if input.superseded {
        score -= s.superseded_penalty;
    }
    RecencyScore {
        relevance: input.relevance,
        text,
        age_days: input.age_days,
        recency,
        pinned: input.pinned,
        superseded: input.superseded,
        score,
    }
}

/// The breakdown keys of SPEC §5.2: `relevance`, `text`, `ageDays` (null when unknown),
/// `recency` (before its weight), `pinned` and `superseded`.
pub fn breakdown(s: &RecencyScore) -> RecencyBreakdown {
    RecencyBreakdown {
        relevance: s.relevance,
        text: s.text,
        age_days: s.age_days,
        recency: s.recency,
        pinned: s.pinned,
        superseded: s.superseded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recency_table() {
        let s = RecencySettings::default();
        // (r, r_max, age, pinned, superseded, text, recency, score)
        let cases = [
            (20.0, 20.0, Some(0.0), false, false, 1.0, 1.0, 1.3),
            (10.0, 20.0, Some(30.0), false, false, 0.5, 0.5, 0.65),
            (10.0, 20.0, Some(60.0), false, false, 0.5, 0.25, 0.575),
            (
                10.0,
                20.0,
                Some(15.0),
                false,
                false,
                0.5,
                0.5f64.sqrt(),
                0.5 + 0.3 * 0.5f64.sqrt(),
            ),
            (10.0, 20.0, None, false, false, 0.5, 0.0, 0.5),
            (10.0, 20.0, None, true, false, 0.5, 0.0, 1.0),
            (10.0, 20.0, None, false, true, 0.5, 0.0, 0.5 - 10.0),
            (
                20.0,
                20.0,
                Some(30.0),
                true,
                true,
                1.0,
                0.5,
                1.0 + 0.15 + 0.5 - 10.0,
            ),
        ];
        for (r, r_max, age, pinned, superseded, text, recency, expected) in cases {
            let got = score(
                &RecencyInput {
                    relevance: r,
                    r_max,
                    age_days: age,
                    pinned,
                    superseded,
                },
                &s,
            );
            assert_eq!(got.text, text);
            assert!((got.recency - recency).abs() < 1e-15, "{age:?}");
            assert!((got.score - expected).abs() < 1e-12, "{got:?}");
        }
    }

    #[test]
    fn breakdown_has_null_age_and_booleans() {
        let got = score(
            &RecencyInput {
                relevance: 1.0,
                r_max: 2.0,
                age_days: None,
                pinned: true,
                superseded: false,
            },
            &RecencySettings::default(),
        );
        use crate::search::breakdown::{ProfileBreakdown, ScoreBreakdown};
        use serde_json::Value;
        let map = ScoreBreakdown::of(ProfileBreakdown::Recency(breakdown(&got))).to_map();
        assert_eq!(map["ageDays"], Value::Null);
        assert_eq!(map["pinned"], Value::Bool(true));
        assert_eq!(map["superseded"], Value::Bool(false));
        assert_eq!(map["recency"], 0.0);
    }
}
