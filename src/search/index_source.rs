//! Candidates from the memory-mapped index: FST expansion, roaring unions, dense accumulation.

use rayon::prelude::*;
use roaring::RoaringBitmap;

use crate::error::Result;
use crate::format::postings::TermPostings;
use crate::format::{FACET_TAG, FACET_TYPE, STOP_MARKER};
use crate::index::segment::Segment;
use crate::index::Index;
use crate::schema::{FieldGroup, GROUP_COUNT};
use crate::search::filters::Filters;
use crate::search::query::{phrase_occurs, PreparedQuery, MIN_PREFIX_CHARS};
use crate::search::scan::scan_records;
use crate::search::{index_statistics, DocRef, Hit, Matched, Source, TokenGroups};
use crate::text::{self, Analyzer, Token};

/// Searches the segments of an opened index.
pub(crate) struct IndexSource<'a> {
    pub index: &'a Index,
}

impl Source for IndexSource<'_> {
    fn name(&self) -> &'static str {
        "index"
    }

    fn matched(&self, query: &PreparedQuery, filters: &Filters) -> Result<Matched<'_>> {
        let mut per_segment = self
            .index
            .segments
            .par_iter()
            .enumerate()
            .map(|(s, segment)| self.segment_matched(s as u32, segment, query, filters))
            .collect::<Result<Vec<_>>>()?;
        let overlay = &self.index.overlay;
        if !overlay.records.is_empty() {
            let superseded_by = |doc: u32| {
                let id = overlay.records[doc as usize].record.id.as_str();
                overlay.superseded_by.get(id).and_then(|s| s.as_deref())
            };
            per_segment.push(scan_records(
                &overlay.records,
                self.index.segments.len() as u32,
                query,
                filters,
                &self.index.analyzer,
                &superseded_by,
            ));
        }
        let mut matched = Matched {
            live: 0,
            passing: 0,
            hits: Vec::new(),
            token_groups: Vec::with_capacity(per_segment.len()),
        };
        for m in per_segment {
            matched.live += m.live;
            matched.passing += m.passing;
            matched.hits.extend(m.hits);
            matched.token_groups.extend(m.token_groups);
        }
        Ok(matched)
    }

    fn stored(&self, doc: DocRef) -> Result<crate::format::codec::StoredRecord> {
        self.index.stored(doc)
    }

    fn find(&self, id: &str) -> Result<Option<DocRef>> {
        self.index.find(id)
    }

    fn values(&self, doc: DocRef) -> Result<crate::search::RecordValues<'_>> {
        index_statistics::values(self.index, doc)
    }

    fn collection(&self) -> Result<crate::search::profiles::bm25f::Collection> {
        index_statistics::collection(self.index)
    }

    fn exact_postings(&self, query: &PreparedQuery) -> Result<Vec<crate::search::ExactPostings>> {
        index_statistics::exact_postings(self.index, query)
    }

    fn entity_known(&self, name: &str) -> Result<bool> {
        index_statistics::entity_known(self.index, name)
    }
}

impl<'a> IndexSource<'a> {
    fn segment_matched(
        &self,
        s: u32,
        segment: &'a Segment,
        query: &PreparedQuery,
        filters: &Filters,
    ) -> Result<Matched<'a>> {
        let n = segment.len();
        let overlay = &self.index.overlay;
        // Records replaced or deleted in the log, and records this search leaves out.
        let mut absent = overlay.dead[s as usize].clone();
        for id in &filters.exclude {
            absent.extend(segment.doc_of_id(id)?);
        }
        let mut allowed = filter_records(segment, filters)?;
        if !absent.is_empty() {
            allowed = Some(match allowed {
                Some(a) => a - &absent,
                None => (0..n).collect::<RoaringBitmap>() - &absent,
            });
        }
        let live = n as usize - absent.len() as usize;
        let passing = allowed.as_ref().map_or(n as usize, |a| a.len() as usize);

        let mut token_groups: TokenGroups = Vec::with_capacity(query.tokens.len());
        for token in &query.tokens {
            let mut groups = token_records(segment, token, query.analyzer, ALL_GROUPS)?;
            if let Some(allowed) = &allowed {
                for g in groups.iter_mut() {
                    *g &= allowed;
                }
            }
            token_groups.push(groups);
        }

        let docs: RoaringBitmap = if query.is_empty() {
            allowed.clone().unwrap_or_else(|| (0..n).collect())
        } else {
            token_groups
                .iter()
                .flatten()
                .fold(RoaringBitmap::new(), |acc, b| acc | b)
        };

        // Term-at-a-time accumulation into dense per-record arrays.
        let mut field_sum = vec![0u32; n as usize];
        let mut coverage = vec![0u32; n as usize];
        for (t, groups) in token_groups.iter().enumerate() {
            for (g, records) in groups.iter().enumerate() {
                let weight = FieldGroup::ALL[g].weight();
                for doc in records {
                    field_sum[doc as usize] += weight;
                    coverage[doc as usize] |= 1 << t;
                }
            }
        }

        // Records whose postings allow the phrase; their text is checked later, only where
        // it matters (see `execute`).
        let phrase_docs = match &query.phrase {
            Some(_) if !query.is_empty() => {
                match phrase_prefilter(segment, &query.text, self.index)? {
                    Some(prefiltered) => prefiltered & &docs,
                    None => docs.clone(),
                }
            }
            _ => RoaringBitmap::new(),
        };

        let hits = docs
            .iter()
            .map(|doc| -> Result<Hit<'a>> {
                let row = segment.columns.row(doc)?;
                let mut feedback = row.feedback;
                if let Some(added) = overlay.feedback_for(row.id) {
                    feedback.merge(added);
                }
                let superseded_by = match overlay.superseded_by.get(row.id) {
                    Some(recomputed) => recomputed.as_deref(),
                    None => row.superseded_by,
                };
                Ok(Hit {
                    doc: DocRef { segment: s, doc },
                    id: row.id,
                    field_sum: field_sum[doc as usize],
                    coverage_mask: coverage[doc as usize],
                    phrase: if phrase_docs.contains(doc) {
                        None
                    } else {
                        Some(false)
                    },
                    feedback,
                    created_at: row.created_at,
                    supersedes: row.supersedes,
                    superseded_by,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Matched {
            live,
            passing,
            hits,
            token_groups: vec![token_groups],
        })
    }
}

const ALL_GROUPS: u16 = (1 << GROUP_COUNT) - 1;

/// Whether any searchable value of `record` contains `phrase` (SPEC §4).
pub(crate) fn record_has_phrase(record: &crate::record::Record, phrase: &str) -> bool {
    // For ASCII text, phrase(value) is a lowercased subsequence of the value's words, so every
    // word of the phrase must appear in the lowercased value: a cheap test that skips most values
    // before they are analyzed.
    let ascii_words: Option<Vec<&str>> = phrase.is_ascii().then(|| phrase.split(' ').collect());
    let may_contain = |value: &str| match &ascii_words {
        Some(words) if value.is_ascii() => {
            let lower = value.to_ascii_lowercase();
            words.iter().all(|w| lower.contains(w))
        }
        _ => true,
    };
    FieldGroup::ALL.iter().any(|&g| {
        record
            .group_values(g)
            .into_iter()
            .any(|value| may_contain(value) && phrase_occurs(&text::phrase(value), phrase))
    })
}

/// The term numbers a query token matches (SPEC §3): the exact term, every longer term it is a
/// prefix of (a range scan) and every shorter term that is a prefix of it (point lookups), the
/// prefix rules only when the shorter side has at least five characters. Stop-word terms are
/// skipped for `english`.
pub(crate) fn expand(segment: &Segment, token: &Token, analyzer: Analyzer) -> Result<Vec<u64>> {
    let english = analyzer == Analyzer::English;
    let mut terms = Vec::new();
    let lookup = |key: &[u8], terms: &mut Vec<u64>| -> Result<()> {
        if let Some(t) = segment.terms.get(key)? {
            terms.push(t);
        }
        if !english {
            let mut stop_key = key.to_vec();
            stop_key.push(STOP_MARKER);
            if let Some(t) = segment.terms.get(&stop_key)? {
                terms.push(t);
            }
        }
        Ok(())
    };
    let chars = token.text.chars().count();
    if token.cjk || chars < MIN_PREFIX_CHARS {
        lookup(token.text.as_bytes(), &mut terms)?;
        return Ok(terms);
    }
    segment
        .terms
        .for_each_with_prefix(token.text.as_bytes(), |key, t| {
            if !(english && key.last() == Some(&STOP_MARKER)) {
                terms.push(t);
            }
        })?;
    for (count, (at, _)) in token.text.char_indices().enumerate() {
        if count >= MIN_PREFIX_CHARS {
            lookup(&token.text.as_bytes()[..at], &mut terms)?;
        }
    }
    Ok(terms)
}

/// Per group, the records a query token matches, restricted to the groups in `groups_mask`.
fn token_records(
    segment: &Segment,
    token: &Token,
    analyzer: Analyzer,
    groups_mask: u16,
) -> Result<[RoaringBitmap; GROUP_COUNT]> {
    let mut groups: [RoaringBitmap; GROUP_COUNT] = Default::default();
    let file = segment.postings.file();
    for term in expand(segment, token, analyzer)? {
        let postings = TermPostings::parse(segment.postings.get(term as usize)?, file)?;
        for g in FieldGroup::ALL {
            if postings.group_mask() & groups_mask & g.bit() != 0 {
                let records = postings.records(g, file)?;
                segment.check_records(&records, file)?;
                groups[g as usize] |= records;
            }
        }
    }
    Ok(groups)
}

/// The records of a segment passing every filter, or `None` when no filter is given.
fn filter_records(segment: &Segment, filters: &Filters) -> Result<Option<RoaringBitmap>> {
    let mut allowed: Option<RoaringBitmap> = None;
    let mut narrow = |set: RoaringBitmap| {
        allowed = Some(match allowed.take() {
            Some(a) => a & set,
            None => set,
        });
    };
    if let Some((tokens, analyzer)) = &filters.project_context {
        let mask = FieldGroup::ProjectContext.bit()
            | FieldGroup::Applicability.bit()
            | FieldGroup::Tags.bit();
        let mut set = RoaringBitmap::new();
        for token in tokens {
            for g in token_records(segment, token, *analyzer, mask)? {
                set |= g;
            }
        }
        narrow(set);
    }
    for tag in &filters.tags {
        narrow(segment.facet([FACET_TAG, tag.as_bytes()].concat().as_slice())?);
    }
    if let Some(memory_type) = &filters.memory_type {
        narrow(segment.facet([FACET_TYPE, memory_type.as_bytes()].concat().as_slice())?);
    }
    Ok(allowed)
}

/// Records that contain, in one group, every term of every word of the query: a superset of
/// the records where the phrase occurs, which are then verified on the stored text. `None` when
/// the words give no constraint.
fn phrase_prefilter(
    segment: &Segment,
    query: &str,
    index: &Index,
) -> Result<Option<RoaringBitmap>> {
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut tokens = Vec::new();
    for word in text::words(query) {
        let first = word.chars().next();
        if word.chars().count() == 1 && first.is_some_and(text::is_cjk_char) {
            // A lone CJK character may sit inside a longer run's bigrams: no constraint.
            continue;
        }
        tokens.clear();
        index.analyzer.index_tokens(&word, &mut tokens);
        for token in &tokens {
            let mut key = token.text.as_bytes().to_vec();
            if token.stop {
                key.push(STOP_MARKER);
            }
            keys.push(key);
        }
    }
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        return Ok(None);
    }
    let mut per_group: [Option<RoaringBitmap>; GROUP_COUNT] = Default::default();
    let file = segment.postings.file();
    for key in &keys {
        let Some(term) = segment.terms.get(key)? else {
            return Ok(Some(RoaringBitmap::new()));
        };
        let postings = TermPostings::parse(segment.postings.get(term as usize)?, file)?;
        for g in FieldGroup::ALL {
            let records = postings.records(g, file)?;
            let slot = &mut per_group[g as usize];
            *slot = Some(match slot.take() {
                Some(acc) => acc & records,
                None => records,
            });
        }
    }
    Ok(Some(
        per_group
            .into_iter()
            .flatten()
            .fold(RoaringBitmap::new(), |acc, b| acc | b),
    ))
}
