//! Presentation: JSON documents, readable tables, and errors.

use std::io::{self, Write};

use serde::Serialize;

use reliora::internals::index::check::CheckReport;
use reliora::internals::index::salvage::SalvageReport;
use reliora::{BuildReport, Error, SearchResponse, Stats};

use super::args::Format;

/// Prints results and errors in the chosen format.
///
/// Output never panics: a closed pipe (`reliora export | head`) ends the command quietly, as
/// ripgrep does, and any other write error (a full disk) is reported on stderr with a non-zero
/// exit status ([`Printer::finish`]).
pub struct Printer {
    format: Format,
    /// The first error writing to stdout.
    failed: std::cell::RefCell<Option<io::Error>>,
}

impl Printer {
    /// A printer for `format`, or JSON when stdout is not a terminal.
    pub fn new(format: Option<Format>) -> Printer {
        Printer {
            format: Format::resolve(format),
            failed: std::cell::RefCell::new(None),
        }
    }

    /// Prints `value` as one line of JSON, or through `text` as a table.
    pub fn json_or_text<T: Serialize>(
        &self,
        value: &T,
        text: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) {
        // One write for the whole answer: stdout's own buffer is a line of 1 KiB.
        let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
        let written = match self.format {
            Format::Json => serde_json::to_writer(&mut out, value)
                .map_err(io::Error::from)
                .and_then(|_| writeln!(out)),
            Format::Text => text(&mut out),
        };
        self.keep(written.and_then(|_| out.flush()));
    }

    /// Reports `error` (JSON on stdout, or a line on stderr) and returns its exit status.
    pub fn error(&self, error: &Error) -> i32 {
        match self.format {
            Format::Json => {
                let value = serde_json::json!({
                    "error": error.code().as_str(),
                    "message": error.to_string(),
                });
                let stdout = io::stdout();
                let mut out = stdout.lock();
                self.keep(writeln!(out, "{value}").and_then(|_| out.flush()));
            }
            Format::Text => note(&format!("error [{}]: {error}", error.code())),
        }
        error.exit_status()
    }

    fn keep(&self, written: io::Result<()>) {
        if let Err(error) = written {
            self.failed.borrow_mut().get_or_insert(error);
        }
    }

    /// The exit status once everything is printed: `status`, unless writing to stdout failed
    /// for another reason than a closed pipe (then 1, with a line on stderr).
    pub fn finish(&self, status: i32) -> i32 {
        match self.failed.borrow_mut().take() {
            None => status,
            Some(error) if error.kind() == io::ErrorKind::BrokenPipe => status,
            Some(error) => {
                note(&format!(
                    "error [io_error]: writing to stdout failed: {error}"
                ));
                1
            }
        }
    }
}

/// A line on stderr; a closed stderr is ignored, never a panic.
pub fn note(line: &str) {
    let _ = writeln!(io::stderr(), "{line}");
}

/// Whether `error` is stdout closed by its reader (`| head`): the command ends quietly.
pub fn is_closed_stdout(error: &Error) -> bool {
    matches!(error, Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
}

/// What `salvage` did.
pub fn write_salvage(out: &mut dyn Write, r: &SalvageReport) -> io::Result<()> {
    for problem in &r.unreadable {
        writeln!(out, "unreadable: {problem}")?;
    }
    writeln!(
        out,
        "salvaged {} records ({} read from segments, {} log entries replayed) into generation {}",
        r.records, r.segment_records, r.log_entries, r.generation
    )?;
    if !r.left_in_place.is_empty() {
        writeln!(
            out,
            "left in place, no longer part of the index: {}",
            r.left_in_place.join(", ")
        )?;
    }
    Ok(())
}

/// A search response as a table.
pub fn write_response(out: &mut dyn Write, r: &SearchResponse) -> io::Result<()> {
    writeln!(
        out,
        "{} — {} candidates ({} strong, {} moderate, {} weak, {} filtered out) · {} · {} · backend {}{}",
        r.query,
        r.counts.candidates,
        r.counts.strong,
        r.counts.moderate,
        r.counts.weak,
        r.counts.filtered,
        r.analyzer,
        r.profile,
        r.backend,
        if r.degraded { " (degraded)" } else { "" }
    )?;
    for notice in &r.notices {
        writeln!(out, "notice: {notice}")?;
    }
    if r.results.is_empty() {
        writeln!(out, "no results")?;
    }
    for (rank, result) in r.results.iter().enumerate() {
        writeln!(
            out,
            "{:>3}. {:>8.3}  {:<8}  {:<14}  {}",
            rank + 1,
            result.score,
            result.match_level.as_str(),
            result.id,
            result.label
        )?;
        writeln!(
            out,
            "     matched: {}  ·  {}{}{}",
            result.matched_tokens.join(" "),
            result.locator,
            result
                .superseded_by
                .as_ref()
                .map(|s| format!("  ·  superseded by {s}"))
                .unwrap_or_default(),
            result
                .index
                .as_ref()
                .map(|i| format!("  ·  index {i}"))
                .unwrap_or_default()
        )?;
    }
    if let Some(explain) = &r.explain {
        writeln!(
            out,
            "explain {}: {}",
            explain.id,
            serde_json::to_string(explain)?
        )?;
    }
    Ok(())
}

/// A build report as text.
pub fn write_build(out: &mut dyn Write, r: &BuildReport) -> io::Result<()> {
    writeln!(
        out,
        "indexed {} records ({} terms, {} bytes) into {} — generation {}{}{}",
        r.records,
        r.terms,
        r.bytes,
        r.index.display(),
        r.generation,
        if r.stem { ", stemmed" } else { "" },
        if r.skipped.is_empty() {
            String::new()
        } else {
            format!(", {} skipped", r.skipped.len())
        }
    )
}

/// Stats as text.
pub fn write_stats(out: &mut dyn Write, s: &Stats) -> io::Result<()> {
    writeln!(out, "index       {}", s.index.display())?;
    writeln!(
        out,
        "generation  {} (format {})",
        s.generation, s.format_version
    )?;
    writeln!(out, "records     {}", s.records)?;
    writeln!(out, "segments    {}", s.segments)?;
    writeln!(out, "terms       {}", s.terms)?;
    writeln!(out, "stemming    {}", if s.stem { "on" } else { "off" })?;
    writeln!(out, "bytes       {}", s.bytes)?;
    for f in &s.files {
        writeln!(out, "  {:<28} {:>12}", f.name, f.bytes)?;
    }
    if let Some(d) = &s.damaged {
        writeln!(out, "DAMAGED: {d}")?;
    }
    Ok(())
}

/// A check report as text.
pub fn write_check(out: &mut dyn Write, c: &CheckReport) -> io::Result<()> {
    for note in &c.notes {
        writeln!(out, "note: {note}")?;
    }
    if c.sound {
        writeln!(
            out,
            "sound: {} files and {} records verified",
            c.files_checked, c.records_checked
        )
    } else {
        for p in &c.problems {
            writeln!(out, "damaged: {p}")?;
        }
        Ok(())
    }
}
