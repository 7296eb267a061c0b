//! The `bm25f` profile (SPEC §5.3): field-weighted BM25F over the searchable groups, exact
//! token matches only.
//!
//! For a query token q and record d, with `tf(q,d,g)` its occurrences in group g, `len(d,g)` the
//! group's tokens and `avglen(g)` their mean over the live records:
//!
//! ```text
//! w     = Σ_g weight[g] × tf / (1 − b + b × len / avglen)        (b = 0.75)
//! score = Σ_q idf(q) × w / (k1 + w)                              (k1 = 1.2)
//! idf   = ln(1 + (N − df + 0.5) / (df + 0.5))
//! ```
//!
//! ```
//! use reliora::search::profiles::bm25f::{idf, score, term_weight, Collection};
//! use reliora::search::settings::Bm25fSettings;
//!
//! let collection = Collection { live: 10, group_length_sums: [20; 9] }; // avglen 2 per group
//! let mut tf = [0; 9];
//! tf[1] = 1; // once in the title (weight 8), whose length equals the mean
//! let w = term_weight(&tf, &[2; 9], &collection.average_lengths(), 0.75);
//! assert_eq!(w, 8.0);
//! let s = score([(idf(10, 1), w)], &Bm25fSettings::default());
//! assert_eq!(s, (1.0f64 + 9.5 / 1.5).ln() * 8.0 / 9.2);
//! ```

use serde_json::{Map, Value};

use crate::schema::{FieldGroup, GROUP_COUNT};
use crate::search::settings::Bm25fSettings;

/// The collection statistics BM25F needs: the live records and, per group, the sum of their
/// lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Collection {
    /// N: live records.
    pub live: u64,
    /// Σ over live records of `len(d, g)`, per group.
    pub group_length_sums: [u64; GROUP_COUNT],
}

impl Collection {
    /// `avglen(g)` for each group (0 when there are no records).
    pub fn average_lengths(&self) -> [f64; GROUP_COUNT] {
        let mut out = [0.0; GROUP_COUNT];
        if self.live > 0 {
            for (avg, sum) in out.iter_mut().zip(self.group_length_sums) {
                *avg = sum as f64 / self.live as f64;
            }
        }
        out
    }
}

/// `idf = ln(1 + (N − df + 0.5) / (df + 0.5))`.
pub fn idf(live: u64, df: u64) -> f64 {
    let (n, df) = (live as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// `w = Σ_g weight[g] × tf / (1 − b + b × len / avglen)`, over the groups where tf > 0 (where
/// len and avglen are then positive).
pub fn term_weight(
    tf: &[u32; GROUP_COUNT],
    len: &[u32; GROUP_COUNT],
    avglen: &[f64; GROUP_COUNT],
    b: f64,
) -> f64 {
    FieldGroup::ALL
        .iter()
        .filter(|&&g| tf[g as usize] > 0)
        .map(|&g| {
            let i = g as usize;
            f64::from(g.weight()) * f64::from(tf[i]) / (1.0 - b + b * f64::from(len[i]) / avglen[i])
        })
        .sum()
}

/// `Σ_q idf(q) × w / (k1 + w)` over (idf, w) pairs in query order.
pub fn score(terms: impl IntoIterator<Item = (f64, f64)>, s: &Bm25fSettings) -> f64 {
    terms
        .into_iter()
        .filter(|&(_, w)| w > 0.0)
        .map(|(idf, w)| idf * w / (s.k1 + w))
        .sum()
}

/// The breakdown of SPEC §5.3: `bm25f` and `feedback` (whose sum is the score).
pub fn breakdown(bm25f: f64, feedback: f64) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("bm25f".into(), bm25f.into());
    map.insert("feedback".into(), feedback.into());
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idf_table() {
        let cases = [
            (100, 1, (1.0f64 + 99.5 / 1.5).ln()),
            (100, 50, (1.0f64 + 50.5 / 50.5).ln()),
            (100, 100, (1.0f64 + 0.5 / 100.5).ln()),
            (1, 1, (1.0f64 + 0.5 / 1.5).ln()),
        ];
        for (n, df, expected) in cases {
            assert_eq!(idf(n, df), expected, "N {n} df {df}");
            assert!(idf(n, df) > 0.0);
        }
        assert!(idf(100, 1) > idf(100, 2));
    }

    #[test]
    fn term_weight_normalizes_each_group_by_its_own_average() {
        let avglen = [4.0, 8.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0];
        let mut tf = [0; GROUP_COUNT];
        let mut len = [0; GROUP_COUNT];
        // Tags (weight 9): tf 2, len 8 = 2 × avg → 9 × 2 / (0.25 + 1.5)
        tf[0] = 2;
        len[0] = 8;
        // Title (weight 8): tf 1, len 4 = avg / 2 → 8 / (0.25 + 0.375)
        tf[1] = 1;
        len[1] = 4;
        // Warnings (weight 2): tf 0 — no contribution whatever its length.
        len[8] = 100;
        let expected = 9.0 * 2.0 / 1.75 + 8.0 / 0.625;
        assert!((term_weight(&tf, &len, &avglen, 0.75) - expected).abs() < 1e-12);
        // b = 0: no length normalization.
        assert_eq!(term_weight(&tf, &len, &avglen, 0.0), 9.0 * 2.0 + 8.0);
        // Groups absent everywhere (avglen 0) do not produce NaN when tf is 0.
        let zeros = [0.0; GROUP_COUNT];
        assert_eq!(term_weight(&[0; GROUP_COUNT], &len, &zeros, 0.75), 0.0);
    }

    #[test]
    fn score_saturates_and_sums_over_tokens() {
        let s = Bm25fSettings::default();
        assert_eq!(score([(2.0, 1.2)], &s), 1.0);
        assert_eq!(score([(2.0, 1.2), (1.0, 0.0)], &s), 1.0);
        assert_eq!(score([(2.0, 1.2), (1.0, 3.6)], &s), 1.0 + 0.75);
        assert_eq!(score(std::iter::empty(), &s), 0.0);
    }

    #[test]
    fn average_lengths_divide_by_the_live_records() {
        let c = Collection {
            live: 4,
            group_length_sums: [8, 2, 0, 0, 0, 0, 0, 0, 1],
        };
        assert_eq!(
            c.average_lengths(),
            [2.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25]
        );
        assert_eq!(Collection::default().average_lengths(), [0.0; GROUP_COUNT]);
    }
}
