//! Feedback outcomes: what `reliora feedback ID --outcome …` adds one to.

use crate::error::{Error, ErrorCode};
use crate::record::Feedback;

/// One reported outcome of reusing a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The advice worked.
    Success,
    /// It partly worked.
    Partial,
    /// It failed.
    Failure,
    /// It did not apply.
    NotApplicable,
    /// It is outdated.
    Outdated,
}

impl Outcome {
    /// Every outcome, in the order of [`Feedback`]'s counts.
    pub const ALL: [Outcome; 5] = [
        Outcome::Success,
        Outcome::Partial,
        Outcome::Failure,
        Outcome::NotApplicable,
        Outcome::Outdated,
    ];

    /// The outcome's command-line name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Partial => "partial",
            Outcome::Failure => "failure",
            Outcome::NotApplicable => "not-applicable",
            Outcome::Outdated => "outdated",
        }
    }

    /// Parses `success`, `partial`, `failure`, `not-applicable` or `outdated`.
    pub fn parse(name: &str) -> Result<Outcome, Error> {
        Outcome::ALL
            .into_iter()
            .find(|o| o.as_str() == name)
            .ok_or_else(|| {
                Error::query(
                    ErrorCode::InvalidOption,
                    format!(
                        "--outcome {name:?}: expected success, partial, failure, not-applicable or outdated"
                    ),
                )
            })
    }
}

impl Feedback {
    /// Adds one to the count of `outcome` (saturating).
    pub fn add(&mut self, outcome: Outcome) {
        let count = match outcome {
            Outcome::Success => &mut self.success,
            Outcome::Partial => &mut self.partial,
            Outcome::Failure => &mut self.failure,
            Outcome::NotApplicable => &mut self.not_applicable,
            Outcome::Outdated => &mut self.outdated,
        };
        *count = count.saturating_add(1);
    }

    /// Adds every count of `other` (saturating).
    pub fn merge(&mut self, other: &Feedback) {
        self.success = self.success.saturating_add(other.success);
        self.partial = self.partial.saturating_add(other.partial);
        self.failure = self.failure.saturating_add(other.failure);
        self.not_applicable = self.not_applicable.saturating_add(other.not_applicable);
        self.outdated = self.outdated.saturating_add(other.outdated);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_parses_back_and_counts_in_its_own_slot() {
        for (i, outcome) in Outcome::ALL.into_iter().enumerate() {
            assert_eq!(Outcome::parse(outcome.as_str()).unwrap(), outcome);
            let mut f = Feedback::default();
            f.add(outcome);
            let counts = [
                f.success,
                f.partial,
                f.failure,
                f.not_applicable,
                f.outdated,
            ];
            assert_eq!(counts.iter().sum::<u64>(), 1);
            assert_eq!(counts[i], 1);
        }
        assert_eq!(
            Outcome::parse("notApplicable").unwrap_err().code(),
            ErrorCode::InvalidOption
        );
    }
}
