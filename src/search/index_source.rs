//! Candidates from the memory-mapped index: FST expansion, roaring unions, dense accumulation.

use std::cmp::Ordering;

use rayon::prelude::*;
use roaring::RoaringBitmap;

use crate::error::Result;
use crate::format::postings::TermPostings;
use crate::format::{FACET_TAG, FACET_TYPE, STOP_MARKER};
use crate::index::segment::Segment;
use crate::index::Index;
use crate::schema::{FieldGroup, GROUP_COUNT, MASK_WEIGHTS};
use crate::search::filters::Filters;
use crate::search::query::{phrase_occurs, PreparedQuery, MIN_PREFIX_CHARS};
use crate::search::response::Counts;
use crate::search::scan::scan_records;
use crate::search::scratch;
use crate::search::standard::{self, MatchLevel};
use crate::search::{
    index_statistics, standard_parts, standard_score, DocRef, Hit, Matched, Source, TokenGroups,
};
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
        per_segment.extend(self.log_matched(query, filters)?);
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

    fn standard_top(
        &self,
        query: &PreparedQuery,
        filters: &Filters,
        limit: usize,
    ) -> Result<Option<Matched<'_>>> {
        self.standard_top_impl(query, filters, limit).map(Some)
    }

    fn stored(&self, doc: DocRef) -> Result<crate::format::codec::StoredRecord> {
        self.index.stored(doc)
    }

    fn find(&self, id: &str) -> Result<Option<DocRef>> {
        self.index.find(id)
    }

    /// Where both words of the pair are frequent in a segment, its pair postings answer for
    /// every record of it; elsewhere the stored text does.
    fn pair_occurs(&self, phrase: &str, docs: &[DocRef]) -> Result<Vec<bool>> {
        let mut exact: Vec<Option<Option<Vec<u64>>>> = vec![None; self.index.segments.len()];
        docs.iter()
            .map(|&doc| {
                let bits = match exact.get_mut(doc.segment as usize) {
                    Some(slot) => slot.get_or_insert(
                        match phrase_records(
                            &self.index.segments[doc.segment as usize],
                            phrase,
                            self.index,
                        )? {
                            Some((bits, true)) => Some(bits),
                            _ => None,
                        },
                    ),
                    None => &None, // the log's records
                };
                match bits {
                    Some(bits) => Ok(bit_set(bits, doc.doc)),
                    None => self.verify_phrase(doc, phrase),
                }
            })
            .collect()
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

/// What one segment contributes to a search before any record is read: the candidates, the
/// per-record sums of term-at-a-time accumulation, and the records the phrase may occur in.
struct SegmentMatch<'a> {
    s: u32,
    segment: &'a Segment,
    live: usize,
    passing: usize,
    /// Per record, packed in one word so that accumulation touches one place per posting: in
    /// the high half the record's key, `field_sum × stride + matched tokens` with
    /// `field_sum = Σ_g weight[g] × |tokens matching g|` (see [`Keys`]); in the low half bit i
    /// set ⇔ query token i matched some group. Zero for records that are not candidates.
    sums: Vec<u64>,
    /// Query tokens + 1.
    stride: u32,
    candidates: CandidateSet,
    /// Bit per record: candidates whose postings allow the phrase (empty: none). Their text
    /// is checked only where it matters, unless `phrase_exact`.
    phrase: Vec<u64>,
    /// The phrase bits are exact: set ⇔ the phrase occurs (a two-word phrase of indexed words).
    phrase_exact: bool,
    /// Per query token, the terms it matches in this segment.
    terms: Vec<Vec<u64>>,
}

impl Drop for SegmentMatch<'_> {
    fn drop(&mut self) {
        scratch::WORDS.give(std::mem::take(&mut self.sums));
    }
}

/// Where a segment's candidates are listed.
enum CandidateSet {
    /// The records with non-zero sums: most of the segment, scanned in place.
    Dense,
    /// Few records, or for an empty query the records passing the filters.
    Listed(RoaringBitmap),
}

/// Whether bit `i` of a bit set is set (an empty set has none).
fn bit_set(bits: &[u64], i: u32) -> bool {
    bits.get(i as usize / 64)
        .is_some_and(|word| word >> (i % 64) & 1 != 0)
}

impl SegmentMatch<'_> {
    /// `Σ_g weight[g] × |tokens matching g|` of record `doc`.
    fn field_sum(&self, doc: u32) -> u32 {
        (self.sum(doc) >> 32) as u32 / self.stride
    }

    /// The packed sums of record `doc` (0 for a query without postings here).
    fn sum(&self, doc: u32) -> u64 {
        self.sums.get(doc as usize).copied().unwrap_or(0)
    }

    /// The number of query tokens record `doc` matches.
    fn matched(&self, doc: u32) -> u32 {
        (self.sum(doc) >> 32) as u32 % self.stride
    }

    /// The matched query tokens of record `doc`, one bit each.
    fn coverage(&self, doc: u32) -> u32 {
        self.sum(doc) as u32
    }

    /// Whether record `doc` is a candidate.
    fn is_candidate(&self, doc: u32) -> bool {
        match &self.candidates {
            CandidateSet::Dense => self.sums.get(doc as usize).is_some_and(|&s| s != 0),
            CandidateSet::Listed(docs) => docs.contains(doc),
        }
    }

    /// Whether the postings of candidate `doc` allow the phrase.
    fn maybe_phrase(&self, doc: u32) -> bool {
        bit_set(&self.phrase, doc)
    }

    /// What the postings tell of the phrase in a record they allow it in or not.
    fn known_phrase(&self, maybe_phrase: bool) -> Option<bool> {
        match (maybe_phrase, self.phrase_exact) {
            (false, _) => Some(false),
            (true, true) => Some(true),
            (true, false) => None,
        }
    }

    /// Calls `visit` with each candidate, ascending, and whether its postings allow the phrase.
    fn for_each_candidate(&self, visit: impl FnMut(u32, bool)) {
        self.for_each_candidate_in(|_| true, visit);
    }

    /// [`SegmentMatch::for_each_candidate`] restricted to the chunks of 64 records (record
    /// number ÷ 64) that `chunk` accepts.
    fn for_each_candidate_in(
        &self,
        chunk: impl Fn(usize) -> bool,
        mut visit: impl FnMut(u32, bool),
    ) {
        match &self.candidates {
            CandidateSet::Dense => {
                for (w, sums) in self.sums.chunks(64).enumerate() {
                    if !chunk(w) {
                        continue;
                    }
                    let phrase = self.phrase.get(w).copied().unwrap_or(0);
                    for (i, &sum) in sums.iter().enumerate() {
                        if sum != 0 {
                            visit((64 * w + i) as u32, phrase >> i & 1 != 0);
                        }
                    }
                }
            }
            CandidateSet::Listed(docs) => docs.iter().for_each(|doc| {
                if chunk(doc as usize / 64) {
                    visit(doc, self.maybe_phrase(doc))
                }
            }),
        }
    }

    /// Per token, per group: which of `docs` (candidates, ascending) the token matches there.
    /// Few records are looked up one by one; many take one pass over each term's postings.
    fn token_groups(&self, docs: &[u32]) -> Result<TokenGroups> {
        const LOOKUPS: usize = 256;
        let segment = self.segment;
        let file = segment.postings.file();
        let mut out = Vec::with_capacity(self.terms.len());
        for terms in &self.terms {
            let mut groups: [RoaringBitmap; GROUP_COUNT] = Default::default();
            for &term in terms {
                let postings = TermPostings::parse(segment.postings.get(term as usize)?, file)?;
                if docs.len() <= LOOKUPS {
                    for &doc in docs {
                        if let Some(mask) = postings.mask_of(doc, file)? {
                            for (g, group) in groups.iter_mut().enumerate() {
                                if mask & (1 << g) != 0 {
                                    group.insert(doc);
                                }
                            }
                        }
                    }
                } else {
                    let all = postings.group_records(segment.len(), file)?;
                    for (group, records) in groups.iter_mut().zip(all) {
                        *group |= records;
                    }
                }
            }
            out.push(groups);
        }
        Ok(out)
    }
}

/// The standard relevance and level by table: the coverage and its multiplier for each number
/// of matched tokens, computed once per query by [`standard::relevance`] itself, so that every
/// value is bit for bit the one it computes.
struct Scorer {
    coverage: Vec<f64>,
    multiplier: Vec<f64>,
}

impl Scorer {
    fn new(token_count: u32) -> Scorer {
        let parts: Vec<standard::Relevance> = (0..=token_count)
            .map(|k| standard::relevance(0, false, k, token_count))
            .collect();
        Scorer {
            coverage: parts.iter().map(|r| r.coverage).collect(),
            multiplier: parts.iter().map(|r| r.coverage_multiplier).collect(),
        }
    }

    /// Relevance and level (before feedback).
    fn relevance(&self, field_sum: u32, phrase: bool, matched: u32) -> (f64, MatchLevel) {
        let bonus = if phrase {
            standard::EXACT_PHRASE_BONUS
        } else {
            0
        };
        let k = matched as usize;
        let relevance = f64::from(field_sum + bonus) * self.multiplier[k];
        (
            relevance,
            standard::match_level(self.coverage[k], relevance),
        )
    }
}

/// Every (field sum, matched tokens) a query can produce as one *key*, `field_sum × (query
/// tokens + 1) + matched tokens`, and with or without the phrase as one *slot*, `2 × key +
/// phrase`: a record's evidence is looked up in these tables instead of being scored, and a
/// segment is surveyed by a histogram over slots.
struct Keys {
    /// Relevance (before feedback) and level, by slot.
    relevance: Vec<f64>,
    level: Vec<MatchLevel>,
    /// The slots by relevance, best first.
    order: Vec<u32>,
}

impl Keys {
    fn new(scorer: &Scorer, token_count: u32) -> Keys {
        let most = MASK_WEIGHTS.iter().copied().max().unwrap_or(0) * token_count;
        let slots = 2 * (most as usize + 1) * (token_count as usize + 1);
        let mut relevance = Vec::with_capacity(slots);
        let mut level = Vec::with_capacity(slots);
        for field_sum in 0..=most {
            for matched in 0..=token_count {
                for phrase in [false, true] {
                    let (r, l) = scorer.relevance(field_sum, phrase, matched);
                    relevance.push(r);
                    level.push(l);
                }
            }
        }
        let mut order: Vec<u32> = (0..slots as u32).collect();
        order.sort_by(|&a, &b| relevance[b as usize].total_cmp(&relevance[a as usize]));
        Keys {
            relevance,
            level,
            order,
        }
    }

    /// The number of slots.
    fn slots(&self) -> usize {
        self.relevance.len()
    }

    /// The slot of a record's packed sums ([`SegmentMatch::sums`]), with the phrase or not.
    #[inline]
    fn slot(sums: u64, phrase: bool) -> usize {
        2 * (sums >> 32) as usize + usize::from(phrase)
    }

    /// Whether the phrase changes the level of the key of `slot`.
    fn depends(&self, slot: usize) -> bool {
        self.level[slot & !1] != self.level[slot | 1]
    }
}

/// Which candidates can still reach the page: those whose score can exceed the floor, the
/// feedback term at its most.
struct Reach {
    floor: f64,
    /// By slot of [`Keys`].
    by_slot: Vec<bool>,
}

impl Reach {
    fn new(keys: &Keys, floor: f64) -> Reach {
        let by_slot = keys
            .relevance
            .iter()
            .map(|&r| r + FEEDBACK_MAX > floor)
            .collect();
        Reach { floor, by_slot }
    }

    /// Whether a relevance (before feedback) can reach the page.
    fn relevance(&self, relevance: f64) -> bool {
        relevance + FEEDBACK_MAX > self.floor
    }
}

/// A candidate of [`IndexSource::standard_top`]: its match evidence and feedback term, before
/// anything else of its record is read.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    segment: u32,
    doc: u32,
    field_sum: u32,
    matched: u32,
    /// `None` while the phrase may occur and the text has not been checked.
    phrase: Option<bool>,
    feedback: f64,
    /// Supersedes a record, or is superseded by a candidate.
    involved: bool,
}

impl Candidate {
    fn score(&self, phrase: bool, token_count: u32) -> (f64, MatchLevel) {
        standard_parts(
            self.field_sum,
            self.matched,
            phrase,
            token_count,
            self.feedback,
        )
    }

    /// The score with the phrase as checked, or without it when unchecked: a lower bound.
    fn lower(&self, token_count: u32) -> f64 {
        self.score(self.phrase == Some(true), token_count).0
    }

    /// The score with the phrase unless it was checked absent: an upper bound.
    fn upper(&self, token_count: u32) -> f64 {
        self.score(self.phrase != Some(false), token_count).0
    }
}

impl<'a> IndexSource<'a> {
    fn segment_match(
        &self,
        s: u32,
        segment: &'a Segment,
        query: &PreparedQuery,
        filters: &Filters,
    ) -> Result<SegmentMatch<'a>> {
        let n = segment.len();
        let overlay = &self.index.overlay;
        // Records replaced or deleted in the log, and records this search leaves out.
        let mut absent = overlay.dead[s as usize].clone();
        for id in &filters.exclude {
            absent.extend(segment.doc_of_id(id)?);
        }
        let allowed = filter_records(segment, filters)?;
        let live = n as usize - absent.len() as usize;
        let passing = match &allowed {
            Some(allowed) => (allowed - &absent).len() as usize,
            None => live,
        };

        // Term-at-a-time accumulation into a dense per-record array: one pass over each token's
        // postings, a record's group mask turned into its weight by table.
        let file = segment.postings.file();
        let stride = query.tokens.len() as u32 + 1;
        let mut terms = Vec::with_capacity(query.tokens.len());
        let mut token_postings = Vec::with_capacity(query.tokens.len());
        for token in &query.tokens {
            let token_terms = expand(segment, token, query.analyzer)?;
            token_postings.push(
                token_terms
                    .iter()
                    .map(|&term| TermPostings::parse(segment.postings.get(term as usize)?, file))
                    .collect::<Result<Vec<_>>>()?,
            );
            terms.push(token_terms);
        }
        let postings_total: u64 = token_postings.iter().flatten().map(TermPostings::len).sum();
        // No posting, no candidate: no per-record array either.
        let mut sums = if postings_total == 0 {
            Vec::new()
        } else {
            scratch::WORDS.take(n as usize)
        };
        let mut masks: Vec<u16> = Vec::new();
        for (t, parsed) in token_postings.iter().enumerate() {
            let bit = 1u64 << t;
            // Adds the token's group weights to the field sum, and one matched token.
            let weight =
                |mask: u16| (u64::from(MASK_WEIGHTS[mask as usize]) * u64::from(stride) + 1) << 32;
            match parsed.as_slice() {
                [] => {}
                [postings] => {
                    let add: Vec<u64> = postings.palette().iter().map(|&m| weight(m)).collect();
                    postings.for_each(n, file, |doc, code| {
                        let slot = &mut sums[doc as usize];
                        *slot = (*slot + add[code]) | bit;
                    })?;
                }
                several => {
                    // A record matching the token through several terms counts each group once.
                    if masks.is_empty() {
                        masks = scratch::MASKS.take(n as usize);
                    } else {
                        masks.fill(0);
                    }
                    for postings in several {
                        let palette = postings.palette();
                        postings.for_each(n, file, |doc, code| {
                            masks[doc as usize] |= palette[code];
                        })?;
                    }
                    for (slot, &mask) in sums.iter_mut().zip(&masks) {
                        if mask != 0 {
                            *slot = (*slot + weight(mask)) | bit;
                        }
                    }
                }
            }
        }
        scratch::MASKS.give(masks);
        if let Some(allowed) = &allowed {
            let mut keep = vec![0u64; (n as usize).div_ceil(64)];
            allowed
                .iter()
                .for_each(|d| keep[d as usize / 64] |= 1 << (d % 64));
            for (doc, slot) in sums.iter_mut().enumerate() {
                if keep[doc / 64] >> (doc % 64) & 1 == 0 {
                    *slot = 0;
                }
            }
        }
        if !sums.is_empty() {
            for doc in &absent {
                sums[doc as usize] = 0;
            }
        }

        let candidates = if query.is_empty() {
            let mut docs = allowed.unwrap_or_else(|| (0..n).collect());
            docs -= &absent;
            CandidateSet::Listed(docs)
        } else if postings_total * 16 < u64::from(n) {
            let docs = sums
                .iter()
                .enumerate()
                .filter(|(_, &s)| s != 0)
                .map(|(doc, _)| doc as u32);
            CandidateSet::Listed(RoaringBitmap::from_sorted_iter(docs).expect("ascending"))
        } else {
            CandidateSet::Dense
        };

        // Only asked of candidates, so not narrowed to them.
        let (phrase, phrase_exact) = match &query.phrase {
            Some(_) if postings_total > 0 => phrase_records(segment, &query.text, self.index)?
                .unwrap_or_else(|| (vec![u64::MAX; (n as usize).div_ceil(64)], false)),
            _ => (Vec::new(), false),
        };
        Ok(SegmentMatch {
            s,
            segment,
            live,
            passing,
            sums,
            stride,
            candidates,
            phrase,
            phrase_exact,
            terms,
        })
    }

    /// The hit of record `doc` of a segment, with the phrase flag given.
    fn hit(&self, m: &SegmentMatch<'a>, doc: u32, phrase: Option<bool>) -> Result<Hit<'a>> {
        let overlay = &self.index.overlay;
        let row = m.segment.columns.row(doc)?;
        let mut feedback = row.feedback;
        if let Some(added) = overlay.feedback_for(row.id) {
            feedback.merge(added);
        }
        let superseded_by = self.index.superseders()?.get(row.id).map(String::as_str);
        Ok(Hit {
            doc: DocRef { segment: m.s, doc },
            id: row.id,
            field_sum: m.field_sum(doc),
            coverage_mask: m.coverage(doc),
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
        let hits = hits
            .into_iter()
            .map(|(doc, phrase)| self.hit(&m, doc, phrase))
            .collect::<Result<Vec<_>>>()?;
        Ok(Matched {
            live: m.live,
            passing: m.passing,
            hits,
            token_groups: vec![m.token_groups(&docs)?],
            counts: None,
        })
    }

    /// The records of each segment in a supersession relation with a candidate: those naming
    /// a target (whether or not it is a candidate) and those some candidate names. Also
    /// returns the named ids, sorted, for the log's hits.
    fn involvement(
        &self,
        matches: &[SegmentMatch<'a>],
        log_hits: &[Hit<'a>],
    ) -> Result<(Vec<RoaringBitmap>, Vec<&'a str>)> {
        let mut involved = Vec::with_capacity(matches.len());
        let mut targets: Vec<&'a str> = log_hits.iter().filter_map(|h| h.supersedes).collect();
        for m in matches {
            let mut naming = RoaringBitmap::new();
            for doc in m.segment.superseding()? {
                if m.is_candidate(doc) {
                    naming.insert(doc);
                    targets.extend(m.segment.columns.row(doc)?.supersedes);
                }
            }
            involved.push(naming);
        }
        targets.sort_unstable();
        targets.dedup();
        for target in &targets {
            for (m, involved) in matches.iter().zip(involved.iter_mut()) {
                if let Some(doc) = m.segment.doc_of_id(target)? {
                    if m.is_candidate(doc) {
                        involved.insert(doc);
                    }
                }
            }
        }
        Ok((involved, targets))
    }

    /// The candidates of segment match `m` that can [`Reach`] the page or are `involved`, each
    /// with its feedback term (columns plus log). `checked` holds the phrases already checked,
    /// by record number; `survey` is the segment's.
    fn candidates(
        &self,
        m: &SegmentMatch<'a>,
        involved: &RoaringBitmap,
        checked: &[(u32, bool)],
        survey: &Survey,
        reach: &Reach,
    ) -> Result<Vec<Candidate>> {
        // Only chunks whose best key can reach the page (or that hold an involved record) are
        // read. Then by the bound with the phrase wherever the postings allow it; then the
        // records kept whose phrase was checked take the bound their text gives.
        let chunk = |w: usize| {
            survey
                .chunk_best
                .get(w)
                .is_none_or(|&best| reach.relevance(best))
        };
        let mut kept: Vec<(u32, Option<bool>, bool)> = Vec::new();
        m.for_each_candidate_in(chunk, |doc, maybe_phrase| {
            let slot = Keys::slot(m.sums[doc as usize], maybe_phrase);
            if reach.by_slot[slot] || involved.contains(doc) {
                kept.push((doc, m.known_phrase(maybe_phrase), false));
            }
        });
        kept.retain_mut(|(doc, phrase, is_involved)| {
            *is_involved = involved.contains(*doc);
            if let Ok(at) = checked.binary_search_by_key(doc, |c| c.0) {
                *phrase = Some(checked[at].1);
            }
            let slot = Keys::slot(m.sums[*doc as usize], *phrase != Some(false));
            *is_involved || reach.by_slot[slot]
        });
        let added = &self.index.overlay.feedback_docs[m.s as usize];
        kept.into_iter()
            .map(|(doc, phrase, involved)| {
                let mut feedback = m.segment.columns.feedback(doc)?;
                if let Some(more) = added.get(&doc) {
                    feedback.merge(more);
                }
                Ok(Candidate {
                    segment: m.s,
                    doc,
                    field_sum: m.field_sum(doc),
                    matched: m.matched(doc),
                    phrase,
                    feedback: standard::feedback_score(&feedback),
                    involved,
                })
            })
            .collect()
    }

    fn standard_top_impl(
        &self,
        query: &PreparedQuery,
        filters: &Filters,
        limit: usize,
    ) -> Result<Matched<'a>> {
        let index = self.index;
        let token_count = query.tokens.len() as u32;
        let scorer = Scorer::new(token_count);
        let keys = Keys::new(&scorer, token_count);
        let matches = index
            .segments
            .par_iter()
            .enumerate()
            .map(|(s, segment)| self.segment_match(s as u32, segment, query, filters))
            .collect::<Result<Vec<_>>>()?;
        let log = self.log_matched(query, filters)?;
        let log_hits = log.as_ref().map_or(&[][..], |l| &l.hits[..]);
        let (involved, targets) = self.involvement(&matches, log_hits)?;
        let log_involved =
            |hit: &Hit<'_>| hit.supersedes.is_some() || targets.binary_search(&hit.id).is_ok();
        // Execute keeps the best `limit + |involved|`; more need not be ranked here.
        let wanted = limit
            + involved.iter().map(|b| b.len() as usize).sum::<usize>()
            + log_hits.iter().filter(|h| log_involved(h)).count();

        // One pass over the candidates' sums: the levels that do not depend on the phrase, the
        // records whose level does (their text is checked, as the counts need it), and a bound.
        let surveys: Vec<Survey> = matches
            .par_iter()
            .zip(&involved)
            .map(|(m, involved)| survey(m, involved, &keys, wanted))
            .collect();
        let mut counts = Counts::default();
        let mut checked: Vec<Vec<(u32, bool)>> = Vec::with_capacity(matches.len());
        for (m, survey) in matches.iter().zip(&surveys) {
            counts.candidates += survey.counts.candidates;
            counts.strong += survey.counts.strong;
            counts.moderate += survey.counts.moderate;
            counts.weak += survey.counts.weak;
            let found: Vec<bool> = match query.phrase.as_deref() {
                Some(phrase) => survey
                    .level_depends
                    .par_iter()
                    .map(|&doc| self.verify_phrase(DocRef { segment: m.s, doc }, phrase))
                    .collect::<Result<_>>()?,
                None => Vec::new(),
            };
            let mut pairs = Vec::with_capacity(found.len());
            for (&doc, found) in survey.level_depends.iter().zip(found) {
                let field_sum = m.field_sum(doc);
                let matched = m.matched(doc);
                counts.add(standard_parts(field_sum, matched, found, token_count, 0.0).1);
                pairs.push((doc, found));
            }
            checked.push(pairs);
        }
        for h in log_hits {
            counts.candidates += 1;
            counts.add(standard_score(h, h.phrase == Some(true), token_count).1);
        }

        // At least `wanted` records score above the wanted-th best lower bound: a record whose
        // upper bound is not above it cannot reach the page, so its feedback is never read.
        // The log's records outside supersession relations, with their exact scores.
        let log_scores = || {
            log_hits
                .iter()
                .filter(|h| !log_involved(h))
                .map(|h| standard_score(h, h.phrase == Some(true), token_count).0)
        };
        let mut bounds: Vec<f64> = surveys
            .iter()
            .flat_map(|s| s.best.iter().map(|b| f64::from_bits(*b) + FEEDBACK_MIN))
            .chain(log_scores())
            .collect();
        let floor = nth_best(&mut bounds, wanted).unwrap_or(f64::NEG_INFINITY);
        let reach = Reach::new(&keys, floor);
        let mut candidates: Vec<Candidate> = matches
            .par_iter()
            .zip(&involved)
            .zip(&checked)
            .zip(&surveys)
            .map(|(((m, involved), checked), survey)| {
                self.candidates(m, involved, checked, survey, &reach)
            })
            .collect::<Result<Vec<_>>>()?
            .concat();

        // Phrase checks: for candidates in a supersession relation; then wherever the phrase
        // could lift a candidate onto the page.
        if let Some(phrase) = query.phrase.as_deref() {
            let verify = |candidates: &mut Vec<Candidate>, pick: &dyn Fn(&Candidate) -> bool| {
                let picked: Vec<usize> = (0..candidates.len())
                    .filter(|&i| candidates[i].phrase.is_none() && pick(&candidates[i]))
                    .collect();
                let found: Vec<bool> = picked
                    .par_iter()
                    .map(|&i| {
                        let c = &candidates[i];
                        self.verify_phrase(
                            DocRef {
                                segment: c.segment,
                                doc: c.doc,
                            },
                            phrase,
                        )
                    })
                    .collect::<Result<_>>()?;
                for (i, found) in picked.into_iter().zip(found) {
                    candidates[i].phrase = Some(found);
                }
                Ok::<(), crate::error::Error>(())
            };
            verify(&mut candidates, &|c| c.involved)?;
            // The limit-th best lower bound among records outside supersession relations: at
            // least `limit` records score that much or more in the end, so a record whose
            // phrase bonus cannot lift it to there stays off the page whatever its text says.
            let mut lower: Vec<f64> = candidates
                .iter()
                .filter(|c| !c.involved)
                .map(|c| c.lower(token_count))
                .chain(log_scores())
                .collect();
            match nth_best(&mut lower, limit) {
                Some(threshold) => verify(&mut candidates, &|c| c.upper(token_count) >= threshold)?,
                None => verify(&mut candidates, &|_| true)?,
            }
        }

        let chosen = page_positions(&candidates, &matches, wanted, token_count)?;
        let mut hits = chosen
            .into_iter()
            .map(|i| {
                let c = &candidates[i as usize];
                self.hit(&matches[c.segment as usize], c.doc, c.phrase)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut matched = Matched {
            live: matches.iter().map(|m| m.live).sum(),
            passing: matches.iter().map(|m| m.passing).sum(),
            hits: Vec::new(),
            token_groups: Vec::with_capacity(matches.len() + 1),
            counts: Some(counts),
        };
        // The groups each token matched, for the breakdowns: looked up for these records only.
        let mut page_docs: Vec<Vec<u32>> = vec![Vec::new(); matches.len()];
        for hit in &hits {
            page_docs[hit.doc.segment as usize].push(hit.doc.doc);
        }
        for (m, docs) in matches.iter().zip(&page_docs) {
            matched.token_groups.push(m.token_groups(docs)?);
        }
        if let Some(log) = log {
            matched.live += log.live;
            matched.passing += log.passing;
            hits.extend(log.hits);
            matched.token_groups.extend(log.token_groups);
        }
        matched.hits = hits;
        Ok(matched)
    }

    /// The log's live records, scanned (they are few: compaction bounds the log).
    fn log_matched(&self, query: &PreparedQuery, filters: &Filters) -> Result<Option<Matched<'a>>> {
        let index = self.index;
        let overlay = &index.overlay;
        if overlay.records.is_empty() {
            return Ok(None);
        }
        let superseders = index.superseders()?;
        let superseded_by = |doc: u32| {
            let id = overlay.records[doc as usize].record.id.as_str();
            superseders.get(id).map(String::as_str)
        };
        Ok(Some(scan_records(
            &overlay.records,
            index.segments.len() as u32,
            query,
            filters,
            &index.analyzer,
            &superseded_by,
        )))
    }
}

/// Positions in `candidates`, ascending, of the best `wanted` outside supersession relations by
/// score then id, and of every one inside them. Ids are read only for the ties at the cut.
fn page_positions(
    candidates: &[Candidate],
    matches: &[SegmentMatch<'_>],
    wanted: usize,
    token_count: u32,
) -> Result<Vec<u32>> {
    let mut keyed: Vec<(f64, u32)> = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.involved)
        .map(|(i, c)| (c.lower(token_count), i as u32))
        .collect();
    let mut chosen: Vec<u32> = Vec::new();
    if keyed.len() > wanted {
        keyed.select_nth_unstable_by(wanted - 1, |a, b| b.0.total_cmp(&a.0));
        let cut = keyed[wanted - 1].0;
        let mut tied: Vec<(&[u8], u32)> = Vec::new();
        for &(score, i) in &keyed {
            match score.total_cmp(&cut) {
                Ordering::Greater => chosen.push(i),
                Ordering::Equal => {
                    let c = &candidates[i as usize];
                    let columns = &matches[c.segment as usize].segment.columns;
                    tied.push((columns.id_bytes(c.doc)?, i));
                }
                Ordering::Less => {}
            }
        }
        // Fewer than `wanted` score above the cut, so there is room for at least one tie.
        let room = wanted - chosen.len();
        if tied.len() > room {
            tied.select_nth_unstable(room);
            tied.truncate(room);
        }
        chosen.extend(tied.into_iter().map(|(_, i)| i));
    } else {
        chosen.extend(keyed.iter().map(|&(_, i)| i));
    }
    chosen.extend(
        candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| c.involved)
            .map(|(i, _)| i as u32),
    );
    chosen.sort_unstable();
    Ok(chosen)
}

/// The `n`-th best (largest) of `values`, 1-based; `None` when there are fewer than `n`.
fn nth_best(values: &mut [f64], n: usize) -> Option<f64> {
    let k = n.checked_sub(1).filter(|&k| k < values.len())?;
    Some(*values.select_nth_unstable_by(k, |a, b| b.total_cmp(a)).1)
}

/// The feedback term lies strictly inside this range (SPEC §4).
const FEEDBACK_MIN: f64 = -1.5;
const FEEDBACK_MAX: f64 = 2.5;

/// One pass over a segment's candidates, from the accumulated sums alone.
struct Survey {
    /// Candidates counted, with the levels that do not depend on the phrase.
    counts: Counts,
    /// Candidates whose level depends on whether the phrase occurs, ascending.
    level_depends: Vec<u32>,
    /// The best `wanted` relevances without the phrase among candidates outside supersession
    /// relations, as `f64` bits (relevance is never negative, so the bits order like values).
    best: Vec<u64>,
    /// Per chunk of 64 records, the best upper bound of its candidates' relevance (with the
    /// phrase where the postings allow it); infinite where it holds an involved record.
    chunk_best: Vec<f64>,
}

fn survey(m: &SegmentMatch<'_>, involved: &RoaringBitmap, keys: &Keys, wanted: usize) -> Survey {
    // Per slot: candidates whose postings rule the phrase out (even slots) or allow it (odd).
    let mut histogram = vec![0u32; keys.slots()];
    let mut level_depends = Vec::new();
    let exact = m.phrase_exact;
    let mut chunk_best = vec![f64::NEG_INFINITY; m.sums.len().div_ceil(64)];
    m.for_each_candidate(|doc, maybe_phrase| {
        let slot = Keys::slot(m.sums[doc as usize], maybe_phrase);
        histogram[slot] += 1;
        let upper = keys.relevance[slot];
        let best = &mut chunk_best[doc as usize / 64];
        if upper > *best {
            *best = upper;
        }
        if maybe_phrase && !exact && keys.depends(slot) {
            level_depends.push(doc);
        }
    });
    let mut counts = Counts::default();
    for (slot, &count) in histogram.iter().enumerate() {
        counts.candidates += count as usize;
        // Unless exact, the phrase is known only where it does not change the level.
        if slot % 2 == 0 || exact || !keys.depends(slot) {
            counts.add_many(keys.level[slot], count as usize);
        }
    }
    // The best `wanted` lower bounds of relevance outside supersession relations: with the
    // phrase where the postings say exactly that it occurs, else without it (the even slot).
    for doc in involved {
        histogram[Keys::slot(m.sums[doc as usize], m.maybe_phrase(doc))] -= 1;
        chunk_best[doc as usize / 64] = f64::INFINITY;
    }
    let mut best = Vec::with_capacity(wanted);
    for &slot in &keys.order {
        if best.len() == wanted {
            break;
        }
        let slot = slot as usize;
        let count = match (exact, slot % 2) {
            (true, _) => histogram[slot],
            (false, 0) => histogram[slot] + histogram[slot + 1],
            (false, _) => continue,
        };
        let take = (count as usize).min(wanted - best.len());
        best.extend(std::iter::repeat_n(keys.relevance[slot].to_bits(), take));
    }
    Survey {
        counts,
        level_depends,
        best,
        chunk_best,
    }
}

const ALL_GROUPS: u16 = (1 << GROUP_COUNT) - 1;

/// Whether any searchable value of `record` contains `phrase` (SPEC §4).
pub(crate) fn record_has_phrase(record: &crate::record::Record, phrase: &str) -> bool {
    // An ASCII value is matched word by word in place: for ASCII text, normalization is the
    // identity, lowercasing is ASCII lowercasing and runs are ASCII alphanumeric runs, so the
    // phrase occurs exactly when its words are consecutive words of the value.
    let ascii_words: Option<Vec<&[u8]>> = phrase
        .is_ascii()
        .then(|| phrase.split(' ').map(str::as_bytes).collect());
    FieldGroup::ALL.iter().any(|&g| {
        record
            .group_values(g)
            .into_iter()
            .any(|value| match &ascii_words {
                Some(words) if value.is_ascii() => ascii_words_occur(value.as_bytes(), words),
                _ => phrase_occurs(&text::phrase(value), phrase),
            })
    })
}

/// Whether `words` (lowercase, as `words()` gives them) are consecutive words of the ASCII
/// text `value`.
fn ascii_words_occur(value: &[u8], words: &[&[u8]]) -> bool {
    // The word starting at or after `from`, as a byte range.
    let word_at = |from: usize| -> Option<(usize, usize)> {
        let start = from + value[from..].iter().position(u8::is_ascii_alphanumeric)?;
        let len = value[start..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .unwrap_or(value.len() - start);
        Some((start, start + len))
    };
    let same = |(start, end): (usize, usize), word: &[u8]| {
        let kept = &value[start..end.min(start + text::MAX_TOKEN_CHARS)];
        kept.eq_ignore_ascii_case(word)
    };
    // Whether the phrase starts with the word at `first`.
    let starts_at = |first: (usize, usize)| {
        if !same(first, words[0]) {
            return false;
        }
        let mut at = first;
        words[1..].iter().all(|word| match word_at(at.1) {
            Some(span) if same(span, word) => {
                at = span;
                true
            }
            _ => false,
        })
    };
    // Without capitals, the first word's occurrences are found by a substring search (the
    // phrase's words are lowercase), each then checked to start a word.
    let has_capitals = value
        .iter()
        .fold(false, |any, b| any | b.is_ascii_uppercase());
    if !has_capitals {
        return memchr::memmem::find_iter(value, words[0]).any(|at| {
            (at == 0 || !value[at - 1].is_ascii_alphanumeric())
                && word_at(at).is_some_and(starts_at)
        });
    }
    let mut next = word_at(0);
    while let Some(first) = next {
        if starts_at(first) {
            return true;
        }
        next = word_at(first.1);
    }
    false
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

/// The records a query token matches in some group of `groups_mask`.
fn token_records(
    segment: &Segment,
    token: &Token,
    analyzer: Analyzer,
    groups_mask: u16,
) -> Result<RoaringBitmap> {
    let mut records = RoaringBitmap::new();
    let file = segment.postings.file();
    for term in expand(segment, token, analyzer)? {
        let postings = TermPostings::parse(segment.postings.get(term as usize)?, file)?;
        let palette = postings.palette();
        if palette.iter().all(|&mask| mask & groups_mask != 0) {
            let all = postings.records(file)?;
            segment.check_records(&all, file)?;
            records |= all;
            continue;
        }
        let mut some = RoaringBitmap::new();
        postings.for_each(segment.len(), file, |doc, code| {
            if palette[code] & groups_mask != 0 {
                some.push(doc);
            }
        })?;
        records |= some;
    }
    Ok(records)
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
            set |= token_records(segment, token, *analyzer, mask)?;
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

/// Where the postings say the phrase of `query` may occur in a segment, as a bit per record,
/// and whether exactly (the bits are then the records where it occurs). `None`: anywhere.
///
/// A phrase of words that are not CJK occurs only in records holding each adjacent pair of its
/// words, and a two-word phrase exactly in those (index/pairs.rs). Where a pair is not indexed,
/// the records holding every word in one group narrow it instead.
fn phrase_records(
    segment: &Segment,
    query: &str,
    index: &Index,
) -> Result<Option<(Vec<u64>, bool)>> {
    let n = segment.len() as usize;
    let words = text::words(query);
    let not_cjk = words
        .iter()
        .all(|w| !w.chars().next().is_some_and(text::is_cjk_char));
    let mut every_pair = words.len() >= 2 && not_cjk;
    let mut held: Option<Vec<u64>> = None;
    if not_cjk {
        for pair in words.windows(2) {
            match segment.pair_records(&pair[0], &pair[1])? {
                Some(bits) => {
                    held = Some(match held {
                        Some(mut all) => {
                            all.iter_mut().zip(&bits).for_each(|(a, b)| *a &= b);
                            all
                        }
                        None => bits,
                    })
                }
                None => every_pair = false,
            }
        }
    }
    if every_pair {
        let held = held.unwrap_or_else(|| vec![0; n.div_ceil(64)]);
        return Ok(Some((held, words.len() == 2)));
    }
    let mut bits = phrase_prefilter(segment, query, index)?;
    if let Some(held) = held {
        bits = Some(match bits {
            Some(mut bits) => {
                bits.iter_mut().zip(&held).for_each(|(b, h)| *b &= h);
                bits
            }
            None => held,
        });
    }
    Ok(bits.map(|bits| (bits, false)))
}

/// Records that contain, in one group, every term of every word of the query, as a bit per
/// record: a superset of the records where the phrase occurs, which are then verified on the
/// stored text. `None` when the words give no constraint.
fn phrase_prefilter(segment: &Segment, query: &str, index: &Index) -> Result<Option<Vec<u64>>> {
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
    let n = segment.len() as usize;
    if keys.is_empty() {
        return Ok(None);
    }
    let file = segment.postings.file();
    let mut postings = Vec::with_capacity(keys.len());
    for key in &keys {
        let Some(term) = segment.terms.get(key)? else {
            return Ok(Some(vec![0; n.div_ceil(64)]));
        };
        postings.push(TermPostings::parse(
            segment.postings.get(term as usize)?,
            file,
        )?);
    }
    postings.sort_by_key(TermPostings::len);
    let mut bits = vec![0u64; n.div_ceil(64)];
    let (rarest, others) = postings.split_first().expect("a key at least");
    if rarest.len() * 64 < n as u64 {
        // A rare key: its records, each looked up in the other keys' postings.
        let mut held: Vec<(u32, u16)> = Vec::with_capacity(rarest.len() as usize);
        let palette = rarest.palette();
        rarest.for_each(segment.len(), file, |doc, code| {
            held.push((doc, palette[code]))
        })?;
        for other in others {
            let mut kept = Vec::with_capacity(held.len());
            for (doc, groups) in held {
                if let Some(mask) = other.mask_of(doc, file)? {
                    if groups & mask != 0 {
                        kept.push((doc, groups & mask));
                    }
                }
            }
            held = kept;
        }
        for (doc, _) in held {
            bits[doc as usize / 64] |= 1 << (doc % 64);
        }
        return Ok(Some(bits));
    }
    // Per record, the groups holding every key so far: each key's pass writes the records it
    // occurs in, so the others drop out.
    let mut common = scratch::MASKS.take(n);
    common.fill(ALL_GROUPS);
    let mut next = scratch::MASKS.take(n);
    for key_postings in &postings {
        let palette = key_postings.palette();
        next.fill(0);
        key_postings.for_each(segment.len(), file, |doc, code| {
            next[doc as usize] = common[doc as usize] & palette[code];
        })?;
        std::mem::swap(&mut common, &mut next);
    }
    for (word, groups) in bits.iter_mut().zip(common.chunks(64)) {
        *word = groups
            .iter()
            .enumerate()
            .fold(0, |word, (i, &g)| word | u64::from(g != 0) << i);
    }
    scratch::MASKS.give(common);
    scratch::MASKS.give(next);
    Ok(Some(bits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The in-place ASCII matcher answers as SPEC's `phrase_occurs(phrase(value), phrase)`.
    fn general(value: &str, phrase: &str) -> bool {
        phrase_occurs(&text::phrase(value), phrase)
    }

    fn fast(value: &str, phrase: &str) -> bool {
        let words: Vec<&[u8]> = phrase.split(' ').map(str::as_bytes).collect();
        ascii_words_occur(value.as_bytes(), &words)
    }

    #[test]
    fn ascii_phrase_matching_examples() {
        for (value, phrase, expected) in [
            ("Flaky CI cache, again", "ci cache", true),
            ("flaky-ci cache", "ci cache", true),
            ("flakyci cache", "ci cache", false),
            ("the cache ci", "ci cache", false),
            ("ci  ...  cache!", "ci cache", true),
            ("cache", "cache", true),
            ("", "cache", false),
            ("cach", "cache", false),
            ("caches", "cache", false),
        ] {
            assert_eq!(fast(value, phrase), expected, "{value:?} / {phrase:?}");
            assert_eq!(general(value, phrase), expected, "{value:?} / {phrase:?}");
        }
        // Words are cut at 64 characters, in the value and in the phrase alike.
        let long = "x".repeat(70);
        let phrase = text::phrase(&format!("{long} y"));
        assert!(fast(&format!("a {long} y"), &phrase));
        assert!(general(&format!("a {long} y"), &phrase));
    }

    proptest! {
        #[test]
        fn ascii_matcher_agrees_with_the_spec_definition(
            value in "[aAbB0 ,.x-]{0,40}",
            words in proptest::collection::vec("[abAB0x]{1,3}", 1..4),
        ) {
            let phrase = text::phrase(&words.join(" "));
            prop_assume!(!phrase.is_empty());
            prop_assert_eq!(fast(&value, &phrase), general(&value, &phrase));
        }
    }
}
