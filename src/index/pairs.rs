//! Word pairs: which records hold two frequent words next to each other in some value, so that
//! the exact phrase of a query (SPEC §4) is found from postings instead of the stored text.
//!
//! For a phrase of words that are not CJK, "occurs at word boundaries in `phrase(value)`" means
//! "its words are consecutive words of the value" (a word never contains a space, and each
//! boundary is a space or an edge). So the records where a two-word phrase occurs are exactly
//! the records holding that pair, and for a longer phrase the records holding every adjacent
//! pair of it are a superset to verify.
//!
//! Only pairs of *frequent* words are indexed: a rare word already narrows its phrase to a few
//! records, and indexing every pair would double the postings. A build chooses its frequent
//! words from its first batch of records (every spill of the build shares them, so spills merge
//! by concatenating pair postings) and each segment stores them (`format/pairs.rs`), so a
//! search knows which pairs the segment indexes: a pair of two stored words that is not stored
//! occurs in no record. Built with stemming, index tokens are stems, not words, and a segment stores
//! no frequent words and no pairs.

use std::collections::HashMap;

use rayon::prelude::*;

/// At most this many frequent words per segment (pair ids stay below 2^24).
pub const MAX_WORDS: usize = 4096;

/// A word is frequent when at least this share of the sampled records holds it…
const SHARE: usize = 100;
/// …and at least this many of them: in a segment too small for that, phrases are verified on
/// the text cheaply, and pair sets of a few records each would cost more bytes than they save.
const MIN_RECORDS: usize = 32;

/// The frequent words of one segment, numbered.
#[derive(Debug, Default)]
pub struct FrequentWords {
    ids: HashMap<String, u32, foldhash::fast::RandomState>,
    words: Vec<String>,
}

impl FrequentWords {
    /// Chooses the frequent words of a sample: the words held by at least 1 % of its records
    /// (and at least 32), most frequent first, at most [`MAX_WORDS`]; ties by word.
    /// `records` gives each sampled record's words, as [`FrequentWords::pairs`] takes them;
    /// they are counted in parallel (the counts, and so the words, do not depend on how).
    pub fn choose<'a, W>(records: impl ParallelIterator<Item = W>) -> FrequentWords
    where
        W: Iterator<Item = Option<&'a str>>,
    {
        type Counts<'a> = HashMap<&'a str, usize, foldhash::fast::RandomState>;
        let (sampled, counts) = records
            .fold(
                || (0, Counts::default(), Vec::new()),
                |(sampled, mut counts, mut seen), words| {
                    seen.clear();
                    seen.extend(words.flatten());
                    seen.sort_unstable();
                    seen.dedup();
                    for word in &seen {
                        *counts.entry(*word).or_default() += 1;
                    }
                    (sampled + 1, counts, seen)
                },
            )
            .map(|(sampled, counts, _)| (sampled, counts))
            .reduce(
                || (0, Counts::default()),
                |(sampled, counts), (more, others)| {
                    let (mut into, from) = match counts.len() >= others.len() {
                        true => (counts, others),
                        false => (others, counts),
                    };
                    for (word, count) in from {
                        *into.entry(word).or_default() += count;
                    }
                    (sampled + more, into)
                },
            );
        let least = (sampled / SHARE).max(MIN_RECORDS);
        let mut frequent: Vec<(usize, &str)> = counts
            .into_iter()
            .filter(|&(_, count)| count >= least)
            .map(|(word, count)| (count, word))
            .collect();
        frequent.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        frequent.truncate(MAX_WORDS);
        FrequentWords::from_words(frequent.into_iter().map(|(_, w)| w.to_string()).collect())
    }

    /// The frequent words given, numbered in byte order.
    pub fn from_words(mut words: Vec<String>) -> FrequentWords {
        words.sort_unstable();
        words.dedup();
        let ids = words
            .iter()
            .enumerate()
            .map(|(i, w)| (w.clone(), i as u32))
            .collect();
        FrequentWords { ids, words }
    }

    /// The words, in id (byte) order.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Appends the ids of the frequent-word pairs of one record, sorted and without repeats.
    /// `words` are the record's index tokens in order, each `Some(text)`, except that a CJK
    /// token is `None` and so is the end of each value: no pair spans a `None`.
    pub fn pairs<'a>(&self, words: impl Iterator<Item = Option<&'a str>>, out: &mut Vec<u32>) {
        if self.words.is_empty() {
            return;
        }
        FrequentWords::pairs_of_ids(words.map(|word| word.and_then(|w| self.id(w))), out);
    }

    /// The id of `word`, when it is a frequent word.
    pub fn id(&self, word: &str) -> Option<u32> {
        self.ids.get(word).copied()
    }

    /// [`FrequentWords::pairs`] of the words' ids: `None` for a word that is not frequent,
    /// a CJK token or the end of a value.
    pub fn pairs_of_ids(ids: impl Iterator<Item = Option<u32>>, out: &mut Vec<u32>) {
        let start = out.len();
        let mut previous: Option<u32> = None;
        for id in ids {
            if let (Some(a), Some(b)) = (previous, id) {
                out.push(a * MAX_WORDS as u32 + b);
            }
            previous = id;
        }
        out[start..].sort_unstable();
        let mut kept = start;
        for i in start..out.len() {
            if i == start || out[i] != out[kept - 1] {
                out[kept] = out[i];
                kept += 1;
            }
        }
        out.truncate(kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::TextAnalyzer;

    /// The words of values as [`FrequentWords::pairs`] takes them.
    fn words_of(values: &[&str]) -> Vec<Option<String>> {
        let analyzer = TextAnalyzer::new(false);
        let mut words = Vec::new();
        for value in values {
            analyzer.for_each_index_token(value, |text, cjk, _| {
                words.push((!cjk).then(|| text.to_string()))
            });
            words.push(None);
        }
        words
    }

    /// The id of the pair `first second` among `words` (sorted), when both are there.
    fn pair_id(words: &[String], first: &str, second: &str) -> Option<u32> {
        let id = |word: &str| words.binary_search_by(|w| w.as_str().cmp(word)).ok();
        Some(id(first)? as u32 * MAX_WORDS as u32 + id(second)? as u32)
    }

    #[test]
    fn pairs_are_adjacent_frequent_words_of_one_value() {
        let words = FrequentWords::from_words(vec!["cache".into(), "ci".into(), "the".into()]);
        let values = words_of(&["The CI cache, the cache", "ci", "cache 编程 ci"]);
        let mut pairs = Vec::new();
        words.pairs(values.iter().map(Option::as_deref), &mut pairs);
        let id = |a: &str, b: &str| pair_id(words.words(), a, b).unwrap();
        // "ci" ending value 1 and starting value 2 is no pair; nor are words around CJK.
        let mut expected = [
            id("cache", "the"),
            id("ci", "cache"),
            id("the", "cache"),
            id("the", "ci"),
        ];
        expected.sort_unstable();
        assert_eq!(pairs, expected);
        assert_eq!(pair_id(words.words(), "the", "rust"), None);
    }

    #[test]
    fn frequent_words_need_a_share_of_the_sample() {
        let mut records = Vec::new();
        for i in 0..4000 {
            let mut text = format!("common w{i}");
            if i % 50 == 0 {
                text.push_str(" rare");
            }
            if i % 200 == 0 {
                text.push_str(" scarce");
            }
            if i % 114 == 0 {
                text.push_str(" some");
            }
            records.push(words_of(&[&text]));
        }
        // At least 1 % (40) and 32 records: "rare" is in 80, "some" in 36, "scarce" in 20.
        // Counted in one piece or a record a piece, merged: the same words.
        for pieces in [1, records.len()] {
            let chosen = FrequentWords::choose(
                (records.par_iter())
                    .with_min_len(records.len() / pieces)
                    .with_max_len(records.len() / pieces)
                    .map(|r| r.iter().map(Option::as_deref)),
            );
            assert_eq!(chosen.words(), ["common", "rare"], "{pieces} pieces");
        }
    }
}
