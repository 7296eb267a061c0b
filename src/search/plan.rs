//! A search request made ready to run: the analyzed query, the filters, the settings and what
//! they imply for the stages of `pipeline.rs`.

use crate::record::Timestamp;
use crate::search::filters::Filters;
use crate::search::query::PreparedQuery;
use crate::search::request::SearchRequest;
use crate::search::TopOrder;
use crate::settings::Settings;

/// A request made ready to run: what every stage reads.
pub(crate) struct Plan<'r> {
    pub request: &'r SearchRequest,
    pub settings: &'r Settings,
    pub query: PreparedQuery,
    pub filters: Filters,
    pub now: Timestamp,
    /// The query has no tokens (a filter-only search).
    pub empty: bool,
    pub token_count: u32,
    /// The standard profile without ranking options: its order is score then id, so only the
    /// top of the list needs sorting and only some phrases need checking.
    pub plain_standard: bool,
    /// Decay whose ranking nothing reads beyond the page (no `--explain`, `--min-score` or
    /// `--rerank`): its entity checks wait until the post-steps, which read only the records
    /// that can reach the page.
    pub decay_page_only: bool,
    /// The order the source can rank by under bounds, and how many places of it the rest of
    /// the pipeline reads (the page, or decay's `--candidates`): for the standard, recency and
    /// decay profiles without a ranking option that reads every candidate (rerank, MMR,
    /// `--candidates`; in decay all come after its list), no `--explain`, a non-empty query.
    /// Only those places are materialized.
    pub top: Option<(TopOrder<'r>, usize)>,
}
