//! One shard seen as part of a collection: its own source, with the collection's statistics and
//! supersession relations in place of its own.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::Result;
use crate::format::codec::StoredRecord;
use crate::search::filters::Filters;
use crate::search::profiles::bm25f::Collection;
use crate::search::query::PreparedQuery;
use crate::search::shards::wire::CollectionStatistics;
use crate::search::{DocRef, ExactPostings, Hit, Matched, RecordValues, Source, TopOrder};

/// A shard's source answering for the whole collection where a profile reads collection-wide
/// values: `bm25f`'s N, avglen and df, the entities some record names, and who supersedes whom.
///
/// It ranks under bounds ([`Source::top`]) only where its own ranking is the collection's:
/// when no record of the collection supersedes another (the bounded paths know supersession
/// only within the shard, and a shard must send every candidate that supersedes another);
/// recency and `bm25f` are told the collection's best relevance and statistics (see
/// [`Context`](crate::search::Context)).
pub(super) struct ShardView<'s> {
    pub inner: &'s dyn Source,
    pub statistics: &'s CollectionStatistics,
    pub superseded_by: &'s BTreeMap<String, String>,
    /// Set when [`Source::top`] answered: the list holds only what can reach the page.
    pub bounded: AtomicBool,
}

impl Source for ShardView<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn matched(&self, query: &PreparedQuery, filters: &Filters) -> Result<Matched<'_>> {
        let mut matched = self.inner.matched(query, filters)?;
        for hit in &mut matched.hits {
            hit.superseded_by = self.superseded_by.get(hit.id).map(String::as_str);
        }
        Ok(matched)
    }

    fn top(
        &self,
        query: &PreparedQuery,
        filters: &Filters,
        limit: usize,
        order: &TopOrder<'_>,
    ) -> Result<Option<Matched<'_>>> {
        if !self.superseded_by.is_empty() {
            return Ok(None);
        }
        let top = self.inner.top(query, filters, limit, order)?;
        self.bounded.store(top.is_some(), Ordering::Relaxed);
        Ok(top)
    }

    fn stored(&self, doc: DocRef) -> Result<StoredRecord> {
        self.inner.stored(doc)
    }

    fn coverage_masks(&self, query: &PreparedQuery, hits: &[&Hit<'_>]) -> Result<Vec<u32>> {
        self.inner.coverage_masks(query, hits)
    }

    fn test_text(
        &self,
        doc: DocRef,
        test: &dyn Fn(&crate::format::codec::RecordText<'_>) -> bool,
    ) -> Result<bool> {
        self.inner.test_text(doc, test)
    }

    fn stored_head(
        &self,
        doc: DocRef,
        content_bytes: usize,
    ) -> Result<crate::format::codec::StoredHead> {
        self.inner.stored_head(doc, content_bytes)
    }

    fn find(&self, id: &str) -> Result<Option<DocRef>> {
        self.inner.find(id)
    }

    fn verify_phrase(&self, doc: DocRef, phrase: &str) -> Result<bool> {
        self.inner.verify_phrase(doc, phrase)
    }

    fn pair_occurs(&self, phrase: &str, docs: &[DocRef]) -> Result<Vec<bool>> {
        self.inner.pair_occurs(phrase, docs)
    }

    fn values(&self, doc: DocRef) -> Result<RecordValues<'_>> {
        self.inner.values(doc)
    }

    fn collection(&self) -> Result<Collection> {
        Ok(self.statistics.collection())
    }

    fn exact_postings(&self, query: &PreparedQuery, docs: &[DocRef]) -> Result<Vec<ExactPostings>> {
        let mut postings = self.inner.exact_postings(query, docs)?;
        self.statistics.use_document_frequencies(&mut postings);
        Ok(postings)
    }

    fn entity_known(&self, name: &str) -> Result<bool> {
        Ok(self.statistics.knows_entity(name))
    }

    fn entity_checks(&self, docs: &[DocRef], entities: &[String]) -> Result<Vec<Option<bool>>> {
        self.inner.entity_checks(docs, entities)
    }
}
