//! The `bm25f` profile (SPEC §5.3): field-weighted BM25F over the searchable groups, exact
//! token matches only.
//!
//! For a query token q and record d, with `tf(q,d,g)` its occurrences in group g, `len(d,g)` the
//! group's tokens and `avglen(g)` their mean over the live records:
//!
//! ```text
//! w     = Σ_g weight[g] × tf / (1 − b + b × len / avglen)        (b = 0.75)
//! score = Σ_q idf(q) × w / (k + w)  +  pairs
//! idf   = ln(1 + (N − df + 0.5) / (df + 0.5))
//! k     = k1 = 1.2, pairs = 0                        (variant "classic": SPEC §5.3 exactly)
//! k     = 0.009 × Σ_g weight[g] × avglen(g)          (variant "adaptive", the default)
//! pairs = Σ_(a,b) 0.2 × pair_idf(a, b) × [a b occurs in d]        (adaptive)
//! ```
//!
//! The pair term is a proximity signal: (a, b) runs over the adjacent query words that are each
//! one query token ([`PreparedQuery::pairs`](crate::search::query::PreparedQuery::pairs)), and
//! `[a b occurs in d]` is 1 when they are consecutive words of one of the record's searchable
//! values (SPEC §4's phrase rule).
//!
//! The group weights (2–9) multiply the term frequency before it saturates, so with a fixed
//! `k1 = 1.2` a single occurrence already gives `w/(k1 + w) ≈ 0.87`: every record is scored
//! almost as a set of matched terms, which suits short records and wastes the term frequencies
//! of long ones. The adaptive variant scales `k` with the collection's average weighted record
//! length, so a term saturates at the same fraction of an average record's text whatever its
//! length: on ~20-word records `k` stays near 1.2, on abstracts of ~200 words it grows past
//! 10 (per-collection term-frequency normalization, after He & Ounis).
//!
//! ```
//! use reliora::internals::search::profiles::bm25f::{idf, score, term_weight, Collection};
//! use reliora::internals::search::settings::{Bm25fSettings, Bm25fVariant};
//!
//! let collection = Collection { live: 10, group_length_sums: [20; 9] }; // avglen 2 per group
//! let mut tf = [0; 9];
//! tf[1] = 1; // once in the title (weight 8), whose length equals the mean
//! let w = term_weight(&tf, &[2; 9], &collection.average_lengths(), 0.75);
//! assert_eq!(w, 8.0);
//! let classic = Bm25fSettings { variant: Bm25fVariant::Classic, ..Bm25fSettings::default() };
//! let k = classic.saturation_constant(&collection.average_lengths());
//! assert_eq!(k, 1.2);
//! assert_eq!(score([(idf(10, 1), w)], k), (1.0f64 + 9.5 / 1.5).ln() * 8.0 / 9.2);
//! // Adaptive: 0.009 × Σ weight × avglen = 0.009 × 46 × 2.
//! let k = Bm25fSettings::default().saturation_constant(&collection.average_lengths());
//! assert!((k - 0.009 * 46.0 * 2.0).abs() < 1e-12);
//! ```

use crate::search::breakdown::Bm25fBreakdown;

use crate::schema::{FieldGroup, GROUP_COUNT};

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

/// `Σ_q idf(q) × w / (k + w)` over (idf, w) pairs in query order, `k` the saturation
/// constant ([`Bm25fSettings::saturation_constant`](crate::settings::Bm25fSettings::saturation_constant)).
pub fn score(terms: impl IntoIterator<Item = (f64, f64)>, k: f64) -> f64 {
    terms
        .into_iter()
        .filter(|&(_, w)| w > 0.0)
        .map(|(idf, w)| idf * w / (k + w))
        .sum()
}

/// The idf a word pair counts with in the proximity signal: the mean of its words' idfs.
pub fn pair_idf(first: f64, second: f64) -> f64 {
    (first + second) / 2.0
}

/// The breakdown of SPEC §5.3: `bm25f` and `feedback` (whose sum is the score).
pub fn breakdown(bm25f: f64, feedback: f64) -> Bm25fBreakdown {
    Bm25fBreakdown { bm25f, feedback }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Bm25fSettings;

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
        let k = 1.2;
        assert_eq!(score([(2.0, 1.2)], k), 1.0);
        assert_eq!(score([(2.0, 1.2), (1.0, 0.0)], k), 1.0);
        assert_eq!(score([(2.0, 1.2), (1.0, 3.6)], k), 1.0 + 0.75);
        assert_eq!(score(std::iter::empty(), k), 0.0);
    }

    #[test]
    fn the_saturation_is_k1_in_classic_and_scales_with_length_in_adaptive() {
        use crate::settings::Bm25fVariant;
        let classic = Bm25fSettings {
            variant: Bm25fVariant::Classic,
            ..Bm25fSettings::default()
        };
        let short = [0.0, 0.0, 20.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]; // 20 tokens of problems
        let long = [0.0, 12.0, 220.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]; // a title and an abstract
        assert_eq!(classic.saturation_constant(&short), 1.2);
        assert_eq!(classic.saturation_constant(&long), 1.2);
        let adaptive = Bm25fSettings::default();
        assert_eq!(adaptive.variant, Bm25fVariant::Adaptive);
        let k_short = adaptive.saturation_constant(&short);
        let k_long = adaptive.saturation_constant(&long);
        assert!((k_short - 0.009 * 7.0 * 20.0).abs() < 1e-12, "{k_short}");
        assert!(
            (k_long - 0.009 * (8.0 * 12.0 + 7.0 * 220.0)).abs() < 1e-12,
            "{k_long}"
        );
        assert!(k_short < 1.5 && k_long > 10.0);
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
