//! Steps 2 and 3 of SPEC 2: splitting normalized text into runs, and runs into terms.
//!
//! A *run* is a maximal stretch of alphanumeric characters (`char::is_alphanumeric`) of one
//! kind, CJK or not:
//!
//! - a combining mark (general category Mn, Mc or Me) continues the current run and keeps its
//!   kind, whatever the mark itself is (even U+3099, which is both a mark and CJK);
//! - with no current run, a combining mark is treated like any other character: it starts a run
//!   when it is alphanumeric (e.g. Devanagari U+093E, Mc) and separates otherwise (U+0301);
//! - an alphanumeric character whose kind differs from the current run's ends that run and
//!   starts the next one;
//! - any other character ends the current run and belongs to none.
//!
//! All functions here borrow from the text they split and allocate nothing.

use unicode_general_category::{get_general_category, GeneralCategory};

use super::cjk::is_cjk_char;

/// A non-CJK token keeps at most this many characters (SPEC 2, step 3).
pub const MAX_TOKEN_CHARS: usize = 64;

/// The first code point of any combining mark (U+0300 COMBINING GRAVE ACCENT); characters below
/// it skip the general category lookup.
const FIRST_COMBINING_MARK: char = '\u{300}';

/// One maximal run of step 2, borrowed from the normalized text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Run<'a> {
    /// The characters of the run, untruncated.
    pub text: &'a str,
    /// Whether the run is made of CJK characters (the kind of its first character).
    pub cjk: bool,
}

/// Returns true when `c` is a combining mark: general category Mn, Mc or Me.
pub(super) fn is_combining_mark(c: char) -> bool {
    c >= FIRST_COMBINING_MARK
        && matches!(
            get_general_category(c),
            GeneralCategory::NonspacingMark
                | GeneralCategory::SpacingMark
                | GeneralCategory::EnclosingMark
        )
}

/// Calls `emit` with each run of `normalized` (SPEC 2, step 2), in text order.
///
/// `normalized` is expected to be the output of [`normalize`](super::normalize); runs are found
/// the same way on any text.
pub(super) fn for_each_run<'a>(normalized: &'a str, emit: impl FnMut(Run<'a>)) {
    if normalized.is_ascii() {
        for_each_ascii_run(normalized, emit);
    } else {
        for_each_unicode_run(normalized, emit);
    }
}

/// The general case of [`for_each_run`].
fn for_each_unicode_run<'a>(text: &'a str, mut emit: impl FnMut(Run<'a>)) {
    // The current run: its start in bytes and its kind.
    let mut current: Option<(usize, bool)> = None;
    for (index, c) in text.char_indices() {
        if let Some((start, cjk)) = current {
            if is_combining_mark(c) || (c.is_alphanumeric() && is_cjk_char(c) == cjk) {
                continue;
            }
            emit(Run {
                text: &text[start..index],
                cjk,
            });
            current = None;
        }
        // No current run here: `c` is treated like any other character, marks included.
        if c.is_alphanumeric() {
            current = Some((index, is_cjk_char(c)));
        }
    }
    if let Some((start, cjk)) = current {
        emit(Run {
            text: &text[start..],
            cjk,
        });
    }
}

/// [`for_each_run`] for ASCII text: no CJK, no combining marks, alphanumeric is `[A-Za-z0-9]`.
fn for_each_ascii_run<'a>(text: &'a str, mut emit: impl FnMut(Run<'a>)) {
    let mut start: Option<usize> = None;
    for (index, byte) in text.bytes().enumerate() {
        match (byte.is_ascii_alphanumeric(), start) {
            (true, None) => start = Some(index),
            (false, Some(run_start)) => {
                emit(Run {
                    text: &text[run_start..index],
                    cjk: false,
                });
                start = None;
            }
            _ => {}
        }
    }
    if let Some(run_start) = start {
        emit(Run {
            text: &text[run_start..],
            cjk: false,
        });
    }
}

/// The first `max_chars` characters of `text` (all of it when shorter).
pub(super) fn truncate_chars(text: &str, max_chars: usize) -> &str {
    // A text of at most `max_chars` bytes has at most `max_chars` characters.
    if text.len() <= max_chars {
        return text;
    }
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

/// Calls `emit` with the tokens of a CJK run (SPEC 2, step 3): the run itself when it is one
/// character long, else each of its overlapping two-character windows, in order.
pub(super) fn for_each_cjk_token<'a>(run: &'a str, mut emit: impl FnMut(&'a str)) {
    let mut chars = run.char_indices();
    let Some((mut first_start, _)) = chars.next() else {
        return;
    };
    let mut emitted_bigram = false;
    for (second_start, second) in chars {
        emit(&run[first_start..second_start + second.len_utf8()]);
        first_start = second_start;
        emitted_bigram = true;
    }
    if !emitted_bigram {
        emit(run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(text: &str) -> Vec<(&str, bool)> {
        let mut found = Vec::new();
        for_each_run(text, |run| found.push((run.text, run.cjk)));
        found
    }

    fn unicode_runs(text: &str) -> Vec<(&str, bool)> {
        let mut found = Vec::new();
        for_each_unicode_run(text, |run| found.push((run.text, run.cjk)));
        found
    }

    fn cjk_tokens(run: &str) -> Vec<&str> {
        let mut found = Vec::new();
        for_each_cjk_token(run, |token| found.push(token));
        found
    }

    #[test]
    fn is_combining_mark_table() {
        let cases: &[(char, bool)] = &[
            ('a', false),
            ('\u{2FF}', false),
            ('\u{300}', true),   // Mn, the first mark
            ('\u{301}', true),   // Mn
            ('\u{36F}', true),   // Mn, end of the combining diacritics block
            ('\u{370}', false),  // Greek capital heta
            ('\u{93E}', true),   // Mc, Devanagari vowel sign aa
            ('\u{903}', true),   // Mc, Devanagari visarga
            ('\u{94D}', true),   // Mn, Devanagari virama
            ('\u{20DD}', true),  // Me, combining enclosing circle
            ('\u{488}', true),   // Me, Cyrillic hundred thousands sign
            ('\u{3099}', true),  // Mn and CJK
            ('\u{309B}', false), // Sk, the spacing voiced sound mark
            ('\u{FE0F}', true),  // Mn, variation selector 16
            ('字', false),
            ('-', false),
        ];
        for &(c, expected) in cases {
            assert_eq!(is_combining_mark(c), expected, "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn runs_table() {
        type Case = (&'static str, &'static [(&'static str, bool)]);
        let cases: &[Case] = &[
            ("", &[]),
            ("   ", &[]),
            ("hello", &[("hello", false)]),
            ("hello world", &[("hello", false), ("world", false)]),
            // Punctuation and underscores separate: '_' is not alphanumeric.
            ("snake_case", &[("snake", false), ("case", false)]),
            (
                "a-b.c,d",
                &[("a", false), ("b", false), ("c", false), ("d", false)],
            ),
            ("c++ & c#", &[("c", false), ("c", false)]),
            ("--x--", &[("x", false)]),
            ("v1.2.3", &[("v1", false), ("2", false), ("3", false)]),
            ("abc123", &[("abc123", false)]),
            // Non-ASCII letters and digits are alphanumeric.
            ("café über", &[("café", false), ("über", false)]),
            ("٣٤٥", &[("٣٤٥", false)]),
            ("x²", &[("x²", false)]),
            ("a€b", &[("a", false), ("b", false)]),
            // CJK runs, and a switch of kind ends a run.
            ("编程", &[("编程", true)]),
            ("rust编程语言", &[("rust", false), ("编程语言", true)]),
            (
                "编程rust语言",
                &[("编程", true), ("rust", false), ("语言", true)],
            ),
            ("3d打印", &[("3d", false), ("打印", true)]),
            ("한국어", &[("한국어", true)]),
            ("カタカナ", &[("カタカナ", true)]),
            ("ｶﾀｶﾅ", &[("ｶﾀｶﾅ", true)]),
            // Non-alphanumeric characters inside the CJK ranges still separate.
            ("カ・カ", &[("カ", true), ("カ", true)]),
            ("日本、中国。", &[("日本", true), ("中国", true)]),
            // Long vowel mark ー (U+30FC) is alphanumeric and CJK.
            ("ラーメン", &[("ラーメン", true)]),
            // Hangul Jamo are alphanumeric but not CJK by SPEC 2.1.
            ("가\u{1100}", &[("가", true), ("\u{1100}", false)]),
            // Combining marks continue the current run, keeping its kind.
            ("e\u{301}x", &[("e\u{301}x", false)]),
            ("e\u{301}\u{302}", &[("e\u{301}\u{302}", false)]),
            ("a\u{20DD} b", &[("a\u{20DD}", false), ("b", false)]),
            ("字\u{301}字", &[("字\u{301}字", true)]),
            ("字\u{20DD}", &[("字\u{20DD}", true)]),
            // U+3099 is a mark and CJK: it continues a non-CJK run as non-CJK...
            ("a\u{3099}b", &[("a\u{3099}b", false)]),
            // ...and a CJK run as CJK.
            ("か\u{3099}字", &[("か\u{3099}字", true)]),
            // An alphanumeric mark (Mc) continues a run of the other kind too.
            ("字\u{93E}", &[("字\u{93E}", true)]),
            // With no current run, a mark that is not alphanumeric separates...
            ("\u{301}abc", &[("abc", false)]),
            (" \u{301} ", &[]),
            ("a \u{301}b", &[("a", false), ("b", false)]),
            ("\u{3099}字", &[("字", true)]),
            // ...and one that is alphanumeric starts a run of its own kind.
            ("\u{93E}\u{915}", &[("\u{93E}\u{915}", false)]),
            (" \u{903}x", &[("\u{903}x", false)]),
            // Devanagari: consonant + Mc/Mn marks stay in one run.
            ("हिन्दी", &[("हिन्दी", false)]),
            // Thai, with Mn vowel marks.
            ("ภาษาไทย", &[("ภาษาไทย", false)]),
        ];
        for &(text, expected) in cases {
            assert_eq!(runs(text), expected, "runs({text:?})");
        }
    }

    #[test]
    fn ascii_path_agrees_with_unicode_path() {
        let texts = [
            "",
            "plain words here",
            "snake_case and kebab-case",
            "  lead and trail  ",
            "v1.2.3-rc4+build.5",
            "!!!",
            "x",
        ];
        for text in texts {
            assert_eq!(runs(text), unicode_runs(text), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn ascii_path_agrees_with_unicode_path_on_any_ascii(text in "[ -~\t\n]{0,100}") {
            proptest::prop_assert_eq!(runs(&text), unicode_runs(&text));
        }
    }

    #[test]
    fn truncate_chars_table() {
        let a64 = "a".repeat(64);
        let a65 = "a".repeat(65);
        let e64 = "é".repeat(64);
        let e65 = "é".repeat(65);
        let cases: &[(&str, usize, &str)] = &[
            ("", 64, ""),
            ("abc", 64, "abc"),
            (&a64, 64, &a64),
            (&a65, 64, &a64),
            // Characters, not bytes: 64 two-byte characters are kept whole.
            (&e64, 64, &e64),
            (&e65, 64, &e64),
            ("字字字", 2, "字字"),
            ("e\u{301}x", 1, "e"),
            ("abc", 0, ""),
        ];
        for &(text, max, expected) in cases {
            assert_eq!(
                truncate_chars(text, max),
                expected,
                "truncate_chars({text:?}, {max})"
            );
        }
    }

    #[test]
    fn cjk_tokens_table() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("字", &["字"]),
            ("编程", &["编程"]),
            ("编程语言", &["编程", "程语", "语言"]),
            ("한국어", &["한국", "국어"]),
            ("カタカナ", &["カタ", "タカ", "カナ"]),
            ("字字字", &["字字", "字字"]),
            // A 4-byte character (Extension B).
            ("\u{20000}字", &["\u{20000}字"]),
            ("\u{20000}字\u{20001}", &["\u{20000}字", "字\u{20001}"]),
            // A combining mark in a CJK run is one of its characters.
            ("字\u{301}", &["字\u{301}"]),
            ("字\u{301}字", &["字\u{301}", "\u{301}字"]),
        ];
        for &(run, expected) in cases {
            assert_eq!(cjk_tokens(run), expected, "cjk_tokens({run:?})");
        }
    }
}
