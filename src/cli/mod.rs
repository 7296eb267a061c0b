//! Argument parsing and presentation over the library API. No search logic lives here.

mod args;
mod eval;
mod output;
mod progress;

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches};

use reliora::handle::writer;
use reliora::internals::index::check::check;
use reliora::record::input::FieldMap;
use reliora::record::{parse_record_text, Outcome};
use reliora::{BuildOptions, Error, ErrorCode, Index, IndexWriter, Result, SearchRequest};

use args::{Cli, Command, Format, SearchArgs};
use output::Printer;

/// Runs the command line and returns the exit status.
pub fn run(argv: Vec<OsString>) -> i32 {
    let matches = match Cli::command().try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => return clap_failure(e, &argv),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return clap_failure(e, &argv),
    };
    let printer = Printer::new(cli.format);
    writer::on_lock_wait(|dir| {
        output::note(&format!(
            "waiting for another process writing to {} to finish (it holds {}/LOCK)",
            dir.display(),
            dir.display()
        ))
    });
    // Only `search` takes several indexes (a federated search).
    let index_dir: &Path = match (&cli.command, cli.index.as_slice()) {
        (Command::Search(_), [first, ..]) | (_, [first]) => first,
        (_, dirs) => {
            return printer.error(&Error::query(
                ErrorCode::InvalidOption,
                format!(
                    "--index is given {} times; only `search` takes several",
                    dirs.len()
                ),
            ))
        }
    };
    // The MCP server owns stdout for the protocol: its errors go to stderr.
    #[cfg(feature = "mcp")]
    if let Command::Mcp = cli.command {
        return reliora::mcp::serve_stdio(index_dir.to_path_buf()).map_or_else(
            |error| {
                output::note(&format!("error [{}]: {error}", error.code()));
                error.exit_status()
            },
            |()| 0,
        );
    }
    let outcome = dispatch(&cli, &matches, index_dir, &printer);
    let status = match outcome {
        Ok(status) => status,
        Err(error) if output::is_closed_stdout(&error) => 0,
        Err(error) => printer.error(&error),
    };
    printer.finish(status)
}

/// Runs the parsed command (any but `mcp`, served before): its exit status, or the error to
/// print.
fn dispatch(
    cli: &Cli,
    matches: &clap::ArgMatches,
    index_dir: &Path,
    printer: &Printer,
) -> Result<i32> {
    match &cli.command {
        Command::Build(build) => run_build(index_dir, build, printer),
        Command::Search(search) => {
            // The calling thread is one of the pool's workers: a search's parallel parts start
            // on it instead of waking a worker and sleeping until that worker is done.
            let _ = rayon::ThreadPoolBuilder::new()
                .use_current_thread()
                .build_global();
            let sub = matches
                .subcommand_matches("search")
                .expect("search subcommand matched");
            run_search(&cli.index, search, sub, printer)
        }
        Command::Eval(args) => eval::run_eval(args, printer),
        Command::Show { id } => {
            Index::open(index_dir)
                .and_then(|index| index.get(id))
                .map(|stored| {
                    printer.json_or_text(&stored.record.to_json(), |out| {
                        writeln!(
                            out,
                            "{}",
                            serde_json::to_string_pretty(&stored.record.to_json())?
                        )?;
                        writeln!(out, "locator: {}", stored.locator)
                    });
                    0
                })
        }
        Command::Record { file } => run_record(index_dir, file.as_deref(), printer),
        Command::Feedback { id, outcome } => Outcome::parse(outcome)
            .and_then(|outcome| IndexWriter::new(index_dir).feedback(id, outcome))
            .map(|report| {
                printer.json_or_text(&report, |out| {
                    writeln!(out, "{}: {} recorded", report.id, report.outcome)
                });
                0
            }),
        Command::Delete { id } => IndexWriter::new(index_dir).delete(id).map(|report| {
            printer.json_or_text(&report, |out| writeln!(out, "{} deleted", report.id));
            0
        }),
        Command::Compact => IndexWriter::new(index_dir).compact().map(|report| {
            printer.json_or_text(&report, |out| {
                writeln!(
                    out,
                    "compacted {} log entries: generation {} holds {} records",
                    report.log_entries, report.generation, report.records
                )
            });
            0
        }),
        Command::Export { output } => run_export(index_dir, output.as_deref()),
        Command::Stats => Index::open(index_dir)
            .and_then(|index| index.stats())
            .map(|stats| {
                printer.json_or_text(&stats, |out| output::write_stats(out, &stats));
                0
            }),
        Command::Check => {
            let report = check(index_dir);
            printer.json_or_text(&report, |out| output::write_check(out, &report));
            Ok(if report.sound { 0 } else { 3 })
        }
        Command::Salvage { stem } => reliora::internals::index::salvage::salvage(index_dir, *stem)
            .map(|report| {
                printer.json_or_text(&report, |out| output::write_salvage(out, &report));
                0
            }),
        #[cfg(feature = "mcp")]
        Command::Mcp => unreachable!("served above"),
    }
}

fn clap_failure(error: clap::Error, argv: &[OsString]) -> i32 {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = error.print();
        return 0;
    }
    let printer = Printer::new(args::format_from_raw(argv));
    if let Some(earlier) = earlier_invalid_search_option(&error, argv) {
        return printer.error(&earlier);
    }
    let message = error.render().to_string();
    printer.error(&Error::query(
        ErrorCode::InvalidOption,
        message.trim_end().to_string(),
    ))
}

/// SPEC §6 reports the first invalid option in command-line order. clap stops at an unknown
/// flag, so the options before it are validated here first.
fn earlier_invalid_search_option(error: &clap::Error, argv: &[OsString]) -> Option<Error> {
    use clap::error::{ContextKind, ContextValue};
    let ContextValue::String(unknown) = error.get(ContextKind::InvalidArg)? else {
        return None;
    };
    let unknown = unknown.split('=').next()?;
    let search_at = argv.iter().position(|a| a == "search")?;
    let cut = search_at
        + 1
        + argv[search_at + 1..]
            .iter()
            .position(|a| a.to_string_lossy().split('=').next() == Some(unknown))?;
    let matches = Cli::command().try_get_matches_from(&argv[..cut]).ok()?;
    let search = matches.subcommand_matches("search")?;
    let mut request = SearchRequest::new("");
    args::ordered_search_options(search)
        .into_iter()
        .find_map(|(name, value)| request.set_option(name, value.as_deref()).err())
}

fn run_build(dir: &Path, build: &args::BuildArgs, printer: &Printer) -> Result<i32> {
    let mut field_map = FieldMap::new();
    for spec in &build.field_map {
        field_map.push_spec(spec)?;
    }
    let options = BuildOptions {
        inputs: build.input.clone(),
        field_map,
        skip_invalid: build.skip_invalid,
        stem: build.stem,
        progress: if std::io::stderr().is_terminal() {
            progress::bar()
        } else {
            None
        },
        segment_records: build.segment_records.map_or(0, |n| n as usize),
        spill_records: build.spill_records.map_or(0, |n| n as usize),
        replace: build.replace,
        shard: build.shard,
    };
    let report = Index::build(dir, &options)?;
    for skipped in &report.skipped {
        output::note(&format!("skipped {}: {}", skipped.locator, skipped.message));
    }
    if report.dropped_recorded > 0 {
        output::note(&format!(
            "--replace dropped {} records written by `reliora record`",
            report.dropped_recorded
        ));
    }
    printer.json_or_text(&report, |out| output::write_build(out, &report));
    Ok(0)
}

fn run_search(
    dirs: &[PathBuf],
    search: &SearchArgs,
    matches: &clap::ArgMatches,
    printer: &Printer,
) -> Result<i32> {
    // Options are validated before the query, in command-line order.
    let mut request = SearchRequest::new(search.query.clone().unwrap_or_default());
    for (name, value) in args::ordered_search_options(matches) {
        request.set_option(name, value.as_deref())?;
    }
    let indexes = dirs
        .iter()
        .map(|dir| Ok((dir.display().to_string(), Index::open(dir)?)))
        .collect::<Result<Vec<(String, Index)>>>()?;
    let named: Vec<(String, &Index)> = indexes.iter().map(|(n, i)| (n.clone(), i)).collect();
    let run = |request: &SearchRequest| match named.as_slice() {
        [(_, index)] => index.search(request),
        several => reliora::search_federated(several, request),
    };
    match (&search.queries, &search.query) {
        (Some(file), None) => run_batch(&run, &request, file),
        (None, Some(_)) => {
            let response = run(&request)?;
            printer.json_or_text(&response, |out| output::write_response(out, &response));
            // The process ends with this answer: its files are unmapped by the exit, at once,
            // rather than one by one while a worker thread lives (each unmapping would then
            // interrupt that thread's core to flush its address cache).
            std::mem::forget(indexes);
            Ok(0)
        }
        (Some(_), Some(_)) => Err(Error::query(
            ErrorCode::InvalidOption,
            "give either a QUERY or --queries FILE, not both",
        )),
        (None, None) => Err(Error::query(
            ErrorCode::InvalidOption,
            "search needs a QUERY or --queries FILE",
        )),
    }
}

/// `--queries FILE`: one response per line, JSON Lines or plain lines.
fn run_batch(
    search: &dyn Fn(&SearchRequest) -> Result<reliora::SearchResponse>,
    defaults: &SearchRequest,
    file: &Path,
) -> Result<i32> {
    let reader = BufReader::new(File::open(file).map_err(|e| Error::io(file, e))?);
    // A response is one write, as soon as it is known (stdout's own buffer is 1 KiB).
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut status = 0;
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| Error::io(file, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let locator = format!("{}:{}", file.display(), n + 1);
        let (query_id, outcome) = args::batch_request(&line, n + 1, defaults, &locator);
        let outcome = outcome.and_then(|request| search(&request));
        let value = match outcome {
            Ok(mut response) => {
                response.query_id = Some(query_id);
                serde_json::to_value(&response).expect("responses serialize")
            }
            Err(error) => {
                status = status.max(error.exit_status());
                serde_json::json!({
                    "queryId": query_id,
                    "error": error.code().as_str(),
                    "message": error.to_string(),
                })
            }
        };
        writeln!(out, "{value}")
            .and_then(|()| out.flush())
            .map_err(|e| Error::io("<stdout>", e))?;
    }
    Ok(status)
}

fn run_record(dir: &Path, file: Option<&Path>, printer: &Printer) -> Result<i32> {
    let (text, locator) = match file {
        None => read_record_input(&mut std::io::stdin(), "<stdin>")?,
        Some(p) if p == Path::new("-") => read_record_input(&mut std::io::stdin(), "<stdin>")?,
        Some(p) => {
            let locator = p.display().to_string();
            let mut file = File::open(p).map_err(|e| Error::io(p, e))?;
            read_record_input(&mut file, &locator)?
        }
    };
    let record = parse_record_text(&text, &locator, &FieldMap::new())?;
    let report = IndexWriter::new(dir).record(record)?;
    printer.json_or_text(&report, |out| {
        writeln!(
            out,
            "{} {} at {}",
            report.id,
            if report.replaced {
                "replaced"
            } else {
                "recorded"
            },
            report.locator
        )?;
        for w in &report.warnings {
            writeln!(
                out,
                "warning: similar experience {} ({}, score {:.3}): {}",
                w.id,
                w.match_level.as_str(),
                w.score,
                w.title.as_deref().unwrap_or("(untitled)")
            )?;
        }
        Ok(())
    });
    Ok(0)
}

/// The most bytes `record` reads: a record is at most 1 MiB as compact JSON, and 16 MiB leaves
/// room for pretty-printing and escapes while bounding what a hostile input can make us hold.
const MAX_RECORD_INPUT_BYTES: u64 = 16 << 20;

/// Reads one record's text: bounded in size, and invalid UTF-8 is bad input (exit 2), not an
/// I/O failure.
fn read_record_input(input: &mut impl std::io::Read, locator: &str) -> Result<(String, String)> {
    use std::io::Read;
    let mut bytes = Vec::new();
    input
        .take(MAX_RECORD_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(locator, e))?;
    let malformed = |message: String| Error::MalformedJson {
        locator: locator.to_string(),
        message,
    };
    if bytes.len() as u64 > MAX_RECORD_INPUT_BYTES {
        return Err(malformed(format!(
            "the input is larger than {MAX_RECORD_INPUT_BYTES} bytes; a record is at most 1 MiB"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        malformed(format!(
            "invalid UTF-8 at byte {}",
            e.utf8_error().valid_up_to()
        ))
    })?;
    Ok((text, locator.to_string()))
}

fn run_export(dir: &Path, output: Option<&Path>) -> Result<i32> {
    let index = Index::open(dir)?;
    let count = match output {
        Some(path) => {
            let tmp = path.with_extension("partial");
            let mut file =
                std::io::BufWriter::new(File::create(&tmp).map_err(|e| Error::io(&tmp, e))?);
            let count = index.export(&mut file, path)?;
            let file = file
                .into_inner()
                .map_err(|e| Error::io(path, e.into_error()))?;
            file.sync_all().map_err(|e| Error::io(path, e))?;
            std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
            count
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            index.export(&mut out, Path::new("<stdout>"))?
        }
    };
    if output.is_some() {
        output::note(&format!("exported {count} records"));
    }
    Ok(0)
}

impl Format {
    fn resolve(format: Option<Format>) -> Format {
        format.unwrap_or(if std::io::stdout().is_terminal() {
            Format::Text
        } else {
            Format::Json
        })
    }
}
