//! The ranking profiles other than `standard` (SPEC §5), as pure functions of plain values:
//! numbers in, a score and its breakdown out. They know nothing of files, sources or threads.
//!
//! - [`decay`]: salience and time (SPEC §5.1);
//! - [`recency`]: text match, recency and pins (SPEC §5.2);
//! - [`bm25f`]: field-weighted BM25F over term statistics (SPEC §5.3);
//! - [`rerank`]: the weighted feature mix of `--rerank` (SPEC §5.5).

pub mod bm25f;
pub mod decay;
pub mod recency;
pub mod rerank;
pub mod standard;

/// The age in days of a record created at `created` (unix seconds, nanoseconds), measured from
/// `now`: a real number clamped at 0; `None` when the creation time is unknown (SPEC §5).
///
/// ```
/// # use reliora::internals::search::profiles::age_days;
/// assert_eq!(age_days((86_400 * 3, 0), Some((0, 0))), Some(3.0));
/// assert_eq!(age_days((0, 0), Some((86_400, 0))), Some(0.0)); // created in the future
/// assert_eq!(age_days((0, 0), None), None);
/// ```
pub fn age_days(now: (i64, u32), created: Option<(i64, u32)>) -> Option<f64> {
    let (created_secs, created_nanos) = created?;
    let seconds = (now.0 - created_secs) as f64
        + (f64::from(now.1) - f64::from(created_nanos)) / 1_000_000_000.0;
    Some((seconds / 86_400.0).max(0.0))
}

/// `x` clamped to `[low, high]`.
pub(crate) fn clamp(x: f64, low: f64, high: f64) -> f64 {
    x.max(low).min(high)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn age_table() {
        let day = 86_400;
        let cases = [
            ((10 * day, 0), Some((day, 0)), Some(9.0)),
            ((day, 500_000_000), Some((day, 0)), Some(0.5 / 86_400.0)),
            ((day, 0), Some((day, 500_000_000)), Some(0.0)),
            ((0, 0), Some((day, 0)), Some(0.0)),
            ((12 * 3600, 0), Some((0, 0)), Some(0.5)),
            ((0, 0), None, None),
        ];
        for (now, created, expected) in cases {
            assert_eq!(age_days(now, created), expected, "{now:?} {created:?}");
        }
    }
}
