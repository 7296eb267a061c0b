//! The `bm25f` profile's first page without materializing every candidate: each segment's
//! exact-term postings read once, a chunk of records at a time, with their term frequencies;
//! every candidate bounded from those alone, and scored (its group lengths read) only where
//! its bound reaches the best scores found so far; the proximity pairs and the feedback term
//! bounded, and read — pair phrases checked, feedback columns decoded — only for the records
//! those bounds let reach the page. The counts come from the same survey as the standard
//! profile's.
//!
//! Every score is computed by [`bm25f`]'s own functions in the order the pipeline's pass
//! computes them (tokens in query order, then the pairs, then feedback), so that the page is
//! the pipeline's bit for bit; the pipeline then scores the page's records again.

use rayon::prelude::*;
use roaring::RoaringBitmap;

use crate::error::{Error, Result};
use crate::format::mmap::WorkArray;
use crate::format::postings::{PostingTfs, CHUNK_RECORDS};
use crate::index::Index;
use crate::schema::GROUP_COUNT;
use crate::search::filters::Filters;
use crate::search::index_statistics::{self, for_each_exact, ExactTerm};
use crate::search::phrase_checks::nth_best;
use crate::search::profiles::bm25f::{self, idf, term_weight};
use crate::search::query::PreparedQuery;
use crate::search::standard::{self, FeedbackRange};
use crate::search::{scratch, CollectionValues, DocRef, Matched, Source};
use crate::settings::{Bm25fSettings, Bm25fVariant};

use super::accumulate::SegmentMatch;
use super::top::{page_positions, survey, Candidate, Keys, Scorer, Sets, SLACK};
use super::IndexSource;

/// A record with an exact match: its BM25F sum over the tokens and which tokens matched.
struct Exact {
    doc: u32,
    score: f64,
    /// Bit t set ⇔ query token t occurs exactly.
    tokens: u32,
    /// Its feedback term, where it was read while scoring.
    feedback: Option<f64>,
}

impl<'a> IndexSource<'a> {
    /// `bm25f`'s first `limit` places (see [`Source::top`]).
    pub(super) fn bm25f_top(
        &self,
        query: &PreparedQuery,
        filters: &Filters,
        limit: usize,
        settings: &Bm25fSettings,
        whole: Option<CollectionValues<'_>>,
    ) -> Result<Matched<'a>> {
        let token_count = query.tokens.len() as u32;
        let keys = Keys::new(&Scorer::new(token_count), token_count);
        let matches = self.segment_matches(query, filters)?;
        let sets: Vec<Sets> = self
            .involvement(&matches)?
            .into_iter()
            .map(|involved| Sets {
                involved,
                left_out: RoaringBitmap::new(),
                superseded: RoaringBitmap::new(),
            })
            .collect();
        let wanted = limit
            + sets
                .iter()
                .map(|s| s.involved.len() as usize)
                .sum::<usize>();
        let surveys: Vec<_> = matches
            .par_iter()
            .zip(&sets)
            .map(|(m, sets)| survey(m, sets, &keys, 0))
            .collect();
        let (counts, checked) = self.count_levels(query, &matches, &surveys)?;

        // BM25F of every candidate with an exact match, per segment.
        // A shard ranks by the collection's statistics, not its own.
        let collection = match whole {
            Some(whole) => whole.collection,
            None => index_statistics::collection(self.index)?,
        };
        let avglen = collection.average_lengths();
        let saturation = settings.saturation_constant(&avglen);
        let terms = index_statistics::exact_terms(self.index, query)?;
        let idfs: Vec<f64> = terms
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let df = whole.and_then(|w| w.document_frequencies.get(i).copied());
                idf(collection.live, df.unwrap_or(t.df))
            })
            .collect();
        // The proximity pairs and the feedback term bound what each record can add; a record
        // whose bound stays below the wanted-th best lower bound is never read further.
        let proximity = match settings.variant {
            Bm25fVariant::Adaptive => settings.proximity,
            Bm25fVariant::Classic => 0.0,
        };
        let pairs: Vec<(u32, f64)> = match proximity {
            0.0 => Vec::new(),
            weight => query
                .pairs
                .iter()
                .map(|p| {
                    let mask = 1 << p.first | 1 << p.second;
                    (
                        mask,
                        weight * bm25f::pair_idf(idfs[p.first], idfs[p.second]),
                    )
                })
                .collect(),
        };
        let pairs_least: f64 = pairs.iter().map(|p| p.1.min(0.0)).sum();
        // Each token's part is below its idf where the saturation is not negative.
        let bounded = saturation >= 0.0 && idfs.iter().all(|&idf| idf >= 0.0);
        let weigh = Weigh {
            terms: &terms,
            idfs: &idfs,
            avglen: &avglen,
            b: settings.b,
            saturation,
            prune: bounded.then_some(Prune {
                pairs: &pairs,
                pairs_least,
            }),
        };
        // Where each segment's feedback terms lie, from its columns' encodings.
        let feedback: Vec<FeedbackRange> = matches.iter().map(|m| self.feedback_range(m)).collect();
        let exact: Vec<Vec<Exact>> = matches
            .par_iter()
            .zip(&sets)
            .zip(&feedback)
            .map(|((m, sets), feedback)| {
                self.exact_scores(m, &weigh, &sets.involved, wanted, feedback.most)
            })
            .collect::<Result<_>>()?;

        let mut lower: Vec<f64> = exact
            .iter()
            .zip(&sets)
            .zip(&feedback)
            .flat_map(|((e, sets), feedback)| {
                e.iter()
                    .filter(|e| !sets.involved.contains(e.doc))
                    .map(|e| e.score + e.feedback.unwrap_or(feedback.least) + pairs_least)
            })
            .collect();
        let mut floor = nth_best(&mut lower, wanted).unwrap_or(f64::NEG_INFINITY);

        // The feedback term of every record that can reach the page with the best of it (read
        // while scoring, or now from its column); with it the floor rises, and pairs are
        // checked only where they can still lift a record onto the page.
        let mut reach: Vec<Vec<(&Exact, f64)>> = Vec::with_capacity(exact.len());
        for (s, (exact, sets)) in exact.iter().zip(&sets).enumerate() {
            reach.push(
                exact
                    .iter()
                    .filter(|e| {
                        sets.involved.contains(e.doc)
                            || e.score + pairs_most(&pairs, e.tokens) + feedback[s].most + SLACK
                                >= floor
                    })
                    .map(|e| match e.feedback {
                        Some(feedback) => Ok((e, feedback)),
                        None => Ok((e, feedback_term(self.index, &matches[s], e.doc)?)),
                    })
                    .collect::<Result<_>>()?,
            );
        }
        let mut lower: Vec<f64> = reach
            .iter()
            .zip(&sets)
            .flat_map(|(reach, sets)| {
                reach
                    .iter()
                    .filter(|(e, _)| !sets.involved.contains(e.doc))
                    .map(|(e, feedback)| e.score + feedback + pairs_least)
            })
            .collect();
        if let Some(tighter) = nth_best(&mut lower, wanted) {
            floor = floor.max(tighter);
        }

        // The pairs are checked best bound first, a round at a time: each round's scores lift
        // the floor, and a record whose bound then stays below it is never checked.
        let pairs_of = &pairs;
        let mut reaching: Vec<Reaching<'_>> = reach
            .iter()
            .zip(&sets)
            .enumerate()
            .flat_map(|(s, (reach, sets))| {
                reach.iter().map(move |&(e, feedback)| Reaching {
                    s,
                    e,
                    feedback,
                    most: e.score + feedback + pairs_most(pairs_of, e.tokens),
                    involved: sets.involved.contains(e.doc),
                })
            })
            .filter(|r| r.involved || r.most + SLACK >= floor)
            .collect();
        reaching.sort_by(|a, b| {
            (b.involved.cmp(&a.involved))
                .then(b.most.total_cmp(&a.most))
                .then((a.s, a.e.doc).cmp(&(b.s, b.e.doc)))
        });
        let mut scores: Vec<f64> = Vec::with_capacity(reaching.len());
        let mut round = wanted.max(1);
        loop {
            let from = scores.len();
            let to = from
                + reaching[from..]
                    .iter()
                    .take(round)
                    .take_while(|r| r.involved || r.most + SLACK >= floor)
                    .count();
            if to == from {
                break;
            }
            scores.extend(reaching[from..to].iter().map(|r| r.e.score + r.feedback));
            for (s, m) in matches.iter().enumerate() {
                let places: Vec<usize> = (from..to).filter(|&i| reaching[i].s == s).collect();
                if places.is_empty() {
                    continue;
                }
                let exact: Vec<&Exact> = places.iter().map(|&i| reaching[i].e).collect();
                let bonuses = self.pair_bonuses(m, &exact, query, &pairs)?;
                for (i, bonus) in places.into_iter().zip(bonuses) {
                    // In the pipeline's order: the sum, the pairs, then feedback.
                    scores[i] = reaching[i].e.score + bonus + reaching[i].feedback;
                }
            }
            let mut lower: Vec<f64> = reaching[..to]
                .iter()
                .zip(&scores)
                .filter(|(r, _)| !r.involved)
                .map(|(_, &score)| score)
                .chain(
                    reaching[to..]
                        .iter()
                        .filter(|r| !r.involved)
                        .map(|r| r.e.score + r.feedback + pairs_least),
                )
                .collect();
            if let Some(tighter) = nth_best(&mut lower, wanted) {
                floor = floor.max(tighter);
            }
            round *= 2;
        }
        reaching.truncate(scores.len());
        let mut scored: Vec<(&Reaching, f64)> = reaching.iter().zip(scores).collect();
        scored.sort_by_key(|(r, _)| (r.s, r.e.doc));

        let mut candidates: Vec<Candidate> = Vec::with_capacity(scored.len());
        for (r, score) in scored {
            let (m, e) = (&matches[r.s], r.e);
            let phrase = m.known_phrase(m.maybe_phrase(e.doc)).or_else(|| {
                let list = &checked[r.s];
                let i = list.binary_search_by_key(&e.doc, |c| c.0).ok()?;
                Some(list[i].1)
            });
            candidates.push(Candidate {
                segment: m.s,
                doc: e.doc,
                phrase,
                involved: r.involved,
                scores: [score; 2],
            });
        }
        let chosen = page_positions(&candidates, &matches, wanted, token_count)?;
        // The page's match levels need their phrases.
        if let Some(phrase) = query.phrase.as_deref() {
            let unknown: Vec<u32> = chosen
                .iter()
                .copied()
                .filter(|&i| candidates[i as usize].phrase.is_none())
                .collect();
            let found: Vec<bool> = unknown
                .par_iter()
                .map(|&i| {
                    let c = &candidates[i as usize];
                    let at = DocRef {
                        segment: c.segment,
                        doc: c.doc,
                    };
                    self.verify_phrase(at, phrase)
                })
                .collect::<Result<_>>()?;
            for (i, found) in unknown.into_iter().zip(found) {
                candidates[i as usize].phrase = Some(found);
            }
        }
        self.page_matched(query, &matches, &candidates, &chosen, counts, false)
    }

    /// The BM25F sum of the candidates of segment match `m` with an exact match that can reach
    /// the page (at least those), ascending. Where [`Weigh::prune`] allows, a chunk of records
    /// at a time ([`ChunkScores`]); else every candidate's.
    fn exact_scores(
        &self,
        m: &SegmentMatch<'a>,
        weigh: &Weigh<'_, '_>,
        involved: &RoaringBitmap,
        wanted: usize,
        feedback_most: f64,
    ) -> Result<Vec<Exact>> {
        match weigh.prune {
            Some(prune) => {
                ChunkScores::new(wanted, prune, feedback_most).run(self.index, m, weigh, involved)
            }
            None => {
                let mut sums = ExactSums::new(m.segment.len() as usize);
                sums.pass(self.index, m, weigh, |doc| m.sum(doc) != 0)?;
                Ok(sums.finish())
            }
        }
    }

    /// Per record of `reach` (one segment's), the proximity pairs it holds as adjacent words,
    /// summed in query order.
    fn pair_bonuses(
        &self,
        m: &SegmentMatch<'a>,
        reach: &[&Exact],
        query: &PreparedQuery,
        pairs: &[(u32, f64)],
    ) -> Result<Vec<f64>> {
        let mut bonuses = vec![0.0; reach.len()];
        for (pair, &(mask, bonus)) in query.pairs.iter().zip(pairs) {
            let holders: Vec<usize> = (0..reach.len())
                .filter(|&i| reach[i].tokens & mask == mask)
                .collect();
            let docs: Vec<DocRef> = holders
                .iter()
                .map(|&i| DocRef {
                    segment: m.s,
                    doc: reach[i].doc,
                })
                .collect();
            for (i, occurs) in holders
                .into_iter()
                .zip(self.pair_occurs(&pair.phrase, &docs)?)
            {
                if occurs {
                    bonuses[i] += bonus;
                }
            }
        }
        Ok(bonuses)
    }
}

/// The feedback term of record `doc` of segment match `m`: its column's counts with those
/// added since the segment was written.
fn feedback_term(index: &Index, m: &SegmentMatch<'_>, doc: u32) -> Result<f64> {
    let mut feedback = m.segment.columns.feedback(doc)?;
    if let Some(more) = index.feedback_added_docs(m.s as usize).get(&doc) {
        feedback.merge(more);
    }
    Ok(standard::feedback_score(&feedback))
}

/// A record that can reach the page with its pairs at their most: its segment, BM25F sum,
/// feedback term and bound.
struct Reaching<'e> {
    s: usize,
    e: &'e Exact,
    feedback: f64,
    most: f64,
    involved: bool,
}

/// What turns a token's term frequencies in a record into its BM25F part.
struct Weigh<'t, 'i> {
    terms: &'t [ExactTerm<'i>],
    idfs: &'t [f64],
    avglen: &'t [f64; GROUP_COUNT],
    b: f64,
    saturation: f64,
    /// What lets records be left unscored by their bounds; `None` when a token's part is not
    /// bounded by its idf (a negative saturation or idf).
    prune: Option<Prune<'t>>,
}

/// The proximity pairs as bounds: (mask of their two tokens, bonus), and the least they add.
#[derive(Clone, Copy)]
struct Prune<'t> {
    pairs: &'t [(u32, f64)],
    pairs_least: f64,
}

/// The most the proximity `pairs` (mask of their two tokens, bonus) can add to a record
/// holding the tokens of `tokens`: those of its pairs whose bonus is positive.
fn pairs_most(pairs: &[(u32, f64)], tokens: u32) -> f64 {
    pairs
        .iter()
        .filter(|(mask, _)| tokens & mask == *mask)
        .map(|(_, bonus)| bonus.max(0.0))
        .sum()
}

/// Per-record BM25F sums accumulated term at a time, token by token in query order (the order
/// the pipeline sums them in), over one segment: every candidate's, where no bound prunes.
struct ExactSums {
    /// Per record, the running sum (as bits), and the matched tokens with (above them) the
    /// record's place in `touched`, in arrays as long as the segment (reused from search to
    /// search).
    sums: WorkArray<u64>,
    tokens: WorkArray<u64>,
    /// The records touched, with their group lengths (read once).
    touched: Vec<u32>,
    lengths: Vec<[u32; GROUP_COUNT]>,
}

impl Drop for ExactSums {
    fn drop(&mut self) {
        scratch::RECORD_WORDS.give(std::mem::take(&mut self.sums));
        scratch::RECORD_WORDS.give(std::mem::take(&mut self.tokens));
    }
}

impl ExactSums {
    fn new(n: usize) -> ExactSums {
        ExactSums {
            sums: scratch::RECORD_WORDS.take(n),
            tokens: scratch::RECORD_WORDS.take(n),
            touched: Vec::new(),
            lengths: Vec::new(),
        }
    }

    fn score(&self, doc: u32) -> f64 {
        f64::from_bits(self.sums[doc as usize])
    }

    /// Adds every token's part to the records `wanted` accepts.
    fn pass(
        &mut self,
        index: &Index,
        m: &SegmentMatch<'_>,
        weigh: &Weigh<'_, '_>,
        wanted: impl Fn(u32) -> bool,
    ) -> Result<()> {
        let s = m.s as usize;
        let columns = &m.segment.columns;
        let mut problem: Option<Error> = None;
        let ExactSums {
            sums,
            tokens,
            touched,
            lengths,
        } = self;
        for (t, term) in weigh.terms.iter().enumerate() {
            for_each_exact(index, s, &term.segments[s], &wanted, |doc, tfs| {
                let d = doc as usize;
                if tokens[d] == 0 {
                    match columns.group_lengths(doc) {
                        Ok(of_doc) => {
                            touched.push(doc);
                            lengths.push(of_doc);
                        }
                        Err(e) => {
                            problem.get_or_insert(e);
                            return;
                        }
                    }
                    tokens[d] = (touched.len() as u64) << 32;
                }
                tokens[d] |= 1 << t;
                let of_doc = &lengths[(tokens[d] >> 32) as usize - 1];
                let w = term_weight(tfs, of_doc, weigh.avglen, weigh.b);
                if w > 0.0 {
                    let sum = f64::from_bits(sums[d]) + weigh.idfs[t] * w / (weigh.saturation + w);
                    sums[d] = sum.to_bits();
                }
            })?;
        }
        match problem {
            Some(problem) => Err(problem),
            None => Ok(()),
        }
    }

    /// The records touched, ascending.
    fn finish(mut self) -> Vec<Exact> {
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        touched
            .into_iter()
            .map(|doc| Exact {
                doc,
                score: self.score(doc),
                tokens: self.tokens[doc as usize] as u32,
                feedback: None,
            })
            .collect()
    }
}

/// One posting of a chunk kept for scoring: the record's place in the chunk, the token, and
/// the token's term frequencies in the record (summed over the token's terms) as stored — a
/// group mask, and its values in [`Gather::stored`] from `first` on.
#[derive(Clone, Copy, Default)]
struct Kept {
    at: u16,
    token: u8,
    mask: u16,
    first: u32,
}

/// The postings of a chunk kept for scoring, and what each record of the chunk gathered.
struct Gather {
    /// Per record of the chunk: its tokens (bit per token), its bound, then its score; the
    /// place of its last kept posting.
    tokens: Vec<u32>,
    most: Vec<f64>,
    last: Vec<u32>,
    kept: Vec<Kept>,
    /// The kept postings' term frequencies as stored (tf − 1 per group of the mask).
    stored: Vec<u32>,
    /// The places of the records touched, in the order first touched.
    records: Vec<u16>,
}

/// The kept postings' arrays, reused from search to search like [`scratch`]'s (grown afresh,
/// their pages were faulted in on every query).
static KEPT: scratch::Pool<Vec<Kept>> = scratch::Pool::new();

impl Drop for Gather {
    fn drop(&mut self) {
        scratch::COUNTS.give(std::mem::take(&mut self.tokens));
        scratch::FLOATS.give(std::mem::take(&mut self.most));
        scratch::COUNTS.give(std::mem::take(&mut self.last));
        KEPT.give(std::mem::take(&mut self.kept));
        scratch::COUNTS.give(std::mem::take(&mut self.stored));
    }
}

impl Gather {
    /// Keeps the posting of token `t` in the record at place `at` of the chunk.
    #[inline(always)]
    fn add(&mut self, bounds: &PartBounds<'_>, t: usize, at: usize, tfs: PostingTfs<'_>) {
        // A token of several terms adds the bound of each: the part is subadditive in the
        // term frequencies.
        self.most[at] += bounds.part(t, tfs);
        if self.tokens[at] & 1 << t != 0 {
            // The token's next term (the multilingual analyzer's stop word): the sums are
            // stored anew.
            let place = self.last[at] as usize;
            let mut sums = self.tfs(&self.kept[place]);
            for (sum, tf) in sums.iter_mut().zip(tfs.to_array()) {
                *sum = sum.saturating_add(tf);
            }
            let kept = &mut self.kept[place];
            kept.mask |= tfs.mask;
            kept.first = self.stored.len() as u32;
            let groups = (0..GROUP_COUNT).filter(|g| kept.mask & 1 << g != 0);
            self.stored.extend(groups.map(|g| sums[g] - 1));
            return;
        }
        if self.tokens[at] == 0 {
            self.records.push(at as u16);
        }
        self.tokens[at] |= 1 << t;
        self.last[at] = self.kept.len() as u32;
        self.kept.push(Kept {
            at: at as u16,
            token: t as u8,
            mask: tfs.mask,
            first: self.stored.len() as u32,
        });
        self.stored.extend_from_slice(tfs.stored);
    }

    /// The term frequencies of a kept posting, per group.
    fn tfs(&self, kept: &Kept) -> [u32; GROUP_COUNT] {
        let first = kept.first as usize;
        PostingTfs {
            mask: kept.mask,
            stored: &self.stored[first..first + kept.mask.count_ones() as usize],
        }
        .to_array()
    }
}

/// The passes over a chunk's postings: the rarer tokens' (before any record is scored), the
/// leading tokens', then the trailing tokens' for the records the others touched.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Rare,
    Leading,
    Trailing,
}

/// The pruned BM25F sums of one segment, a chunk of [`CHUNK_RECORDS`] records at a time: each
/// token's postings in the chunk are read once, with their term frequencies, and kept; every
/// candidate's bound comes from them (each token's part with its term frequencies in groups
/// that hold nothing else: a group's length is at least its term frequency, and the part grows
/// with the weight; then the proximity pairs of its tokens and the feedback term at their most).
/// Then the candidates whose bound reaches the floor — the wanted-th best lower bound of the
/// records scored so far — are scored from the kept postings and their group lengths; while
/// there is no floor yet, the chunk's best bounds first, which set one. The floor only rises,
/// so a record left out could not have reached the page.
struct ChunkScores<'t> {
    wanted: usize,
    prune: Prune<'t>,
    /// The most the feedback term of a record of the segment can be.
    feedback_most: f64,
    /// The lower bounds of the best records scored so far (at most `wanted` after each chunk).
    lower: Vec<f64>,
    floor: Option<f64>,
    /// The wanted-th best lower bound of records not scored: their parts from the rarer
    /// tokens alone, read first in the first chunk (see [`ChunkScores::early_floor`]).
    early: Option<f64>,
    /// The chunk's postings kept, per record its tokens and bound.
    gather: Gather,
    /// A bit per record of the chunk: scored; touched by a leading token (or involved), the
    /// records the trailing tokens are read for.
    scored: Vec<u64>,
    touched: Box<[u64; CHUNK_RECORDS / 64]>,
    /// Scratch of the trailing tokens' walks.
    hits: Vec<(u32, u32)>,
    out: Vec<Exact>,
}

impl<'t> ChunkScores<'t> {
    fn new(wanted: usize, prune: Prune<'t>, feedback_most: f64) -> ChunkScores<'t> {
        ChunkScores {
            wanted,
            prune,
            feedback_most,
            lower: Vec::new(),
            floor: None,
            early: None,
            gather: Gather {
                tokens: scratch::COUNTS.take(CHUNK_RECORDS),
                most: scratch::FLOATS.take(CHUNK_RECORDS),
                last: scratch::COUNTS.take(CHUNK_RECORDS),
                kept: KEPT.take_unzeroed(0),
                stored: scratch::COUNTS.take_unzeroed(0),
                records: Vec::new(),
            },
            scored: vec![0; CHUNK_RECORDS / 64],
            touched: Box::new([0; CHUNK_RECORDS / 64]),
            hits: Vec::new(),
            out: Vec::new(),
        }
    }

    fn run(
        mut self,
        index: &Index,
        m: &SegmentMatch<'_>,
        weigh: &Weigh<'_, '_>,
        involved: &RoaringBitmap,
    ) -> Result<Vec<Exact>> {
        let s = m.s as usize;
        let records = m.segment.len();
        let file = m.segment.postings.file();
        let dead = index.dead(s);
        let keep = |doc: u32| m.is_candidate(doc) && (dead.is_empty() || !dead.contains(doc));
        let is_involved = |doc: u32| !involved.is_empty() && involved.contains(doc);
        let mut walks = Vec::new();
        for (t, term) in weigh.terms.iter().enumerate() {
            for postings in &term.segments[s] {
                walks.push((t, postings, postings.tf_cursor(file)?));
            }
        }
        let bounds = PartBounds::new(weigh);
        // The tokens by the most their part can be (their idf), least first.
        let mut by_most: Vec<usize> = (0..weigh.idfs.len()).collect();
        by_most.sort_by(|&a, &b| weigh.idfs[a].total_cmp(&weigh.idfs[b]).then(a.cmp(&b)));
        let first_pass = (4 * self.wanted).max(64);
        let mut candidates: Vec<(u16, f64, u32)> = Vec::new();
        let pairs_max = pairs_most(self.prune.pairs, u32::MAX);
        for chunk in 0..(records as usize).div_ceil(CHUNK_RECORDS) {
            let base = (chunk * CHUNK_RECORDS) as u32;
            self.gather.kept.clear();
            self.gather.stored.clear();
            // Before any record is scored, the rarer half of the tokens is read first, and the
            // best records' parts from those alone set an early floor (below); then the
            // leading tokens' postings; then the trailing tokens', for the records the leading
            // ones touched (and the involved) alone.
            let rare = match self.bar() {
                None if by_most.len() > 1 => {
                    (by_most[by_most.len() / 2..].iter()).fold(0u32, |mask, &t| mask | 1 << t)
                }
                _ => 0,
            };
            let mut trailing = 0;
            for pass in [Pass::Rare, Pass::Leading, Pass::Trailing] {
                match pass {
                    Pass::Rare if rare == 0 => continue,
                    Pass::Rare => {}
                    Pass::Leading => {
                        if rare != 0 {
                            self.early = self.early_floor(index, m, weigh, base, &is_involved)?;
                        }
                        trailing = self.trailing(&by_most, weigh.idfs) & !rare;
                    }
                    Pass::Trailing => {
                        // The involved records are read whatever the leading tokens touched.
                        for doc in involved.range(base..base.saturating_add(CHUNK_RECORDS as u32)) {
                            if keep(doc) {
                                let at = (doc - base) as usize;
                                self.touched[at / 64] |= 1 << (at % 64);
                            }
                        }
                    }
                }
                let trails = pass == Pass::Trailing;
                for (t, postings, cursor) in &mut walks {
                    let t = *t;
                    let reads = match pass {
                        Pass::Rare => rare & 1 << t != 0,
                        Pass::Leading => (rare | trailing) & 1 << t == 0,
                        Pass::Trailing => trailing & 1 << t != 0,
                    };
                    if !reads {
                        continue;
                    }
                    let ChunkScores {
                        gather,
                        touched,
                        hits,
                        ..
                    } = &mut self;
                    let at = |doc: u32| (doc - base) as usize;
                    let chunk = chunk as u16;
                    if trails {
                        postings.for_each_with_tfs_among(
                            cursor,
                            chunk,
                            records,
                            file,
                            touched,
                            hits,
                            |doc, tfs| gather.add(&bounds, t, at(doc), tfs),
                        )?;
                    } else {
                        postings.for_each_with_tfs_in_chunk(
                            cursor,
                            chunk,
                            records,
                            file,
                            keep,
                            |doc, tfs| {
                                let at = at(doc);
                                touched[at / 64] |= 1 << (at % 64);
                                gather.add(&bounds, t, at, tfs);
                            },
                        )?;
                    }
                }
            }
            // The chunk's candidates with their bounds; past the first floor, only those whose
            // bound (first with every pair at its most) reaches it.
            candidates.clear();
            let reaches = self.bar().map_or(f64::NEG_INFINITY, |floor| floor - SLACK);
            for &at in &self.gather.records {
                let at = at as usize;
                let most = std::mem::take(&mut self.gather.most[at]) + self.feedback_most;
                let tokens = std::mem::take(&mut self.gather.tokens[at]);
                let involved = || is_involved(base + at as u32);
                if most + pairs_max < reaches && !involved() {
                    continue;
                }
                let bound = most + pairs_most(self.prune.pairs, tokens);
                if bound >= reaches || involved() {
                    candidates.push((at as u16, bound, tokens));
                }
            }
            self.gather.records.clear();
            let from = self.out.len();
            if self.floor.is_none() {
                let mut bounds: Vec<f64> = candidates.iter().map(|c| c.1).collect();
                let first = nth_best(&mut bounds, first_pass).unwrap_or(f64::NEG_INFINITY);
                self.score(index, m, weigh, base, &candidates, &is_involved, |bound| {
                    bound >= first
                })?;
            }
            let floor = self.bar().unwrap_or(f64::NEG_INFINITY);
            self.score(index, m, weigh, base, &candidates, &is_involved, |bound| {
                bound + SLACK >= floor
            })?;
            self.out[from..].sort_unstable_by_key(|e| e.doc);
            self.scored.fill(0);
            self.touched.fill(0);
        }
        for (_, postings, cursor) in &mut walks {
            postings.finish_tfs(cursor, records, file)?;
        }
        Ok(self.out)
    }

    /// The floor records are held to: the greater of the scored records' and the early one.
    fn bar(&self) -> Option<f64> {
        match (self.floor, self.early) {
            (Some(floor), Some(early)) => Some(floor.max(early)),
            (floor, early) => floor.or(early),
        }
    }

    /// A floor from the postings gathered so far (the rarer tokens', before any record is
    /// scored): the records with the best bounds (a few times the page, involved ones left
    /// out) get their parts from the tokens read, with their group lengths; a part is never
    /// negative where bounds prune, so with the record's feedback term and its pairs at their
    /// least that sum is a lower bound of its score, and the wanted-th best of them bounds the
    /// page from below. `None` with fewer records than wanted.
    fn early_floor(
        &self,
        index: &Index,
        m: &SegmentMatch<'_>,
        weigh: &Weigh<'_, '_>,
        base: u32,
        is_involved: &impl Fn(u32) -> bool,
    ) -> Result<Option<f64>> {
        let gather = &self.gather;
        let mut best: Vec<(f64, u16)> = (gather.records.iter())
            .filter(|&&at| !is_involved(base + u32::from(at)))
            .map(|&at| (gather.most[at as usize], at))
            .collect();
        let take = (4 * self.wanted).max(64);
        if best.len() > take {
            best.select_nth_unstable_by(take - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            best.truncate(take);
        }
        best.sort_unstable_by_key(|b| b.1);
        let lengths = (best.iter())
            .map(|&(_, at)| m.segment.columns.group_lengths(base + u32::from(at)))
            .collect::<Result<Vec<_>>>()?;
        let mut sums = vec![0.0f64; best.len()];
        for k in &gather.kept {
            if let Ok(i) = best.binary_search_by_key(&k.at, |b| b.1) {
                let w = term_weight(&gather.tfs(k), &lengths[i], weigh.avglen, weigh.b);
                if w > 0.0 {
                    sums[i] += weigh.idfs[k.token as usize] * w / (weigh.saturation + w);
                }
            }
        }
        let mut lower = (sums.iter().zip(&best))
            .map(|(sum, &(_, at))| {
                let feedback = feedback_term(index, m, base + u32::from(at))?;
                Ok(sum + feedback + self.prune.pairs_least)
            })
            .collect::<Result<Vec<f64>>>()?;
        Ok(nth_best(&mut lower, self.wanted))
    }

    /// The tokens that cannot lift a record to the floor without the others: the most tokens,
    /// by the most their part can be (`by_most`: their idf, least first), whose idfs summed with
    /// their pairs and the feedback term at their most stay below it. A record that none of the
    /// other tokens reach is not read (MaxScore).
    fn trailing(&self, by_most: &[usize], idfs: &[f64]) -> u32 {
        let Some(floor) = self.bar() else {
            return 0;
        };
        let (mut trailing, mut most) = (0u32, self.feedback_most);
        for &t in by_most {
            let (with, sum) = (trailing | 1 << t, most + idfs[t]);
            if sum + pairs_most(self.prune.pairs, with) + SLACK >= floor {
                break;
            }
            (trailing, most) = (with, sum);
        }
        trailing
    }

    /// Scores the chunk's `candidates` (place, bound, tokens) not scored yet that are involved or whose
    /// bound `chosen` accepts, then lifts the floor by their lower bounds.
    #[allow(clippy::too_many_arguments)]
    fn score(
        &mut self,
        index: &Index,
        m: &SegmentMatch<'_>,
        weigh: &Weigh<'_, '_>,
        base: u32,
        candidates: &[(u16, f64, u32)],
        is_involved: &impl Fn(u32) -> bool,
        chosen: impl Fn(f64) -> bool,
    ) -> Result<()> {
        // The records chosen, with their group lengths; `last` becomes the place of each.
        let mut lengths = Vec::new();
        let mut docs = Vec::new();
        for &(at, bound, tokens) in candidates {
            let (word, bit) = (at as usize / 64, 1u64 << (at % 64));
            let doc = base + u32::from(at);
            if self.scored[word] & bit == 0 && (chosen(bound) || is_involved(doc)) {
                self.scored[word] |= bit;
                self.gather.last[at as usize] = lengths.len() as u32;
                lengths.push(m.segment.columns.group_lengths(doc)?);
                docs.push((at, tokens));
            }
        }
        if docs.is_empty() {
            return Ok(());
        }
        // Each record's parts by token, summed in query order (the pipeline's) whatever order
        // the tokens' postings were read in.
        let token_count = weigh.idfs.len();
        let mut parts = vec![0.0f64; docs.len() * token_count];
        for k in &self.gather.kept {
            let at = k.at as usize;
            if self.scored[at / 64] & 1 << (at % 64) == 0 {
                continue;
            }
            let place = self.gather.last[at] as usize;
            // Records scored in an earlier call are behind `docs`' places.
            if docs.get(place).map(|d| d.0) != Some(k.at) {
                continue;
            }
            let w = term_weight(&self.gather.tfs(k), &lengths[place], weigh.avglen, weigh.b);
            if w > 0.0 {
                let idf = weigh.idfs[k.token as usize];
                parts[place * token_count + k.token as usize] = idf * w / (weigh.saturation + w);
            }
        }
        // A part of 0 adds nothing: the sums are never −0.
        let sums = parts
            .chunks(token_count)
            .map(|parts| parts.iter().fold(0.0, |sum, part| sum + part));
        for (&(at, tokens), score) in docs.iter().zip(sums) {
            let doc = base + u32::from(at);
            let feedback = feedback_term(index, m, doc)?;
            self.out.push(Exact {
                doc,
                score,
                tokens,
                feedback: Some(feedback),
            });
            if !is_involved(doc) {
                self.lower.push(score + feedback + self.prune.pairs_least);
            }
        }
        if let Some(floor) = nth_best(&mut self.lower, self.wanted) {
            self.lower.truncate(self.wanted);
            self.floor = Some(floor);
        }
        Ok(())
    }
}

/// The most a token's part can be in a record, from its term frequencies alone: its part in a
/// record whose groups hold nothing but the token (a group's length is at least its term
/// frequency, and the part grows with the weight). Tabled for a posting in one group with a
/// term frequency of at most [`PartBounds::TABLED`].
struct PartBounds<'w> {
    weigh: &'w Weigh<'w, 'w>,
    /// Per token, group and term frequency − 1.
    table: Vec<[[f64; PartBounds::TABLED]; GROUP_COUNT]>,
}

impl<'w> PartBounds<'w> {
    const TABLED: usize = 16;

    fn new(weigh: &'w Weigh<'w, 'w>) -> PartBounds<'w> {
        let mut bounds = PartBounds {
            weigh,
            table: Vec::new(),
        };
        bounds.table = (0..weigh.idfs.len())
            .map(|t| {
                std::array::from_fn(|g| {
                    std::array::from_fn(|tf| {
                        let mut tfs = [0; GROUP_COUNT];
                        tfs[g] = tf as u32 + 1;
                        bounds.computed(t, &tfs)
                    })
                })
            })
            .collect();
        bounds
    }

    #[inline]
    fn part(&self, t: usize, tfs: PostingTfs<'_>) -> f64 {
        if let [stored] = tfs.stored {
            let g = tfs.mask.trailing_zeros() as usize;
            if let Some(&part) = self.table[t][g].get(*stored as usize) {
                return part;
            }
        }
        self.computed(t, &tfs.to_array())
    }

    fn computed(&self, t: usize, tfs: &[u32; GROUP_COUNT]) -> f64 {
        let weigh = self.weigh;
        let w = term_weight(tfs, tfs, weigh.avglen, weigh.b);
        if w > 0.0 {
            weigh.idfs[t] * w / (weigh.saturation + w)
        } else {
            0.0
        }
    }
}
