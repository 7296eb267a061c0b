//! Candidates from the memory-mapped index, by job: the [`Source`] wiring (this file),
//! term-at-a-time accumulation per segment (`accumulate`), the top-k of the orders bounded by
//! relevance (`top`) and of `bm25f` (`bm25f_top`), and FST expansion with the filter and phrase bitmaps (`terms`). The log's
//! records are one more segment (held in memory), read like the others.

mod accumulate;
mod bm25f_top;
mod terms;
mod top;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;

use crate::error::Result;
use crate::index::segment::Segment;
use crate::index::Index;
use crate::search::decoded::Decoded;
use crate::search::filters::Filters;
use crate::search::query::PreparedQuery;
use crate::search::{index_statistics, matching, DocRef, Hit, Matched, Source, TopOrder};
use crate::text::Analyzer;

use accumulate::SegmentMatch;
use terms::phrase_among;

/// Searches the segments of an opened index; one per search.
pub(crate) struct IndexSource<'a> {
    pub index: &'a Index,
    /// The records this search decoded to check a phrase in their text: a record is decoded
    /// once however many of the query's word pairs it is asked about, and though `bm25f`'s
    /// first page is scored twice (by its pruned top, then by the pipeline).
    texts: Decoded,
    /// Per segment whose candidates [`Source::top`] returned without their coverage masks,
    /// the terms each query token matched there, and the query they are of: what
    /// [`Source::coverage_masks`] looks the page's masks up in.
    deferred: Mutex<Vec<Deferred>>,
}

/// The terms of a query's tokens in one segment, kept for its page's coverage masks.
struct Deferred {
    segment: u32,
    query: String,
    analyzer: Analyzer,
    terms: Vec<Vec<u64>>,
}

impl Source for IndexSource<'_> {
    fn name(&self) -> &'static str {
        "index"
    }

    fn warm(&self, done: &AtomicBool) {
        // The largest segments first: they hold most of a page.
        let mut segments: Vec<&Segment> = self.index.segments().iter().collect();
        segments.sort_by_key(|segment| std::cmp::Reverse(segment.len()));
        for segment in segments {
            if done.load(Ordering::Relaxed) {
                break;
            }
            segment.warm_store();
        }
    }

    fn matched(&self, query: &PreparedQuery, filters: &Filters) -> Result<Matched<'_>> {
        let per_segment = self
            .index
            .segments()
            .par_iter()
            .enumerate()
            .map(|(s, segment)| self.segment_matched(s as u32, segment, query, filters))
            .collect::<Result<Vec<_>>>()?;
        let mut matched = Matched {
            live: 0,
            passing: 0,
            hits: Vec::new(),
            token_groups: Vec::with_capacity(per_segment.len()),
            counts: None,
        };
        for m in per_segment {
            matched.live += m.live;
            matched.passing += m.passing;
            matched.hits.extend(m.hits);
            matched.token_groups.extend(m.token_groups);
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
        match order {
            TopOrder::Bm25f {
                settings,
                collection,
            } => self.bm25f_top(query, filters, limit, settings, *collection),
            TopOrder::Bounded(order) => self.top_impl(query, filters, limit, order),
        }
        .map(Some)
    }

    fn stored(&self, doc: DocRef) -> Result<crate::format::codec::StoredRecord> {
        self.index.stored(doc)
    }

    fn test_text(
        &self,
        doc: DocRef,
        test: &dyn Fn(&crate::format::codec::RecordText<'_>) -> bool,
    ) -> Result<bool> {
        self.index.test_text(doc, test)
    }

    fn stored_head(
        &self,
        doc: DocRef,
        content_bytes: usize,
    ) -> Result<crate::format::codec::StoredHead> {
        self.index.stored_head(doc, content_bytes)
    }

    fn find(&self, id: &str) -> Result<Option<DocRef>> {
        self.index.find(id)
    }

    fn prefix_fingerprint(&self, doc: DocRef, chars: usize) -> Result<Option<u32>> {
        match &self.index.segments()[doc.segment as usize].prefixes {
            Some(prefixes) if prefixes.chars() == chars => prefixes.get(doc.doc).map(Some),
            _ => Ok(None),
        }
    }

    fn verify_phrase(&self, doc: DocRef, phrase: &str) -> Result<bool> {
        crate::work::phrase_checked();
        Ok(matching::record_has_phrase(
            &self.texts.get(self, doc)?.record,
            phrase,
        ))
    }

    /// Where both words of the pair are frequent in a segment, its pair postings answer for
    /// every record of it; elsewhere the stored text does, for the records holding both words
    /// in one group.
    fn pair_occurs(&self, phrase: &str, docs: &[DocRef]) -> Result<Vec<bool>> {
        let mut occurs = vec![false; docs.len()];
        let mut segments: Vec<u32> = docs.iter().map(|d| d.segment).collect();
        segments.sort_unstable();
        segments.dedup();
        for s in segments {
            let places: Vec<usize> = (0..docs.len()).filter(|&i| docs[i].segment == s).collect();
            let of_segment: Vec<u32> = places.iter().map(|&i| docs[i].doc).collect();
            let segment = &self.index.segments()[s as usize];
            let (possible, exact) = phrase_among(segment, phrase, self.index, &of_segment)?;
            for (&i, possible) in places.iter().zip(possible) {
                occurs[i] = possible && (exact || self.verify_phrase(docs[i], phrase)?);
            }
        }
        Ok(occurs)
    }

    fn values(&self, doc: DocRef) -> Result<crate::search::RecordValues<'_>> {
        index_statistics::values(self.index, doc)
    }

    fn collection(&self) -> Result<crate::search::profiles::bm25f::Collection> {
        index_statistics::collection(self.index)
    }

    fn exact_postings(
        &self,
        query: &PreparedQuery,
        docs: &[DocRef],
    ) -> Result<Vec<crate::search::ExactPostings>> {
        index_statistics::exact_postings(self.index, query, docs)
    }

    fn entity_known(&self, name: &str) -> Result<bool> {
        index_statistics::entity_known(self.index, name)
    }

    fn entity_checks(&self, docs: &[DocRef], entities: &[String]) -> Result<Vec<Option<bool>>> {
        terms::entity_checks(self.index, docs, entities)
    }

    /// The masks [`IndexSource::page_matched`] left out, looked up per segment in the
    /// postings of the terms it kept (or, for another query, expanded again).
    fn coverage_masks(&self, query: &PreparedQuery, hits: &[&Hit<'_>]) -> Result<Vec<u32>> {
        let mut masks: Vec<u32> = hits.iter().map(|hit| hit.coverage_mask).collect();
        let mut pending: Vec<(u32, u32, usize)> = (hits.iter().enumerate())
            .filter(|(_, hit)| hit.matched > 0 && hit.coverage_mask == 0)
            .map(|(i, hit)| (hit.doc.segment, hit.doc.doc, i))
            .collect();
        pending.sort_unstable();
        for of_segment in pending.chunk_by(|a, b| a.0 == b.0) {
            let s = of_segment[0].0;
            let segment = &self.index.segments()[s as usize];
            let kept = self.deferred.lock().ok().and_then(|deferred| {
                (deferred.iter())
                    .find(|d| {
                        d.segment == s && d.query == query.text && d.analyzer == query.analyzer
                    })
                    .map(|d| d.terms.clone())
            });
            let terms = match kept {
                Some(terms) => terms,
                None => (query.tokens.iter())
                    .map(|token| terms::expand(segment, token, query.analyzer))
                    .collect::<Result<_>>()?,
            };
            let docs: Vec<u32> = of_segment.iter().map(|p| p.1).collect();
            let matched = |doc: u32| {
                let at = docs.binary_search(&doc).expect("a page record");
                hits[of_segment[at].2].matched
            };
            let found = accumulate::coverages(segment, &terms, &docs, matched)?;
            for (p, mask) in of_segment.iter().zip(found) {
                masks[p.2] = mask;
            }
        }
        Ok(masks)
    }
}

impl<'a> IndexSource<'a> {
    pub(crate) fn new(index: &'a Index) -> IndexSource<'a> {
        IndexSource {
            index,
            texts: Decoded::default(),
            deferred: Mutex::default(),
        }
    }

    /// Keeps the terms of `m`'s query tokens for [`Source::coverage_masks`] (the latest query's
    /// alone per segment).
    fn defer_coverages(&self, m: &SegmentMatch<'_>, query: &PreparedQuery) {
        if let Ok(mut deferred) = self.deferred.lock() {
            deferred.retain(|d| d.segment != m.s);
            deferred.push(Deferred {
                segment: m.s,
                query: query.text.clone(),
                analyzer: query.analyzer,
                terms: m.terms.clone(),
            });
        }
    }

    /// The hit of record `doc` of a segment, with the phrase flag and the tokens it matched
    /// given (`None`: only their number is known, the mask left for
    /// [`Source::coverage_masks`]).
    fn hit(
        &self,
        m: &SegmentMatch<'a>,
        doc: u32,
        phrase: Option<bool>,
        coverage_mask: Option<u32>,
    ) -> Result<Hit<'a>> {
        let row = m.segment.columns.row(doc)?;
        let mut feedback = row.feedback;
        if let Some(added) = self.index.feedback_added(row.id) {
            feedback.merge(added);
        }
        let superseded_by = self.index.superseders()?.get(row.id).map(String::as_str);
        Ok(Hit {
            doc: DocRef { segment: m.s, doc },
            id: row.id,
            field_sum: m.field_sum(doc),
            matched: coverage_mask.map_or_else(|| m.matched(doc), u32::count_ones),
            coverage_mask: coverage_mask.unwrap_or(0),
            phrase,
            feedback,
            created_at: row.created_at,
            supersedes: row.supersedes,
            superseded_by,
        })
    }

    fn segment_matched(
        &self,
        s: u32,
        segment: &'a Segment,
        query: &PreparedQuery,
        filters: &Filters,
    ) -> Result<Matched<'a>> {
        let m = self.segment_match(s, segment, query, filters)?;
        let mut hits = Vec::new();
        let mut docs = Vec::new();
        m.for_each_candidate(|doc, maybe_phrase| {
            docs.push(doc);
            hits.push((doc, m.known_phrase(maybe_phrase)));
        });
        let (coverages, token_groups) = m.coverages_and_groups(&docs)?;
        let hits = hits
            .into_iter()
            .zip(coverages)
            .map(|((doc, phrase), coverage)| self.hit(&m, doc, phrase, Some(coverage)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Matched {
            live: m.live,
            passing: m.passing,
            hits,
            token_groups: vec![token_groups],
            counts: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::bitpack::bit_set;
    use crate::index::BuildOptions;
    use terms::phrase_records;

    /// An index built from `lines` (JSON Lines) in `dir`, `segment_records` to a segment
    /// where given.
    fn built(dir: &std::path::Path, lines: &[String], segment_records: Option<usize>) -> Index {
        let input = dir.join("records.jsonl");
        std::fs::write(&input, lines.join("\n")).unwrap();
        let path = dir.join("index");
        let mut options = BuildOptions {
            inputs: vec![input],
            ..Default::default()
        };
        if let Some(segment_records) = segment_records {
            options.segment_records = segment_records;
        }
        Index::build(&path, &options).unwrap();
        Index::open(&path).unwrap()
    }

    /// A segment's irregular records hold the records with a non-ASCII term or a term of 64
    /// characters (stop words included); they are one of its facets, read at the first ask,
    /// and decide with the postings the entity check of every other record where an entity is
    /// one plain word, or a record lacks a word of each entity. A segment without entity
    /// facets (its manifest written before them) reads them from its dictionary the second
    /// time they are asked for, and until then the postings decide no entity check.
    #[test]
    fn irregular_records_decide_with_the_postings() {
        let dir = tempfile::tempdir().unwrap();
        let long = "b".repeat(70);
        let lines: Vec<String> = [
            "plain words only".to_string(),
            "caf\u{e9} au lait".to_string(),
            format!("a {long} word"),
            "THE \u{130} dotted".to_string(),
            "the plain tokio".to_string(),
            "c and d".to_string(),
        ]
        .iter()
        .enumerate()
        .map(|(i, task)| format!(r#"{{"id":"r{i}","task":"{task}"}}"#))
        .collect();
        let docs: Vec<DocRef> = (0..6).map(|doc| DocRef { segment: 0, doc }).collect();
        let (no, yes) = (Some(false), Some(true));
        let checks = |index: &Index, entities: &[&str]| {
            let entities: Vec<String> = entities.iter().map(|e| e.to_string()).collect();
            IndexSource::new(index)
                .entity_checks(&docs, &entities)
                .unwrap()
        };
        let decided = |index: &Index| {
            assert_eq!(checks(index, &["Kafka"]), [no, None, None, None, no, no]);
            assert_eq!(checks(index, &["Tokio"]), [no, None, None, None, yes, no]);
            // Two words held apart do not make the entity occur; one missing tells it does not.
            assert_eq!(
                checks(index, &["Plain Words"]),
                [None, None, None, None, no, no]
            );
            // "c" is the plain word of "C++", which "c and d" does not hold.
            assert_eq!(checks(index, &["C++"]), [no, None, None, None, no, None]);
            // One entity found decides; one with no plain words leaves the rest to reading.
            assert_eq!(
                checks(index, &["Tokio", "++"]),
                [None, None, None, None, yes, None]
            );
            assert_eq!(
                index.segments()[0].irregular().unwrap().unwrap(),
                [0b001110]
            );
        };
        let index = built(dir.path(), &lines, None);
        decided(&index);

        let path = dir.path().join("index");
        let mut manifest = crate::format::manifest::Manifest::load(&path).unwrap();
        manifest.segments[0].entity_facets = false;
        manifest.store(&path).unwrap();
        let old = Index::open(&path).unwrap();
        assert_eq!(checks(&old, &["Kafka"]), [None; 6]);
        decided(&old);
    }

    /// Records decoded for phrase checks are kept within the byte budget: large records past
    /// it are decoded again, and every answer is the stored record.
    #[test]
    fn records_kept_for_phrase_checks_stay_within_their_bytes() {
        let dir = tempfile::tempdir().unwrap();
        // Ten records of 900 KB each (fifteen problems of 60 KB): nine fit in 8 MiB.
        let lines: Vec<String> = (0..10)
            .map(|i| {
                let problem = format!("\"{}\"", format!("word{i} ").repeat(10_000));
                let problems = vec![problem; 15].join(",");
                format!(r#"{{"id":"r{i}","title":"large {i}","problems":[{problems}]}}"#)
            })
            .collect();
        let index = built(dir.path(), &lines, None);
        let source = IndexSource::new(&index);
        let docs: Vec<DocRef> = (0..10).map(|doc| DocRef { segment: 0, doc }).collect();
        for _ in 0..2 {
            for &doc in &docs {
                let text = source.texts.get(&source, doc).unwrap();
                assert_eq!(text.record.id, index.stored(doc).unwrap().record.id);
                assert!(source.verify_phrase(doc, "large").unwrap());
            }
        }
        let (records, bytes) = source.texts.kept();
        assert!(bytes <= Decoded::BYTES, "{bytes}");
        assert!(bytes > Decoded::BYTES - (1 << 20), "{bytes}");
        assert_eq!(records, 9);
    }

    /// A phrase of frequent words is narrowed to the records holding every one of its pairs
    /// (exactly, for two words) before any text is read; records holding each pair apart pass
    /// to the text check, those holding one pair only do not. "alpha beta" is held by 41
    /// records (a list inside its partners blob), "beta gamma" by 112 (a blob of its own).
    #[test]
    fn phrase_records_hold_every_pair_of_the_phrase() {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = (0..150)
            .map(|i| {
                let task = match i {
                    0 | 1 => "alpha beta gamma",
                    2 => "alpha beta then beta gamma",
                    3..=40 => "alpha beta and gamma alpha",
                    _ => "beta gamma",
                };
                format!(r#"{{"id":"r{i}","task":"{task}"}}"#)
            })
            .collect();
        let index = built(dir.path(), &lines, None);
        let segment = &index.segments()[0];
        let records =
            |bits: &[u64]| -> Vec<u32> { (0..150).filter(|&d| bit_set(bits, d)).collect() };
        let (bits, exact) = phrase_records(segment, "alpha beta gamma", &index)
            .unwrap()
            .unwrap();
        assert_eq!((records(&bits), exact), (vec![0, 1, 2], false));
        let (bits, exact) = phrase_records(segment, "beta gamma", &index)
            .unwrap()
            .unwrap();
        let mut holding = vec![0, 1, 2];
        holding.extend(41..150);
        assert_eq!((records(&bits), exact), (holding, true));
        // A pair of frequent words no record holds.
        let (bits, exact) = phrase_records(segment, "gamma beta alpha", &index)
            .unwrap()
            .unwrap();
        assert_eq!((records(&bits), exact), (vec![], false));
        // Asked of records in any order, some twice.
        let (possible, exact) =
            phrase_among(segment, "alpha beta gamma", &index, &[40, 2, 0, 149, 1, 2]).unwrap();
        assert_eq!(possible, [false, true, true, false, true, true]);
        assert!(!exact);
        let (possible, exact) = phrase_among(segment, "beta gamma", &index, &[149, 3, 0]).unwrap();
        assert_eq!((possible, exact), (vec![true, false, true], true));
    }

    #[test]
    fn warming_reads_the_stores_until_told_to_stop() {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = (0..30)
            .map(|i| {
                format!(
                    r#"{{"id":"r{i}","task":"connection pool timeout {i}","solution":"raise the pool size"}}"#
                )
            })
            .collect();
        let index = built(dir.path(), &lines, Some(10));
        assert_eq!(index.segments().len(), 3);
        let source = IndexSource::new(&index);
        source.warm(&AtomicBool::new(true));
        assert!(index.segments().iter().all(|s| !s.store_is_warm()));
        source.warm(&AtomicBool::new(false));
        assert!(index.segments().iter().all(|s| s.store_is_warm()));
    }
}
