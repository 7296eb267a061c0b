//! Arbitrary bytes in place of one file of a small index, with or without valid checksums,
//! then open, search, show, stats, export and check. The first two input bytes choose the file
//! and whether checksums are fixed up; the rest is the file (or its body). The template index
//! and the decoding live in `reliora::internals::fuzzing`, shared with the corpus replay test.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// The template index, built once per fuzzing process.
fn template() -> &'static PathBuf {
    static TEMPLATE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &TEMPLATE
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let path = reliora::internals::fuzzing::template_index(dir.path());
            (dir, path)
        })
        .1
}

fuzz_target!(
    init: {
        // libfuzzer-sys aborts on every panic, even one something catches. The one exemption is
        // the `fst` crate's own code walking a crafted FST (behind a valid checksum): the
        // dictionary guards exactly those steps and reports damage. An fst panic nobody catches
        // still aborts, at the end of the target.
        let abort = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.location().is_some_and(|l| l.file().contains("/fst-0.")) {
                abort(info);
            }
        }));
    },
    |data: &[u8]| {
        let work = tempfile::tempdir().expect("a temporary directory");
        reliora::internals::fuzzing::index_input(template(), work.path(), data);
    }
);
