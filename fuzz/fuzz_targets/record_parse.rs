//! Arbitrary bytes as a record (`reliora record`), a stored record, a log entry and a bitmap.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    reliora::internals::fuzzing::record_text(data);
});
