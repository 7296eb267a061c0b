//! The `decay` profile (SPEC §5.1): relevance banded into [0.30, 0.82], temporal decay with a
//! capped factor, salience, a list of adjustments, a clamp, and a feedback posterior.
//!
//! ```
//! use reliora::record::Feedback;
//! use reliora::internals::search::profiles::decay::{score, DecayInput};
//! use reliora::internals::search::settings::DecaySettings;
//!
//! let input = DecayInput {
//!     relevance: 18.0, r_max: 18.0, age_days: Some(2.0), decay_factor: 0.02,
//!     salience: 0.5, memory_type: "episodic", entity_occurs: false,
//!     feedback: Feedback::default(),
//! };
//! let s = score(&input, &DecaySettings::default());
//! assert!((s.rel - 0.82).abs() < 1e-12);
//! assert_eq!(s.adjustments, ["recentEpisodic"]);
//! assert_eq!(s.posterior, 1.0);
//! ```

use crate::search::breakdown::DecayBreakdown;

use crate::record::Feedback;
use crate::search::profiles::clamp;
use crate::settings::{Adjustment, Condition, DecaySettings};

/// What the decay formulas need to know about one candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct DecayInput<'a> {
    /// The standard relevance r (SPEC §4).
    pub relevance: f64,
    /// The best r among the decay candidates.
    pub r_max: f64,
    /// Age in days; `None` when unknown.
    pub age_days: Option<f64>,
    /// The record's decay factor per day (default applied).
    pub decay_factor: f64,
    /// The record's salience (default applied).
    pub salience: f64,
    /// The normalized memory type.
    pub memory_type: &'a str,
    /// Whether some query entity occurs in the record (SPEC §5.4).
    pub entity_occurs: bool,
    /// The feedback counts.
    pub feedback: Feedback,
}

/// `rel = floor + span × (r / r_max) × min(1, r_max / saturation)`; in [0.30, 0.82] with the
/// defaults.
pub fn rel(r: f64, r_max: f64, s: &DecaySettings) -> f64 {
    if r_max <= 0.0 {
        return s.relevance_floor;
    }
    s.relevance_floor + s.relevance_span * (r / r_max) * (r_max / s.relevance_saturation).min(1.0)
}

/// `temporal = exp(−min(decayFactor, cap) × age)`, 0 when the age is unknown.
pub fn temporal(decay_factor: f64, age_days: Option<f64>, s: &DecaySettings) -> f64 {
    match age_days {
        Some(age) => (-decay_factor.min(s.decay_factor_cap) * age).exp(),
        None => 0.0,
    }
}

/// `posterior = clamp(1 + 0.3 × (mean − 0.5), 0.85, 1.15)` with
/// `mean = (s + 0.5p + 1) / (T + 2)`; exactly 1 without feedback.
pub fn posterior(feedback: &Feedback, s: &DecaySettings) -> f64 {
    let total = feedback.total();
    if total == 0 {
        return 1.0;
    }
    let mean =
        (feedback.success as f64 + 0.5 * feedback.partial as f64 + 1.0) / (total as f64 + 2.0);
    clamp(
        1.0 + s.posterior_weight * (mean - 0.5),
        s.posterior_min,
        s.posterior_max,
    )
}

/// The facts an adjustment condition tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Facts<'a> {
    /// The normalized memory type.
    pub memory_type: &'a str,
    /// Age in days, `None` when unknown.
    pub age_days: Option<f64>,
    /// Salience.
    pub salience: f64,
    /// Whether a query entity occurs in the record.
    pub entity_occurs: bool,
}

/// Whether `condition` holds: every test it gives (inclusive bounds; an age test is false when
/// the age is unknown), and every condition of its `allOf`.
pub fn holds(condition: &Condition, facts: &Facts<'_>) -> bool {
    let age_ok = |bound: Option<f64>, test: fn(f64, f64) -> bool| match bound {
        None => true,
        Some(b) => facts.age_days.is_some_and(|age| test(age, b)),
    };
    condition
        .memory_type
        .as_deref()
        .is_none_or(|t| t == facts.memory_type)
        && age_ok(condition.min_age_days, |age, b| age >= b)
        && age_ok(condition.max_age_days, |age, b| age <= b)
        && condition.min_salience.is_none_or(|b| facts.salience >= b)
        && condition.max_salience.is_none_or(|b| facts.salience <= b)
        && condition.entity.is_none_or(|e| e == facts.entity_occurs)
        && condition.all_of.iter().all(|c| holds(c, facts))
}

/// Scores one candidate.
pub fn score(input: &DecayInput<'_>, s: &DecaySettings) -> DecayBreakdown {
    let mut applied = Vec::new();
    let mut breakdown = scored(input, s, |adjustment| applied.push(adjustment.name.clone()));
    breakdown.adjustments = applied;
    breakdown
}

/// The score [`score`] gives `input`, and whether it applies exactly the adjustments named
/// `applied` (another breakdown's), so that its breakdown equals that one's. Allocates nothing:
/// for a score that only ranks, whose breakdown may never be shown.
pub fn score_against(input: &DecayInput<'_>, s: &DecaySettings, applied: &[String]) -> (f64, bool) {
    let mut names = applied.iter();
    let mut same = true;
    let breakdown = scored(input, s, |adjustment| {
        same &= names.next() == Some(&adjustment.name);
    });
    (breakdown.score, same && names.next().is_none())
}

/// [`score`] without the adjustments' names: `applied` is told each adjustment applied, in
/// order.
fn scored(
    input: &DecayInput<'_>,
    s: &DecaySettings,
    mut applied: impl FnMut(&Adjustment),
) -> DecayBreakdown {
    let rel = rel(input.relevance, input.r_max, s);
    let temporal = temporal(input.decay_factor, input.age_days, s);
    let base =
        rel * (1.0 + s.temporal_weight * temporal) * (1.0 + s.salience_weight * input.salience);
    let facts = Facts {
        memory_type: input.memory_type,
        age_days: input.age_days,
        salience: input.salience,
        entity_occurs: input.entity_occurs,
    };
    let mut adjusted = base;
    for adjustment in &s.adjustments {
        if holds(&adjustment.condition, &facts) {
            adjusted = adjustment.operation.apply(adjusted);
            applied(adjustment);
        }
    }
    let clamped = clamp(adjusted, 0.0, 1.0);
    let posterior = posterior(&input.feedback, s);
    DecayBreakdown {
        relevance: input.relevance,
        rel,
        age_days: input.age_days,
        temporal,
        salience: input.salience,
        base,
        adjustments: Vec::new(),
        clamped,
        posterior,
        score: clamped * posterior,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{Adjustment, Operation};

    fn input(memory_type: &str, age: Option<f64>, salience: f64, entity: bool) -> DecayInput<'_> {
        DecayInput {
            relevance: 9.0,
            r_max: 18.0,
            age_days: age,
            decay_factor: 0.02,
            salience,
            memory_type,
            entity_occurs: entity,
            feedback: Feedback::default(),
        }
    }

    #[test]
    fn rel_is_banded_and_scaled_below_the_saturation() {
        let s = DecaySettings::default();
        // (r, r_max, expected)
        let cases = [
            (18.0, 18.0, 0.30 + 0.52),
            (9.0, 18.0, 0.30 + 0.52 * 0.5),
            (36.0, 36.0, 0.82),
            (18.0, 36.0, 0.30 + 0.52 * 0.5),
            (9.0, 9.0, 0.30 + 0.52 * 0.5),
            (4.5, 9.0, 0.30 + 0.52 * 0.5 * 0.5),
            (0.0, 9.0, 0.30),
        ];
        for (r, r_max, expected) in cases {
            assert!(
                (rel(r, r_max, &s) - expected).abs() < 1e-12,
                "rel({r}, {r_max})"
            );
        }
    }

    #[test]
    fn temporal_caps_the_decay_factor_and_is_zero_without_age() {
        let s = DecaySettings::default();
        let cases = [
            (0.02, Some(10.0), (-0.2f64).exp()),
            (0.1, Some(10.0), (-1.0f64).exp()),
            (0.5, Some(10.0), (-1.0f64).exp()), // capped at 0.1
            (0.0, Some(1000.0), 1.0),
            (0.02, Some(0.0), 1.0),
            (0.02, None, 0.0),
        ];
        for (factor, age, expected) in cases {
            assert_eq!(temporal(factor, age, &s), expected, "{factor} {age:?}");
        }
    }

    #[test]
    fn posterior_follows_the_mean_and_its_clamp() {
        let s = DecaySettings::default();
        let fb = |success, partial, failure| Feedback {
            success,
            partial,
            failure,
            ..Feedback::default()
        };
        let cases = [
            (fb(0, 0, 0), 1.0),
            // mean = (1 + 1) / (1 + 2) = 2/3 → 1 + 0.3 × (1/6) = 1.05
            (fb(1, 0, 0), 1.0 + 0.3 * (2.0 / 3.0 - 0.5)),
            // mean = 1 / 3 → 0.95
            (fb(0, 0, 1), 1.0 + 0.3 * (1.0 / 3.0 - 0.5)),
            // mean = (0.5 + 1) / 3 = 0.5 → 1
            (fb(0, 1, 0), 1.0),
            // mean → 1: 1.15 at most (1 + 0.3 × 0.5 = 1.15 exactly at the limit)
            (fb(1000, 0, 0), 1.0 + 0.3 * ((1001.0 / 1002.0) - 0.5)),
            // mean → 0: 0.85 at least
            (fb(0, 0, 1000), 1.0 + 0.3 * ((1.0 / 1002.0) - 0.5)),
        ];
        for (feedback, expected) in cases {
            let p = posterior(&feedback, &s);
            assert!((p - expected).abs() < 1e-12, "{feedback:?}: {p}");
            assert!((0.85..=1.15).contains(&p));
        }
        let tight = DecaySettings {
            posterior_max: 1.01,
            ..DecaySettings::default()
        };
        assert_eq!(posterior(&fb(5, 0, 0), &tight), 1.01);
    }

    #[test]
    fn default_adjustments_table() {
        let s = DecaySettings::default();
        // (memory type, age, salience, entity, applied)
        type Case<'a> = (&'a str, Option<f64>, f64, bool, &'a [&'a str]);
        let cases: [Case; 12] = [
            ("episodic", Some(7.0), 0.5, false, &["recentEpisodic"]),
            ("episodic", Some(7.0001), 0.5, false, &[]),
            ("episodic", Some(0.0), 0.5, false, &["recentEpisodic"]),
            ("episodic", None, 0.5, false, &[]),
            ("semantic", Some(3.0), 0.5, false, &[]),
            ("semantic", Some(30.0), 0.85, false, &["staleSemantic"]),
            ("semantic", Some(29.9), 0.85, false, &[]),
            ("semantic", Some(30.0), 0.849, false, &[]),
            ("semantic", None, 0.9, false, &[]),
            ("episodic", Some(40.0), 0.9, false, &[]),
            ("procedural", None, 0.5, true, &["entity"]),
            (
                "episodic",
                Some(1.0),
                0.5,
                true,
                &["recentEpisodic", "entity"],
            ),
        ];
        for (kind, age, salience, entity, expected) in cases {
            let got = score(&input(kind, age, salience, entity), &s);
            assert_eq!(
                got.adjustments, expected,
                "{kind} {age:?} {salience} {entity}"
            );
        }
    }

    /// `score_against` gives `score`'s score, and says whether the adjustments applied are
    /// the ones named: for every case of the table against every other's names, clamped or
    /// not (at 1 both breakdowns' scores are equal while their adjustments differ).
    #[test]
    fn a_score_against_names_is_the_scores_and_compares_them() {
        let s = DecaySettings::default();
        let mut inputs = Vec::new();
        for kind in ["episodic", "semantic", "procedural"] {
            for age in [None, Some(1.0), Some(40.0)] {
                for salience in [0.5, 0.9] {
                    for entity in [false, true] {
                        for relevance in [6.0, 18.0] {
                            let mut i = input(kind, age, salience, entity);
                            i.relevance = relevance;
                            inputs.push(i);
                        }
                    }
                }
            }
        }
        let mut unequal_names_equal_scores = 0;
        for i in &inputs {
            let scored = score(i, &s);
            for other in &inputs {
                let names = score(other, &s).adjustments;
                let (value, same) = score_against(i, &s, &names);
                assert_eq!(value.to_bits(), scored.score.to_bits());
                assert_eq!(same, scored.adjustments == names, "{names:?}");
                if !same && value == score(other, &s).score {
                    unequal_names_equal_scores += 1;
                }
            }
        }
        assert!(unequal_names_equal_scores > 0, "no clamped case compared");
    }

    #[test]
    fn adjustments_apply_in_order_then_clamp() {
        let s = DecaySettings::default();
        // episodic, 1 day, entity: (base + 0.05) × 1.3, not base × 1.3 + 0.05.
        let got = score(&input("episodic", Some(1.0), 0.5, true), &s);
        assert!((got.clamped - (got.base + 0.05) * 1.3).abs() < 1e-12);
        // A large base clamps at 1.
        let mut big = input("episodic", Some(0.0), 1.0, true);
        big.relevance = 18.0;
        let got = score(&big, &s);
        assert!(got.base * 1.3 > 1.0);
        assert_eq!(got.clamped, 1.0);
        // A subtraction below zero clamps at 0.
        let s = DecaySettings {
            adjustments: vec![Adjustment {
                name: "sink".into(),
                condition: Condition::default(),
                operation: Operation::Subtract(5.0),
            }],
            ..DecaySettings::default()
        };
        let got = score(&input("episodic", None, 0.5, false), &s);
        assert_eq!(got.clamped, 0.0);
        assert_eq!(got.score, 0.0);
    }

    #[test]
    fn the_full_formula_by_hand() {
        let s = DecaySettings::default();
        let i = DecayInput {
            relevance: 12.0,
            r_max: 24.0,
            age_days: Some(10.0),
            decay_factor: 0.05,
            salience: 0.8,
            memory_type: "semantic",
            entity_occurs: false,
            feedback: Feedback {
                success: 3,
                failure: 1,
                ..Feedback::default()
            },
        };
        let got = score(&i, &s);
        let rel = 0.30 + 0.52 * 0.5;
        let temporal = (-0.5f64).exp();
        let base = rel * (1.0 + 0.1 * temporal) * (1.0 + 0.1 * 0.8);
        let posterior = 1.0 + 0.3 * (4.0 / 6.0 - 0.5);
        assert_eq!(got.rel, rel);
        assert_eq!(got.temporal, temporal);
        assert_eq!(got.base, base);
        assert!(got.adjustments.is_empty());
        assert_eq!(got.clamped, base);
        assert!((got.posterior - posterior).abs() < 1e-15);
        assert_eq!(got.score, got.clamped * got.posterior);
        use crate::search::breakdown::{ProfileBreakdown, ScoreBreakdown};
        let map = ScoreBreakdown::of(ProfileBreakdown::Decay(got.clone())).to_map();
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "relevance",
                "rel",
                "ageDays",
                "temporal",
                "salience",
                "base",
                "adjustments",
                "clamped",
                "posterior"
            ]
        );
    }

    #[test]
    fn conditions_table() {
        let facts = Facts {
            memory_type: "semantic",
            age_days: Some(10.0),
            salience: 0.6,
            entity_occurs: false,
        };
        let c = |f: &dyn Fn(&mut Condition)| {
            let mut c = Condition::default();
            f(&mut c);
            c
        };
        let cases: Vec<(Condition, bool)> = vec![
            (Condition::default(), true),
            (c(&|c| c.memory_type = Some("semantic".into())), true),
            (c(&|c| c.memory_type = Some("episodic".into())), false),
            (c(&|c| c.min_age_days = Some(10.0)), true),
            (c(&|c| c.min_age_days = Some(10.5)), false),
            (c(&|c| c.max_age_days = Some(10.0)), true),
            (c(&|c| c.max_age_days = Some(9.0)), false),
            (c(&|c| c.min_salience = Some(0.6)), true),
            (c(&|c| c.max_salience = Some(0.59)), false),
            (c(&|c| c.entity = Some(false)), true),
            (c(&|c| c.entity = Some(true)), false),
            (
                c(&|c| {
                    c.all_of = vec![
                        Condition {
                            memory_type: Some("semantic".into()),
                            ..Condition::default()
                        },
                        Condition {
                            max_salience: Some(0.7),
                            ..Condition::default()
                        },
                    ]
                }),
                true,
            ),
            (
                c(&|c| {
                    c.all_of = vec![
                        Condition::default(),
                        Condition {
                            entity: Some(true),
                            ..Condition::default()
                        },
                    ]
                }),
                false,
            ),
        ];
        for (condition, expected) in cases {
            assert_eq!(holds(&condition, &facts), expected, "{condition:?}");
        }
        let unknown_age = Facts {
            age_days: None,
            ..facts
        };
        assert!(!holds(&c(&|c| c.max_age_days = Some(1e9)), &unknown_age));
        assert!(!holds(&c(&|c| c.min_age_days = Some(0.0)), &unknown_age));
        assert!(holds(&Condition::default(), &unknown_age));
    }
}
