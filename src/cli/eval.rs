//! `reliora eval`: the options mapped onto the library's BEIR evaluation, and its report.

use std::io::Write;

use reliora::eval::{beir_field_map, run_beir, BeirOptions, EvalReport};
use reliora::{Result, SearchRequest};

use super::args::EvalArgs;
use super::output::Printer;

/// Runs `reliora eval` and prints its report.
pub fn run_eval(args: &EvalArgs, printer: &Printer) -> Result<i32> {
    let mut request = SearchRequest::new("");
    let options = [
        ("profile", &args.profile),
        ("config", &args.config),
        ("rerank", &args.rerank),
        ("candidates", &args.candidates),
        ("mmr", &args.mmr),
        ("now", &args.now),
    ];
    for (name, value) in options {
        if let Some(value) = value {
            request.set_option(name, Some(value))?;
        }
    }
    let report = run_beir(&BeirOptions {
        dir: args.beir.clone(),
        split: args.split.clone(),
        field_map: beir_field_map(&args.field_map)?,
        stem: args.stem,
        skip_invalid: args.skip_invalid,
        request,
    })?;
    printer.json_or_text(&report, |out| write_report(out, &report));
    Ok(0)
}

fn write_report(out: &mut dyn Write, r: &EvalReport) -> std::io::Result<()> {
    writeln!(
        out,
        "{} ({} split): {} documents ({} skipped), {} judged queries ({} more without a \
         relevant document, not averaged) · profile {}{}",
        r.dataset.display(),
        r.split,
        r.documents,
        r.skipped,
        r.queries,
        r.queries_without_relevant,
        r.profile,
        if r.stem { " · stemmed" } else { "" }
    )?;
    for skipped in &r.skipped_documents {
        writeln!(out, "skipped {}: {}", skipped.locator, skipped.message)?;
    }
    writeln!(out, "nDCG@10     {:.4}", r.ndcg_at_10)?;
    writeln!(out, "Recall@10   {:.4}", r.recall_at_10)?;
    writeln!(out, "Recall@100  {:.4}", r.recall_at_100)?;
    writeln!(out, "MRR@10      {:.4}", r.mrr_at_10)?;
    writeln!(out, "queries/s   {:.1}", r.queries_per_second)?;
    writeln!(out, "build       {:.2} s", r.build_seconds)
}
