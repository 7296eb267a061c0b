//! The command-line grammar (clap) and the mapping of search flags to request options.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgAction, ArgMatches, Args, Parser, Subcommand, ValueEnum};

use reliora::{Error, ErrorCode, Result, SearchRequest, Shard};

/// Reliora: search the experience memory of coding agents.
#[derive(Debug, Parser)]
#[command(name = "reliora", version, about)]
pub struct Cli {
    /// The index directory. `search` takes several (repeat the flag) for a federated search.
    #[arg(
        long,
        global = true,
        env = "RELIORA_INDEX",
        default_value = ".reliora",
        action = ArgAction::Append
    )]
    pub index: Vec<PathBuf>,
    /// Output format; JSON when stdout is not a terminal.
    #[arg(long, global = true, value_enum)]
    pub format: Option<Format>,
    #[command(subcommand)]
    pub command: Command,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON document per response.
    Json,
    /// A readable table.
    Text,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a new index from JSON arrays, JSON Lines, or directories of .json files.
    Build(BuildArgs),
    /// Search the index.
    Search(Box<SearchArgs>),
    /// Add or replace one record (JSON object) from FILE, or stdin with `-` or no FILE.
    Record {
        /// The file holding the record; `-` for stdin.
        file: Option<PathBuf>,
    },
    /// Add one outcome to a record's feedback.
    Feedback {
        /// The record's id.
        id: String,
        /// success, partial, failure, not-applicable or outdated.
        #[arg(long)]
        outcome: String,
    },
    /// Remove a record from every later search and export.
    Delete {
        /// The record's id.
        id: String,
    },
    /// Fold the record log into a new segment; results are unchanged.
    Compact,
    /// Print one stored record, by id or locator.
    Show {
        /// The record's id or locator (`file:line`).
        id: String,
    },
    /// Write every live record as JSON Lines.
    Export {
        /// Write to this file instead of stdout.
        #[arg(long)]
        output: Option<PathBuf>,
    },
    /// Records, segments, terms, sizes and settings.
    Stats,
    /// Verify every file; exit 0 when sound, 3 when damaged.
    Check,
    /// Rebuild every intact record of a damaged index into a new generation, leaving the
    /// damaged files in place.
    Salvage {
        /// Stem tokens, when the manifest that would say so is lost.
        #[arg(long)]
        stem: bool,
    },
    /// Serve the index to AI agents: an MCP server on stdio (tools search, record, feedback,
    /// show). Logs go to stderr.
    #[cfg(feature = "mcp")]
    Mcp,
    /// Relevance metrics on a BEIR-format folder (built into a temporary index).
    Eval(EvalArgs),
}

/// `reliora eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The BEIR folder: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv.
    #[arg(long)]
    pub beir: PathBuf,
    /// The qrels split.
    #[arg(long, default_value = "test")]
    pub split: String,
    /// Ranking profile.
    #[arg(long)]
    pub profile: Option<String>,
    /// Rename a corpus key (repeatable); BEIR's `_id=id` and `text=problems` apply to every
    /// source not named here.
    #[arg(long = "field-map", value_name = "SRC=DST")]
    pub field_map: Vec<String>,
    /// Stem tokens with Snowball English.
    #[arg(long)]
    pub stem: bool,
    /// Skip (and report) invalid documents instead of failing on the first.
    #[arg(long)]
    pub skip_invalid: bool,
    /// Settings file (TOML).
    #[arg(long)]
    pub config: Option<String>,
    /// Replace the score by a weighted feature mix: name=weight,….
    #[arg(long)]
    pub rerank: Option<String>,
    /// Candidates kept by `decay` (1–500).
    #[arg(long, allow_hyphen_values = true)]
    pub candidates: Option<String>,
    /// Near-duplicate demotion: `--mmr` or `--mmr=false`.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub mmr: Option<String>,
    /// Reference time (RFC 3339) instead of the clock.
    #[arg(long)]
    pub now: Option<String>,
}

/// `reliora build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Input files or directories (repeatable).
    #[arg(long, required = true, num_args = 1..)]
    pub input: Vec<PathBuf>,
    /// Rename an input key (repeatable), e.g. `--field-map _id=id`.
    #[arg(long = "field-map", value_name = "SRC=DST")]
    pub field_map: Vec<String>,
    /// Skip and report invalid records instead of failing.
    #[arg(long)]
    pub skip_invalid: bool,
    /// Stem tokens with Snowball English (recorded in the index).
    #[arg(long)]
    pub stem: bool,
    /// Replace an index that holds records written by `record` (dropping them; the report
    /// says how many).
    #[arg(long)]
    pub replace: bool,
    /// Records per spill: a build holds one spill in memory at a time and merges the spills
    /// into one segment at the end [default: 200000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub spill_records: Option<u32>,
    /// Keep segments of N records each instead of merging into one segment (a build holds one
    /// segment in memory at a time).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub segment_records: Option<u32>,
    /// Build shard I of a collection split N ways (`--shard 0/4`): only the records whose id
    /// routes there (SHA-256 of the id, modulo N), every input still read and checked.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
}

/// `reliora search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The query: any text.
    pub query: Option<String>,
    /// Read queries from a file: JSON Lines `{"id", "query", …options}` or plain lines.
    #[arg(long)]
    pub queries: Option<PathBuf>,
    /// Number of results (1–200, default 10).
    #[arg(long, allow_hyphen_values = true)]
    pub limit: Option<String>,
    /// Minimum normalizedScore: a fraction in [0, 1] or a percentage in (1, 100].
    #[arg(long = "min-score", allow_hyphen_values = true)]
    pub min_score: Option<String>,
    /// Keep records whose project context, applicability or tags match this text.
    #[arg(long = "project-context")]
    pub project_context: Option<String>,
    /// Keep records with this tag (repeatable: all required).
    #[arg(long)]
    pub tag: Vec<String>,
    /// Keep records of this memory type.
    #[arg(long = "type")]
    pub memory_type: Option<String>,
    /// Ranking profile.
    #[arg(long)]
    pub profile: Option<String>,
    /// Reference time (RFC 3339) instead of the clock.
    #[arg(long)]
    pub now: Option<String>,
    /// Explain why this record is or is not a result.
    #[arg(long)]
    pub explain: Option<String>,
    /// Include each result's whole record.
    #[arg(long)]
    pub full: bool,
    /// auto (default), index, or scan.
    #[arg(long)]
    pub backend: Option<String>,
    /// `decay`: keep superseded records.
    #[arg(long = "include-superseded")]
    pub include_superseded: bool,
    /// Candidates kept (1–500): `decay` keeps its top N by relevance (default 200).
    #[arg(long, allow_hyphen_values = true)]
    pub candidates: Option<String>,
    /// Near-duplicate demotion: `--mmr` or `--mmr=false` (default on only in `decay`).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub mmr: Option<String>,
    /// Keep results while their JSON fits in 4 × N characters (1–16000).
    #[arg(long = "token-budget", allow_hyphen_values = true)]
    pub token_budget: Option<String>,
    /// A query entity (repeatable); replaces the detected ones.
    #[arg(long)]
    pub entity: Vec<String>,
    /// Replace the score by a weighted feature mix: name=weight,….
    #[arg(long)]
    pub rerank: Option<String>,
    /// Settings file (TOML); default: reliora.toml in the index directory.
    #[arg(long)]
    pub config: Option<String>,
}

/// Search flags: (clap id, option name, takes a value).
const SEARCH_OPTIONS: [(&str, &str, bool); 17] = [
    ("limit", "limit", true),
    ("min_score", "min-score", true),
    ("project_context", "project-context", true),
    ("tag", "tag", true),
    ("memory_type", "type", true),
    ("profile", "profile", true),
    ("now", "now", true),
    ("explain", "explain", true),
    ("full", "full", false),
    ("backend", "backend", true),
    ("include_superseded", "include-superseded", false),
    ("candidates", "candidates", true),
    ("mmr", "mmr", true),
    ("token_budget", "token-budget", true),
    ("entity", "entity", true),
    ("rerank", "rerank", true),
    ("config", "config", true),
];

/// The search options given, in command-line order.
pub fn ordered_search_options(matches: &ArgMatches) -> Vec<(&'static str, Option<String>)> {
    let mut found: Vec<(usize, &'static str, Option<String>)> = Vec::new();
    for (id, name, takes_value) in SEARCH_OPTIONS {
        if takes_value {
            if let (Some(indices), Some(values)) =
                (matches.indices_of(id), matches.get_many::<String>(id))
            {
                for (i, v) in indices.zip(values) {
                    found.push((i, name, Some(v.clone())));
                }
            }
        } else if matches.get_flag(id) {
            found.push((matches.index_of(id).unwrap_or(0), name, None));
        }
    }
    found.sort_by_key(|(i, _, _)| *i);
    found.into_iter().map(|(_, n, v)| (n, v)).collect()
}

/// The format asked for on a command line clap could not parse.
pub fn format_from_raw(argv: &[OsString]) -> Option<Format> {
    let args: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    args.iter().enumerate().find_map(|(i, a)| {
        let value = a.strip_prefix("--format=").or_else(|| {
            (a == "--format")
                .then(|| args.get(i + 1).map(String::as_str))
                .flatten()
        })?;
        Format::from_str(value, true).ok()
    })
}

/// One `--queries` line as a request: the query id and the request (or what is wrong with it).
pub fn batch_request(
    line: &str,
    number: usize,
    defaults: &SearchRequest,
    locator: &str,
) -> (String, Result<SearchRequest>) {
    let mut request = defaults.clone();
    if !line.trim_start().starts_with('{') {
        request.set_query(line);
        return (number.to_string(), Ok(request));
    }
    let object = match serde_json::from_str::<serde_json::Value>(line) {
        Ok(serde_json::Value::Object(object)) => object,
        Ok(_) | Err(_) => {
            return (
                number.to_string(),
                Err(Error::query(
                    ErrorCode::InvalidOption,
                    format!("{locator}: a query line starting with '{{' must be a JSON object"),
                )),
            )
        }
    };
    let query_id = match object.get("id") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        _ => number.to_string(),
    };
    // Options first, in line order (SPEC §6), then the query.
    let outcome = request
        .apply_json_options(&object, &["id", "query"])
        .map_err(|e| Error::query(e.code(), format!("{locator}: {e}")))
        .and_then(|()| match object.get("query") {
            Some(serde_json::Value::String(query)) => {
                request.set_query(query.clone());
                Ok(request)
            }
            Some(_) => Err(Error::query(
                ErrorCode::InvalidOption,
                format!("{locator}: \"query\" must be a string"),
            )),
            None => Err(Error::query(
                ErrorCode::InvalidOption,
                format!("{locator}: the line has no \"query\""),
            )),
        });
    (query_id, outcome)
}

/// `--shard I/N`: shard I (from 0) of N.
fn parse_shard(text: &str) -> Result<Shard, String> {
    let parsed = text.split_once('/').and_then(|(i, n)| {
        let (index, count) = (i.trim().parse::<u32>().ok()?, n.trim().parse::<u32>().ok()?);
        (count >= 1 && index < count).then_some(Shard { index, count })
    });
    parsed.ok_or_else(|| format!("{text:?} is not I/N with 0 <= I < N (e.g. 0/4)"))
}
