//! CJK detection and analyzer routing (SPEC 2.1).
//!
//! Both ratios are counted in characters (Rust `char`s) on the text exactly as given, before
//! normalization, and both thresholds are strict: "more than 15%". They are compared in integer
//! arithmetic (`20 × part > 3 × whole`) so that a ratio of exactly 15% is never rounded over.

use super::Analyzer;

/// The inclusive code point ranges of SPEC 2.1, in ascending order.
const CJK_RANGES: &[(u32, u32)] = &[
    (0x3005, 0x3007),   // ideographic iteration mark, closing mark, number zero
    (0x3021, 0x3029),   // Hangzhou numerals
    (0x3031, 0x3035),   // vertical kana repeat marks
    (0x3040, 0x309F),   // Hiragana
    (0x30A0, 0x30FF),   // Katakana
    (0x31F0, 0x31FF),   // Katakana phonetic extensions
    (0x3400, 0x4DBF),   // CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),   // CJK Unified Ideographs
    (0xAC00, 0xD7AF),   // Hangul syllables
    (0xF900, 0xFAFF),   // CJK compatibility ideographs
    (0xFF66, 0xFF9F),   // halfwidth Katakana
    (0x20000, 0x2A6DF), // Extension B
    (0x2A700, 0x2EE5F), // Extensions C–F and I
    (0x30000, 0x323AF), // Extensions G–H
];

/// The first code point of [`CJK_RANGES`]; everything below it (ASCII, Latin, Greek, …) is
/// rejected with one comparison.
const FIRST_CJK_CODE_POINT: u32 = 0x3005;

/// Returns true when `c` lies in one of the CJK ranges of SPEC 2.1.
///
/// The ranges are taken as written, whole blocks included: an unassigned code point or a
/// punctuation mark inside a listed block (such as U+30FB KATAKANA MIDDLE DOT) is a CJK
/// character too. Tokenization only looks at the CJK-ness of alphanumeric characters and
/// combining marks, so such punctuation still separates tokens.
///
/// ```
/// # use reliora::text::is_cjk_char;
/// assert!(is_cjk_char('語'));
/// assert!(is_cjk_char('한'));
/// assert!(!is_cjk_char('a'));
/// ```
pub fn is_cjk_char(c: char) -> bool {
    let code = c as u32;
    code >= FIRST_CJK_CODE_POINT
        && CJK_RANGES
            .iter()
            .any(|&(first, last)| (first..=last).contains(&code))
}

/// Returns true when CJK characters ([`is_cjk_char`]) are more than 15% of all the characters
/// of `text`, counted on the text as given (whitespace and punctuation included, SPEC 11).
///
/// An empty text contains no CJK.
///
/// ```
/// # use reliora::text::contains_cjk;
/// assert!(contains_cjk("rust 编程"));
/// assert!(!contains_cjk("a long English sentence with one 字"));
/// ```
pub fn contains_cjk(text: &str) -> bool {
    let (mut cjk, mut total) = (0usize, 0usize);
    for c in text.chars() {
        total += 1;
        cjk += usize::from(is_cjk_char(c));
    }
    more_than_15_percent(cjk, total)
}

/// Returns true when more than 15% of the alphabetic characters (`char::is_alphabetic`) of
/// `text`, counted on the text as given, are non-ASCII.
///
/// Digits, punctuation and whitespace do not count, so `"Müller"`, `"Müller?"` and
/// `"Müller!!!"` route alike; a text without alphabetic characters does not need the
/// multilingual analyzer.
///
/// ```
/// # use reliora::text::needs_multilingual;
/// assert!(needs_multilingual("Müller"));
/// assert!(!needs_multilingual("Mueller"));
/// assert!(!needs_multilingual("42 !!"));
/// ```
pub fn needs_multilingual(text: &str) -> bool {
    let (mut non_ascii, mut alphabetic) = (0usize, 0usize);
    for c in text.chars() {
        if c.is_alphabetic() {
            alphabetic += 1;
            non_ascii += usize::from(!c.is_ascii());
        }
    }
    more_than_15_percent(non_ascii, alphabetic)
}

/// Chooses the analyzer for `text` on its own (SPEC 2.1): [`Analyzer::Multilingual`] when
/// [`needs_multilingual`] holds, else [`Analyzer::English`].
///
/// ```
/// # use reliora::text::{route, Analyzer};
/// assert_eq!(route("how to fix the borrow checker"), Analyzer::English);
/// assert_eq!(route("Straße gesperrt"), Analyzer::English); // 1 of 14 letters: 7%
/// assert_eq!(route("Größenänderung"), Analyzer::Multilingual); // 3 of 14 letters: 21%
/// assert_eq!(route("借用チェッカー"), Analyzer::Multilingual);
/// ```
pub fn route(text: &str) -> Analyzer {
    if needs_multilingual(text) {
        Analyzer::Multilingual
    } else {
        Analyzer::English
    }
}

/// `part / whole > 15%`, exactly, in integers. False when `whole` is 0.
fn more_than_15_percent(part: usize, whole: usize) -> bool {
    // part / whole > 3 / 20  <=>  20 * part > 3 * whole (whole > 0). Counts are bounded by the
    // text length in bytes, far below usize::MAX / 20.
    part * 20 > whole * 3
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Converts a code point known to be a scalar value.
    fn ch(code: u32) -> char {
        char::from_u32(code).expect("test code points are scalar values")
    }

    #[test]
    fn ranges_are_sorted_and_disjoint() {
        assert_eq!(CJK_RANGES[0].0, FIRST_CJK_CODE_POINT);
        for &(first, last) in CJK_RANGES {
            assert!(first <= last);
        }
        for pair in CJK_RANGES.windows(2) {
            assert!(pair[0].1 < pair[1].0, "{pair:x?}");
        }
    }

    #[test]
    fn every_range_boundary_is_exact() {
        // For each range: its first and last code points are CJK, the code points just outside
        // are not, unless they belong to an adjacent range (Hiragana and Katakana touch).
        for &(first, last) in CJK_RANGES {
            assert!(is_cjk_char(ch(first)), "U+{first:04X}");
            assert!(is_cjk_char(ch(last)), "U+{last:04X}");
            let before = first - 1;
            let after = last + 1;
            let in_other_range =
                |code: u32| CJK_RANGES.iter().any(|&(f, l)| (f..=l).contains(&code));
            assert_eq!(
                is_cjk_char(ch(before)),
                in_other_range(before),
                "U+{before:04X}"
            );
            assert_eq!(
                is_cjk_char(ch(after)),
                in_other_range(after),
                "U+{after:04X}"
            );
        }
    }

    #[test]
    fn is_cjk_char_table() {
        let cases: &[(u32, bool)] = &[
            // Iteration marks, 3005–3007.
            (0x3004, false),
            (0x3005, true), // 々
            (0x3007, true), // 〇
            (0x3008, false),
            // Hangzhou numerals, 3021–3029.
            (0x3020, false),
            (0x3021, true),
            (0x3029, true),
            (0x302A, false),
            // Kana repeat marks, 3031–3035.
            (0x3030, false),
            (0x3031, true),
            (0x3035, true),
            (0x3036, false),
            // Hiragana and Katakana, 3040–30FF without a gap.
            (0x303F, false),
            (0x3040, true),
            (0x3042, true), // あ
            (0x309F, true),
            (0x30A0, true),
            (0x30AB, true), // カ
            (0x30FF, true),
            (0x3100, false), // Bopomofo
            // Katakana phonetic extensions, 31F0–31FF.
            (0x31EF, false),
            (0x31F0, true),
            (0x31FF, true),
            (0x3200, false),
            // Extension A, 3400–4DBF.
            (0x33FF, false),
            (0x3400, true),
            (0x4DBF, true),
            (0x4DC0, false), // Yijing hexagram symbols
            // Unified, 4E00–9FFF.
            (0x4DFF, false),
            (0x4E00, true), // 一
            (0x9FFF, true),
            (0xA000, false), // Yi
            // Hangul syllables, AC00–D7AF.
            (0xABFF, false),
            (0xAC00, true), // 가
            (0xD7A3, true), // 힣, last assigned syllable
            (0xD7AF, true),
            (0xD7B0, false), // Hangul Jamo Extended-B
            // Compatibility ideographs, F900–FAFF.
            (0xF8FF, false),
            (0xF900, true),
            (0xFAFF, true),
            (0xFB00, false),
            // Halfwidth Katakana, FF66–FF9F.
            (0xFF65, false), // halfwidth middle dot
            (0xFF66, true),
            (0xFF9F, true),
            (0xFFA0, false), // halfwidth Hangul filler
            // Extension B, 20000–2A6DF.
            (0x1FFFF, false),
            (0x20000, true),
            (0x2A6DF, true),
            (0x2A6E0, false),
            // Extensions C–F, I: 2A700–2EE5F.
            (0x2A6FF, false),
            (0x2A700, true),
            (0x2EE5F, true),
            (0x2EE60, false),
            // Extensions G–H, 30000–323AF.
            (0x2FFFF, false),
            (0x30000, true),
            (0x323AF, true),
            (0x323B0, false),
            // Clearly outside.
            (0x0000, false),
            (u32::from('a'), false),
            (u32::from('é'), false),
            (u32::from('Σ'), false),
            (0x3000, false), // ideographic space
            (0x3001, false), // ideographic comma
            (0x1100, false), // Hangul Jamo are not in the list
            (0x10FFFF, false),
        ];
        for &(code, expected) in cases {
            assert_eq!(is_cjk_char(ch(code)), expected, "U+{code:04X}");
        }
    }

    #[test]
    fn contains_cjk_table() {
        let cases: &[(&str, bool)] = &[
            ("", false),
            ("hello", false),
            ("字", true),
            ("编程语言", true),
            ("rust编程语言", true),
            ("한국어", true),
            ("カタカナ", true),
            // Exactly at the threshold: 3 of 20 characters is 15%, not more.
            ("字字字aaaaaaaaaaaaaaaaa", false),
            // 4 of 20 is 20%.
            ("字字字字aaaaaaaaaaaaaaaa", true),
            // 3 of 19 is 15.8%.
            ("字字字aaaaaaaaaaaaaaaa", true),
            // 3 of 21 is 14.3%.
            ("字字字aaaaaaaaaaaaaaaaaa", false),
            // Whitespace and punctuation count (SPEC 11): 3 of 20 again.
            ("字字字 . , ! ? - aaaaaa", false),
            ("字字字 . , ! ? - aaaaa", true),
            // Counted as given, in characters: "e\u{301}" is two characters, not NFC's one.
            // 1 CJK of 7 chars = 14.3%; after NFC it would be 1 of 6 = 16.7%.
            ("字e\u{301}e\u{301}e\u{301}", false),
            ("字ééé", true),
            // A 3-byte CJK character counts once, not three times.
            ("字abcdefghi", false),
        ];
        for &(text, expected) in cases {
            assert_eq!(contains_cjk(text), expected, "contains_cjk({text:?})");
        }
    }

    #[test]
    fn needs_multilingual_table() {
        let cases: &[(&str, bool)] = &[
            ("", false),
            ("   ", false),
            ("42 + 7 = 49 !!!", false),
            ("how to fix the borrow checker", false),
            ("Müller", true),
            ("Müller?", true),
            ("Müller!!!", true),
            ("Müller 2024 ...", true),
            ("编程", true),
            ("한국어", true),
            ("Ελληνικά", true),
            // Exactly at the threshold: 3 non-ASCII of 20 letters is 15%, not more.
            ("äää aaaaa aaaaa aaaaaaa", false),
            // 4 of 20 is 20%.
            ("ääää aaaaa aaaaa aaaaaa", true),
            // 3 of 19 is 15.8%.
            ("äää aaaaa aaaaa aaaaaa", true),
            // Digits and punctuation never count: still 3 of 20.
            ("äää 1234567890 !!! aaaaa aaaaa aaaaaaa", false),
            // Non-ASCII digits and symbols are not alphabetic either.
            ("٣٤٥ € abc", false),
            // Counted as given: "e\u{301}" is one ASCII letter plus a combining mark that is
            // not alphabetic, so 0 of 5 letters are non-ASCII.
            ("cafe\u{301}", false),
            ("café", true),
        ];
        for &(text, expected) in cases {
            assert_eq!(
                needs_multilingual(text),
                expected,
                "needs_multilingual({text:?})"
            );
        }
    }

    #[test]
    fn route_table() {
        let cases: &[(&str, Analyzer)] = &[
            ("", Analyzer::English),
            ("!!!", Analyzer::English),
            ("rust borrow checker", Analyzer::English),
            ("Müller", Analyzer::Multilingual),
            ("Müller?", Analyzer::Multilingual),
            ("Müller!!!", Analyzer::Multilingual),
            ("rust编程语言", Analyzer::Multilingual),
            ("äää aaaaa aaaaa aaaaaaa", Analyzer::English),
            ("ääää aaaaa aaaaa aaaaaa", Analyzer::Multilingual),
        ];
        for &(text, expected) in cases {
            assert_eq!(route(text), expected, "route({text:?})");
        }
    }

    #[test]
    fn more_than_15_percent_table() {
        let cases: &[(usize, usize, bool)] = &[
            (0, 0, false),
            (0, 1, false),
            (1, 1, true),
            (3, 20, false),
            (4, 20, true),
            (15, 100, false),
            (16, 100, true),
            (150, 1000, false),
            (151, 1000, true),
        ];
        for &(part, whole, expected) in cases {
            assert_eq!(
                more_than_15_percent(part, whole),
                expected,
                "{part}/{whole}"
            );
        }
    }
}
