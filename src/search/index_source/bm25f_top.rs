//! The `bm25f` profile's first page without materializing every candidate: each segment's
//! exact-term postings accumulated term at a time into per-record scores (one column read per
//! record and token for its group lengths), the proximity pairs and the feedback term bounded,
//! and read — pair phrases checked, feedback columns decoded — only for the records those
//! bounds let reach the page. The counts come from the same survey as the standard profile's.
//!
//! Every score is computed by [`bm25f`]'s own functions in the order the pipeline's pass
//! computes them (tokens in query order, then the pairs, then feedback), so that the page is
//! the pipeline's bit for bit; the pipeline then scores the page's records again.

use rayon::prelude::*;
use roaring::RoaringBitmap;

use crate::error::{Error, Result};
use crate::index::Index;
use crate::schema::GROUP_COUNT;
use crate::search::filters::Filters;
use crate::search::index_statistics::{self, for_each_exact, ExactTerm};
use crate::search::phrase_checks::nth_best;
use crate::search::profiles::bm25f::{self, idf, term_weight};
use crate::search::query::PreparedQuery;
use crate::search::standard;
use crate::search::{scratch, CollectionValues, DocRef, Matched, Source};
use crate::settings::{Bm25fSettings, Bm25fVariant};

use super::accumulate::SegmentMatch;
use super::top::{
    page_positions, survey, Candidate, Keys, Scorer, Sets, FEEDBACK_MAX, FEEDBACK_MIN, SLACK,
};
use super::IndexSource;

/// A record with an exact match: its BM25F sum over the tokens and which tokens matched.
struct Exact {
    doc: u32,
    score: f64,
    /// Bit t set ⇔ query token t occurs exactly.
    tokens: u32,
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
        let exact: Vec<Vec<Exact>> = matches
            .par_iter()
            .zip(&sets)
            .map(|(m, sets)| self.exact_scores(m, &weigh, &sets.involved, wanted))
            .collect::<Result<_>>()?;

        let mut lower: Vec<f64> = exact
            .iter()
            .zip(&sets)
            .flat_map(|(e, sets)| {
                e.iter()
                    .filter(|e| !sets.involved.contains(e.doc))
                    .map(|e| e.score + FEEDBACK_MIN + pairs_least)
            })
            .collect();
        let mut floor = nth_best(&mut lower, wanted).unwrap_or(f64::NEG_INFINITY);

        // The feedback term of every record that can reach the page with the best of it (a
        // column read); with it the floor rises, and pairs are checked only where they can
        // still lift a record onto the page.
        let mut reach: Vec<Vec<(&Exact, f64)>> = Vec::with_capacity(exact.len());
        for (s, (exact, sets)) in exact.iter().zip(&sets).enumerate() {
            let columns = &matches[s].segment.columns;
            let added = self.index.feedback_added_docs(s);
            reach.push(
                exact
                    .iter()
                    .filter(|e| {
                        sets.involved.contains(e.doc)
                            || e.score + pairs_most(&pairs, e.tokens) + FEEDBACK_MAX + SLACK
                                >= floor
                    })
                    .map(|e| {
                        let mut feedback = columns.feedback(e.doc)?;
                        if let Some(more) = added.get(&e.doc) {
                            feedback.merge(more);
                        }
                        Ok((e, standard::feedback_score(&feedback)))
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

        let mut candidates: Vec<Candidate> = Vec::new();
        for (s, (reach, sets)) in reach.iter_mut().zip(&sets).enumerate() {
            let m = &matches[s];
            reach.retain(|(e, feedback)| {
                sets.involved.contains(e.doc)
                    || e.score + feedback + pairs_most(&pairs, e.tokens) + SLACK >= floor
            });
            let exact: Vec<&Exact> = reach.iter().map(|(e, _)| *e).collect();
            let bonuses = self.pair_bonuses(m, &exact, query, &pairs)?;
            for (&(e, feedback), bonus) in reach.iter().zip(bonuses) {
                let score = e.score + bonus + feedback;
                let phrase = m.known_phrase(m.maybe_phrase(e.doc)).or_else(|| {
                    let list = &checked[s];
                    let i = list.binary_search_by_key(&e.doc, |c| c.0).ok()?;
                    Some(list[i].1)
                });
                candidates.push(Candidate {
                    segment: m.s,
                    doc: e.doc,
                    phrase,
                    involved: sets.involved.contains(e.doc),
                    scores: [score; 2],
                });
            }
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
        self.page_matched(&matches, &candidates, &chosen, counts)
    }

    /// The BM25F sum of the candidates of segment match `m` with an exact match that can reach
    /// the page (at least those), ascending. Where [`Weigh::prune`] allows, first those whose
    /// bound is among the best, which sets a floor; then the others whose bound reaches it.
    fn exact_scores(
        &self,
        m: &SegmentMatch<'a>,
        weigh: &Weigh<'_, '_>,
        involved: &RoaringBitmap,
        wanted: usize,
    ) -> Result<Vec<Exact>> {
        let mut sums = ExactSums::new(m.segment.len() as usize);
        let bounds = match weigh.prune {
            Some(prune) => TokenBounds::new(weigh, m.s as usize, prune.pairs),
            None => None,
        };
        let Some((bounds, prune)) = bounds.zip(weigh.prune) else {
            sums.pass(self.index, m, weigh, |doc| m.sum(doc) != 0)?;
            return Ok(sums.finish());
        };
        let is_involved = |doc: u32| !involved.is_empty() && involved.contains(doc);
        // Per record, its bound's bucket + 1 (0: not a candidate), and the buckets counted;
        // then the bucket from which at least a few times `wanted` candidates are scored first.
        let mut buckets = scratch::MASKS.take(m.segment.len() as usize);
        let mut histogram = vec![0u32; BUCKETS];
        m.for_each_candidate(|doc, _| {
            let bucket = bounds.bucket(bounds.upper(m.coverage(doc)));
            histogram[bucket] += 1;
            buckets[doc as usize] = bucket as u16 + 1;
        });
        let first_pass = (4 * wanted).max(64);
        let mut counted = 0;
        let mut from = 0;
        for (bucket, &count) in histogram.iter().enumerate().rev() {
            counted += count as usize;
            if counted >= first_pass {
                from = bucket as u16 + 1;
                break;
            }
        }
        let result = (|| {
            sums.pass(self.index, m, weigh, |doc| {
                let b = buckets[doc as usize];
                b >= from.max(1) || (b != 0 && is_involved(doc))
            })?;
            if from > 1 {
                // At least `wanted` records of this segment score above the wanted-th best
                // lower bound: the rest need only be scored where their bound reaches it (the
                // buckets ascend with the bounds).
                let mut lower: Vec<f64> = sums
                    .touched
                    .iter()
                    .filter(|&&doc| !is_involved(doc))
                    .map(|&doc| sums.score(doc) + FEEDBACK_MIN + prune.pairs_least)
                    .collect();
                if let Some(floor) = nth_best(&mut lower, wanted) {
                    let least = bounds.bucket(floor - SLACK) as u16 + 1;
                    sums.pass(self.index, m, weigh, |doc| {
                        let b = buckets[doc as usize];
                        b >= least && b < from && !is_involved(doc)
                    })?;
                } else {
                    sums.pass(self.index, m, weigh, |doc| {
                        let b = buckets[doc as usize];
                        b != 0 && b < from && !is_involved(doc)
                    })?;
                }
            }
            Ok(())
        })();
        scratch::MASKS.give(buckets);
        result?;
        Ok(sums.finish())
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

/// The buckets of [`TokenBounds::bucket`].
const BUCKETS: usize = 1024;

/// The most a record's score can reach from the query tokens it matches at all (its coverage
/// in the standard accumulation, which holds every token it matches exactly): each token's part
/// is `idf × w ÷ (saturation + w)` < idf, plus the pairs of those tokens and the feedback term
/// at their most.
struct TokenBounds<'t> {
    /// Per byte of a coverage mask, by its value: the idfs of its tokens summed (tokens without
    /// postings in the segment add nothing).
    tables: Vec<[f64; 256]>,
    pairs: &'t [(u32, f64)],
    /// The bound of every token: `bucket` divides `[0, top]`.
    top: f64,
}

impl<'t> TokenBounds<'t> {
    fn new(weigh: &Weigh<'_, '_>, s: usize, pairs: &'t [(u32, f64)]) -> Option<TokenBounds<'t>> {
        let idf_of = |t: usize| match weigh.terms.get(t) {
            Some(term) if !term.segments[s].is_empty() => weigh.idfs[t],
            _ => 0.0,
        };
        let tables: Vec<[f64; 256]> = (0..weigh.terms.len().div_ceil(8))
            .map(|byte| {
                let mut table = [0.0; 256];
                for (value, sum) in table.iter_mut().enumerate() {
                    *sum = (0..8)
                        .filter(|bit| value >> bit & 1 != 0)
                        .map(|bit| idf_of(8 * byte + bit))
                        .sum();
                }
                table
            })
            .collect();
        let mut bounds = TokenBounds {
            tables,
            pairs,
            top: 0.0,
        };
        bounds.top = bounds.upper(u32::MAX);
        (bounds.top.is_finite() && bounds.top > 0.0).then_some(bounds)
    }

    /// The most a record matching the tokens of `coverage` can score.
    fn upper(&self, coverage: u32) -> f64 {
        let tokens: f64 = self
            .tables
            .iter()
            .enumerate()
            .map(|(byte, table)| table[(coverage >> (8 * byte)) as u8 as usize])
            .sum();
        tokens + pairs_most(self.pairs, coverage) + FEEDBACK_MAX
    }

    /// The bucket of a bound: ascending with it, 0 for a bound of at most 0.
    fn bucket(&self, bound: f64) -> usize {
        let at = bound / self.top * (BUCKETS - 1) as f64;
        (at as usize).min(BUCKETS - 1)
    }
}

/// Per-record BM25F sums accumulated term at a time, token by token in query order (the order
/// the pipeline sums them in), over one segment.
struct ExactSums {
    /// Per record, the running sum (as bits), and the matched tokens with (above them) the
    /// record's place in `touched`, in arrays as long as the segment (reused from search to
    /// search).
    sums: Vec<u64>,
    tokens: Vec<u64>,
    /// The records touched, with their group lengths (read once).
    touched: Vec<u32>,
    lengths: Vec<[u32; GROUP_COUNT]>,
}

impl Drop for ExactSums {
    fn drop(&mut self) {
        scratch::WORDS.give(std::mem::take(&mut self.sums));
        scratch::WORDS.give(std::mem::take(&mut self.tokens));
    }
}

impl ExactSums {
    fn new(n: usize) -> ExactSums {
        ExactSums {
            sums: scratch::WORDS.take(n),
            tokens: scratch::WORDS.take(n),
            touched: Vec::new(),
            lengths: Vec::new(),
        }
    }

    fn score(&self, doc: u32) -> f64 {
        f64::from_bits(self.sums[doc as usize])
    }

    /// Adds every token's part to the records `wanted` accepts (none already touched).
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
            })
            .collect()
    }
}
