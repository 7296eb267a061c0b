//! Near-duplicate demotion (SPEC §6.2, `--mmr`): a result whose normalized content starts with
//! the same 100 characters as a higher-ranked result's loses 0.1 (`decay`) or 0.1 × |score|
//! (other profiles).
//!
//! ```
//! use reliora::internals::search::mmr::{content_prefix, near_duplicates};
//!
//! let a = content_prefix("Pool  TIMEOUT\nunder load", 100);
//! assert_eq!(a, "pool timeout under load");
//! let b = content_prefix(" pool timeout under\tload ", 100);
//! let c = content_prefix("something else", 100);
//! assert_eq!(near_duplicates([a.as_str(), &c, &b]), [false, false, true]);
//! ```

use std::collections::HashSet;

use crate::format::codec::StoredHead;
use crate::record::Record;
use crate::text::prefix::prefix_of_words;

pub use crate::text::prefix::content_prefix;

/// [`content_prefix`] of a record's content ([`Record::content_prefix`]).
pub fn record_prefix(record: &Record, chars: usize) -> String {
    record.content_prefix(chars)
}

/// [`content_prefix`] of a record from the head of it that was read, when the head holds as
/// much of its content as [`content_prefix`] reads of the whole (`None`: read the whole).
/// The head's words are whole words of the content, so the same words are read either way.
pub fn head_prefix(head: &StoredHead, chars: usize) -> Option<String> {
    let (prefix, enough) = prefix_of_words(head.content.split_whitespace(), chars);
    (enough || head.content_complete).then_some(prefix)
}

/// The bytes of content a head should hold for [`head_prefix`] of `chars` characters: the
/// bytes [`content_prefix`] reads before it stops, with room for a word that runs past them.
pub fn head_bytes(chars: usize) -> usize {
    chars.saturating_mul(4).saturating_add(128)
}

/// For prefixes in rank order: whether each equals the prefix of some higher-ranked result
/// (demoted or not).
pub fn near_duplicates<'p>(prefixes: impl IntoIterator<Item = &'p str>) -> Vec<bool> {
    let mut seen: HashSet<&str> = HashSet::new();
    prefixes.into_iter().map(|p| !seen.insert(p)).collect()
}

/// The change MMR makes to a near duplicate's score: −penalty in `decay`, else
/// −relative × |score|.
pub fn demotion(score: f64, decay: bool, penalty: f64, relative: f64) -> f64 {
    if decay {
        -penalty
    } else {
        -relative * score.abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::codec::tests::{older_layout, record_strategy};
    use crate::format::codec::{decode, decode_head, encode};

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// MMR's prefix read from the head of every prefix of a record's encoding is either
        /// refused or exactly the one read from the whole record.
        #[test]
        fn a_heads_prefix_is_the_whole_records_or_none((record, older) in record_strategy()) {
            let mut bytes = encode(&record, "records.jsonl:3");
            if older {
                bytes = older_layout(&bytes);
            }
            let content = decode(&bytes).unwrap().record.content();
            for end in 0..bytes.len() {
                let Some(head) = decode_head(&bytes[..end]).unwrap() else { continue };
                for chars in [1, 7, 100] {
                    if let Some(prefix) = head_prefix(&head, chars) {
                        proptest::prop_assert_eq!(prefix, content_prefix(&content, chars));
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// Read part by part, a record's prefix is the one read from its joined content:
        /// whitespace inside and between parts, capital and final sigmas, a capital I with a
        /// dot, CJK, words longer than the prefix.
        #[test]
        fn a_records_prefix_is_its_contents(
            texts in proptest::collection::vec("[aAxΣσςİ数 \\n\\t\u{3000}]{0,40}", 10),
        ) {
            let mut record =
                Record::from_json(&serde_json::json!({"id": "p-1", "task": "t"})).unwrap();
            let text = |i: usize| Some(texts[i].clone());
            record.title = text(0);
            record.task = text(1);
            record.problems = vec![texts[2].clone(), texts[3].clone()];
            record.solution = text(4);
            record.why_it_worked = text(5);
            record.tags = vec![texts[6].clone()];
            record.warnings = vec![texts[7].clone()];
            record.project_context = text(8);
            record.applicability = text(9);
            let content = record.content();
            for chars in [0, 1, 7, 100, 1_000] {
                proptest::prop_assert_eq!(
                    record_prefix(&record, chars),
                    content_prefix(&content, chars)
                );
            }
        }
    }

    #[test]
    fn prefix_normalization_table() {
        let cases = [
            ("Hello World", 100, "hello world"),
            ("  Hello \n\t World  ", 100, "hello world"),
            ("ABCDEF", 3, "abc"),
            ("ab cd", 3, "ab "),
            ("数据库 连接", 4, "数据库 "),
            ("ÀÉ", 1, "à"),
            ("", 100, ""),
            ("x\u{3000}y", 100, "x y"), // ideographic space is whitespace
        ];
        for (content, chars, expected) in cases {
            assert_eq!(content_prefix(content, chars), expected, "{content:?}");
        }
        let long = "word ".repeat(100);
        assert_eq!(content_prefix(&long, 100).chars().count(), 100);
    }

    /// Word by word, the prefix is what lowercasing the whole content first gives, on text
    /// mixing the characters whose lowercasing depends on context or changes length (final
    /// sigma, dotted capital I) with whitespace, punctuation and combining marks.
    #[test]
    fn words_lowercase_alone_as_within_the_text() {
        let whole = |content: &str, chars: usize| -> String {
            let lower = content.to_lowercase();
            let words: Vec<&str> = lower.split_whitespace().collect();
            words.join(" ").chars().take(chars).collect()
        };
        let alphabet = [
            "Σ", "σ", "ς", "Α", "ά", "'", ".", "\u{301}", "\u{AD}", " ", "\t", "\u{3000}", "\n",
            "İ", "I", "a", "B", "数", "-", "\u{200B}",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..20_000 {
            let len = next(12);
            let content: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            for chars in [3, 100] {
                assert_eq!(
                    content_prefix(&content, chars),
                    whole(&content, chars),
                    "{content:?}"
                );
            }
        }
        for content in ["ΟΔΟΣ ΟΔΟΣ.", "ΑΣ'\u{301} Σ", "Σ\u{3000}ΣΑΣ", "İSTANBUL Σ"]
        {
            assert_eq!(
                content_prefix(content, 100),
                whole(content, 100),
                "{content:?}"
            );
        }
    }

    #[test]
    fn only_later_equal_prefixes_are_near_duplicates() {
        assert_eq!(
            near_duplicates(["a", "b", "a", "a", "c", "b"]),
            [false, false, true, true, false, true]
        );
        assert!(near_duplicates([]).is_empty());
    }

    #[test]
    fn demotion_is_absolute_in_decay_and_relative_elsewhere() {
        assert_eq!(demotion(0.7, true, 0.1, 0.1), -0.1);
        assert_eq!(demotion(20.0, false, 0.1, 0.1), -2.0);
        assert_eq!(demotion(-5.0, false, 0.1, 0.1), -0.5);
        assert_eq!(demotion(0.0, false, 0.1, 0.1), 0.0);
    }
}
