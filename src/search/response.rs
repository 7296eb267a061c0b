//! The response of a search (SPEC §7), serialized as the CLI and the MCP server print it.

use serde::Serialize;

use crate::search::standard::MatchLevel;
use crate::text::Analyzer;

/// How many candidates there were, by level, and how many records the filters removed.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
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
    pub score_breakdown: serde_json::Map<String, serde_json::Value>,
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
    /// `result`, `not_found`, `filtered`, `no_token_matched`, `superseded`,
    /// `below_min_score` or `beyond_limit`.
    pub status: &'static str,
    /// Its 1-based rank among the ranked candidates, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// The filter that removed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<&'static str>,
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
    pub score_breakdown: Option<serde_json::Map<String, serde_json::Value>>,
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
    pub profile: &'static str,
    /// The reference time.
    pub now: String,
    /// `index` or `scan`.
    pub backend: &'static str,
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
