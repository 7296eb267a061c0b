//! Property tests over arbitrary input (SPEC §9): the tokenizer, the query path, the record
//! parser and the index readers never panic, whatever the text or bytes. The same entry points
//! (`reliora::internals::fuzzing`) back the cargo-fuzz targets in `fuzz/` for longer runs.

// A test binary of its own (not in tests/integration/): its panic hook counts panics anywhere in
// the process, and the `fst` panics it provokes on purpose would count against the damage sweeps.
#[path = "integration/support.rs"]
mod support;

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;
use reliora::text::{self, TextAnalyzer};
use reliora::{Index, SearchRequest};

use support::*;

/// Arbitrary Unicode, biased towards the characters the analyzer treats specially.
fn unicode_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-zA-Z0-9 .,;:!?'\"\\-_/()\\[\\]{}]{0,80}",
        "[\\u{300}-\\u{36f}\\u{3040}-\\u{30ff}\\u{4e00}-\\u{4e2f}\\u{ac00}-\\u{ac0f}İıßẞ ﬁ\\u{feff}\\u{200b}a-z]{0,60}",
        prop::collection::vec(any::<char>(), 0..200).prop_map(|c| c.into_iter().collect()),
    ]
}

/// Panics anywhere in Reliora, counted by a hook even when something caught them. The one
/// exemption is the `fst` crate's own code walking a crafted FST (a valid checksum over
/// malformed bytes): the dictionary guards exactly those steps and reports damage.
static PANICS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn count_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let file = info.location().map_or("", |l| l.file());
            let in_fst = file.contains("/fst-0.");
            let in_tests = file.starts_with("tests") || file.contains("/proptest-");
            if !in_fst && !in_tests {
                PANICS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            default(info);
        }));
    });
}

fn assert_no_panics() {
    assert_eq!(
        PANICS.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "Reliora panicked (and something caught it)"
    );
}

/// The small index, built once for this test binary.
fn small_index() -> &'static (tempfile::TempDir, PathBuf) {
    static INDEX: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    count_panics();
    INDEX.get_or_init(|| {
        let dir = tempdir();
        let path = dir.path().join("index");
        build_small_index(&path);
        (dir, path)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_tokenizer_never_panics_and_keeps_its_bounds(input in unicode_text(), stem in any::<bool>()) {
        let analyzer = TextAnalyzer::new(stem);
        let routed = text::route(&input);
        for token in analyzer.tokens(&input, routed) {
            prop_assert!(!token.text.is_empty());
            if !token.cjk && !stem {
                prop_assert!(token.text.chars().count() <= 64, "{:?}", token.text);
            }
        }
        let mut tokens = Vec::new();
        analyzer.index_tokens(&input, &mut tokens);
        let words = text::words(&input);
        prop_assert_eq!(text::phrase(&input), words.join(" "));
    }

    #[test]
    fn the_query_path_never_panics_and_index_equals_scan(
        query in unicode_text(),
        limit in prop_oneof![Just(String::from("1")), Just(String::from("200")), Just(String::from("9999999999999999999999")), "[0-9]{1,3}"],
        tag in prop::option::of(unicode_text()),
        project in prop::option::of(unicode_text()),
    ) {
        let index = Index::open(&small_index().1).unwrap();
        let mut request = SearchRequest::new(query);
        let mut valid = request.set_option("now", Some(NOW)).is_ok();
        valid &= request.set_option("limit", Some(&limit)).is_ok();
        if let Some(tag) = &tag {
            valid &= request.set_option("tag", Some(tag)).is_ok();
        }
        if let Some(project) = &project {
            valid &= request.set_option("project-context", Some(project)).is_ok();
        }
        prop_assume!(valid);
        let by_index = index.search(&request);
        request.set_option("backend", Some("scan")).unwrap();
        let by_scan = index.search(&request);
        match (by_index, by_scan) {
            (Ok(a), Ok(b)) => prop_assert_eq!(comparable(&a), comparable(&b)),
            // A valid request fails only for a query without tokens.
            (Err(a), Err(b)) => {
                prop_assert_eq!(a.code(), reliora::ErrorCode::EmptyQuery, "{}", a);
                prop_assert_eq!(b.code(), reliora::ErrorCode::EmptyQuery, "{}", b);
            }
            (a, b) => prop_assert!(false, "index {:?} but scan {:?}", a.is_ok(), b.is_ok()),
        }
        assert_no_panics();
    }

    #[test]
    fn the_record_parser_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        reliora::internals::fuzzing::record_text(&bytes);
    }

    #[test]
    fn the_record_parser_never_panics_on_near_records(
        title in unicode_text(),
        key in prop_oneof![
            Just(String::from("tags")),
            Just(String::from("feedback")),
            Just(String::from("createdAt")),
            Just(String::from("confidence")),
            Just(String::from("id")),
            Just(String::from("supersedes")),
            "[a-zA-Z_]{1,12}",
        ],
        value in prop_oneof![
            Just(String::from("null")), Just(String::from("NaN")), Just(String::from("1e400")),
            Just(String::from("-0")), Just(String::from("18446744073709551616")),
            Just(String::from("{\"success\": 1.5}")), Just(String::from("[[]]")),
            Just(String::from("\"2025-02-29T24:00:00Z\"")), Just(String::from("\"\\ud800\"")),
            any::<i64>().prop_map(|n| n.to_string()), any::<f64>().prop_map(|x| format!("{x:?}")),
            unicode_text().prop_map(|s| serde_json::to_string(&s).unwrap()),
        ],
    ) {
        let text = format!("{{\"title\": {}, \"{key}\": {value}}}", serde_json::to_string(&title).unwrap());
        reliora::internals::fuzzing::record_text(text.as_bytes());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Arbitrary bytes in place of one index file, with and without valid checksums: opening,
    /// searching and checking never panic.
    #[test]
    fn index_readers_never_panic_on_arbitrary_files(
        which in 0usize..16,
        fix_checksums in any::<bool>(),
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..64),
            prop::collection::vec(any::<u8>(), 0..2048),
        ],
    ) {
        let work = tempdir();
        let dir = work.path().join("index");
        copy_dir(&small_index().1, &dir);
        reliora::internals::fuzzing::index_file(&dir, which, fix_checksums, &bytes);
        assert_no_panics();
    }

    /// Mutations of real files behind valid checksums: structured enough to get deep into the
    /// parsers (a few bytes changed, a slice removed or repeated).
    #[test]
    fn index_readers_never_panic_on_mutated_files(
        which in 0usize..16,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let work = tempdir();
        let dir = work.path().join("index");
        copy_dir(&small_index().1, &dir);
        let names = index_files(&dir);
        let name = &names[which % names.len()];
        let bytes = std::fs::read(dir.join(name)).unwrap();
        // The body: without the 24-byte footer, except for the log (no footer).
        let mut body = if name.ends_with(".log") { bytes } else { bytes[..bytes.len() - 24].to_vec() };
        if !body.is_empty() {
            for (at, value) in &edits {
                let at = at.index(body.len());
                body[at] = *value;
            }
            if truncate {
                body.truncate(cut.index(body.len()));
            }
        }
        reliora::internals::fuzzing::index_file(&dir, which % names.len(), true, &body);
        assert_no_panics();
    }
}
