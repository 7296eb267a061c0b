//! The content prefix near-duplicate demotion compares (SPEC §6.2): lowercased, whitespace
//! collapsed, cut to a number of characters. Here, apart from the search, because the index
//! stores a fingerprint of each record's (`format/prefixes.rs`).

/// The content as MMR compares it: `str::to_lowercase`, runs of `char::is_whitespace`
/// collapsed to one space, trimmed, then its first `chars` characters.
///
/// Lowercased word by word, so that a long content is lowercased only as far as its prefix: a
/// word lowercases alone as it does within the text, since no character lowercases to or from
/// whitespace and the one rule that looks at a character's neighbours (a final capital sigma)
/// stops at whitespace.
pub fn content_prefix(content: &str, chars: usize) -> String {
    prefix_of_words(content.split_whitespace(), chars).0
}

/// [`content_prefix`] of these words, and whether it holds `chars` characters before the
/// cut: more words would not change it.
pub fn prefix_of_words<'w>(words: impl Iterator<Item = &'w str>, chars: usize) -> (String, bool) {
    let mut out = String::new();
    let mut count = 0; // the characters of `out`
    let mut enough = false;
    for (i, word) in words.enumerate() {
        if i > 0 {
            out.push(' ');
            count += 1;
        }
        if word.is_ascii() {
            // What `to_lowercase` gives an ASCII word, without a string of its own.
            let start = out.len();
            out.push_str(word);
            out[start..].make_ascii_lowercase();
            count += word.len();
        } else {
            let lower = word.to_lowercase();
            count += lower.chars().count();
            out.push_str(&lower);
        }
        if count >= chars {
            enough = true;
            break;
        }
    }
    if let Some((cut, _)) = out.char_indices().nth(chars) {
        out.truncate(cut);
    }
    (out, enough)
}
