//! Replays the checked-in fuzz corpus (`fuzz/corpus/<target>/`) and the crash regressions
//! (`fuzz/regressions/<target>/`) through the entry points the cargo-fuzz targets drive
//! (`reliora::internals::fuzzing`), so an ordinary `cargo test` runs what fuzzing found, without
//! cargo-fuzz. Every panic counts, even one something caught; the one exemption is the `fst`
//! crate's own code walking a crafted FST, which the dictionary guards and reports as damage.
//! A regression input fails this test until the bug it shows is fixed.

// A test binary of its own (not in tests/integration/): its panic hook counts every panic in the
// process but `fst` ones, other tests' failures included, and the `fst` panics it provokes on
// purpose would count against the damage sweeps.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The corpus files checked in per target: fewer replayed means the corpus went missing.
const MIN_CORPUS: [(&str, usize); 2] = [("record_parse", 348), ("index_open", 328)];

/// Panics seen by the hook: where, what, and which input was being replayed.
static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// The input being replayed, for the panic report.
static CURRENT: Mutex<String> = Mutex::new(String::new());

fn count_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let location = info
            .location()
            .map_or_else(String::new, |l| format!("{}:{}", l.file(), l.line()));
        // The guarded `fst` panics are expected on crafted FSTs: neither counted nor printed.
        if !location.contains("/fst-0.") {
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let input = CURRENT.lock().map(|c| c.clone()).unwrap_or_default();
            if let Ok(mut panics) = PANICS.lock() {
                panics.push(format!("{input}: panicked at {location}: {message}"));
            }
            default(info);
        }
    }));
}

/// The files of `dir`, in name order; none when it does not exist.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file());
    files.sort();
    files
}

/// Runs `target`'s entry point on `data`, a panic caught so that the replay goes on.
fn replay(target: &str, template: &Path, path: &Path, data: &[u8]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shown = path
        .strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string();
    *CURRENT.lock().unwrap() = shown;
    let _ = std::panic::catch_unwind(|| match target {
        "record_parse" => reliora::internals::fuzzing::record_text(data),
        "index_open" => {
            let work = tempfile::tempdir().expect("a temporary directory");
            reliora::internals::fuzzing::index_input(template, work.path(), data);
        }
        other => panic!("no entry point for fuzz target {other}"),
    });
}

#[test]
fn fuzz_corpus_and_regressions_replay_without_panics() {
    let started = std::time::Instant::now();
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let templates = tempfile::tempdir().expect("a temporary directory");
    let template = reliora::internals::fuzzing::template_index(templates.path());
    count_panics();
    let mut counts = Vec::new();
    for (target, min) in MIN_CORPUS {
        let corpus = inputs(&fuzz.join("corpus").join(target));
        let regressions = inputs(&fuzz.join("regressions").join(target));
        for path in corpus.iter().chain(&regressions) {
            let data = std::fs::read(path).expect("a corpus file");
            replay(target, &template, path, &data);
        }
        assert!(
            corpus.len() >= min,
            "fuzz/corpus/{target}/ holds {} files, fewer than the {min} checked in",
            corpus.len()
        );
        counts.push(format!(
            "{target} {} corpus + {} regressions",
            corpus.len(),
            regressions.len()
        ));
    }
    // Past the output capture, so that CI logs show what ran.
    let _ = writeln!(
        std::io::stderr(),
        "fuzz corpus replayed: {} in {:.1} s",
        counts.join(", "),
        started.elapsed().as_secs_f64()
    );
    // A copy: the hook locks the list again when the assertion below fails.
    let panics = PANICS.lock().unwrap().clone();
    assert!(
        panics.is_empty(),
        "{} panics replaying the fuzz inputs:\n{}",
        panics.len(),
        panics.join("\n")
    );
}
