//! A search request made ready to run: the analyzed query, the filters, the settings and what
//! they imply for the stages of `pipeline.rs`.

use crate::record::Timestamp;
use crate::search::filters::Filters;
use crate::search::query::PreparedQuery;
use crate::search::request::SearchRequest;
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
    /// `plain_standard`, no `--explain`, a non-empty query: only the page is materialized.
    pub top_only: bool,
}
