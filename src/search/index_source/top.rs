//! The first page of an order bounded by relevance ([`BoundedOrder`]: the standard score, decay's
//! candidate list, the recency score) without scoring every candidate: slots and histograms
//! over the accumulated sums, bounds on what can reach the page, and the phrase checks and
//! column reads only where they can change it.

use std::cmp::Ordering;

use rayon::prelude::*;
use roaring::RoaringBitmap;

use crate::error::Result;
use crate::schema::MASK_WEIGHTS;
use crate::search::filters::Filters;
use crate::search::profiles::age_days;
use crate::search::profiles::recency::{self, RecencyInput};
use crate::search::query::PreparedQuery;
use crate::search::response::Counts;
use crate::search::standard::{self, FeedbackRange, MatchLevel};
use crate::search::{scratch, standard_parts, BoundedOrder, DocRef, Matched, Source};

use crate::search::phrase_checks::{check_phrases, nth_best, PhraseBound, PhraseChecks};

use super::accumulate::{candidate_bits, CandidateSet, SegmentMatch};
use super::IndexSource;

/// The standard relevance and level by table: the coverage and its multiplier for each number
/// of matched tokens, computed once per query by [`standard::relevance`] itself, so that every
/// value is bit for bit the one it computes.
pub(super) struct Scorer {
    coverage: Vec<f64>,
    multiplier: Vec<f64>,
}

impl Scorer {
    pub(super) fn new(token_count: u32) -> Scorer {
        let parts: Vec<standard::Relevance> = (0..=token_count)
            .map(|k| standard::relevance(0, false, k, token_count))
            .collect();
        Scorer {
            coverage: parts.iter().map(|r| r.coverage).collect(),
            multiplier: parts.iter().map(|r| r.coverage_multiplier).collect(),
        }
    }

    /// Relevance (before feedback).
    fn relevance(&self, field_sum: u32, phrase: bool, matched: u32) -> f64 {
        let bonus = if phrase {
            standard::EXACT_PHRASE_BONUS
        } else {
            0
        };
        f64::from(field_sum + bonus) * self.multiplier[matched as usize]
    }
}

/// Every (field sum, matched tokens) a query can produce as one *key*, `field_sum × (query
/// tokens + 1) + matched tokens`, and with or without the phrase as one *slot*, `2 × key +
/// phrase`: a record's evidence is looked up in these tables instead of being scored, and a
/// segment is surveyed by a histogram over slots.
pub(super) struct Keys {
    /// Relevance (before feedback), by slot (an array reused from search to search: at 30
    /// tokens the table has some 80,000 slots).
    relevance: Vec<f64>,
    /// The coverage for each number of matched tokens, and the query tokens + 1.
    coverage: Vec<f64>,
    stride: usize,
}

impl Drop for Keys {
    fn drop(&mut self) {
        scratch::FLOATS.give(std::mem::take(&mut self.relevance));
    }
}

impl Keys {
    pub(super) fn new(scorer: &Scorer, token_count: u32) -> Keys {
        let most = MASK_WEIGHTS.iter().copied().max().unwrap_or(0) * token_count;
        let slots = 2 * (most as usize + 1) * (token_count as usize + 1);
        // Every slot is written below.
        let mut relevance = scratch::FLOATS.take_unzeroed(slots);
        let mut at = 0;
        for field_sum in 0..=most {
            for matched in 0..=token_count {
                for phrase in [false, true] {
                    relevance[at] = scorer.relevance(field_sum, phrase, matched);
                    at += 1;
                }
            }
        }
        debug_assert_eq!(at, slots);
        Keys {
            relevance,
            coverage: scorer.coverage.clone(),
            stride: token_count as usize + 1,
        }
    }

    /// The number of slots.
    fn slots(&self) -> usize {
        self.relevance.len()
    }

    /// The slot of a record's key ([`SegmentMatch::sums`]), with the phrase or not.
    #[inline]
    fn slot(sums: u32, phrase: bool) -> usize {
        2 * sums as usize + usize::from(phrase)
    }

    /// The match level of `slot` (as [`Scorer::relevance`] gives it).
    fn level(&self, slot: usize) -> MatchLevel {
        let matched = (slot / 2) % self.stride;
        standard::match_level(self.coverage[matched], self.relevance[slot])
    }

    /// Whether the phrase changes the level of the key of `slot`.
    fn depends(&self, slot: usize) -> bool {
        self.level(slot & !1) != self.level(slot | 1)
    }
}

/// Which candidates can still reach the page: those whose score can exceed the floor, what
/// their records add at its most. Each slot's bound is found when a candidate of it is asked
/// about (a query's table has thousands of slots; its candidates reaching the bound test, far
/// fewer).
struct Reach<'k> {
    floor: f64,
    /// Relevance by slot of [`Keys`].
    relevance: &'k [f64],
}

impl<'k> Reach<'k> {
    fn new(keys: &'k Keys, floor: f64) -> Reach<'k> {
        Reach {
            floor,
            relevance: &keys.relevance,
        }
    }

    /// Whether a relevance (before what the record adds) can reach the page, for a record
    /// pinned or not.
    fn relevance(&self, relevance: f64, pinned: bool, ranker: &Ranker<'_>) -> bool {
        ranker.upper(relevance, pinned) + SLACK >= self.floor
    }

    /// Whether a record of this slot can reach the page.
    fn slot(&self, slot: usize, pinned: bool, ranker: &Ranker<'_>) -> bool {
        self.relevance(self.relevance[slot], pinned, ranker)
    }
}

/// How a candidate scores in the order of a [`BoundedOrder`]: exactly, from its relevance and the
/// values of its record (by the profile's own formula, so that the order is the pipeline's bit
/// for bit), and within bounds from its relevance alone.
struct Ranker<'s> {
    order: BoundedOrder<'s>,
    token_count: u32,
    /// Where the feedback term of every candidate lies (standard's).
    feedback: FeedbackRange,
    /// The best relevance of every candidate (recency's r_max; 0 for the other orders).
    r_max: f64,
}

/// What a candidate's score reads of its record besides relevance.
#[derive(Debug, Clone, Copy)]
enum Extra {
    /// Nothing (relevance alone).
    Nothing,
    /// The feedback term (SPEC §4).
    Feedback(f64),
    /// What recency reads (SPEC §5.2).
    Recency {
        created_at: Option<(i64, u32)>,
        pinned: bool,
        superseded: bool,
    },
}

/// Bounds compared with a floor computed by other arithmetic keep this much slack, so that
/// rounding never drops a record that ties the floor.
pub(super) const SLACK: f64 = 1e-9;

impl Ranker<'_> {
    fn score(&self, field_sum: u32, matched: u32, phrase: bool, extra: Extra) -> f64 {
        let token_count = self.token_count;
        match (self.order, extra) {
            (BoundedOrder::Standard, Extra::Feedback(feedback)) => {
                standard_parts(field_sum, matched, phrase, token_count, feedback).0
            }
            (
                BoundedOrder::Recency { settings, now, .. },
                Extra::Recency {
                    created_at,
                    pinned,
                    superseded,
                },
            ) => {
                let input = RecencyInput {
                    relevance: standard::relevance(field_sum, phrase, matched, token_count)
                        .relevance,
                    r_max: self.r_max,
                    age_days: age_days(now, created_at),
                    pinned,
                    superseded,
                };
                recency::score(&input, settings).score
            }
            _ => standard::relevance(field_sum, phrase, matched, token_count).relevance,
        }
    }

    /// The least score of a candidate of relevance `r` outside supersession relations, its
    /// record unread.
    fn lower(&self, r: f64) -> f64 {
        match self.order {
            // (bm25f is ranked by `bm25f_top`, never by relevance.)
            BoundedOrder::Standard => r + self.feedback.least,
            BoundedOrder::DecayCandidates { .. } => r,
            BoundedOrder::Recency { settings, .. } => {
                // recency ∈ [0, 1]: the age is never negative.
                self.text(r) + settings.weight.min(0.0) + settings.pin_bonus.min(0.0)
            }
        }
    }

    /// The greatest score of a candidate of relevance `r` outside supersession relations,
    /// pinned or not, its record unread.
    fn upper(&self, r: f64, pinned: bool) -> f64 {
        match self.order {
            BoundedOrder::Standard => r + self.feedback.most,
            BoundedOrder::DecayCandidates { .. } => r,
            BoundedOrder::Recency { settings, .. } => {
                let pin = if pinned { settings.pin_bonus } else { 0.0 };
                self.text(r) + settings.weight.max(0.0) + pin.max(0.0)
            }
        }
    }

    /// Recency's text term of relevance `r`.
    fn text(&self, r: f64) -> f64 {
        if self.r_max > 0.0 {
            r / self.r_max
        } else {
            0.0
        }
    }
}

/// A candidate of [`IndexSource::top_impl`]: its match evidence and what its score reads of
/// its record, before anything else of it is read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Candidate {
    pub(super) segment: u32,
    pub(super) doc: u32,
    /// `None` while the phrase may occur and the text has not been checked.
    pub(super) phrase: Option<bool>,
    /// Kept whatever its score: it supersedes a record or is superseded by a candidate (or,
    /// for recency, is superseded at all, or holds the best relevance).
    pub(super) involved: bool,
    /// The scores without and with the phrase, in the order's own formula (computed once:
    /// recency's takes a power).
    pub(super) scores: [f64; 2],
}

impl PhraseBound for Candidate {
    fn doc(&self) -> DocRef {
        DocRef {
            segment: self.segment,
            doc: self.doc,
        }
    }

    fn phrase(&self) -> Option<bool> {
        self.phrase
    }

    fn set_phrase(&mut self, found: bool) {
        self.phrase = Some(found);
    }

    fn lower(&self, token_count: u32) -> f64 {
        Candidate::lower(self, token_count)
    }

    fn upper(&self, token_count: u32) -> f64 {
        Candidate::upper(self, token_count)
    }
}

impl Candidate {
    fn new(
        m: &SegmentMatch<'_>,
        doc: u32,
        phrase: Option<bool>,
        extra: Extra,
        involved: bool,
        ranker: &Ranker<'_>,
    ) -> Candidate {
        let (field_sum, matched) = (m.field_sum(doc), m.matched(doc));
        let score = |phrase| ranker.score(field_sum, matched, phrase, extra);
        // Without a possible phrase, one score serves both.
        let without = score(false);
        let with = if phrase == Some(false) {
            without
        } else {
            score(true)
        };
        Candidate {
            segment: m.s,
            doc,
            phrase,
            involved,
            scores: [without, with],
        }
    }

    fn score(&self, phrase: bool) -> f64 {
        self.scores[usize::from(phrase)]
    }

    /// The score with the phrase as checked, or without it when unchecked: a lower bound.
    fn lower(&self, _token_count: u32) -> f64 {
        self.score(self.phrase == Some(true))
    }

    /// The score with the phrase unless it was checked absent: an upper bound.
    fn upper(&self, _token_count: u32) -> f64 {
        self.score(self.phrase != Some(false))
    }
}

impl<'a> IndexSource<'a> {
    /// Where the feedback term of every record of segment match `m` lies: from what its
    /// columns can encode and the feedback the log added (see [`Index::feedback_bounds`]).
    ///
    /// [`Index::feedback_bounds`]: crate::index::Index::feedback_bounds
    pub(super) fn feedback_range(&self, m: &SegmentMatch<'_>) -> FeedbackRange {
        let (least, most) = self.index.feedback_bounds(m.s as usize);
        FeedbackRange::of(&least, &most)
    }

    /// The records of each segment in a supersession relation with a candidate: those naming
    /// a target (whether or not it is a candidate) and those some candidate names.
    pub(super) fn involvement(&self, matches: &[SegmentMatch<'a>]) -> Result<Vec<RoaringBitmap>> {
        let mut involved = Vec::with_capacity(matches.len());
        let mut targets: Vec<&'a str> = Vec::new();
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
        Ok(involved)
    }

    /// The candidates of segment match `m` that can [`Reach`] the page or are `involved`, each
    /// with what its score reads of its record (for the standard order the feedback term:
    /// columns plus the log's feedback). `checked` holds the phrases already checked, by record
    /// number; `survey` is the segment's; `sets` the segment's involved and left-out records.
    fn candidates(
        &self,
        m: &SegmentMatch<'a>,
        sets: &Sets,
        checked: &[(u32, bool)],
        survey: &Survey,
        reach: &Reach<'_>,
        ranker: &Ranker<'_>,
    ) -> Result<Vec<Candidate>> {
        // Only chunks whose best key can reach the page (or that hold an involved record) are
        // read. Then by the bound with the phrase wherever the postings allow it; then the
        // records kept whose phrase was checked take the bound their text gives.
        let involved = &sets.involved;
        let pinned = match ranker.order {
            BoundedOrder::Recency { .. } => Some(m.segment.pinned()?),
            _ => None,
        };
        let is_pinned = |doc: u32| pinned.is_some_and(|p| p.contains(doc));
        // The chunks of 64 records holding a pinned record, whose bound has the pin's bonus.
        let mut pinned_chunks = vec![0u64; survey.chunk_best.len().div_ceil(64)];
        for doc in pinned.into_iter().flatten() {
            let w = doc as usize / 64;
            if let Some(word) = pinned_chunks.get_mut(w / 64) {
                *word |= 1 << (w % 64);
            }
        }
        let chunk = |w: usize| {
            let holds_pinned = pinned_chunks
                .get(w / 64)
                .is_none_or(|word| word >> (w % 64) & 1 != 0);
            survey
                .chunk_best
                .get(w)
                .is_none_or(|&best| reach.relevance(best, holds_pinned, ranker))
        };
        let mut kept: Vec<(u32, Option<bool>, bool)> = Vec::new();
        m.for_each_candidate_in(chunk, |doc, maybe_phrase| {
            let slot = Keys::slot(m.sums[doc as usize], maybe_phrase);
            if reach.slot(slot, false, ranker)
                || (is_pinned(doc) && reach.slot(slot, true, ranker))
                || involved.contains(doc)
            {
                kept.push((doc, m.known_phrase(maybe_phrase), false));
            }
        });
        kept.retain_mut(|(doc, phrase, is_involved)| {
            if sets.left_out.contains(*doc) {
                return false;
            }
            *is_involved = involved.contains(*doc);
            if let Ok(at) = checked.binary_search_by_key(doc, |c| c.0) {
                *phrase = Some(checked[at].1);
            }
            let slot = Keys::slot(m.sums[*doc as usize], *phrase != Some(false));
            *is_involved || reach.slot(slot, is_pinned(*doc), ranker)
        });
        let added = self.index.feedback_added_docs(m.s as usize);
        let columns = &m.segment.columns;
        kept.into_iter()
            .map(|(doc, phrase, involved)| {
                let extra = match ranker.order {
                    BoundedOrder::Standard => {
                        let mut feedback = columns.feedback(doc)?;
                        if let Some(more) = added.get(&doc) {
                            feedback.merge(more);
                        }
                        Extra::Feedback(standard::feedback_score(&feedback))
                    }
                    BoundedOrder::DecayCandidates { .. } => Extra::Nothing,
                    BoundedOrder::Recency { .. } => {
                        let (created_at, pinned) = columns.recency(doc)?;
                        Extra::Recency {
                            created_at,
                            pinned,
                            superseded: sets.superseded.contains(doc),
                        }
                    }
                };
                Ok(Candidate::new(m, doc, phrase, extra, involved, ranker))
            })
            .collect()
    }

    /// The first `limit` places of `order` (see [`Source::top`]), in steps: every segment
    /// accumulated, the records kept whatever their score (supersession relations) or left
    /// out, one survey of each segment's sums (counts, levels, bounds), the best relevance
    /// where the order needs it, the candidates that can reach the page, their phrases checked
    /// under the bound, and the page's hits.
    pub(super) fn top_impl(
        &self,
        query: &PreparedQuery,
        filters: &Filters,
        limit: usize,
        order: &BoundedOrder<'_>,
    ) -> Result<Matched<'a>> {
        let token_count = query.tokens.len() as u32;
        let keys = Keys::new(&Scorer::new(token_count), token_count);
        let matches = self.segment_matches(query, filters)?;
        let mut sets = self.sets(&matches, order)?;
        // Execute keeps the best `limit + |involved|`; more need not be ranked here.
        let wanted = limit
            + sets
                .iter()
                .map(|b| b.involved.len() as usize)
                .sum::<usize>();

        // One pass over the candidates' sums: the levels that do not depend on the phrase, the
        // records whose level does (their text is checked, as the counts need it), and a bound.
        let surveys: Vec<Survey> = matches
            .par_iter()
            .zip(&sets)
            .map(|(m, sets)| survey(m, sets, &keys, wanted))
            .collect();
        let (counts, mut checked) = self.count_levels(query, &matches, &surveys)?;

        let mut ranker = Ranker {
            order: *order,
            token_count,
            feedback: (matches.iter().map(|m| self.feedback_range(m)))
                .reduce(FeedbackRange::union)
                .unwrap_or(FeedbackRange::ANY),
            r_max: 0.0,
        };
        match order {
            // A shard is told the collection's.
            BoundedOrder::Recency {
                best_relevance: Some(r_max),
                ..
            } => ranker.r_max = *r_max,
            // The recency score divides by the best relevance: it is found exactly, and its
            // record is kept so that the pipeline finds it too.
            BoundedOrder::Recency { .. } => {
                if let Some((r_max, best)) =
                    self.best_relevance(query, &matches, &surveys, &mut checked, &keys)?
                {
                    ranker.r_max = r_max;
                    sets[best.segment as usize].involved.insert(best.doc);
                }
            }
            _ => {}
        }

        // At least `wanted` records score above the wanted-th best lower bound: a record whose
        // upper bound is not above it cannot reach the page, so its record is never read.
        let mut bounds: Vec<f64> = surveys
            .iter()
            .flat_map(|s| s.best.iter().map(|b| ranker.lower(f64::from_bits(*b))))
            .collect();
        let floor = nth_best(&mut bounds, wanted).unwrap_or(f64::NEG_INFINITY);
        let reach = Reach::new(&keys, floor);
        let mut candidates: Vec<Candidate> = matches
            .par_iter()
            .zip(&sets)
            .zip(&checked)
            .zip(&surveys)
            .map(|(((m, sets), checked), survey)| {
                self.candidates(m, sets, checked, survey, &reach, &ranker)
            })
            .collect::<Result<Vec<_>>>()?
            .concat();

        // Phrase checks: for candidates kept whatever their score; then wherever the phrase
        // could lift a candidate onto the page.
        if let Some(phrase) = query.phrase.as_deref() {
            let checks = PhraseChecks {
                phrase,
                limit,
                token_count,
                first: |_: usize, c: &Candidate| c.involved,
                involved: |_: usize, c: &Candidate| c.involved,
            };
            check_phrases(self, &mut candidates, checks, std::iter::empty())?;
        }

        let chosen = page_positions(&candidates, &matches, wanted, token_count)?;
        let groups = matches!(order, BoundedOrder::Standard);
        self.page_matched(query, &matches, &candidates, &chosen, counts, groups)
    }

    /// Per segment, the records kept whatever their score and those left out, for `order`:
    /// the standard and recency orders keep the records in a supersession relation with a
    /// candidate (supersession may lower their scores after ranking), recency also every
    /// superseded record (its penalty is not bounded like the rest); decay's candidate list
    /// leaves superseded records out unless they are included.
    fn sets(&self, matches: &[SegmentMatch<'a>], order: &BoundedOrder<'_>) -> Result<Vec<Sets>> {
        let superseded = match order {
            BoundedOrder::Standard
            | BoundedOrder::DecayCandidates {
                include_superseded: true,
            } => None,
            _ => Some(self.superseded(matches)?),
        };
        let involved = match order {
            BoundedOrder::DecayCandidates { .. } => vec![RoaringBitmap::new(); matches.len()],
            _ => self.involvement(matches)?,
        };
        let superseded = superseded.unwrap_or_else(|| vec![RoaringBitmap::new(); matches.len()]);
        Ok(involved
            .into_iter()
            .zip(superseded)
            .map(|(involved, superseded)| match order {
                BoundedOrder::Recency { .. } => Sets {
                    involved: &involved | &superseded,
                    left_out: RoaringBitmap::new(),
                    superseded,
                },
                BoundedOrder::DecayCandidates { .. } => Sets {
                    involved,
                    left_out: superseded,
                    superseded: RoaringBitmap::new(),
                },
                BoundedOrder::Standard => Sets {
                    involved,
                    left_out: RoaringBitmap::new(),
                    superseded,
                },
            })
            .collect())
    }

    /// Per segment, the candidates some live record supersedes.
    fn superseded(&self, matches: &[SegmentMatch<'a>]) -> Result<Vec<RoaringBitmap>> {
        let mut out = vec![RoaringBitmap::new(); matches.len()];
        for target in self.index.superseders()?.keys() {
            for (m, out) in matches.iter().zip(out.iter_mut()) {
                if let Some(doc) = m.segment.doc_of_id(target)? {
                    if m.is_candidate(doc) {
                        out.insert(doc);
                    }
                }
            }
        }
        Ok(out)
    }

    /// The best relevance of every candidate and the first record holding it, exactly: the
    /// phrase is checked for the records it could lift above the best found without it (the
    /// checks are added to `checked`).
    ///
    /// The surveys tell the best relevance known without a check; the phrase checks made for
    /// the counts may raise it. Only the chunks of 64 records whose best upper bound reaches
    /// it are then read: they hold its first record and every record the phrase could lift
    /// above it. Any record of the best relevance would do (it is kept only so that the
    /// pipeline finds the same best); the first makes the choice independent of threads.
    fn best_relevance(
        &self,
        query: &PreparedQuery,
        matches: &[SegmentMatch<'a>],
        surveys: &[Survey],
        checked: &mut [Checked],
        keys: &Keys,
    ) -> Result<Option<(f64, DocRef)>> {
        let mut best_known = surveys
            .iter()
            .map(|s| s.best_known)
            .fold(f64::NEG_INFINITY, f64::max);
        for (m, checked) in matches.iter().zip(checked.iter()) {
            for &(doc, found) in checked.iter().filter(|c| c.1) {
                best_known =
                    best_known.max(keys.relevance[Keys::slot(m.sums[doc as usize], found)]);
            }
        }
        if best_known == f64::NEG_INFINITY {
            return Ok(None);
        }
        let mut holder: Option<DocRef> = None;
        let mut unknown: Vec<(f64, DocRef)> = Vec::new();
        for ((m, checked), survey) in matches.iter().zip(checked.iter()).zip(surveys) {
            let chunk = |w: usize| survey.chunk_best.get(w).is_none_or(|&b| b >= best_known);
            m.for_each_candidate_in(chunk, |doc, maybe_phrase| {
                let at = DocRef { segment: m.s, doc };
                let sums = m.sums[doc as usize];
                let phrase = m.known_phrase(maybe_phrase).or_else(|| {
                    let i = checked.binary_search_by_key(&doc, |c| c.0).ok()?;
                    Some(checked[i].1)
                });
                if holder.is_none()
                    && keys.relevance[Keys::slot(sums, phrase == Some(true))] == best_known
                {
                    holder = Some(at);
                }
                if phrase.is_none() {
                    let upper = keys.relevance[Keys::slot(sums, true)];
                    if upper > best_known {
                        unknown.push((upper, at));
                    }
                }
            });
        }
        let mut best = holder.map(|at| (best_known, at));
        let Some(phrase) = query.phrase.as_deref() else {
            return Ok(best);
        };
        unknown.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (upper, at) in unknown {
            if best.is_some_and(|(b, _)| upper <= b) {
                break;
            }
            let found = self.verify_phrase(at, phrase)?;
            let list = &mut checked[at.segment as usize];
            if let Err(i) = list.binary_search_by_key(&at.doc, |c| c.0) {
                list.insert(i, (at.doc, found));
            }
            if found {
                best = Some((upper, at));
            }
        }
        Ok(best)
    }

    /// Every segment's accumulated match, in parallel.
    pub(super) fn segment_matches(
        &self,
        query: &PreparedQuery,
        filters: &Filters,
    ) -> Result<Vec<SegmentMatch<'a>>> {
        self.index
            .segments()
            .par_iter()
            .enumerate()
            .map(|(s, segment)| self.segment_match(s as u32, segment, query, filters))
            .collect()
    }

    /// The counts of every candidate's level: from the surveys, with the phrase checked for the
    /// records whose level depends on it (returned per segment, by record number).
    pub(super) fn count_levels(
        &self,
        query: &PreparedQuery,
        matches: &[SegmentMatch<'a>],
        surveys: &[Survey],
    ) -> Result<(Counts, Vec<Checked>)> {
        let token_count = query.tokens.len() as u32;
        let mut counts = Counts::default();
        let mut checked: Vec<Vec<(u32, bool)>> = Vec::with_capacity(matches.len());
        for (m, survey) in matches.iter().zip(surveys) {
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
        Ok((counts, checked))
    }

    /// The chosen candidates as hits, with the groups each token matched in them when `groups`
    /// (for the standard breakdown, the only one that shows them: looked up for these records
    /// only; another profile's chosen are `decay`'s whole `--candidates` list, and it shows none).
    pub(super) fn page_matched(
        &self,
        query: &PreparedQuery,
        matches: &[SegmentMatch<'a>],
        candidates: &[Candidate],
        chosen: &[u32],
        counts: Counts,
        groups: bool,
    ) -> Result<Matched<'a>> {
        // Per segment, the chosen records ascending: the tokens each matched, looked up once.
        let mut page_docs: Vec<Vec<u32>> = vec![Vec::new(); matches.len()];
        for &i in chosen {
            let c = &candidates[i as usize];
            page_docs[c.segment as usize].push(c.doc);
        }
        // Without `groups` the chosen can be many more than a page (`decay`'s candidates):
        // their masks are looked up later, for the page alone (`Source::coverage_masks`).
        let mut coverages = Vec::with_capacity(matches.len());
        let mut token_groups = Vec::with_capacity(matches.len());
        for (m, docs) in matches.iter().zip(&mut page_docs) {
            docs.sort_unstable();
            docs.dedup();
            if groups {
                let (covered, grouped) = m.coverages_and_groups(docs)?;
                coverages.push(covered);
                token_groups.push(grouped);
            } else {
                if !docs.is_empty() {
                    self.defer_coverages(m, query);
                }
                token_groups.push(m.token_groups(&[])?);
            }
        }
        let hits = chosen
            .iter()
            .map(|&i| {
                let c = &candidates[i as usize];
                let s = c.segment as usize;
                let coverage = groups.then(|| {
                    let at = page_docs[s].binary_search(&c.doc).expect("a chosen record");
                    coverages[s][at]
                });
                self.hit(&matches[s], c.doc, c.phrase, coverage)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Matched {
            live: matches.iter().map(|m| m.live).sum(),
            passing: matches.iter().map(|m| m.passing).sum(),
            hits,
            token_groups,
            counts: Some(counts),
        })
    }
}

/// Positions in `candidates`, ascending, of the best `wanted` outside supersession relations by
/// score then id, and of every one inside them. Ids are read only for the ties at the cut.
pub(super) fn page_positions(
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

/// Phrases checked in one segment: (record number, found), ascending.
pub(super) type Checked = Vec<(u32, bool)>;

/// One pass over a segment's candidates, from the accumulated sums alone.
pub(super) struct Survey {
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
    /// The best relevance some candidate is known to have without a phrase check: with the
    /// phrase where the postings say exactly that it occurs, else without it.
    best_known: f64,
}

/// One segment's records that [`IndexSource::top_impl`] treats apart from their score.
pub(super) struct Sets {
    /// Kept whatever their score, and no part of the bound.
    pub(super) involved: RoaringBitmap,
    /// Never kept.
    pub(super) left_out: RoaringBitmap,
    /// The candidates some live record supersedes (read by recency only).
    pub(super) superseded: RoaringBitmap,
}

pub(super) fn survey(m: &SegmentMatch<'_>, sets: &Sets, keys: &Keys, wanted: usize) -> Survey {
    // Per slot: candidates whose postings rule the phrase out (even slots) or allow it (odd).
    let exact = m.phrase_exact;
    let mut chunk_best = vec![f64::NEG_INFINITY; m.sums.len().div_ceil(64)];
    let (mut histogram, level_depends) = match &m.candidates {
        // A part of the segment at a time, on every thread (a segment of a million records is
        // one task otherwise), each run of parts with its histogram; the runs' histograms are
        // summed and their lists joined in order, so the result is the same on any thread count.
        // The histograms are twice as long: see [`Tally::words`].
        CandidateSet::Dense => m
            .sums
            .par_chunks(SURVEY_PART)
            .zip(chunk_best.par_chunks_mut(SURVEY_PART / 64))
            .enumerate()
            .fold(
                || (scratch::COUNTS.take(2 * keys.slots()), Vec::new()),
                |(mut histogram, mut depends), (part, (sums, chunk_best))| {
                    let first = part * SURVEY_PART;
                    let tally = Tally {
                        keys,
                        exact,
                        histogram: &mut histogram,
                        depends: &mut depends,
                    };
                    tally.words(m, first, sums, chunk_best);
                    (histogram, depends)
                },
            )
            .reduce_with(|(mut histogram, mut depends), (more, later)| {
                for (count, more) in histogram.iter_mut().zip(&more) {
                    *count += more;
                }
                scratch::COUNTS.give(more);
                depends.extend(later);
                (histogram, depends)
            })
            .map(|(mut histogram, depends)| {
                let (even, odd) = histogram.split_at_mut(keys.slots());
                for (count, odd) in even.iter_mut().zip(odd) {
                    *count += *odd;
                }
                histogram.truncate(keys.slots());
                (histogram, depends)
            })
            .unwrap_or_else(|| (scratch::COUNTS.take(keys.slots()), Vec::new())),
        CandidateSet::Listed(_) => {
            let mut histogram = scratch::COUNTS.take(keys.slots());
            let mut depends = Vec::new();
            let mut tally = Tally {
                keys,
                exact,
                histogram: &mut histogram,
                depends: &mut depends,
            };
            m.for_each_candidate(|doc, maybe_phrase| {
                let upper = tally.visit(doc, m.sums[doc as usize], maybe_phrase);
                let best = &mut chunk_best[doc as usize / 64];
                if upper > *best {
                    *best = upper;
                }
            });
            (histogram, depends)
        }
    };
    let mut counts = Counts::default();
    let mut best_known = f64::NEG_INFINITY;
    // Most slots hold no candidate (a few hundred of tens of thousands do): their levels are
    // not looked up.
    for (slot, &count) in histogram.iter().enumerate() {
        if count == 0 {
            continue;
        }
        counts.candidates += count as usize;
        let known = keys.relevance[if exact { slot } else { slot & !1 }];
        best_known = best_known.max(known);
        // Unless exact, the phrase is known only where it does not change the level.
        if slot % 2 == 0 || exact || !keys.depends(slot) {
            counts.add_many(keys.level(slot), count as usize);
        }
    }
    // The best `wanted` lower bounds of relevance outside supersession relations: with the
    // phrase where the postings say exactly that it occurs, else without it (the even slot).
    for doc in &sets.involved | &sets.left_out {
        histogram[Keys::slot(m.sums[doc as usize], m.maybe_phrase(doc))] -= 1;
    }
    for doc in &sets.involved {
        chunk_best[doc as usize / 64] = f64::INFINITY;
    }
    // Only the slots some candidate holds are ordered (a few hundred of the table's
    // thousands).
    let mut held: Vec<(f64, u32)> = Vec::new();
    if wanted > 0 {
        for slot in 0..histogram.len() {
            let count = match (exact, slot % 2) {
                (true, _) => histogram[slot],
                (false, 0) => histogram[slot] + histogram[slot + 1],
                (false, _) => continue,
            };
            if count > 0 {
                held.push((keys.relevance[slot], count));
            }
        }
        held.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
    }
    let mut best = Vec::with_capacity(wanted);
    for (relevance, count) in held {
        if best.len() == wanted {
            break;
        }
        let take = (count as usize).min(wanted - best.len());
        best.extend(std::iter::repeat_n(relevance.to_bits(), take));
    }
    scratch::COUNTS.give(histogram);
    Survey {
        counts,
        level_depends,
        best,
        chunk_best,
        best_known,
    }
}

/// Records surveyed per task of a dense survey (a multiple of 64).
const SURVEY_PART: usize = 1 << 16;

/// Where a survey counts its candidates: per slot of [`Keys`], and the candidates whose level
/// depends on the phrase.
struct Tally<'k, 'h> {
    keys: &'k Keys,
    exact: bool,
    histogram: &'h mut [u32],
    depends: &'h mut Vec<u32>,
}

impl Tally<'_, '_> {
    /// Counts candidate `doc` and returns its relevance with the phrase where its postings
    /// allow it (the best its chunk can hold).
    #[inline(always)]
    fn visit(&mut self, doc: u32, sum: u32, maybe_phrase: bool) -> f64 {
        let slot = Keys::slot(sum, maybe_phrase);
        if maybe_phrase && !self.exact && self.keys.depends(slot) {
            self.depends.push(doc);
        }
        self.count(0, slot)
    }

    /// Counts a candidate of key `slot` into the histogram's half starting at `half`, and
    /// returns the relevance the key allows.
    #[inline(always)]
    fn count(&mut self, half: usize, slot: usize) -> f64 {
        self.histogram[half + slot] += 1;
        self.keys.relevance[slot]
    }

    /// Counts the candidates among `sums`, the sums of the records from `first` on (a
    /// multiple of 64), and sets the best of each chunk of 64 in `chunk_best`: the chunk's best
    /// kept in a register and taken by a select (which candidate leads its chunk is
    /// unpredictable). A chunk where no candidate's level can depend on the phrase (the
    /// common one) is counted by a loop without a call (which would spill the best),
    /// into a histogram twice as long as the slots: the odd records' counts in its second half,
    /// so that neighbours with the same key do not wait on each other's count.
    fn words(mut self, m: &SegmentMatch<'_>, first: usize, sums: &[u32], chunk_best: &mut [f64]) {
        let slots = self.keys.slots();
        for (w, (sums, chunk_best)) in sums.chunks(64).zip(chunk_best).enumerate() {
            let word = first / 64 + w;
            let phrase = m.phrase.get(word).copied().unwrap_or(0);
            let mut candidates = candidate_bits(sums);
            let mut best = f64::NEG_INFINITY;
            if phrase == 0 || self.exact {
                while candidates != 0 {
                    let i = candidates.trailing_zeros() as usize;
                    candidates &= candidates - 1;
                    let slot = Keys::slot(sums[i], phrase >> i & 1 != 0);
                    let upper = self.count((i & 1) * slots, slot);
                    best = if upper > best { upper } else { best };
                }
            } else {
                while candidates != 0 {
                    let i = candidates.trailing_zeros() as usize;
                    candidates &= candidates - 1;
                    let upper = self.visit((64 * word + i) as u32, sums[i], phrase >> i & 1 != 0);
                    best = if upper > best { upper } else { best };
                }
            }
            *chunk_best = best;
        }
    }
}
