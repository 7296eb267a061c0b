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

/// Scores one candidate.
pub fn score(input: &RecencyInput, s: &RecencySettings) -> RecencyBreakdown {
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
    RecencyBreakdown {
        relevance: input.relevance,
        text,
        age_days: input.age_days,
        recency,
        pinned: input.pinned,
        superseded: input.superseded,
        score,
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
        let map = ScoreBreakdown::of(ProfileBreakdown::Recency(got)).to_map();
        assert_eq!(map["ageDays"], Value::Null);
        assert_eq!(map["pinned"], Value::Bool(true));
        assert_eq!(map["superseded"], Value::Bool(false));
        assert_eq!(map["recency"], 0.0);
    }
}
