//! `--token-budget N` (SPEC §6.6): keep results in order while the compact JSON of the results
//! kept so far — a JSON array — is at most 4 × N characters; the first result is always kept.
//!
//! ```
//! use reliora::internals::search::budget::kept_within;
//!
//! // Results whose compact JSON is 10, 10 and 10 characters: `[r1]` is 12 characters,
//! // `[r1,r2]` 23 and `[r1,r2,r3]` 34.
//! assert_eq!(kept_within(&[10, 10, 10], 23), 2);
//! assert_eq!(kept_within(&[10, 10, 10], 22), 1);
//! assert_eq!(kept_within(&[50], 4), 1); // the first is always kept
//! ```

/// The largest budget; larger ones are clamped with a notice.
pub const MAX_TOKEN_BUDGET: u64 = 16_000;

/// Characters per token of the budget.
pub const CHARS_PER_TOKEN: u64 = 4;

/// How many of the results, whose compact JSON objects are `lengths` characters long, fit in
/// `budget_chars` as one JSON array (`[` + objects joined by `,` + `]`); at least one when
/// there is any.
pub fn kept_within(lengths: &[usize], budget_chars: u64) -> usize {
    let mut total: u64 = 2; // "[" and "]"
    let mut kept = 0;
    for (i, &len) in lengths.iter().enumerate() {
        total += len as u64 + u64::from(i > 0);
        if total > budget_chars && i > 0 {
            break;
        }
        kept += 1;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_table() {
        // (lengths, budget in characters, kept)
        let cases: [(&[usize], u64, usize); 8] = [
            (&[], 100, 0),
            (&[10], 12, 1),
            (&[10], 11, 1), // over budget, but the first is always kept
            (&[10, 10], 23, 2),
            (&[10, 10], 22, 1),
            (&[10, 1, 1000, 1], 1016, 3),
            (&[10, 1, 1000, 1], 18, 2), // stops at the first result that does not fit
            (&[100; 50], 64_000, 50),
        ];
        for (lengths, budget, expected) in cases {
            assert_eq!(
                kept_within(lengths, budget),
                expected,
                "{lengths:?} {budget}"
            );
        }
    }

    #[test]
    fn the_array_formula_matches_serde_json() {
        let items: Vec<serde_json::Value> = (0..5)
            .map(|i| serde_json::json!({"id": format!("r{i}"), "title": "é".repeat(i)}))
            .collect();
        let lengths: Vec<usize> = items
            .iter()
            .map(|v| v.to_string().chars().count())
            .collect();
        for k in 1..=items.len() {
            let exact = serde_json::to_string(&items[..k]).unwrap().chars().count() as u64;
            assert_eq!(kept_within(&lengths, exact), k);
            if k > 1 {
                assert_eq!(kept_within(&lengths, exact - 1), k - 1);
            }
        }
    }
}
