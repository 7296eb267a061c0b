//! The response of a search (SPEC §7), serialized as the CLI and the MCP server print it.

use serde::{Deserialize, Serialize};

use crate::search::breakdown::ScoreBreakdown;
use crate::search::request::Profile;
use crate::search::standard::MatchLevel;
use crate::text::Analyzer;

/// Where a search read its results from: `index` or `scan` in the JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendUsed {
    /// The index's segments and log.
    Index,
    /// A scan of the stored records (asked for, or a fallback from a damaged index).
    Scan,
}

impl BackendUsed {
    /// The name the JSON prints.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendUsed::Index => "index",
            BackendUsed::Scan => "scan",
        }
    }

    /// The backend a search source names itself by (`"index"` or `"scan"`).
    pub(crate) fn from_name(name: &str) -> BackendUsed {
        if name == "scan" {
            BackendUsed::Scan
        } else {
            BackendUsed::Index
        }
    }
}

impl PartialEq<&str> for BackendUsed {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// Why a record is or is not among the results: `status` in `--explain`'s JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExplainStatus {
    /// It is a result.
    Result,
    /// No live record has this id.
    NotFound,
    /// A filter removed it ([`Explain::filter`] says which).
    Filtered,
    /// It matched no query token.
    NoTokenMatched,
    /// A live record supersedes it.
    Superseded,
    /// Its normalized score is below `--min-score`.
    BelowMinScore,
    /// It ranked beyond the limit (or the candidate cut).
    BeyondLimit,
}

impl ExplainStatus {
    /// The name the JSON prints.
    pub fn as_str(self) -> &'static str {
        match self {
            ExplainStatus::Result => "result",
            ExplainStatus::NotFound => "not_found",
            ExplainStatus::Filtered => "filtered",
            ExplainStatus::NoTokenMatched => "no_token_matched",
            ExplainStatus::Superseded => "superseded",
            ExplainStatus::BelowMinScore => "below_min_score",
            ExplainStatus::BeyondLimit => "beyond_limit",
        }
    }
}

impl PartialEq<&str> for ExplainStatus {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The filter that removed a record: `filter` in `--explain`'s JSON, named as the option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum FilterKind {
    /// `--project-context`.
    #[serde(rename = "projectContext")]
    ProjectContext,
    /// `--tag`.
    #[serde(rename = "tag")]
    Tag,
    /// `--type`.
    #[serde(rename = "type")]
    MemoryType,
}

impl FilterKind {
    /// The name the JSON prints.
    pub fn as_str(self) -> &'static str {
        match self {
            FilterKind::ProjectContext => "projectContext",
            FilterKind::Tag => "tag",
            FilterKind::MemoryType => "type",
        }
    }
}

impl PartialEq<&str> for FilterKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// How many candidates there were, by level, and how many records the filters removed.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Records with relevance > 0 (or, for an empty query with filters, those passing them).
    pub candidates: usize,
    /// Candidates whose level is strong.
    pub strong: usize,
    /// Candidates whose level is moderate.
    pub moderate: usize,
    /// Candidates whose level is weak.
    pub weak: usize,
    /// Live records removed by a filter.
    pub filtered: usize,
}

impl Counts {
    /// Counts one candidate of `level`.
    pub fn add(&mut self, level: crate::search::standard::MatchLevel) {
        self.add_many(level, 1);
    }

    /// Counts `n` candidates of `level`.
    pub fn add_many(&mut self, level: crate::search::standard::MatchLevel, n: usize) {
        use crate::search::standard::MatchLevel;
        match level {
            MatchLevel::Strong => self.strong += n,
            MatchLevel::Moderate => self.moderate += n,
            MatchLevel::Weak => self.weak += n,
        }
    }
}

/// One result.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// The record's id.
    pub id: String,
    /// Where it came from (`file:line`), accepted by `show`.
    pub locator: String,
    /// Its title; `null` when the record has none or a blank one (SPEC §1).
    pub title: Option<String>,
    /// A one-line label for people: the title, or the start of an untitled record's text
    /// ([`Record::label`](crate::Record::label)); not part of the JSON.
    #[serde(skip)]
    pub label: String,
    /// The ordering score.
    pub score: f64,
    /// The score relative to the best (SPEC §6.4).
    pub normalized_score: f64,
    /// strong, moderate or weak.
    pub match_level: MatchLevel,
    /// Matched query tokens ÷ query tokens.
    pub coverage: f64,
    /// The query tokens it matched, in query order.
    pub matched_tokens: Vec<String>,
    /// The smallest id of the live records superseding it.
    pub superseded_by: Option<String>,
    /// Every component of the score.
    pub score_breakdown: ScoreBreakdown,
    /// The whole record, with `--full`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<serde_json::Value>,
    /// In a federated search (several `--index`), the index the result came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
}

/// Why a record is or is not among the results (`--explain ID`).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explain {
    /// The id asked about.
    pub id: String,
    /// Whether it is a result, and if not, why.
    pub status: ExplainStatus,
    /// Its 1-based rank among the ranked candidates, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// The filter that removed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<FilterKind>,
    /// Its score, when it is a candidate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Its normalized score, when it is a candidate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub normalized_score: Option<f64>,
    /// Its match level, when it is a candidate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_level: Option<MatchLevel>,
    /// Its breakdown, when it is a candidate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score_breakdown: Option<ScoreBreakdown>,
}

/// The whole answer to one query.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    /// The id of the query in a `--queries` batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_id: Option<String>,
    /// The query as given.
    pub query: String,
    /// The query tokens used.
    pub tokens: Vec<String>,
    /// Tokens beyond the 32 used.
    pub dropped_tokens: Vec<String>,
    /// The analyzer the query routed to.
    pub analyzer: Analyzer,
    /// The profile used.
    pub profile: Profile,
    /// The reference time.
    pub now: String,
    /// Where the results were read from: `index` or `scan`.
    pub backend: BackendUsed,
    /// Whether the index could not be used and the records were scanned instead.
    pub degraded: bool,
    /// Clamped options, fallbacks and other notes.
    pub notices: Vec<String>,
    /// Candidate counts.
    pub counts: Counts,
    /// Equal fingerprints promise equal results.
    pub fingerprint: String,
    /// The results, best first.
    pub results: Vec<SearchResult>,
    /// With `--explain ID`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
}

macro_rules! display_as_str {
    ($($t:ty),*) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}

display_as_str!(BackendUsed, ExplainStatus, FilterKind);
