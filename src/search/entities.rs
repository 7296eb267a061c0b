//! Query entities (SPEC §5.4): explicit `--entity` names, capitalized query words, and lookup
//! candidates (words and sampled CJK substrings) kept when some live record names them; and
//! whether an entity occurs in a record.
//!
//! ```
//! use reliora::internals::search::entities::{occurs_in, query_entities};
//! use reliora::internals::search::settings::EntitySettings;
//!
//! let known = |name: &str| Ok::<_, reliora::Error>(name == "sqlx");
//! let entities =
//!     query_entities("PoolTimedOut from sqlx in Tokio", &[], &EntitySettings::default(), known)
//!         .unwrap();
//! assert_eq!(entities, ["PoolTimedOut", "Tokio", "sqlx"]);
//! assert!(occurs_in("rust", &[], "use rust-analyzer"));
//! assert!(!occurs_in("rust", &[], "trust rustls"));
//! ```

use std::collections::HashSet;

use crate::settings::EntitySettings;
use crate::text::{contains_cjk, is_cjk_char, is_stop_word, MAX_TOKEN_CHARS};

/// The shortest CJK substring the lookup sampler tries.
const MIN_SUBSTRING_CHARS: usize = 2;

fn trim_word(word: &str) -> &str {
    word.trim_matches(|c: char| !c.is_alphanumeric())
}

/// (a) Capitalized query words: whitespace-separated words trimmed of non-alphanumeric
/// characters at both ends, whose first character is uppercase, minus stop words, at most `max`
/// distinct (case-insensitively), in query order.
pub fn capitalized_words(query: &str, max: usize) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for word in query.split_whitespace().map(trim_word) {
        if out.len() >= max {
            break;
        }
        let Some(first) = word.chars().next() else {
            continue;
        };
        let lower = word.to_lowercase();
        if first.is_uppercase() && !is_stop_word(&lower) && seen.insert(lower) {
            out.push(word.to_string());
        }
    }
    out
}

/// (b) Lookup candidates, exactly as SPEC §11 samples them: the query's words (trimmed,
/// lowercased, empty ones dropped, repeats and stop words kept, the first `max_lookup`), then,
/// when `contains_cjk(query)`, substrings of the query's CJK runs of 2 to
/// `max_substring_chars` characters: each length gets a fair share of the remaining quota
/// (lengths with fewer starts first, their unused share passing on), and start positions are
/// sampled evenly.
pub fn lookup_candidates(query: &str, s: &EntitySettings) -> Vec<String> {
    let mut out: Vec<String> = query
        .split_whitespace()
        .map(|w| trim_word(w).to_lowercase())
        .filter(|w| !w.is_empty())
        .take(s.max_lookup)
        .collect();
    if !contains_cjk(query) {
        return out;
    }
    let quota = s.max_lookup - out.len();
    let runs = cjk_runs(query);
    for (run, start, len) in sample_substrings(&runs, quota, s.max_substring_chars) {
        out.push(runs[run][start..start + len].iter().collect());
    }
    out
}

/// The maximal runs of CJK characters of `text` as given.
fn cjk_runs(text: &str) -> Vec<Vec<char>> {
    let mut runs: Vec<Vec<char>> = Vec::new();
    let mut current: Vec<char> = Vec::new();
    for c in text.chars() {
        if is_cjk_char(c) {
            current.push(c);
        } else if !current.is_empty() {
            runs.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs
}

/// The sampled substrings as (run, start, length), lengths ascending, starts in run order.
///
/// `starts[L]` lists every (run, s) with `0 ≤ s ≤ len(run) − L`. The lengths that have starts
/// are visited by ascending `|starts[L]|` (ties: smaller L), each given
/// `share[L] = min(|starts[L]|, ⌊quota_left / lengths_left⌋)`; then each length takes
/// `starts[L][⌊j × (m − 1) / (k − 1)⌋]` for `j = 0..k` (all when k ≥ m, the first when k = 1).
pub fn sample_substrings(
    runs: &[Vec<char>],
    quota: usize,
    max_len: usize,
) -> Vec<(usize, usize, usize)> {
    let lengths: Vec<(usize, Vec<(usize, usize)>)> = (MIN_SUBSTRING_CHARS..=max_len)
        .map(|len| {
            let starts: Vec<(usize, usize)> = runs
                .iter()
                .enumerate()
                .filter(|(_, run)| run.len() >= len)
                .flat_map(|(r, run)| (0..=run.len() - len).map(move |s| (r, s)))
                .collect();
            (len, starts)
        })
        .filter(|(_, starts)| !starts.is_empty())
        .collect();
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| (lengths[i].1.len(), lengths[i].0));
    let mut shares = vec![0usize; lengths.len()];
    let mut quota_left = quota;
    for (visited, &i) in order.iter().enumerate() {
        let lengths_left = order.len() - visited;
        let share = lengths[i].1.len().min(quota_left / lengths_left);
        shares[i] = share;
        quota_left -= share;
    }
    let mut out = Vec::new();
    for ((len, starts), k) in lengths.iter().zip(shares) {
        for index in even_sample(starts.len(), k) {
            let (run, start) = starts[index];
            out.push((run, start, *len));
        }
    }
    out
}

/// `k` indices spread evenly over `0..m`: `⌊j × (m − 1) / (k − 1)⌋` for `j = 0..k`; all of
/// them when `k ≥ m`, the first when `k = 1`, none when `k = 0`.
pub fn even_sample(m: usize, k: usize) -> Vec<usize> {
    match k {
        0 => Vec::new(),
        _ if k >= m => (0..m).collect(),
        1 => vec![0],
        _ => (0..k).map(|j| j * (m - 1) / (k - 1)).collect(),
    }
}

/// The query entities: the explicit ones when any is given, else the capitalized words and
/// the lookup candidates that `known` (lowercase name → some live record names it) accepts;
/// deduplicated case-insensitively, first spelling kept.
pub fn query_entities<E>(
    query: &str,
    explicit: &[String],
    s: &EntitySettings,
    mut known: impl FnMut(&str) -> Result<bool, E>,
) -> Result<Vec<String>, E> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    if !explicit.is_empty() {
        for name in explicit {
            if seen.insert(name.to_lowercase()) {
                out.push(name.clone());
            }
        }
        return Ok(out);
    }
    for word in capitalized_words(query, s.max_capitalized) {
        if seen.insert(word.to_lowercase()) {
            out.push(word);
        }
    }
    for candidate in lookup_candidates(query, s) {
        if !seen.contains(&candidate) && known(&candidate)? {
            seen.insert(candidate.clone());
            out.push(candidate);
        }
    }
    Ok(out)
}

/// Whether `entity` occurs in a record with these `entities` and this lowercased `content`:
/// it equals one of the entities case-insensitively, or occurs in the content with no
/// alphanumeric character just before or after it — or anywhere, when it is all CJK.
pub fn occurs_in(entity: &str, record_entities: &[String], content_lower: &str) -> bool {
    let needle = entity.to_lowercase();
    !needle.is_empty() && (names(record_entities, &needle) || in_content(&needle, content_lower))
}

/// Whether any of `entities` occurs in a record with these `entities` ([`occurs_in`]), its
/// content given as the parts that [`Record::content`](crate::record::Record::content) joins
/// with `\n`; the parts are read only when no entity equals one of the record's.
///
/// The content is searched part by part, each part lowercased alone: lowercasing is the same
/// within the joined content (its one rule that looks at neighbours, a final capital sigma,
/// sees the newline between parts as it sees a part's end: neither is cased), the newline is a
/// boundary as a part's end is, and an entity without a newline occurs within one part.
pub fn any_occurs_in<'c, P>(
    entities: &[String],
    record_entities: &[String],
    parts: impl FnOnce() -> P,
) -> bool
where
    P: Iterator<Item = &'c str>,
{
    Needles::new(entities).occur_in(record_entities, parts)
}

/// The query's entities as [`any_occurs_in`] looks for them: lowercased, the empty ones
/// dropped, each with its substring searcher. Made once per query and asked of every
/// candidate, so that a candidate costs no allocation for them.
pub struct Needles {
    needles: Vec<(String, memchr::memmem::Finder<'static>)>,
    /// Whether a needle holds a newline, and so may span parts.
    spans_parts: bool,
}

impl Needles {
    pub fn new(entities: &[String]) -> Needles {
        let needles: Vec<(String, memchr::memmem::Finder<'static>)> = entities
            .iter()
            .map(|e| e.to_lowercase())
            .filter(|needle| !needle.is_empty())
            .map(|needle| {
                let finder = memchr::memmem::Finder::new(needle.as_bytes()).into_owned();
                (needle, finder)
            })
            .collect();
        let spans_parts = needles.iter().any(|(needle, _)| needle.contains('\n'));
        Needles {
            needles,
            spans_parts,
        }
    }

    /// Whether there is no needle: no record holds one.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// Whether one of the needles occurs in a record with these `entities` and these content
    /// `parts` ([`any_occurs_in`]).
    pub fn occur_in<'c, E, P>(&self, record_entities: &[E], parts: impl FnOnce() -> P) -> bool
    where
        E: AsRef<str>,
        P: Iterator<Item = &'c str>,
    {
        if self.needles.is_empty() {
            return false;
        }
        if (self.needles.iter()).any(|(needle, _)| names(record_entities, needle)) {
            return true;
        }
        let mut parts = parts();
        if self.spans_parts {
            let content_lower = parts.collect::<Vec<_>>().join("\n").to_lowercase();
            return (self.needles.iter())
                .any(|(needle, finder)| in_content_with(needle, finder, &content_lower));
        }
        let mut part_lower = String::new();
        parts.any(|part| {
            lowercase_into(part, &mut part_lower);
            (self.needles.iter())
                .any(|(needle, finder)| in_content_with(needle, finder, &part_lower))
        })
    }
}

/// `text.to_lowercase()` into `out` (cleared first), without allocating for ASCII text.
fn lowercase_into(text: &str, out: &mut String) {
    out.clear();
    if text.is_ascii() {
        out.push_str(text);
        out.make_ascii_lowercase();
    } else {
        out.push_str(&text.to_lowercase());
    }
}

/// The words of `needle` (lowercased) that every record it occurs in must hold as terms, when
/// the postings can tell: the maximal runs of ASCII letters and digits of an ASCII needle
/// without a newline, each at most [`MAX_TOKEN_CHARS`] long; `None` otherwise (or when it has
/// none).
///
/// Where the needle occurs in a part's lowercased text with no alphanumeric character around
/// it, each such run is bounded by non-alphanumeric characters, and the characters of the
/// part that gave it lowercase to ASCII one for one. Tokenizing the part (NFC, then lowercase,
/// then runs) leaves them as they are, and a run of the tokenizer can only reach beyond them
/// through a non-ASCII character: a combining mark after them or after the character before
/// them (NFC may compose it into a letter), or U+0307 from lowercasing `İ`. So a record whose
/// terms are all ASCII and shorter than [`MAX_TOKEN_CHARS`] (no run was cut) holds every run
/// of the needle as a term (see `Segment::irregular`). Not with stemming, where a term is a
/// stem.
///
/// ```
/// use reliora::internals::search::entities::plain_words;
///
/// assert_eq!(plain_words("tokio"), Some(vec!["tokio"]));
/// assert_eq!(plain_words("rust-analyzer"), Some(vec!["rust", "analyzer"]));
/// assert_eq!(plain_words("c++"), Some(vec!["c"]));
/// assert_eq!(plain_words("müller"), None);
/// assert_eq!(plain_words("++"), None);
/// ```
pub fn plain_words(needle: &str) -> Option<Vec<&str>> {
    if !needle.is_ascii() || needle.contains('\n') {
        return None;
    }
    let words: Vec<&str> = needle
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect();
    let plain = !words.is_empty() && words.iter().all(|word| word.len() < MAX_TOKEN_CHARS);
    plain.then_some(words)
}

/// Whether one of `record_entities` is `needle` (lowercased) case-insensitively.
fn names<E: AsRef<str>>(record_entities: &[E], needle: &str) -> bool {
    record_entities.iter().any(|e| {
        let e = e.as_ref();
        // An ASCII name lowercases to ASCII, byte for byte; `needle` is lowercased already.
        if e.is_ascii() {
            e.eq_ignore_ascii_case(needle)
        } else {
            e.to_lowercase() == needle
        }
    })
}

/// Whether `needle` (lowercased, not empty) occurs in `content_lower` with no alphanumeric
/// character just before or after it — or anywhere, when it is all CJK.
fn in_content(needle: &str, content_lower: &str) -> bool {
    in_content_with(
        needle,
        &memchr::memmem::Finder::new(needle.as_bytes()),
        content_lower,
    )
}

/// [`in_content`] with `needle`'s searcher made already.
fn in_content_with(needle: &str, finder: &memchr::memmem::Finder<'_>, content_lower: &str) -> bool {
    if needle.chars().all(is_cjk_char) {
        return content_lower.contains(needle);
    }
    let mut from = 0;
    // A match of valid UTF-8 in valid UTF-8 begins and ends on character boundaries.
    while let Some(found) = finder.find(&content_lower.as_bytes()[from..]) {
        let at = from + found;
        let end = at + needle.len();
        let before = content_lower[..at].chars().next_back();
        let after = content_lower[end..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return true;
        }
        from = at + content_lower[at..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s() -> EntitySettings {
        EntitySettings::default()
    }

    #[test]
    fn capitalized_words_table() {
        let cases: [(&str, &[&str]); 7] = [
            ("Tokio panics in Axum", &["Tokio", "Axum"]),
            ("The Rust compiler", &["Rust"]), // "The" is a stop word
            ("(PostgreSQL), «Redis»!", &["PostgreSQL", "Redis"]),
            ("rust RUST Rust", &["RUST"]), // one per word, case-insensitively
            ("Élan über Ökonomie", &["Élan", "Ökonomie"]),
            ("... 42 Go", &["Go"]),
            // "a", "d" and "i" are stop words.
            ("A B C D E F G H I J", &["B", "C", "E", "F", "G", "H", "J"]),
        ];
        for (query, expected) in cases {
            assert_eq!(capitalized_words(query, 8), expected, "{query}");
        }
    }

    #[test]
    fn capitalized_words_cap_at_eight_distinct() {
        let query = "Aa Bb Aa Cc Dd Ee Ff Gg Hh Ii Jj";
        assert_eq!(
            capitalized_words(query, 8),
            ["Aa", "Bb", "Cc", "Dd", "Ee", "Ff", "Gg", "Hh"]
        );
        assert_eq!(capitalized_words(query, 2), ["Aa", "Bb"]);
    }

    #[test]
    fn lookup_words_keep_repeats_and_stop_words() {
        assert_eq!(
            lookup_candidates("The sqlx, THE (sqlx) --", &s()),
            ["the", "sqlx", "the", "sqlx"]
        );
        let many: String = (0..70).map(|i| format!("w{i} ")).collect();
        let got = lookup_candidates(&many, &s());
        assert_eq!(got.len(), 64);
        assert_eq!(got[63], "w63");
    }

    #[test]
    fn even_sample_table() {
        let cases: [(usize, usize, &[usize]); 7] = [
            (10, 0, &[]),
            (10, 1, &[0]),
            (10, 2, &[0, 9]),
            (10, 3, &[0, 4, 9]),
            (10, 4, &[0, 3, 6, 9]),
            (3, 5, &[0, 1, 2]),
            (5, 5, &[0, 1, 2, 3, 4]),
        ];
        for (m, k, expected) in cases {
            assert_eq!(even_sample(m, k), expected, "m {m} k {k}");
        }
    }

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn a_short_run_gives_every_substring() {
        // One run of 4: starts[2] = 3, starts[3] = 2, starts[4] = 1; quota is ample.
        let runs = vec![chars("数据库连")];
        let got = sample_substrings(&runs, 60, 8);
        assert_eq!(
            got,
            [
                (0, 0, 2),
                (0, 1, 2),
                (0, 2, 2),
                (0, 0, 3),
                (0, 1, 3),
                (0, 0, 4)
            ]
        );
    }

    #[test]
    fn shares_are_fair_and_unused_quota_passes_on() {
        // One run of 30 characters: lengths 2..8 have 29..23 starts. Quota 14 over 7 lengths:
        // visited by ascending starts (L = 8 first), each gets ⌊left / lengths_left⌋ = 2.
        let runs = vec![chars(&"数".repeat(30))];
        let got = sample_substrings(&runs, 14, 8);
        for len in 2..=8 {
            let starts: Vec<usize> = got
                .iter()
                .filter(|(_, _, l)| *l == len)
                .map(|(_, s, _)| *s)
                .collect();
            // First and last valid starts.
            assert_eq!(starts, [0, 30 - len], "length {len}");
        }
        // Quota 10 over 7 lengths: L=8 gets ⌊10/7⌋ = 1, L=7 ⌊9/6⌋ = 1, L=6 ⌊8/5⌋ = 1,
        // L=5 ⌊7/4⌋ = 1, L=4 ⌊6/3⌋ = 2, L=3 ⌊4/2⌋ = 2, L=2 ⌊2/1⌋ = 2.
        let got = sample_substrings(&runs, 10, 8);
        let count = |len| got.iter().filter(|(_, _, l)| *l == len).count();
        let counts: Vec<usize> = (2..=8).map(count).collect();
        assert_eq!(counts, [2, 2, 2, 1, 1, 1, 1]);
        assert_eq!(got.len(), 10);
        // A quota of one: ⌊1/7⌋ = … = ⌊1/2⌋ = 0 for the six lengths visited first; the last
        // visited (L = 2, the most starts) gets ⌊1/1⌋ = 1: its first start.
        assert_eq!(sample_substrings(&runs, 1, 8), [(0, 0, 2)]);
    }

    #[test]
    fn short_runs_leave_quota_to_long_lengths() {
        // Runs of 2 and 9 characters. starts[2] = 1 + 8 = 9, starts[3..=8] = 7, 6, 5, 4, 3, 2.
        // Quota 21, 7 lengths: L=8 (2 starts) takes min(2, 3) = 2, leaving 19 over 6: L=7
        // (3) takes 3, 16/5 → L=6 (4) takes 3, 13/4 → L=5 (5) takes 3, 10/3 → L=4 (6) takes
        // 3, 7/2 → L=3 (7) takes 3, 4/1 → L=2 (9) takes 4.
        let runs = vec![chars("甲乙"), chars("一二三四五六七八九")];
        let got = sample_substrings(&runs, 21, 8);
        let count = |len| got.iter().filter(|(_, _, l)| *l == len).count();
        let counts: Vec<usize> = (2..=8).map(count).collect();
        assert_eq!(counts, [4, 3, 3, 3, 3, 3, 2]);
        // Length 2 samples ⌊j × 8 / 3⌋ of its 9 starts: 0, 2, 5, 8 → (0,0), (1,1), (1,4), (1,7).
        let two: Vec<(usize, usize, usize)> =
            got.iter().copied().filter(|(_, _, l)| *l == 2).collect();
        assert_eq!(two, [(0, 0, 2), (1, 1, 2), (1, 4, 2), (1, 7, 2)]);
    }

    #[test]
    fn lookup_cjk_only_when_the_query_is_mostly_cjk() {
        // 16 CJK characters of 20 (> 15%): substrings are sampled.
        let got = lookup_candidates("数据库连接 失败 sqlx", &s());
        assert_eq!(&got[..3], ["数据库连接", "失败", "sqlx"]);
        assert!(got.contains(&"数据".to_string()));
        assert!(got.contains(&"数据库连接".to_string()));
        assert!(got.len() <= 64);
        // One CJK character in a long latin query (≤ 15%): only the nine words.
        let got = lookup_candidates("a long latin query with one 字 in it", &s());
        assert_eq!(got.len(), 9);
    }

    #[test]
    fn lookup_candidates_never_exceed_the_cap() {
        let query = format!("{} {}", "词".repeat(200), "w ".repeat(10));
        let got = lookup_candidates(&query, &s());
        assert_eq!(got.len(), 64);
        assert_eq!(got.iter().filter(|w| *w == "w").count(), 10);
    }

    #[test]
    fn explicit_entities_replace_words_and_lookups() {
        let known = |_: &str| Ok::<_, ()>(true);
        let got = query_entities(
            "Tokio sqlx",
            &["Axum".into(), "axum".into(), "Tower".into()],
            &s(),
            known,
        )
        .unwrap();
        assert_eq!(got, ["Axum", "Tower"]);
    }

    #[test]
    fn lookups_are_kept_only_when_known_and_deduplicated() {
        let known = |name: &str| Ok::<_, ()>(matches!(name, "tokio" | "sqlx" | "数据库"));
        let got = query_entities("Tokio and sqlx 数据库连接", &[], &s(), known).unwrap();
        // "Tokio" (capitalized) already covers "tokio"; "sqlx" and "数据库" are looked up.
        assert_eq!(got, ["Tokio", "sqlx", "数据库"]);
    }

    proptest::proptest! {
        /// Searched part by part, the content gives the answer the joined, lowercased content
        /// gives: with capital and final sigmas, a capital I with a dot (lowercased to two
        /// characters, the second a combining mark), combining marks, CJK, newlines inside
        /// parts and in entities.
        #[test]
        fn parts_answer_as_the_joined_content(
            parts in proptest::collection::vec("[aAxΣσςİiI\u{301}数据 .\n-]{0,10}", 0..5),
            entities in proptest::collection::vec("[aAxΣσςİi\u{301}数据 .\n-]{1,4}", 1..3),
        ) {
            let parts: Vec<&str> = parts.iter().map(String::as_str).filter(|p| !p.is_empty()).collect();
            let content_lower = parts.join("\n").to_lowercase();
            let expected = entities.iter().any(|e| occurs_in(e, &[], &content_lower));
            proptest::prop_assert_eq!(
                any_occurs_in(&entities, &[], || parts.iter().copied()),
                expected
            );
        }
    }

    #[test]
    fn a_final_sigma_at_a_parts_end_lowercases_as_in_the_joined_content() {
        // "ΟΔΟΣ" ends a word: its sigma lowercases to "ς", in the part as in the joined content.
        let parts = ["ΟΔΟΣ", "ΣΑ"];
        assert!(any_occurs_in(&["οδος".into()], &[], || parts
            .iter()
            .copied()));
        assert!(!any_occurs_in(&["οδοσ".into()], &[], || parts
            .iter()
            .copied()));
        // An entity across parts occurs only through the newline that joins them.
        assert!(any_occurs_in(&["οδος\nσα".into()], &[], || parts
            .iter()
            .copied()));
        assert!(!any_occurs_in(&["οδος σα".into()], &[], || parts
            .iter()
            .copied()));
    }

    #[test]
    fn occurrence_table() {
        let entities = vec!["PostgreSQL".to_string()];
        let cases = [
            ("rust", "use rust-analyzer here", true),
            ("rust", "trust me", false),
            ("rust", "rustls", false),
            ("rust", "rust", true),
            ("rust", "trust rust", true),    // a later occurrence passes
            ("rust", "rust_x", true),        // '_' is not alphanumeric: a boundary
            ("postgresql", "nothing", true), // equals a record entity
            ("Rust", "learn rust.", true),   // case-insensitive
            ("c++", "c++ templates", true),
            ("数据库", "连接数据库失败", true), // all-CJK: a plain substring
            ("rust编程", "学rust编程", false),  // not all CJK: '学' is alphanumeric
            ("rust编程", "学 rust编程!", true),
            ("", "anything", false),
        ];
        for (entity, content, expected) in cases {
            let lower = content.to_lowercase();
            assert_eq!(
                occurs_in(entity, &entities, &lower),
                expected,
                "{entity:?} in {content:?}"
            );
            // Alone and beside an entity found nowhere, through `any_occurs_in`.
            for asked in [
                vec![entity.to_string()],
                vec!["zzz".into(), entity.to_string()],
            ] {
                let any = any_occurs_in(&asked, &entities, || std::iter::once(content));
                assert_eq!(any, expected, "{asked:?} in {content:?}");
            }
        }
        // The content is read only when no entity equals one of the record's.
        let unread = || -> std::iter::Empty<&str> { panic!("the content was read") };
        assert!(any_occurs_in(
            &["zzz".into(), "POSTGRESQL".into()],
            &entities,
            unread
        ));
        assert!(!any_occurs_in(&["".into()], &entities, unread));
        assert!(!any_occurs_in(&[], &entities, unread));
        // Lowercased before it is searched.
        assert!(any_occurs_in(&["rust".into()], &[], || std::iter::once(
            "Learn RUST."
        )));
    }
}
