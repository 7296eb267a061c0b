//! Step 1 of SPEC 2: Unicode NFC, then `str::to_lowercase` over the whole text.

use std::borrow::Cow;

use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// Normalizes `text` to NFC, then lowercases the whole of it with `str::to_lowercase`
/// (SPEC 2, step 1).
///
/// Lowercasing the whole text, not word by word, matters for the context-dependent Greek final
/// sigma: `"ΟΔΟΣ"` becomes `"οδος"`.
///
/// ASCII text is already NFC and lowercases byte by byte, so it takes a fast path that borrows
/// the input when it holds no uppercase letter. Non-ASCII text skips the NFC pass when a quick
/// check proves it is already NFC.
///
/// ```
/// # use reliora::text::normalize;
/// assert_eq!(normalize("Cafe\u{301}"), "café");
/// assert_eq!(normalize("already lowercase"), "already lowercase");
/// ```
pub fn normalize(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        if text.bytes().any(|byte| byte.is_ascii_uppercase()) {
            Cow::Owned(text.to_ascii_lowercase())
        } else {
            Cow::Borrowed(text)
        }
    } else if is_nfc_quick(text.chars()) == IsNormalized::Yes {
        Cow::Owned(text.to_lowercase())
    } else {
        let nfc: String = text.nfc().collect();
        Cow::Owned(nfc.to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_table() {
        let cases: &[(&str, &str)] = &[
            ("", ""),
            ("hello", "hello"),
            ("Hello WORLD 42", "hello world 42"),
            ("snake_case-ID", "snake_case-id"),
            // NFC: a decomposed sequence equals the precomposed character.
            ("e\u{301}", "é"),
            ("E\u{301}", "é"),
            ("A\u{30A}", "å"),
            ("\u{212B}", "å"), // ANGSTROM SIGN has a singleton NFC decomposition
            ("\u{212A}", "k"), // KELVIN SIGN likewise
            // NFC does not apply compatibility mappings.
            ("ﬁ", "ﬁ"),
            ("①", "①"),
            // Lowercase, non-ASCII.
            ("ÄÖÜ", "äöü"),
            ("Σ", "σ"),
            ("ΟΔΟΣ", "οδος"), // final sigma, decided on the whole text
            ("ΟΔΟΣ ΟΔΟΣ", "οδος οδος"),
            ("ΑΣ.Β", "ασ.β"), // not final: '.' is case-ignorable, a cased letter follows
            ("İ", "i\u{307}"),
            ("ẞ", "ß"),
            ("ǅ", "ǆ"),
            // Text without case passes through.
            ("编程语言", "编程语言"),
            ("한국어", "한국어"),
        ];
        for &(text, expected) in cases {
            assert_eq!(normalize(text), expected, "normalize({text:?})");
        }
    }

    #[test]
    fn nfc_is_applied_before_lowercasing() {
        // Lowercasing first would give the same letters here, but NFC must still compose them.
        assert_eq!(normalize("O\u{308}L"), "öl");
        assert_eq!(normalize("O\u{308}L").chars().count(), 2);
    }

    #[test]
    fn ascii_without_uppercase_is_borrowed() {
        assert!(matches!(normalize("plain ascii 123"), Cow::Borrowed(_)));
        assert!(matches!(normalize("Plain"), Cow::Owned(_)));
    }

    #[test]
    fn matches_the_reference_definition() {
        // The fast paths must agree with the plain definition: NFC, then str::to_lowercase.
        let texts = [
            "MiXeD ascii",
            "Ünïcödé Tëxt",
            "u\u{308}ber",
            "ΣΊΣΥΦΟΣ",
            "日本語テキスト",
            "a\u{30A}\u{301}B",
        ];
        for text in texts {
            let reference = text.nfc().collect::<String>().to_lowercase();
            assert_eq!(normalize(text), reference, "normalize({text:?})");
        }
    }
}
