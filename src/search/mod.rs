//! Search: running a request against an index snapshot ([`Index::search`](crate::Index::search)
//! in `backend.rs`: backend choice and the damaged-index fallback), as a pipeline of named
//! stages (`pipeline.rs`): candidates from a source (the index, `index_source/`, or a scan of
//! the stored records, `scan.rs`), phrase checks, the profile, the post-steps, the page and the
//! response.
//!
//! Both sources hand the same plain values to the same pure scoring code, so the index and the
//! degraded scan answer identically (a property the tests check).

mod backend;
pub mod breakdown;
pub mod budget;
pub mod builder;
mod decay_page;
mod decoded;
pub mod entities;
pub mod federated;
pub mod filters;
pub(crate) mod index_source;
mod index_statistics;
pub(crate) mod matching;
pub mod mmr;
mod phrase_checks;
mod pipeline;
mod plan;
mod post_steps;
pub mod profiles;
pub mod query;
mod ranking;
pub mod request;
mod respond;
pub mod response;
pub(crate) mod scan;
mod scan_statistics;
mod scratch;
pub mod shards;

pub use crate::settings;
pub use profiles::standard;

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::LazyLock;

use rayon::prelude::*;
use roaring::RoaringBitmap;

use crate::error::Result;
use crate::format::codec::{RecordText, StoredHead, StoredRecord};
use crate::record::Feedback;
use crate::schema::GROUP_COUNT;
use crate::settings::{Bm25fSettings, RecencySettings, Settings};
use crate::text::TextAnalyzer;

use filters::Filters;
use profiles::bm25f::Collection;
use query::PreparedQuery;
use ranking::Ranked;
use response::Counts;
use standard::MatchLevel;

pub use crate::index::DocRef;
pub(crate) use pipeline::execute;

/// One candidate as a source reports it: match evidence and the column values scoring needs.
#[derive(Debug, Clone)]
pub(crate) struct Hit<'a> {
    pub doc: DocRef,
    pub id: &'a str,
    /// `Σ_g weight[g] × |tokens matching g|`.
    pub field_sum: u32,
    /// The number of query tokens matched in some group.
    pub matched: u32,
    /// Bit i set ⇔ query token i matched some group: `matched` bits. A source may leave it 0
    /// in the candidates its [`Source::top`] returns and look it up for the page alone
    /// ([`Source::coverage_masks`]).
    pub coverage_mask: u32,
    /// Whether the exact phrase occurs; `None` when the postings allow it but the stored text
    /// has not been checked yet (see [`Source::verify_phrase`]).
    pub phrase: Option<bool>,
    pub feedback: Feedback,
    pub created_at: Option<(i64, u32)>,
    pub supersedes: Option<&'a str>,
    pub superseded_by: Option<&'a str>,
}

/// Per token, per group: the records of one segment that the token matches there.
pub(crate) type TokenGroups = Vec<[RoaringBitmap; GROUP_COUNT]>;

/// What a source found for one query.
pub(crate) struct Matched<'a> {
    /// Live records.
    pub live: usize,
    /// Live records passing the filters.
    pub passing: usize,
    /// The candidates (relevance > 0), or for an empty query every record passing the filters.
    pub hits: Vec<Hit<'a>>,
    /// Per segment, per token, per group: matching records (for breakdowns of final results).
    pub token_groups: Vec<TokenGroups>,
    /// Set by [`Source::top`]: the number and levels of all candidates, of which
    /// `hits` holds only those that can reach the page.
    pub counts: Option<Counts>,
}

/// A source of candidates and stored records.
pub(crate) trait Source: Sync {
    /// `index` or `scan`.
    fn name(&self) -> &'static str;
    /// The candidates of `query` under `filters`.
    fn matched(&self, query: &PreparedQuery, filters: &Filters) -> Result<Matched<'_>>;
    /// For a ranking whose order the candidates' relevance bounds (see [`TopOrder`]; no
    /// `--explain`, a non-empty query): the candidates that can reach the first `limit`
    /// places of `order` or take part in a supersession relation, with whatever else the
    /// profile reads of the candidate list (the best relevance), their phrases checked wherever
    /// that can change the page or a match level, and in [`Matched::counts`] the number and
    /// levels of all candidates. `None` when the source knows no faster way than
    /// [`Source::matched`].
    fn top(
        &self,
        _query: &PreparedQuery,
        _filters: &Filters,
        _limit: usize,
        _order: &TopOrder<'_>,
    ) -> Result<Option<Matched<'_>>> {
        Ok(None)
    }
    /// Readies what [`Source::stored`] reads first (an index's store models), while the
    /// candidates are scored, until `done` is set: a fresh process reads them off the critical
    /// path.
    fn warm(&self, _done: &std::sync::atomic::AtomicBool) {}
    /// The stored record at `doc`.
    fn stored(&self, doc: DocRef) -> Result<StoredRecord>;
    /// Whether `test` holds for the searchable text of the stored record at `doc`, read
    /// without building the record where the source can.
    fn test_text(&self, doc: DocRef, test: &dyn Fn(&RecordText<'_>) -> bool) -> Result<bool> {
        let stored = self.stored(doc)?;
        Ok(test(&RecordText::of(&stored.record)))
    }
    /// The head of the stored record at `doc` — locator, title, and at least `content_bytes`
    /// bytes of its content (or all of it) — read without decoding more than that takes
    /// where the source can.
    fn stored_head(&self, doc: DocRef, content_bytes: usize) -> Result<StoredHead> {
        let _ = content_bytes;
        self.stored(doc).map(|stored| StoredHead::of(&stored))
    }
    /// The fingerprint of the content prefix of `chars` characters of the record at `doc`
    /// (SPEC §6.2; `format/prefixes.rs`), where the source stores one of that length.
    fn prefix_fingerprint(&self, doc: DocRef, chars: usize) -> Result<Option<u32>> {
        let _ = (doc, chars);
        Ok(None)
    }
    /// The live record with this id.
    fn find(&self, id: &str) -> Result<Option<DocRef>>;
    /// Whether `phrase` occurs in the stored text of `doc` (SPEC §4), for hits whose phrase
    /// flag is still unknown.
    fn verify_phrase(&self, doc: DocRef, phrase: &str) -> Result<bool> {
        crate::work::phrase_checked();
        Ok(matching::record_has_phrase(
            &self.stored(doc)?.record,
            phrase,
        ))
    }
    /// Which of `docs` hold the two-word `phrase` (SPEC §4), in the order given: for `bm25f`'s
    /// proximity signal, asked once per query word pair for the records holding both words.
    fn pair_occurs(&self, phrase: &str, docs: &[DocRef]) -> Result<Vec<bool>> {
        docs.iter()
            .map(|&doc| self.verify_phrase(doc, phrase))
            .collect()
    }
    /// The column values of the record at `doc` that the profiles need, without decoding it.
    fn values(&self, doc: DocRef) -> Result<RecordValues<'_>>;
    /// The live records and their summed group lengths (for `bm25f`), in O(segments).
    fn collection(&self) -> Result<Collection>;
    /// Per query token, its exact matches over every live record (no filters): the document
    /// frequency, and the term frequencies per group of (at least) the records `docs` (for
    /// `bm25f`). An `english` query ignores stop-word tokens of the records, as in matching
    /// (SPEC §3).
    fn exact_postings(&self, query: &PreparedQuery, docs: &[DocRef]) -> Result<Vec<ExactPostings>>;
    /// Whether some live record names this entity (given lowercased) in its `entities`.
    fn entity_known(&self, name: &str) -> Result<bool>;
    /// The coverage masks of `hits`, in order: each hit's own, or looked up where its source
    /// left it for later (see [`Hit::coverage_mask`]). Asked for the page's hits.
    fn coverage_masks(&self, query: &PreparedQuery, hits: &[&Hit<'_>]) -> Result<Vec<u32>> {
        let _ = query;
        Ok(hits.iter().map(|hit| hit.coverage_mask).collect())
    }
    /// For each record of `docs`, the entity check (SPEC §5.4: whether one of `entities` occurs
    /// in it) where what the source knows without reading the record decides it; `None` where
    /// it cannot tell.
    fn entity_checks(&self, docs: &[DocRef], entities: &[String]) -> Result<Vec<Option<bool>>> {
        let _ = entities;
        Ok(vec![None; docs.len()])
    }
}

/// The orders [`Source::top`] can rank by without scoring every candidate.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TopOrder<'s> {
    /// A candidate's relevance turned into its score by values of its own record, whose range
    /// is known before they are read.
    Bounded(BoundedOrder<'s>),
    /// The `bm25f` score plus feedback (SPEC §5.3): a sum over the query's terms, bounded term
    /// by term.
    Bm25f {
        settings: &'s Bm25fSettings,
        /// The whole collection's statistics when the source is one shard of it (see
        /// [`Context::collection`]); else the source's own.
        collection: Option<CollectionValues<'s>>,
    },
}

/// The orders bounded by relevance (see [`TopOrder::Bounded`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum BoundedOrder<'s> {
    /// The standard score, relevance + feedback (SPEC §4).
    Standard,
    /// `decay`'s candidate list (SPEC §5.1): relevance alone, superseded records left out
    /// unless `include_superseded`; the `limit` of [`Source::top`] is its `--candidates`.
    DecayCandidates { include_superseded: bool },
    /// The recency score (SPEC §5.2) at `now` (unix seconds, nanoseconds).
    Recency {
        settings: &'s RecencySettings,
        now: (i64, u32),
        /// The best relevance of the whole collection's candidates when the source is one
        /// shard of it (see [`Context::best_relevance`]); else the source finds its own.
        best_relevance: Option<f64>,
    },
}

/// The column values of one record that profiles need.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RecordValues<'a> {
    pub salience: f64,
    pub decay_factor: f64,
    pub memory_type: Cow<'a, str>,
    pub pinned: bool,
    pub group_lengths: [u32; GROUP_COUNT],
}

/// One query token's exact matches.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ExactPostings {
    /// Live records containing the token in any group.
    pub df: u64,
    /// Per record (ascending), the token's frequency in each group: for the records asked
    /// about, or more.
    pub docs: Vec<(DocRef, [u32; GROUP_COUNT])>,
}

/// What the caller knows that the source does not.
pub(crate) struct Context<'a> {
    pub analyzer: &'a TextAnalyzer,
    /// Identifies the index generation and its settings, for the fingerprint.
    pub generation: &'a str,
    pub degraded: bool,
    pub notices: Vec<String>,
    /// The best relevance among the candidates of the whole collection, when the source holds
    /// only part of it (a shard): `recency` normalizes by it (SPEC §5.2).
    pub best_relevance: Option<f64>,
    /// The whole collection's `bm25f` statistics, when the source holds only part of it.
    pub collection: Option<CollectionValues<'a>>,
}

/// `bm25f`'s statistics of a whole collection (SPEC §5.3): N and the group lengths, and the
/// document frequency of each query token.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CollectionValues<'a> {
    pub collection: Collection,
    pub document_frequencies: &'a [u64],
}

/// The settings used when a request names none: the SPEC numbers.
pub(crate) static DEFAULT_SETTINGS: LazyLock<Settings> = LazyLock::new(Settings::default);

pub(crate) fn by_created_desc_then_id(a: &Ranked<'_>, b: &Ranked<'_>) -> Ordering {
    match (a.hit.created_at, b.hit.created_at) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
    .then_with(|| a.hit.id.as_bytes().cmp(b.hit.id.as_bytes()))
}

/// Orders candidates by score descending, then id ascending bytewise (SPEC §4). Candidates are
/// large; sorting small keys and then moving each candidate once is several times faster than
/// sorting the candidates themselves.
pub(crate) fn sort_by_score(ranked: &mut [Ranked<'_>]) {
    let mut keys: Vec<(f64, &str, u32)> = ranked
        .iter()
        .enumerate()
        .map(|(i, r)| (r.score, r.hit.id, i as u32))
        .collect();
    keys.par_sort_unstable_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
    });
    // Apply the permutation in place: position i takes the candidate first at keys[i].2, which
    // earlier swaps may have moved; follow them.
    let order: Vec<u32> = keys.into_iter().map(|(_, _, i)| i).collect();
    for i in 0..order.len() {
        let mut j = order[i] as usize;
        while j < i {
            j = order[j] as usize;
        }
        ranked.swap(i, j);
    }
}

/// The score and level of a hit in the standard profile, without building its breakdown.
pub(crate) fn standard_score(hit: &Hit<'_>, phrase: bool, token_count: u32) -> (f64, MatchLevel) {
    standard_parts(
        hit.field_sum,
        hit.matched,
        phrase,
        token_count,
        standard::feedback_score(&hit.feedback),
    )
}

/// The standard score and level from a record's match evidence and feedback term.
pub(crate) fn standard_parts(
    field_sum: u32,
    matched: u32,
    phrase: bool,
    token_count: u32,
    feedback: f64,
) -> (f64, MatchLevel) {
    let relevance = standard::relevance(field_sum, phrase, matched, token_count);
    (
        relevance.relevance + feedback,
        standard::match_level(relevance.coverage, relevance.relevance),
    )
}
