//! What the profiles ask of the scan source, computed from the decoded records exactly as the
//! index stores it: column values, collection statistics, exact-term postings and entities. The
//! scan is the reference the index is tested against, so these follow the build's analysis
//! (`index_tokens` per field group) rather than reading anything precomputed.

use std::borrow::Cow;

use rayon::prelude::*;

use crate::format::codec::StoredRecord;
use crate::record::Record;
use crate::schema::{FieldGroup, GROUP_COUNT};
use crate::search::profiles::bm25f::Collection;
use crate::search::query::PreparedQuery;
use crate::search::scan::ScanSource;
use crate::search::{DocRef, ExactPostings, RecordValues};
use crate::text::{Analyzer, IndexToken, TextAnalyzer};

/// Each group's index tokens of `record`.
fn group_tokens(record: &Record, analyzer: &TextAnalyzer) -> [Vec<IndexToken>; GROUP_COUNT] {
    let mut out: [Vec<IndexToken>; GROUP_COUNT] = Default::default();
    for g in FieldGroup::ALL {
        for value in record.group_values(g) {
            analyzer.index_tokens(value, &mut out[g as usize]);
        }
    }
    out
}

fn group_lengths(record: &Record, analyzer: &TextAnalyzer) -> [u32; GROUP_COUNT] {
    group_tokens(record, analyzer).map(|tokens| tokens.len() as u32)
}

impl ScanSource {
    /// The values the columns would hold for `doc`.
    pub(crate) fn scan_values(&self, doc: DocRef) -> RecordValues<'_> {
        record_values(&self.records[doc.doc as usize].record, &self.analyzer)
    }

    /// Live records and their summed group lengths.
    pub(crate) fn scan_collection(&self) -> Collection {
        collection(&self.records, &self.analyzer)
    }

    /// Per query token, the records containing it exactly and how often per group.
    pub(crate) fn scan_exact_postings(&self, query: &PreparedQuery) -> Vec<ExactPostings> {
        exact_postings(&self.records, &self.analyzer, query, 0)
    }

    /// Whether some record names `name` (lowercased) among its entities.
    pub(crate) fn scan_entity_known(&self, name: &str) -> bool {
        entity_known(&self.records, name)
    }
}

/// The values the columns would hold for `record`.
pub(crate) fn record_values<'a>(record: &Record, analyzer: &TextAnalyzer) -> RecordValues<'a> {
    RecordValues {
        salience: record.salience_or_default(),
        decay_factor: record.decay_factor_or_default(),
        memory_type: Cow::Owned(record.memory_type_normalized()),
        pinned: record.pinned_or_default(),
        group_lengths: group_lengths(record, analyzer),
    }
}

/// Live records and their summed group lengths.
pub(crate) fn collection(records: &[StoredRecord], analyzer: &TextAnalyzer) -> Collection {
    let sums = records
        .par_iter()
        .map(|r| group_lengths(&r.record, analyzer))
        .reduce(
            || [0u32; GROUP_COUNT],
            |a, b| std::array::from_fn(|g| a[g] + b[g]),
        );
    Collection {
        live: records.len() as u64,
        group_length_sums: sums.map(u64::from),
    }
}

/// Per query token, the records containing it exactly and how often per group, as records of
/// segment number `segment`.
pub(crate) fn exact_postings(
    records: &[StoredRecord],
    analyzer: &TextAnalyzer,
    query: &PreparedQuery,
    segment: u32,
) -> Vec<ExactPostings> {
    let english = query.analyzer == Analyzer::English;
    let per_record: Vec<Vec<[u32; GROUP_COUNT]>> = records
        .par_iter()
        .map(|r| {
            let groups = group_tokens(&r.record, analyzer);
            query
                .tokens
                .iter()
                .map(|q| {
                    groups.each_ref().map(|tokens| {
                        tokens
                            .iter()
                            .filter(|t| t.text == q.text && !(english && t.stop))
                            .count() as u32
                    })
                })
                .collect()
        })
        .collect();
    let mut out = vec![ExactPostings::default(); query.tokens.len()];
    for (doc, tfs) in per_record.into_iter().enumerate() {
        for (postings, tf) in out.iter_mut().zip(tfs) {
            if tf.iter().any(|&n| n > 0) {
                postings.df += 1;
                postings.docs.push((
                    DocRef {
                        segment,
                        doc: doc as u32,
                    },
                    tf,
                ));
            }
        }
    }
    out
}

/// Whether some record names `name` (lowercased) among its entities.
pub(crate) fn entity_known(records: &[StoredRecord], name: &str) -> bool {
    records
        .iter()
        .any(|r| r.record.entities.iter().any(|e| e.to_lowercase() == name))
}
