//! Text analysis (SPEC 2): from a string to the tokens that are indexed and searched.
//!
//! The pipeline, for an [`Analyzer`] `english` or `multilingual`:
//!
//! 1. [`normalize`]: NFC, then `str::to_lowercase` over the whole text;
//! 2. split into maximal runs of alphanumeric characters, where a combining mark continues the
//!    current run and a CJK character never shares a run with a non-CJK one;
//! 3. a non-CJK run is one token of at most [`MAX_TOKEN_CHARS`] characters; a CJK run of one
//!    character is one token, a longer one yields its overlapping bigrams;
//! 4. `english` only: remove the [`STOP_WORDS`];
//! 5. when stemming: replace each non-CJK token by its Snowball English stem;
//! 6. remove duplicates, keeping first occurrences in order.
//!
//! [`TextAnalyzer::tokens`] runs all six steps for a query. [`TextAnalyzer::index_tokens`] runs
//! steps 1, 2, 3 and 5 for indexed text, keeping stop words (flagged) and repeats, which term
//! frequencies and field lengths count. [`words`] and [`phrase`] stop after step 3 and keep a
//! CJK run whole. [`route`] picks the analyzer for a text on its own (SPEC 2.1).
//!
//! # Example
//!
//! ```
//! # use reliora::text::{route, Analyzer, TextAnalyzer};
//! let analyzer = TextAnalyzer::new(true);
//! let query = "Running the connections, running again";
//! assert_eq!(route(query), Analyzer::English);
//! let tokens: Vec<String> = analyzer
//!     .tokens(query, route(query))
//!     .into_iter()
//!     .map(|token| token.text)
//!     .collect();
//! assert_eq!(tokens, ["run", "connect", "again"]);
//!
//! let query = "Rust编程";
//! let tokens = analyzer.tokens(query, route(query));
//! assert_eq!(tokens[1].text, "编程");
//! assert!(tokens[1].cjk);
//! ```

mod cjk;
mod normalize;
pub mod prefix;
mod segment;
mod stopwords;

#[cfg(test)]
mod properties;

use std::collections::HashSet;
use std::fmt;

use rust_stemmers::{Algorithm, Stemmer};

pub use self::cjk::{contains_cjk, is_cjk_char, needs_multilingual, route};
pub use self::normalize::normalize;
pub use self::segment::MAX_TOKEN_CHARS;
pub use self::stopwords::{is_stop_word, STOP_WORDS};

use self::segment::{for_each_cjk_token, for_each_run, truncate_chars};

/// The analyzer a text is tokenized with (SPEC 2): `english` removes stop words, `multilingual`
/// keeps them. Serialized as `"english"` / `"multilingual"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Analyzer {
    /// Steps 1–6 of SPEC 2, stop words removed.
    English,
    /// Steps 1–6 of SPEC 2 except step 4: stop words are kept.
    Multilingual,
}

impl Analyzer {
    /// The analyzer's name as the SPEC and the serialized form spell it: `"english"` or
    /// `"multilingual"`.
    ///
    /// ```
    /// # use reliora::text::Analyzer;
    /// assert_eq!(Analyzer::Multilingual.as_str(), "multilingual");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Analyzer::English => "english",
            Analyzer::Multilingual => "multilingual",
        }
    }
}

impl fmt::Display for Analyzer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A query token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The token's text: normalized, truncated, and stemmed when the analyzer stems.
    pub text: String,
    /// True for a single CJK character or a CJK bigram; these match only exactly (SPEC 3).
    pub cjk: bool,
}

/// A token of indexed text: every token, stop words included, repeats kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexToken {
    /// The token's text: normalized, truncated, and stemmed when the analyzer stems.
    pub text: String,
    /// True for a single CJK character or a CJK bigram.
    pub cjk: bool,
    /// True when the token, before stemming, is a stop word of SPEC 2.2; always false for CJK
    /// tokens.
    pub stop: bool,
}

/// Tokenizes text as SPEC 2 describes, with or without Snowball English stemming.
///
/// It holds no mutable state: one instance can be shared across threads (it is `Send + Sync`).
///
/// ```
/// # use reliora::text::{Analyzer, IndexToken, TextAnalyzer};
/// let analyzer = TextAnalyzer::new(false);
/// let mut index_tokens = Vec::new();
/// analyzer.index_tokens("The fix: the lock", &mut index_tokens);
/// let texts: Vec<&str> = index_tokens.iter().map(|t| t.text.as_str()).collect();
/// assert_eq!(texts, ["the", "fix", "the", "lock"]);
/// assert!(index_tokens[0].stop);
///
/// let query: Vec<String> = analyzer
///     .tokens("The fix: the lock", Analyzer::English)
///     .into_iter()
///     .map(|t| t.text)
///     .collect();
/// assert_eq!(query, ["fix", "lock"]);
/// ```
pub struct TextAnalyzer {
    /// The Snowball English stemmer, present when the index is built with `--stem`.
    stemmer: Option<Stemmer>,
}

impl fmt::Debug for TextAnalyzer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TextAnalyzer")
            .field("stems", &self.stems())
            .finish()
    }
}

impl TextAnalyzer {
    /// A text analyzer that stems non-CJK tokens with Snowball English when `stem` is true
    /// (an index built with `--stem`, SPEC 2 step 5).
    pub fn new(stem: bool) -> Self {
        TextAnalyzer {
            stemmer: stem.then(|| Stemmer::create(Algorithm::English)),
        }
    }

    /// Whether this analyzer stems non-CJK tokens.
    pub fn stems(&self) -> bool {
        self.stemmer.is_some()
    }

    /// SPEC `tokens(text)`: steps 1–6 for `analyzer` (step 5 only when stemming).
    ///
    /// For `english`, stop words are removed before stemming, and duplicates are removed after
    /// it, keeping first occurrences in order.
    ///
    /// ```
    /// # use reliora::text::{Analyzer, TextAnalyzer, Token};
    /// fn texts(tokens: Vec<Token>) -> Vec<String> {
    ///     tokens.into_iter().map(|token| token.text).collect()
    /// }
    /// let plain = TextAnalyzer::new(false);
    /// assert_eq!(texts(plain.tokens("Fix the fix", Analyzer::English)), ["fix"]);
    /// assert_eq!(texts(plain.tokens("Fix the fix", Analyzer::Multilingual)), ["fix", "the"]);
    /// assert_eq!(texts(plain.tokens("编程语言", Analyzer::English)), ["编程", "程语", "语言"]);
    /// ```
    pub fn tokens(&self, text: &str, analyzer: Analyzer) -> Vec<Token> {
        let normalized = normalize(text);
        let mut tokens = Vec::new();
        for_each_term(&normalized, |term, cjk| {
            if cjk {
                tokens.push(Token {
                    text: term.to_owned(),
                    cjk,
                });
            } else if analyzer == Analyzer::Multilingual || !is_stop_word(term) {
                tokens.push(Token {
                    text: self.stem(term),
                    cjk,
                });
            }
        });
        remove_repeats_keep_first(&mut tokens);
        tokens
    }

    /// [`tokens`](Self::tokens) with the analyzer chosen by [`route`] on `text` itself, as
    /// every query and filter text is analyzed (SPEC 2.1).
    pub fn routed_tokens(&self, text: &str) -> Vec<Token> {
        self.tokens(text, route(text))
    }

    /// The tokens of indexed text: steps 1, 2, 3 and 5 (stemming non-CJK tokens when this
    /// analyzer stems), with no stop-word removal and no deduplication.
    ///
    /// The tokens are appended to `out`, so that a caller can reuse one buffer across texts.
    /// Term frequencies and field-group lengths count these tokens.
    pub fn index_tokens(&self, text: &str, out: &mut Vec<IndexToken>) {
        self.for_each_index_token(text, |token, cjk, stop| {
            out.push(IndexToken {
                text: token.to_owned(),
                cjk,
                stop,
            })
        });
    }

    /// [`TextAnalyzer::index_tokens`] without allocating a string per token: calls
    /// `emit(text, cjk, stop)` for each token, in order.
    pub fn for_each_index_token(&self, text: &str, mut emit: impl FnMut(&str, bool, bool)) {
        let normalized = normalize(text);
        for_each_term(&normalized, |term, cjk| {
            if cjk {
                emit(term, true, false);
            } else {
                let stop = is_stop_word(term);
                match &self.stemmer {
                    Some(stemmer) => emit(&stemmer.stem(term), false, stop),
                    None => emit(term, false, stop),
                }
            }
        });
    }

    /// Step 5 for one non-CJK token: its Snowball English stem when stemming, else itself.
    fn stem(&self, token: &str) -> String {
        match &self.stemmer {
            Some(stemmer) => stemmer.stem(token).into_owned(),
            None => token.to_owned(),
        }
    }
}

/// SPEC `words(text)`: steps 1–3 without bigrams. A non-CJK run is one word truncated to
/// [`MAX_TOKEN_CHARS`] characters, a CJK run is one whole word; stop words and repeats are kept.
///
/// ```
/// # use reliora::text::words;
/// assert_eq!(words("The rust编程语言, the end!"), ["the", "rust", "编程语言", "the", "end"]);
/// ```
pub fn words(text: &str) -> Vec<String> {
    let normalized = normalize(text);
    let mut words = Vec::new();
    for_each_word(&normalized, |word| words.push(word.to_owned()));
    words
}

/// SPEC `phrase(text)`: [`words`] joined by single spaces.
///
/// ```
/// # use reliora::text::phrase;
/// assert_eq!(phrase("  Hello,   World! "), "hello world");
/// assert_eq!(phrase("rust编程语言"), "rust 编程语言");
/// ```
pub fn phrase(text: &str) -> String {
    let normalized = normalize(text);
    let mut phrase = String::with_capacity(normalized.len());
    for_each_word(&normalized, |word| {
        if !phrase.is_empty() {
            phrase.push(' ');
        }
        phrase.push_str(word);
    });
    phrase
}

/// Steps 2 and 3 on normalized text: calls `emit` with each term and whether it is CJK.
fn for_each_term(normalized: &str, mut emit: impl FnMut(&str, bool)) {
    for_each_run(normalized, |run| {
        if run.cjk {
            for_each_cjk_token(run.text, |token| emit(token, true));
        } else {
            emit(truncate_chars(run.text, MAX_TOKEN_CHARS), false);
        }
    });
}

/// Steps 2 and 3 without bigrams on normalized text: calls `emit` with each word.
fn for_each_word(normalized: &str, mut emit: impl FnMut(&str)) {
    for_each_run(normalized, |run| {
        if run.cjk {
            emit(run.text);
        } else {
            emit(truncate_chars(run.text, MAX_TOKEN_CHARS));
        }
    });
}

/// Step 6: removes tokens whose text appeared earlier, keeping first occurrences in order.
fn remove_repeats_keep_first(tokens: &mut Vec<Token>) {
    let keep: Vec<bool> = {
        let mut seen = HashSet::with_capacity(tokens.len());
        tokens
            .iter()
            .map(|token| seen.insert(token.text.as_str()))
            .collect()
    };
    // `retain` visits every element exactly once, in order.
    let mut keep = keep.into_iter();
    tokens.retain(|_| keep.next().unwrap_or(true));
}

#[cfg(test)]
mod tests;
