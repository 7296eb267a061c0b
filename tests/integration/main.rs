//! The integration tests, one module per area, linked into one test binary (one link in CI
//! instead of one per file); `support` holds the fixtures they share.
//!
//! Three suites stay binaries of their own, `tests/damage_sweeps.rs`, `tests/fuzz_corpus.rs` and
//! `tests/robustness.rs`: each installs a panic hook that counts every panic in its process, even
//! one something caught. Here they would count each other's: the damage sweeps count the `fst`
//! panics the other two provoke (and the engine catches) on purpose, often on rayon's shared
//! worker threads, where a hook cannot tell which test the work belongs to.
//!
//! proptest saves and replays the failing cases of a module `NAME.rs` here in
//! `tests/proptest-regressions/NAME.txt`: its default places them beside the directory holding
//! this `main.rs`.

mod support;

mod bad_input;
mod cli_errors;
mod cli_profiles;
mod faults;
mod full_disk;
mod mcp_server;
mod powerloss;
mod processes;
mod profiles;
mod properties;
mod shards;
mod spec_rules;
mod untitled_records;
mod write_path;
