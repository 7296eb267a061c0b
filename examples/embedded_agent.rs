//! A coding agent with Reliora linked in: its experience memory searched and grown in-process,
//! with no server and no network.
//!
//! ```sh
//! cargo run --example embedded_agent
//! ```
//!
//! The agent's loop, as the MCP server's instructions describe it:
//! 1. before starting a task, search for what is known about it;
//! 2. when an error appears, search with the error message and read the best record in full;
//! 3. after reusing a record, report the outcome as feedback;
//! 4. after verifying a fix nobody had recorded, record it — the next search finds it.
//!
//! The memory starts from the sample records in `data/`, built into a temporary directory.

use std::error::Error;
use std::path::Path;

use reliora::record::Outcome;
use reliora::{BuildOptions, Index, IndexReader, IndexWriter, SearchRequest, SearchResponse};
use serde_json::json;

fn main() -> Result<(), Box<dyn Error>> {
    let workspace = tempfile::tempdir()?;
    let memory = workspace.path().join("memory");

    // The memory: an index built once from JSON exports (here the sample data).
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let built = Index::build(
        &memory,
        &BuildOptions {
            inputs: vec![data],
            ..BuildOptions::default()
        },
    )?;
    println!(
        "memory: {} records, {} terms in {}\n",
        built.records,
        built.terms,
        memory.display()
    );

    // One searcher and one writer for the agent's whole life. The searcher sees every write,
    // this process's and other processes' (another agent, the CLI, an MCP server).
    let searcher = IndexReader::open(&memory)?;
    let writer = IndexWriter::new(&memory);

    // 1. Before starting a task.
    let task = "add a cache refresher task to the tokio service";
    let request = SearchRequest::builder(task).tag("rust").limit(3).build()?;
    print_results("before the task", &searcher.search(&request)?);

    // 2. An error appears: search with the message as it is, and read the best record in full.
    let error = "deadlock: the std::sync::Mutex guard is held across an .await";
    let response = searcher.search(&SearchRequest::builder(error).limit(3).full(true).build()?)?;
    print_results("when the error appears", &response);
    let best = response
        .results
        .first()
        .ok_or("the sample data knows this error")?;
    let record = best.record.as_ref().expect("full: true adds the record");
    println!(
        "  reading {}: {}\n  applicability: {}\n  warnings: {}\n",
        best.id,
        record["solution"].as_str().unwrap_or("-"),
        record["applicability"].as_str().unwrap_or("-"),
        record["warnings"]
    );

    // 3. The advice worked: say so, so that it ranks higher next time.
    let report = writer.feedback(&best.id, Outcome::Success)?;
    println!(
        "feedback on {}: {} successes so far\n",
        report.id, report.feedback.success
    );

    // 4. A new problem, fixed and verified: record it.
    let report = writer.record_json(&json!({
        "title": "tokio-console shows the cache refresher never yields: blocking file read inside an async task",
        "task": "Find why the cache refresher starves other tasks on a current-thread runtime.",
        "problems": ["tokio-console: task busy for 2.3s without yielding", "other requests time out while the cache refreshes"],
        "solution": "Moved the file read into tokio::task::spawn_blocking and awaited its JoinHandle.",
        "whyItWorked": "std::fs blocks the runtime thread; spawn_blocking runs it on the blocking pool.",
        "failedAttempts": ["tokio::task::yield_now() between reads: the single read itself blocked for seconds"],
        "tags": ["rust", "tokio", "async", "blocking"],
        "projectContext": "cache-service, tokio 1.40 current-thread runtime",
        "applicability": "Any blocking call (file I/O, CPU-heavy work) inside an async task.",
        "verification": "tokio-console shows no busy task; p99 latency back to 40 ms",
        "confidence": 0.9
    }))?;
    println!("recorded {} at {}", report.id, report.locator);
    for warning in &report.warnings {
        println!(
            "  similar ({}): {} {}",
            warning.match_level.as_str(),
            warning.id,
            warning.title.as_deref().unwrap_or("(untitled)")
        );
    }
    println!();

    // The next search — by this agent or any other — finds it.
    let again = searcher.search(
        &SearchRequest::builder("task busy without yielding, other requests time out")
            .limit(3)
            .build()?,
    )?;
    print_results("the next time", &again);
    assert_eq!(again.results[0].id, report.id, "the new record ranks first");
    Ok(())
}

fn print_results(when: &str, response: &SearchResponse) {
    println!(
        "{when}: {:?} — {} candidates ({} strong, {} moderate)",
        response.query,
        response.counts.candidates,
        response.counts.strong,
        response.counts.moderate
    );
    for result in &response.results {
        println!(
            "  {:>7.2}  {:<8}  {:<8}  {}",
            result.score,
            result.match_level.as_str(),
            result.id,
            result.label
        );
    }
    println!();
}
