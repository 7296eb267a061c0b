//! `reliora-bench`: generate a corpus, then measure Reliora, tantivy and SQLite FTS5 on it in
//! one run — build time and throughput, index size, open time, latency percentiles and queries
//! per second on one and on all threads, peak RSS, and Reliora's whole-process search time.
//!
//! ```text
//! reliora-bench corpus --records 100000 --queries 2000 --seed 42 --out target/corpus-100k
//! reliora-bench realtext --sentences sentences.txt --records 100000 --seed 42 \
//!     --queries $CORPUS/scifact/queries.jsonl,bench/agent-memory/queries.jsonl --out target/real-100k
//! reliora-bench run --corpus target/corpus-100k --reliora-bin target/release/reliora
//! reliora-bench plot --results results.jsonl --out BENCHMARKS-latency.svg
//! reliora-bench query --index DIR --corpus target/corpus-100k   # Reliora's latency alone,
//!                                                              # on an index already built
//! reliora-bench workload --index DIR --corpus target/real-100k  # what the queries ask of it
//! ```
//!
//! Each engine runs in its own child process so its peak RSS is its own.

mod corpus;
mod engines;
mod realtext;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn required(args: &[String], name: &str) -> String {
    arg(args, name).unwrap_or_else(|| {
        eprintln!("missing {name}");
        std::process::exit(2)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("corpus") => {
            let records: usize = required(&args, "--records").parse().expect("--records N");
            let queries: usize = arg(&args, "--queries").map_or(2000, |q| q.parse().expect("N"));
            let seed: u64 = arg(&args, "--seed").map_or(42, |s| s.parse().expect("seed"));
            let out = PathBuf::from(required(&args, "--out"));
            std::fs::create_dir_all(&out).expect("output directory");
            let started = Instant::now();
            let mut generator = corpus::Generator::new(seed);
            let mut file = std::io::BufWriter::new(
                std::fs::File::create(out.join("records.jsonl")).expect("records file"),
            );
            generator
                .write_records(records, &mut file)
                .expect("write records");
            let mut file = std::io::BufWriter::new(
                std::fs::File::create(out.join("queries.jsonl")).expect("queries file"),
            );
            generator
                .write_queries(queries, &mut file)
                .expect("write queries");
            eprintln!(
                "wrote {records} records and {queries} queries to {} in {:.1}s",
                out.display(),
                started.elapsed().as_secs_f64()
            );
        }
        Some("realtext") => {
            let records: usize = required(&args, "--records").parse().expect("--records N");
            let seed: u64 = arg(&args, "--seed").map_or(42, |s| s.parse().expect("seed"));
            let out = PathBuf::from(required(&args, "--out"));
            std::fs::create_dir_all(&out).expect("output directory");
            let started = Instant::now();
            let sentences = realtext::read_sentences(Path::new(&required(&args, "--sentences")))
                .expect("the sentences file");
            let mut file = std::io::BufWriter::new(
                std::fs::File::create(out.join("records.jsonl")).expect("records file"),
            );
            realtext::Generator::new(&sentences, seed)
                .write_records(records, &mut file)
                .expect("write records");
            let sources = required(&args, "--queries");
            let sources: Vec<&Path> = sources.split(',').map(Path::new).collect();
            let mut file = std::io::BufWriter::new(
                std::fs::File::create(out.join("queries.jsonl")).expect("queries file"),
            );
            let queries = realtext::write_queries(&sources, &mut file).expect("write queries");
            eprintln!(
                "wrote {records} records from {} sentences and {queries} queries to {} in {:.1}s",
                sentences.len(),
                out.display(),
                started.elapsed().as_secs_f64()
            );
        }
        Some("run") => {
            let corpus = PathBuf::from(required(&args, "--corpus"));
            let engines =
                arg(&args, "--engines").unwrap_or_else(|| "reliora,tantivy,sqlite".into());
            let work = corpus.join("work");
            let me = std::env::current_exe().expect("own path");
            for engine in engines.split(',') {
                let mut command = Command::new(&me);
                command
                    .args(["engine", engine, "--corpus"])
                    .arg(&corpus)
                    .arg("--work")
                    .arg(work.join(engine));
                if let Some(bin) = arg(&args, "--reliora-bin") {
                    command.args(["--reliora-bin", &bin]);
                }
                let output = command.output().expect("engine process");
                if !output.status.success() {
                    eprintln!(
                        "{engine} failed: {}",
                        String::from_utf8_lossy(&output.stderr)
                    );
                    std::process::exit(1);
                }
                print!("{}", String::from_utf8_lossy(&output.stdout));
            }
        }
        Some("engine") => {
            let name = args.get(2).expect("engine name").clone();
            let corpus = PathBuf::from(required(&args, "--corpus"));
            let work = PathBuf::from(required(&args, "--work"));
            let _ = std::fs::remove_dir_all(&work);
            std::fs::create_dir_all(&work).expect("work directory");
            let reliora_bin = arg(&args, "--reliora-bin").map(PathBuf::from);
            let result = engines::measure(&name, &corpus, &work, reliora_bin.as_deref());
            println!("{result}");
        }
        Some("query") => {
            let index = PathBuf::from(required(&args, "--index"));
            let corpus = PathBuf::from(required(&args, "--corpus"));
            println!("{}", engines::query_only(&index, &corpus));
        }
        Some("workload") => {
            let index = PathBuf::from(required(&args, "--index"));
            let corpus = PathBuf::from(required(&args, "--corpus"));
            let profile = arg(&args, "--profile").unwrap_or_else(|| "standard".into());
            println!(
                "{}",
                engines::workload_statistics(&index, &corpus, &profile)
            );
        }
        Some("plot") => {
            let results = PathBuf::from(required(&args, "--results"));
            let out = PathBuf::from(required(&args, "--out"));
            plot(&results, &out);
        }
        _ => {
            eprintln!(
                "usage: reliora-bench corpus|realtext|run|engine|query|plot … (see the source docs)"
            );
            std::process::exit(2);
        }
    }
}

/// Draws p50 latency against corpus size, one line per engine, from JSON Lines results.
fn plot(results: &Path, out: &Path) {
    use plotters::prelude::*;
    let text = std::fs::read_to_string(results).expect("results file");
    let rows: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let engines = ["reliora", "tantivy", "sqlite"];
    let series: Vec<(&str, Vec<(f64, f64)>)> = engines
        .iter()
        .map(|e| {
            let mut points: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| r["engine"] == *e)
                .map(|r| {
                    (
                        r["records"].as_f64().unwrap(),
                        r["latency_ms"]["p50"].as_f64().unwrap(),
                    )
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            (*e, points)
        })
        .collect();
    let max_x = series
        .iter()
        .flat_map(|s| &s.1)
        .map(|p| p.0)
        .fold(1.0, f64::max);
    let max_y = series
        .iter()
        .flat_map(|s| &s.1)
        .map(|p| p.1)
        .fold(0.01, f64::max);
    let root = SVGBackend::new(out, (800, 500)).into_drawing_area();
    root.fill(&WHITE).expect("draw");
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "p50 query latency vs corpus size (1 thread)",
            ("sans-serif", 20),
        )
        .margin(20)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((1_000f64..max_x * 1.2).log_scale(), 0.0..max_y * 1.2)
        .expect("chart");
    chart
        .configure_mesh()
        .x_desc("records")
        .y_desc("p50 latency (ms)")
        .draw()
        .expect("mesh");
    let colors = [RED, BLUE, GREEN];
    for ((name, points), color) in series.into_iter().zip(colors) {
        chart
            .draw_series(LineSeries::new(points.clone(), color))
            .expect("line")
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 3, color.filled())),
            )
            .expect("points");
    }
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()
        .expect("legend");
    root.present().expect("write svg");
}
