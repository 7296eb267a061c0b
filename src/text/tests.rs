//! Table-driven tests of the SPEC 2 pipeline: `tokens`, `index_tokens`, `words` and `phrase`.

use serde::de::value::{Error as ValueError, StrDeserializer};
use serde::de::IntoDeserializer;
use serde::Deserialize;

use super::*;

/// A token as `(text, cjk)`, for compact tables.
type Expected = (&'static str, bool);

fn pairs(tokens: &[Token]) -> Vec<(&str, bool)> {
    tokens.iter().map(|t| (t.text.as_str(), t.cjk)).collect()
}

fn index_triples(analyzer: &TextAnalyzer, text: &str) -> Vec<(String, bool, bool)> {
    let mut out = Vec::new();
    analyzer.index_tokens(text, &mut out);
    out.into_iter().map(|t| (t.text, t.cjk, t.stop)).collect()
}

/// Runs a table of `(text, expected tokens)` through `tokens`.
fn check_tokens(stem: bool, analyzer: Analyzer, cases: &[(&str, &[Expected])]) {
    let text_analyzer = TextAnalyzer::new(stem);
    for &(text, expected) in cases {
        let tokens = text_analyzer.tokens(text, analyzer);
        assert_eq!(
            pairs(&tokens),
            expected,
            "tokens({text:?}, {analyzer}), stem = {stem}"
        );
    }
}

#[test]
fn analyzer_names() {
    let cases = [
        (Analyzer::English, "english"),
        (Analyzer::Multilingual, "multilingual"),
    ];
    for (analyzer, name) in cases {
        assert_eq!(analyzer.as_str(), name);
        assert_eq!(analyzer.to_string(), name);
        let deserializer: StrDeserializer<'_, ValueError> = name.into_deserializer();
        assert_eq!(Analyzer::deserialize(deserializer), Ok(analyzer), "{name}");
    }
    for wrong in ["English", "MULTILINGUAL", "", "german"] {
        let deserializer: StrDeserializer<'_, ValueError> = wrong.into_deserializer();
        assert!(Analyzer::deserialize(deserializer).is_err(), "{wrong:?}");
    }
}

#[test]
fn text_analyzer_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<TextAnalyzer>();
    assert_send_sync::<Token>();
    assert_send_sync::<IndexToken>();
}

#[test]
fn text_analyzer_reports_stemming() {
    assert!(TextAnalyzer::new(true).stems());
    assert!(!TextAnalyzer::new(false).stems());
    assert_eq!(
        format!("{:?}", TextAnalyzer::new(true)),
        "TextAnalyzer { stems: true }"
    );
}

#[test]
fn tokens_truncate_non_cjk_runs_to_64_characters() {
    let a63 = "a".repeat(63);
    let a64 = "a".repeat(64);
    let a65 = "a".repeat(65);
    let e64 = "é".repeat(64);
    let e65 = "é".repeat(65);
    let e65_decomposed = "e\u{301}".repeat(65);
    let a64_then_b = format!("{a64}b");
    let cjk70 = "字".repeat(70);
    // (text, expected token texts)
    let cases: Vec<(String, Vec<&str>)> = vec![
        (a63.clone(), vec![&a63]),
        (a64.clone(), vec![&a64]),
        (a65.clone(), vec![&a64]),
        (a65.to_uppercase(), vec![&a64]),
        // Characters, not bytes: 64 two-byte characters are kept whole.
        (e64.clone(), vec![&e64]),
        (e65.clone(), vec![&e64]),
        // Truncation counts the characters after NFC.
        (e65_decomposed, vec![&e64]),
        // Truncation happens before deduplication.
        (format!("{a65} {a64_then_b}"), vec![&a64]),
        // Each run is truncated on its own.
        (format!("{a65}-{e65}"), vec![&a64, &e64]),
        // A CJK run is never truncated: 70 identical characters give one repeated bigram.
        (cjk70, vec!["字字"]),
    ];
    let analyzer = TextAnalyzer::new(false);
    for (text, expected) in &cases {
        for kind in [Analyzer::English, Analyzer::Multilingual] {
            let got: Vec<String> = analyzer
                .tokens(text, kind)
                .into_iter()
                .map(|t| t.text)
                .collect();
            assert_eq!(&got, expected, "tokens({text:?}, {kind})");
        }
    }
}

#[test]
fn tokens_multilingual_unstemmed() {
    let cases: &[(&str, &[Expected])] = &[
        ("", &[]),
        ("  ,.;!  ", &[]),
        ("hello", &[("hello", false)]),
        // Lowercase, ASCII and not.
        ("Hello WORLD", &[("hello", false), ("world", false)]),
        ("ÄÖÜ", &[("äöü", false)]),
        ("Σ", &[("σ", false)]),
        ("ΟΔΟΣ", &[("οδος", false)]),
        ("İstanbul", &[("i\u{307}stanbul", false)]),
        // NFC: the decomposed and precomposed forms give the same token.
        ("cafe\u{301}", &[("café", false)]),
        ("café", &[("café", false)]),
        ("CAFE\u{301}", &[("café", false)]),
        // Separators: punctuation and underscores.
        ("snake_case", &[("snake", false), ("case", false)]),
        (
            "foo.bar(baz)",
            &[("foo", false), ("bar", false), ("baz", false)],
        ),
        ("don't", &[("don", false), ("t", false)]),
        ("e-mail", &[("e", false), ("mail", false)]),
        ("404 error", &[("404", false), ("error", false)]),
        // Stop words are kept by multilingual.
        (
            "the fix is in",
            &[("the", false), ("fix", false), ("is", false), ("in", false)],
        ),
        // Combining marks.
        ("x\u{20DD}", &[("x\u{20DD}", false)]),
        ("\u{301}x", &[("x", false)]),
        ("हिन्दी", &[("हिन्दी", false)]),
        // CJK: a single character, bigrams, kind switches.
        ("字", &[("字", true)]),
        ("编程", &[("编程", true)]),
        (
            "编程语言",
            &[("编程", true), ("程语", true), ("语言", true)],
        ),
        (
            "rust编程语言",
            &[
                ("rust", false),
                ("编程", true),
                ("程语", true),
                ("语言", true),
            ],
        ),
        ("Rust 编 程", &[("rust", false), ("编", true), ("程", true)]),
        ("한국어", &[("한국", true), ("국어", true)]),
        (
            "カタカナ",
            &[("カタ", true), ("タカ", true), ("カナ", true)],
        ),
        ("ｶﾀｶﾅ", &[("ｶﾀ", true), ("ﾀｶ", true), ("ｶﾅ", true)]),
        (
            "日本語とEnglish",
            &[
                ("日本", true),
                ("本語", true),
                ("語と", true),
                ("english", false),
            ],
        ),
        // A CJK run is never truncated: every bigram of a long run is kept.
        (
            "一二三四五",
            &[
                ("一二", true),
                ("二三", true),
                ("三四", true),
                ("四五", true),
            ],
        ),
        // Duplicates: first occurrences, in order.
        ("b a b c a", &[("b", false), ("a", false), ("c", false)]),
        ("字字字字", &[("字字", true)]),
        ("Go go GO", &[("go", false)]),
    ];
    check_tokens(false, Analyzer::Multilingual, cases);
}

#[test]
fn tokens_english_removes_stop_words() {
    check_tokens(
        false,
        Analyzer::English,
        &[
            ("", &[]),
            ("the", &[]),
            ("The And Of", &[]),
            ("the fix is in", &[("fix", false)]),
            ("How do I fix it?", &[("fix", false)]),
            // Contractions split into stop-word pieces.
            ("it's what we'd do", &[]),
            ("don't", &[("don", false)]),
            // Only whole tokens are stop words.
            (
                "theme these1 ands",
                &[("theme", false), ("these1", false), ("ands", false)],
            ),
            // Uppercase stop words are lowercased first.
            (
                "THE BORROW CHECKER",
                &[("borrow", false), ("checker", false)],
            ),
            // CJK tokens are never stop words.
            ("a 字", &[("字", true)]),
            (
                "rust和the编程",
                &[("rust", false), ("和", true), ("编程", true)],
            ),
        ],
    );
}

#[test]
fn tokens_multilingual_keeps_stop_words() {
    check_tokens(
        false,
        Analyzer::Multilingual,
        &[
            ("the", &[("the", false)]),
            ("How do I", &[("how", false), ("do", false), ("i", false)]),
        ],
    );
}

#[test]
fn tokens_stemmed() {
    let english: &[(&str, &[Expected])] = &[
        ("running", &[("run", false)]),
        ("connections", &[("connect", false)]),
        ("Running Connections", &[("run", false), ("connect", false)]),
        // Deduplication happens after stemming.
        (
            "connect connected connecting connections",
            &[("connect", false)],
        ),
        ("runs running run", &[("run", false)]),
        // Stop words are removed before stemming: "doing" is not a stop word, so its stem
        // "do" stays even though "do" itself is one.
        ("doing", &[("do", false)]),
        ("do doing", &[("do", false)]),
        ("the running", &[("run", false)]),
        // CJK tokens are not stemmed.
        ("running编程", &[("run", false), ("编程", true)]),
        // Digits pass through.
        ("42", &[("42", false)]),
    ];
    check_tokens(true, Analyzer::English, english);

    let multilingual: &[(&str, &[Expected])] = &[
        ("the running", &[("the", false), ("run", false)]),
        ("do doing", &[("do", false)]),
        ("connections 接続", &[("connect", false), ("接続", true)]),
    ];
    check_tokens(true, Analyzer::Multilingual, multilingual);
}

#[test]
fn tokens_unstemmed_keep_word_forms() {
    check_tokens(
        false,
        Analyzer::English,
        &[
            ("running", &[("running", false)]),
            (
                "connect connected",
                &[("connect", false), ("connected", false)],
            ),
            ("doing", &[("doing", false)]),
        ],
    );
}

#[test]
fn stemming_applies_to_the_truncated_token() {
    // Step 3 truncates to 64 characters, then step 5 stems what is left.
    let long = format!("{}running", "x".repeat(60)); // 67 characters
    let truncated = format!("{}runn", "x".repeat(60)); // the first 64
    let stemmed = TextAnalyzer::new(true).tokens(&long, Analyzer::English);
    let unstemmed = TextAnalyzer::new(false).tokens(&long, Analyzer::English);
    assert_eq!(unstemmed[0].text, truncated);
    let stemmer = Stemmer::create(Algorithm::English);
    assert_eq!(stemmed[0].text, stemmer.stem(&truncated));
}

#[test]
fn index_tokens_table() {
    type Triple = (&'static str, bool, bool);
    let cases: &[(bool, &str, &[Triple])] = &[
        (false, "", &[]),
        // Stop words are kept and flagged; repeats are kept.
        (
            false,
            "The fix, the FIX",
            &[
                ("the", false, true),
                ("fix", false, false),
                ("the", false, true),
                ("fix", false, false),
            ],
        ),
        // CJK tokens are never stop words.
        (
            false,
            "rust编程语言",
            &[
                ("rust", false, false),
                ("编程", true, false),
                ("程语", true, false),
                ("语言", true, false),
            ],
        ),
        (
            false,
            "字字字",
            &[("字字", true, false), ("字字", true, false)],
        ),
        // Stemmed, with the stop flag decided before stemming.
        (
            true,
            "Running connections",
            &[("run", false, false), ("connect", false, false)],
        ),
        (
            true,
            "doing do",
            &[("do", false, false), ("do", false, true)],
        ),
        (
            true,
            "is running running",
            &[
                ("is", false, true),
                ("run", false, false),
                ("run", false, false),
            ],
        ),
    ];
    for &(stem, text, expected) in cases {
        let analyzer = TextAnalyzer::new(stem);
        let got = index_triples(&analyzer, text);
        let expected: Vec<(String, bool, bool)> = expected
            .iter()
            .map(|&(t, cjk, stop)| (t.to_owned(), cjk, stop))
            .collect();
        assert_eq!(got, expected, "index_tokens({text:?}), stem = {stem}");
    }
}

#[test]
fn index_tokens_appends_to_the_buffer() {
    let analyzer = TextAnalyzer::new(false);
    let mut out = vec![IndexToken {
        text: "earlier".to_owned(),
        cjk: false,
        stop: false,
    }];
    analyzer.index_tokens("one", &mut out);
    analyzer.index_tokens("two", &mut out);
    let texts: Vec<&str> = out.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(texts, ["earlier", "one", "two"]);
}

#[test]
fn index_tokens_truncate_like_tokens() {
    let a65 = "A".repeat(65);
    let analyzer = TextAnalyzer::new(false);
    let got = index_triples(&analyzer, &a65);
    assert_eq!(got, [("a".repeat(64), false, false)]);
}

#[test]
fn routed_tokens_follow_route() {
    let analyzer = TextAnalyzer::new(false);
    let cases: &[(&str, &[Expected])] = &[
        // English: the stop word goes.
        ("the lock", &[("lock", false)]),
        // Multilingual: the stop word stays.
        (
            "the Größenänderung",
            &[("the", false), ("größenänderung", false)],
        ),
        ("the 编程", &[("the", false), ("编程", true)]),
    ];
    for &(text, expected) in cases {
        assert_eq!(
            pairs(&analyzer.routed_tokens(text)),
            expected,
            "routed_tokens({text:?})"
        );
    }
}

#[test]
fn words_table() {
    let a65 = "a".repeat(65);
    let a64 = "a".repeat(64);
    let long_cjk = "字".repeat(70);
    let cases: &[(&str, &[&str])] = &[
        ("", &[]),
        ("!!!", &[]),
        ("Hello, World!", &["hello", "world"]),
        // Stop words and repeats are kept.
        ("the fix and the fix", &["the", "fix", "and", "the", "fix"]),
        // Punctuation and underscores separate.
        ("snake_case (x.y)", &["snake", "case", "x", "y"]),
        // A CJK run stays one word, however long.
        ("rust编程语言", &["rust", "编程语言"]),
        ("字", &["字"]),
        (&long_cjk, &[&long_cjk]),
        ("日本語、English。", &["日本語", "english"]),
        // A non-CJK run is truncated to 64 characters.
        (&a65, &[&a64]),
        // NFC and lowercase.
        ("CAFE\u{301}", &["café"]),
    ];
    for &(text, expected) in cases {
        assert_eq!(words(text), expected, "words({text:?})");
    }
}

#[test]
fn phrase_table() {
    let cases: &[(&str, &str)] = &[
        ("", ""),
        ("...", ""),
        ("  Hello,   World!  ", "hello world"),
        ("The fix: the FIX", "the fix the fix"),
        ("rust编程语言", "rust 编程语言"),
        ("編程 and 語言", "編程 and 語言"),
        ("a_b-c", "a b c"),
        ("e\u{301}té", "été"),
    ];
    for &(text, expected) in cases {
        assert_eq!(phrase(text), expected, "phrase({text:?})");
    }
}

#[test]
fn step_1_is_not_idempotent_on_rare_inputs() {
    // SPEC step 1 is NFC, then lowercase, with no NFC after lowercasing. Lowercasing can leave
    // text that is not NFC, so phrase(phrase(x)) may differ from phrase(x) on such inputs.
    // These cases pin the literal SPEC behaviour. (text, phrase(text), phrase(phrase(text)))
    let cases: &[(&str, &str, &str)] = &[
        // İ lowercases to i + U+0307 (ccc 230); a following mark of lower combining class is
        // then out of canonical order, and NFC reorders it on the second pass.
        ("İ\u{3099}", "i\u{307}\u{3099}", "i\u{3099}\u{307}"),
        ("İ\u{316}", "i\u{307}\u{316}", "i\u{316}\u{307}"),
        // W + ring has no precomposed form, but w + ring does (U+1E98).
        ("W\u{30A}", "w\u{30A}", "\u{1E98}"),
        // Inputs without such sequences are stable.
        ("İstanbul", "i\u{307}stanbul", "i\u{307}stanbul"),
        ("Ẅ", "ẅ", "ẅ"),
    ];
    for &(text, once, twice) in cases {
        assert_eq!(phrase(text), once, "phrase({text:?})");
        assert_eq!(phrase(once), twice, "phrase({once:?})");
    }
}
