//! The English stop words of SPEC 2.2.
//!
//! Stop words are removed from `english` query tokens (SPEC 2, step 4) and flagged, never
//! removed, in index tokens ([`IndexToken::stop`](super::IndexToken::stop)).

/// The stop words of SPEC 2.2, sorted by byte order. All of them are lowercase ASCII.
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "d", "did",
    "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it",
    "its", "ll", "m", "me", "my", "no", "not", "of", "on", "or", "our", "re", "s", "so", "such",
    "t", "than", "that", "the", "their", "then", "there", "these", "they", "this", "to", "ve",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "why", "will", "with",
    "would", "you", "your",
];

/// The length in bytes of the longest stop word; longer tokens are rejected without a search.
const LONGEST_STOP_WORD_BYTES: usize = 5;

/// A word of at most [`LONGEST_STOP_WORD_BYTES`] bytes as one integer: its length in the top
/// byte, its bytes below. Distinct words get distinct keys, so membership is a search among
/// integers rather than strings (every index token is checked).
const fn key(word: &[u8]) -> u64 {
    let mut key = (word.len() as u64) << 56;
    let mut i = 0;
    while i < word.len() {
        key |= (word[i] as u64) << (8 * i);
        i += 1;
    }
    key
}

/// The keys of [`STOP_WORDS`], ascending.
static STOP_KEYS: [u64; STOP_WORDS.len()] = {
    let mut keys = [0u64; STOP_WORDS.len()];
    let mut i = 0;
    while i < keys.len() {
        assert!(STOP_WORDS[i].len() <= LONGEST_STOP_WORD_BYTES);
        keys[i] = key(STOP_WORDS[i].as_bytes());
        // Insertion sort: the table is small and sorted once, at compile time.
        let mut j = i;
        while j > 0 && keys[j - 1] > keys[j] {
            let swap = keys[j - 1];
            keys[j - 1] = keys[j];
            keys[j] = swap;
            j -= 1;
        }
        i += 1;
    }
    keys
};

/// Returns true when `token` is one of the stop words of SPEC 2.2.
///
/// The comparison is exact: tokens are expected to be lowercased already (as every token of
/// [`TextAnalyzer`](super::TextAnalyzer) is), so `"The"` is not a stop word but `"the"` is.
///
/// ```
/// # use reliora::text::is_stop_word;
/// assert!(is_stop_word("the"));
/// assert!(!is_stop_word("rust"));
/// ```
pub fn is_stop_word(token: &str) -> bool {
    token.len() <= LONGEST_STOP_WORD_BYTES
        && STOP_KEYS.binary_search(&key(token.as_bytes())).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPEC 2.2 verbatim, to check the sorted table against.
    const SPEC_LIST: &str = "a an and are as at be been but by can could d did do does for from \
        had has have how i if in into is it its ll m me my no not of on or our re s so such t \
        than that the their then there these they this to ve was we were what when where which \
        while who why will with would you your";

    #[test]
    fn table_matches_spec_list_exactly() {
        let spec: Vec<&str> = SPEC_LIST.split_whitespace().collect();
        assert_eq!(STOP_WORDS, spec.as_slice());
        assert_eq!(STOP_WORDS.len(), 70);
    }

    #[test]
    fn table_is_sorted_and_unique() {
        assert!(STOP_WORDS.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn longest_stop_word_bound_holds() {
        let longest = STOP_WORDS.iter().map(|w| w.len()).max().unwrap();
        assert_eq!(longest, LONGEST_STOP_WORD_BYTES);
    }

    #[test]
    fn every_listed_word_is_a_stop_word() {
        for word in SPEC_LIST.split_whitespace() {
            assert!(is_stop_word(word), "{word:?} should be a stop word");
        }
    }

    #[test]
    fn is_stop_word_table() {
        let cases: &[(&str, bool)] = &[
            ("the", true),
            ("a", true),
            ("your", true),
            ("which", true),
            ("ll", true),
            ("ve", true),
            // Not in the list.
            ("", false),
            ("x", false),
            ("rust", false),
            ("these1", false),
            ("whichever", false),
            ("themselves", false),
            ("does't", false),
            // Exact comparison: case and surrounding spaces matter.
            ("The", false),
            ("THE", false),
            (" the", false),
            ("the ", false),
            // Close non-ASCII look-alikes.
            ("thé", false),
            ("\u{0430}", false), // Cyrillic a
            // Keys hold the length: a NUL byte is not nothing.
            ("a\u{0}", false),
            ("\u{0}a", false),
            ("\u{0}\u{0}the", false),
        ];
        for &(token, expected) in cases {
            assert_eq!(is_stop_word(token), expected, "is_stop_word({token:?})");
        }
    }

    proptest::proptest! {
        #[test]
        fn is_stop_word_is_membership_in_the_list(token in "[a-z\u{0}é]{0,6}") {
            proptest::prop_assert_eq!(is_stop_word(&token), STOP_WORDS.contains(&token.as_str()));
        }
    }
}
