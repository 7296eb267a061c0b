//! A query analyzed once: its tokens, its phrase, and the record-level matching rules of
//! SPEC §3–4 that both backends share.

use crate::text::{self, Analyzer, IndexToken, TextAnalyzer, Token};

/// Only the first this-many query tokens are used (SPEC §3).
pub const MAX_QUERY_TOKENS: usize = 32;

/// Only the first this-many characters of a query are analyzed: a resource cap (SPEC is silent)
/// so that a hostile query cannot make analysis, phrase matching or entity lookup cost memory
/// and time in proportion to its size. 8192 characters hold far more than the 32 tokens used;
/// a longer query is cut at a character boundary and the response says so in a notice.
pub const MAX_QUERY_CHARS: usize = 8192;

/// Characters the shorter token needs for a prefix match (SPEC §3).
pub const MIN_PREFIX_CHARS: usize = 5;

/// The query, analyzed.
#[derive(Debug, Clone)]
pub struct PreparedQuery {
    /// The query text as given.
    pub text: String,
    /// `english` or `multilingual`, routed on the query itself.
    pub analyzer: Analyzer,
    /// The tokens used, at most [`MAX_QUERY_TOKENS`], in query order.
    pub tokens: Vec<Token>,
    /// Tokens beyond the limit.
    pub dropped: Vec<String>,
    /// `phrase(query)` when `words(query)` has at least two words.
    pub phrase: Option<String>,
    /// The query's length in characters when it was longer than [`MAX_QUERY_CHARS`] and cut.
    pub truncated_from: Option<usize>,
    /// Adjacent word pairs of the query whose words are each one used token (stop words and
    /// CJK runs break adjacency), for `bm25f`'s proximity signal.
    pub pairs: Vec<WordPair>,
}

/// Two consecutive words of the query and the positions of their tokens in
/// [`PreparedQuery::tokens`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordPair {
    /// The two words joined by a space: a two-word phrase (SPEC §4's `phrase`).
    pub phrase: String,
    /// The first word's token.
    pub first: usize,
    /// The second word's token.
    pub second: usize,
}

impl PreparedQuery {
    /// Analyzes `text`.
    pub fn new(text: &str, analyzer: &TextAnalyzer) -> PreparedQuery {
        let (text, truncated_from) = match text.char_indices().nth(MAX_QUERY_CHARS) {
            Some((cut, _)) => (&text[..cut], Some(text.chars().count())),
            None => (text, None),
        };
        let routed = text::route(text);
        let mut tokens = analyzer.tokens(text, routed);
        let dropped = if tokens.len() > MAX_QUERY_TOKENS {
            tokens
                .split_off(MAX_QUERY_TOKENS)
                .into_iter()
                .map(|t| t.text)
                .collect()
        } else {
            Vec::new()
        };
        let words = text::words(text);
        let phrase = (words.len() >= 2).then(|| words.join(" "));
        let pairs = word_pairs(&words, &tokens, analyzer, routed);
        PreparedQuery {
            text: text.to_string(),
            analyzer: routed,
            tokens,
            dropped,
            phrase,
            truncated_from,
            pairs,
        }
    }

    /// The notice a response carries when the query was cut to [`MAX_QUERY_CHARS`].
    pub fn truncation_notice(&self) -> Option<String> {
        self.truncated_from.map(|chars| {
            format!("the query has {chars} characters; only its first {MAX_QUERY_CHARS} were used")
        })
    }

    /// Whether the query has no tokens.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The mask with one bit per query token.
    pub fn all_tokens_mask(&self) -> u32 {
        if self.tokens.len() >= 32 {
            u32::MAX
        } else {
            (1u32 << self.tokens.len()) - 1
        }
    }
}

/// The adjacent pairs of `words` where each word analyzes to exactly one non-CJK token among
/// `tokens`, each distinct pair once, in query order.
fn word_pairs(
    words: &[String],
    tokens: &[Token],
    analyzer: &TextAnalyzer,
    routed: Analyzer,
) -> Vec<WordPair> {
    let position = |word: &str| -> Option<usize> {
        match analyzer.tokens(word, routed).as_slice() {
            [token] if !token.cjk => tokens.iter().position(|t| t.text == token.text),
            _ => None,
        }
    };
    let positions: Vec<Option<usize>> = words.iter().map(|w| position(w)).collect();
    let mut pairs: Vec<WordPair> = Vec::new();
    for (i, window) in positions.windows(2).enumerate() {
        if let [Some(first), Some(second)] = *window {
            let phrase = format!("{} {}", words[i], words[i + 1]);
            if first != second && !pairs.iter().any(|p| p.phrase == phrase) {
                pairs.push(WordPair {
                    phrase,
                    first,
                    second,
                });
            }
        }
    }
    pairs
}

/// Whether query token `q` matches record token `t` (SPEC §3): equal, or the shorter is a
/// prefix of the longer and has at least five characters; CJK tokens match only exactly; an
/// `english` query ignores stop-word tokens of the record.
pub fn token_matches(q: &Token, t: &IndexToken, analyzer: Analyzer) -> bool {
    if t.stop && analyzer == Analyzer::English {
        return false;
    }
    if q.text == t.text {
        return true;
    }
    if q.cjk || t.cjk {
        return false;
    }
    let (short, long) = if q.text.len() <= t.text.len() {
        (&q.text, &t.text)
    } else {
        (&t.text, &q.text)
    };
    long.starts_with(short.as_str()) && short.chars().count() >= MIN_PREFIX_CHARS
}

/// Whether `needle` (a phrase) occurs in `haystack` (a phrase) at word boundaries: the
/// characters just before and after are spaces or text edges, except that an edge of the needle
/// that is a CJK character needs no boundary (SPEC §4).
pub fn phrase_occurs(haystack: &str, needle: &str) -> bool {
    let (Some(first), Some(last)) = (needle.chars().next(), needle.chars().next_back()) else {
        return false;
    };
    let free_start = text::is_cjk_char(first);
    let free_end = text::is_cjk_char(last);
    // Every occurrence, overlapping ones included: in "0a a a", "a a" first occurs inside
    // "0a a" (no boundary), then at the second "a".
    let mut from = 0;
    while let Some(found) = haystack[from..].find(needle) {
        let at = from + found;
        let end = at + needle.len();
        let start_ok = free_start || at == 0 || haystack[..at].ends_with(' ');
        let end_ok = free_end || end == haystack.len() || haystack[end..].starts_with(' ');
        if start_ok && end_ok {
            return true;
        }
        from = at + first.len_utf8();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> Token {
        Token {
            text: text.into(),
            cjk: text.chars().any(text::is_cjk_char),
        }
    }

    fn t(text: &str, stop: bool) -> IndexToken {
        IndexToken {
            text: text.into(),
            cjk: text.chars().any(text::is_cjk_char),
            stop,
        }
    }

    fn pairs(text: &str, stem: bool) -> Vec<(String, usize, usize)> {
        PreparedQuery::new(text, &TextAnalyzer::new(stem))
            .pairs
            .into_iter()
            .map(|p| (p.phrase, p.first, p.second))
            .collect()
    }

    #[test]
    fn word_pairs_are_adjacent_words_each_one_token() {
        // Tokens: connection 0, pool 1, exhausted 2, load 3; "with" and "the" are stop words and break
        // adjacency; punctuation does not (phrases are words joined by spaces, SPEC §4); the
        // repeated pair counts once.
        assert_eq!(
            pairs(
                "Connection pool exhausted with the load; connection pool",
                false
            ),
            [
                ("connection pool".to_string(), 0, 1),
                ("pool exhausted".to_string(), 1, 2),
                ("load connection".to_string(), 3, 0),
            ]
        );
        // A CJK run is several tokens (bigrams): it pairs with nothing.
        assert_eq!(
            pairs("rust 编程语言 tokio runtime", false),
            [("tokio runtime".to_string(), 4, 5)]
        );
        // Stemmed: the phrase keeps the words, the positions point at the stems' tokens.
        assert_eq!(
            pairs("failing tests", true),
            [("failing tests".to_string(), 0, 1)]
        );
        // A word repeated next to itself is no pair; a multilingual query keeps stop words.
        assert!(pairs("cache cache", false).is_empty());
        assert_eq!(
            pairs("über die brücke", false),
            [
                ("über die".to_string(), 0, 1),
                ("die brücke".to_string(), 1, 2),
            ]
        );
    }

    #[test]
    fn a_long_query_is_cut_at_a_character_boundary_with_a_notice() {
        let analyzer = TextAnalyzer::new(false);
        let short = PreparedQuery::new(&"é".repeat(MAX_QUERY_CHARS), &analyzer);
        assert_eq!(short.truncated_from, None);
        assert_eq!(short.truncation_notice(), None);
        let text = format!("{} tail", "é ".repeat(MAX_QUERY_CHARS));
        let long = PreparedQuery::new(&text, &analyzer);
        assert_eq!(long.text.chars().count(), MAX_QUERY_CHARS);
        assert_eq!(long.truncated_from, Some(text.chars().count()));
        assert!(long.truncation_notice().unwrap().contains("8192"));
        assert!(!long.text.contains("tail"));
    }

    #[test]
    fn prefix_rule_table() {
        use Analyzer::*;
        let cases = [
            // (query, record, stop, analyzer, matches)
            ("tokio", "tokio", false, English, true),
            ("confi", "configuration", false, English, true), // 5-char query prefix
            ("conf", "configuration", false, English, false), // 4 chars: too short
            ("configuration", "confi", false, English, true), // 5-char record prefix
            ("configuration", "conf", false, English, false), // 4-char record prefix
            ("migrat", "migration", false, English, true),
            ("migration", "migrate", false, English, false), // neither is a prefix
            ("ünïco", "ünïcode", false, Multilingual, true), // five characters, not bytes
            ("ünïc", "ünïcode", false, Multilingual, false),
            ("the", "the", true, English, false), // english skips stop tokens
            ("the", "the", true, Multilingual, true),
            ("there", "therefore", true, Multilingual, true),
            ("编程", "编程", false, Multilingual, true),
            ("编", "编程", false, Multilingual, false), // CJK: exact only
        ];
        for (query, record, stop, analyzer, expected) in cases {
            assert_eq!(
                token_matches(&q(query), &t(record, stop), analyzer),
                expected,
                "{query} vs {record} ({analyzer:?}, stop {stop})"
            );
        }
    }

    #[test]
    fn phrase_boundaries_table() {
        let cases = [
            ("connection refused by server", "connection refused", true),
            ("the connection refused", "connection refused", true),
            ("reconnection refused", "connection refused", false),
            ("connection refusedx", "connection refused", false),
            ("connection refused", "connection refused", true),
            ("a connection refused b", "connection refused", true),
            ("xx 数据库连接 yy", "数据库连接", true),
            ("这个数据库连接失败", "数据库连接", true), // CJK edges need no boundary
            ("abc数据库 连接x", "数据库 连接", true),
            ("trust 编程", "rust 编程", false), // a latin edge needs a boundary
            ("a rust 编程x", "rust 编程", true),
            ("", "a b", false),
            // An occurrence without a boundary does not hide an overlapping one that has it.
            ("0a a a", "a a", true),
            ("xab ab ab", "ab ab", true),
            ("xab ab", "ab ab", false),
        ];
        for (haystack, needle, expected) in cases {
            assert_eq!(
                phrase_occurs(haystack, needle),
                expected,
                "{needle:?} in {haystack:?}"
            );
        }
    }
}
