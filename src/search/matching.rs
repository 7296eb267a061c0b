//! Text matching on stored records: whether a phrase occurs in a record's searchable text
//! (SPEC §4), checked word by word in place for ASCII values.

use crate::schema::FieldGroup;
use crate::search::query::phrase_occurs;
use crate::text;

/// Whether any searchable value of `record` contains `phrase` (SPEC §4).
pub(crate) fn record_has_phrase(record: &crate::record::Record, phrase: &str) -> bool {
    // An ASCII value is matched word by word in place: for ASCII text, normalization is the
    // identity, lowercasing is ASCII lowercasing and runs are ASCII alphanumeric runs, so the
    // phrase occurs exactly when its words are consecutive words of the value.
    let ascii_words: Option<Vec<&[u8]>> = phrase
        .is_ascii()
        .then(|| phrase.split(' ').map(str::as_bytes).collect());
    FieldGroup::ALL.iter().any(|&g| {
        record
            .group_values(g)
            .into_iter()
            .any(|value| match &ascii_words {
                Some(words) if value.is_ascii() => ascii_words_occur(value.as_bytes(), words),
                _ => phrase_occurs(&text::phrase(value), phrase),
            })
    })
}

/// Whether `words` (lowercase, as `words()` gives them) are consecutive words of the ASCII
/// text `value`.
fn ascii_words_occur(value: &[u8], words: &[&[u8]]) -> bool {
    // The word starting at or after `from`, as a byte range.
    let word_at = |from: usize| -> Option<(usize, usize)> {
        let start = from + value[from..].iter().position(u8::is_ascii_alphanumeric)?;
        let len = value[start..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .unwrap_or(value.len() - start);
        Some((start, start + len))
    };
    let same = |(start, end): (usize, usize), word: &[u8]| {
        let kept = &value[start..end.min(start + text::MAX_TOKEN_CHARS)];
        kept.eq_ignore_ascii_case(word)
    };
    // Whether the phrase starts with the word at `first`.
    let starts_at = |first: (usize, usize)| {
        if !same(first, words[0]) {
            return false;
        }
        let mut at = first;
        words[1..].iter().all(|word| match word_at(at.1) {
            Some(span) if same(span, word) => {
                at = span;
                true
            }
            _ => false,
        })
    };
    // Without capitals, the first word's occurrences are found by a substring search (the
    // phrase's words are lowercase), each then checked to start a word.
    let has_capitals = value
        .iter()
        .fold(false, |any, b| any | b.is_ascii_uppercase());
    if !has_capitals {
        return memchr::memmem::find_iter(value, words[0]).any(|at| {
            (at == 0 || !value[at - 1].is_ascii_alphanumeric())
                && word_at(at).is_some_and(starts_at)
        });
    }
    let mut next = word_at(0);
    while let Some(first) = next {
        if starts_at(first) {
            return true;
        }
        next = word_at(first.1);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The in-place ASCII matcher answers as SPEC's `phrase_occurs(phrase(value), phrase)`.
    fn general(value: &str, phrase: &str) -> bool {
        phrase_occurs(&text::phrase(value), phrase)
    }

    fn fast(value: &str, phrase: &str) -> bool {
        let words: Vec<&[u8]> = phrase.split(' ').map(str::as_bytes).collect();
        ascii_words_occur(value.as_bytes(), &words)
    }

    #[test]
    fn ascii_phrase_matching_examples() {
        for (value, phrase, expected) in [
            ("Flaky CI cache, again", "ci cache", true),
            ("flaky-ci cache", "ci cache", true),
            ("flakyci cache", "ci cache", false),
            ("the cache ci", "ci cache", false),
            ("ci  ...  cache!", "ci cache", true),
            ("cache", "cache", true),
            ("", "cache", false),
            ("cach", "cache", false),
            ("caches", "cache", false),
        ] {
            assert_eq!(fast(value, phrase), expected, "{value:?} / {phrase:?}");
            assert_eq!(general(value, phrase), expected, "{value:?} / {phrase:?}");
        }
        // Words are cut at 64 characters, in the value and in the phrase alike.
        let long = "x".repeat(70);
        let phrase = text::phrase(&format!("{long} y"));
        assert!(fast(&format!("a {long} y"), &phrase));
        assert!(general(&format!("a {long} y"), &phrase));
    }

    proptest! {
        #[test]
        fn ascii_matcher_agrees_with_the_spec_definition(
            value in "[aAbB0 ,.x-]{0,40}",
            words in proptest::collection::vec("[abAB0x]{1,3}", 1..4),
        ) {
            let phrase = text::phrase(&words.join(" "));
            prop_assume!(!phrase.is_empty());
            prop_assert_eq!(fast(&value, &phrase), general(&value, &phrase));
        }
    }
}
