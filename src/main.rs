//! The `reliora` command line.

#![deny(unsafe_code)]

mod cli;

/// mimalloc: a build allocates and frees millions of small buffers (parsed records, tokens,
/// postings), several times faster than with the system allocator. The library leaves the
/// choice of allocator to its users.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cli::run(std::env::args_os().collect()));
}
