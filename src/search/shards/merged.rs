//! The records the shards sent, as one source: the merge runs the very pipeline one index runs
//! (profiles, post-steps, page, response) over them, with the collection's statistics and
//! counts in place of what the records alone would say.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::format::codec::StoredRecord;
use crate::search::filters::Filters;
use crate::search::profiles::bm25f::Collection;
use crate::search::query::PreparedQuery;
use crate::search::response::Counts;
use crate::search::scan::{scan_records, ScanSource};
use crate::search::shards::wire::CollectionStatistics;
use crate::search::{DocRef, ExactPostings, Matched, RecordValues, Source, TopOrder};

/// The shards' records scanned as one list (shard by shard, in the order sent).
pub(super) struct MergedSource<'s> {
    pub scan: ScanSource,
    /// Per record of `scan`, its smallest superseder in the whole collection.
    pub superseded_by: Vec<Option<String>>,
    pub statistics: &'s CollectionStatistics,
    /// Summed over the shards.
    pub live: usize,
    pub passing: usize,
    pub counts: Counts,
    /// `index`, or `scan` when some shard scanned.
    pub backend: &'static str,
}

impl<'s> MergedSource<'s> {
    /// The source over `records`, which the shards sent.
    pub fn new(
        records: Vec<StoredRecord>,
        stem: bool,
        superseded_by: &BTreeMap<String, String>,
        statistics: &'s CollectionStatistics,
    ) -> MergedSource<'s> {
        let by = records
            .iter()
            .map(|r| superseded_by.get(&r.record.id).cloned())
            .collect();
        MergedSource {
            scan: ScanSource::new(records, stem),
            superseded_by: by,
            statistics,
            live: 0,
            passing: 0,
            counts: Counts::default(),
            backend: "index",
        }
    }
}

impl Source for MergedSource<'_> {
    fn name(&self) -> &'static str {
        self.backend
    }

    /// The records sent that match, with the shards' live and passing records and the counts
    /// of all their candidates (a profile may have dropped some the shards did not send).
    fn matched(&self, query: &PreparedQuery, filters: &Filters) -> Result<Matched<'_>> {
        let superseded_by = |doc: u32| self.superseded_by[doc as usize].as_deref();
        let mut matched = scan_records(
            &self.scan.records,
            0,
            query,
            filters,
            &self.scan.analyzer,
            &superseded_by,
        );
        matched.live = self.live;
        matched.passing = self.passing;
        matched.counts = Some(self.counts);
        Ok(matched)
    }

    /// For a bounded order the shards sent what can reach the page: the same.
    fn top(
        &self,
        query: &PreparedQuery,
        filters: &Filters,
        _limit: usize,
        _order: &TopOrder<'_>,
    ) -> Result<Option<Matched<'_>>> {
        self.matched(query, filters).map(Some)
    }

    fn stored(&self, doc: DocRef) -> Result<StoredRecord> {
        self.scan.stored(doc)
    }

    fn test_text(
        &self,
        doc: DocRef,
        test: &dyn Fn(&crate::format::codec::RecordText<'_>) -> bool,
    ) -> Result<bool> {
        self.scan.test_text(doc, test)
    }

    fn find(&self, id: &str) -> Result<Option<DocRef>> {
        self.scan.find(id)
    }

    fn values(&self, doc: DocRef) -> Result<RecordValues<'_>> {
        self.scan.values(doc)
    }

    fn collection(&self) -> Result<Collection> {
        Ok(self.statistics.collection())
    }

    fn exact_postings(&self, query: &PreparedQuery, docs: &[DocRef]) -> Result<Vec<ExactPostings>> {
        let mut postings = self.scan.exact_postings(query, docs)?;
        self.statistics.use_document_frequencies(&mut postings);
        Ok(postings)
    }

    fn entity_known(&self, name: &str) -> Result<bool> {
        Ok(self.statistics.knows_entity(name))
    }
}
