//! Candidates by scanning the stored records: the degraded mode of SPEC §9 and the reference
//! the index is tested against. It applies the matching rules of SPEC §3 token by token.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::error::Result;
use crate::format::codec::StoredRecord;
use crate::schema::{FieldGroup, GROUP_COUNT};
use crate::search::filters::Filters;
use crate::search::matching::record_has_phrase;
use crate::search::query::{token_matches, PreparedQuery};
use crate::search::{standard, DocRef, Hit, Matched, Source, TokenGroups};
use crate::text::{IndexToken, TextAnalyzer};

/// Every live record, decoded, with what the columns would hold.
pub(crate) struct ScanSource {
    pub(crate) records: Vec<StoredRecord>,
    superseded_by: Vec<Option<String>>,
    by_id: HashMap<String, u32>,
    pub(crate) analyzer: TextAnalyzer,
}

impl ScanSource {
    /// Prepares a scan over `records` (the live records, in index order).
    pub fn new(records: Vec<StoredRecord>, stem: bool) -> ScanSource {
        let by_id: HashMap<String, u32> = records
            .iter()
            .enumerate()
            .map(|(i, r)| (r.record.id.clone(), i as u32))
            .collect();
        let smallest = crate::record::smallest_superseders(records.iter().map(|r| &r.record));
        let superseded_by = records
            .iter()
            .map(|r| smallest.get(r.record.id.as_str()).map(|s| s.to_string()))
            .collect();
        ScanSource {
            records,
            superseded_by,
            by_id,
            analyzer: TextAnalyzer::new(stem),
        }
    }
}

/// Per group, the mask of query tokens matching some token of `record` there.
fn group_masks(
    record: &crate::record::Record,
    query: &PreparedQuery,
    analyzer: &TextAnalyzer,
) -> [u32; GROUP_COUNT] {
    let mut masks = [0u32; GROUP_COUNT];
    let mut tokens: Vec<IndexToken> = Vec::new();
    for g in FieldGroup::ALL {
        tokens.clear();
        for value in record.group_values(g) {
            analyzer.index_tokens(value, &mut tokens);
        }
        for (i, q) in query.tokens.iter().enumerate() {
            if tokens.iter().any(|t| token_matches(q, t, query.analyzer)) {
                masks[g as usize] |= 1 << i;
            }
        }
    }
    masks
}

/// Scores `records` token by token: the candidates of `query` under `filters`, as segment
/// number `segment`. `superseded_by(i)` gives record `i`'s smallest live superseder.
pub(crate) fn scan_records<'a>(
    records: &'a [StoredRecord],
    segment: u32,
    query: &PreparedQuery,
    filters: &Filters,
    analyzer: &TextAnalyzer,
    superseded_by: &(dyn Fn(u32) -> Option<&'a str> + Sync),
) -> Matched<'a> {
    let evaluated: Vec<Option<(u32, [u32; GROUP_COUNT], bool)>> = records
        .par_iter()
        .enumerate()
        .map(|(i, stored)| {
            if filters.excludes(&stored.record.id)
                || filters.rejects(&stored.record, analyzer).is_some()
            {
                return None;
            }
            let masks = group_masks(&stored.record, query, analyzer);
            let phrase = match &query.phrase {
                Some(p) if standard::field_sum(&masks) > 0 => record_has_phrase(&stored.record, p),
                _ => false,
            };
            Some((i as u32, masks, phrase))
        })
        .collect();

    let live = records
        .iter()
        .filter(|r| !filters.excludes(&r.record.id))
        .count();
    let passing = evaluated.iter().flatten().count();
    let mut token_groups: TokenGroups = vec![Default::default(); query.tokens.len()];
    let mut hits = Vec::new();
    for (doc, masks, phrase) in evaluated.into_iter().flatten() {
        let field_sum = standard::field_sum(&masks);
        if field_sum == 0 && !query.is_empty() {
            continue;
        }
        let mut coverage_mask = 0;
        for (g, mask) in masks.iter().enumerate() {
            coverage_mask |= mask;
            for (t, groups) in token_groups.iter_mut().enumerate() {
                if mask & (1 << t) != 0 {
                    groups[g].insert(doc);
                }
            }
        }
        let record = &records[doc as usize].record;
        hits.push(Hit {
            doc: DocRef { segment, doc },
            id: &record.id,
            field_sum,
            matched: coverage_mask.count_ones(),
            coverage_mask,
            phrase: Some(phrase),
            feedback: record.feedback,
            created_at: record
                .created_at
                .as_ref()
                .map(|t| (t.unix_seconds(), t.subsec_nanos())),
            supersedes: record.supersedes.as_deref(),
            superseded_by: superseded_by(doc),
        });
    }
    Matched {
        live,
        passing,
        hits,
        token_groups: vec![token_groups],
        counts: None,
    }
}

impl Source for ScanSource {
    fn name(&self) -> &'static str {
        "scan"
    }

    fn matched(&self, query: &PreparedQuery, filters: &Filters) -> Result<Matched<'_>> {
        let superseded_by = |doc: u32| self.superseded_by[doc as usize].as_deref();
        Ok(scan_records(
            &self.records,
            0,
            query,
            filters,
            &self.analyzer,
            &superseded_by,
        ))
    }

    fn stored(&self, doc: DocRef) -> Result<StoredRecord> {
        Ok(self.records[doc.doc as usize].clone())
    }

    fn test_text(
        &self,
        doc: DocRef,
        test: &dyn Fn(&crate::format::codec::RecordText<'_>) -> bool,
    ) -> Result<bool> {
        let record = &self.records[doc.doc as usize].record;
        Ok(test(&crate::format::codec::RecordText::of(record)))
    }

    fn find(&self, id: &str) -> Result<Option<DocRef>> {
        Ok(self.by_id.get(id).map(|&doc| DocRef { segment: 0, doc }))
    }

    fn values(&self, doc: DocRef) -> Result<crate::search::RecordValues<'_>> {
        Ok(self.scan_values(doc))
    }

    fn collection(&self) -> Result<crate::search::profiles::bm25f::Collection> {
        Ok(self.scan_collection())
    }

    /// Every record's term frequencies, whichever were asked about.
    fn exact_postings(
        &self,
        query: &PreparedQuery,
        _docs: &[DocRef],
    ) -> Result<Vec<crate::search::ExactPostings>> {
        Ok(self.scan_exact_postings(query))
    }

    fn entity_known(&self, name: &str) -> Result<bool> {
        Ok(self.scan_entity_known(name))
    }
}
