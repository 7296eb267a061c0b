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
        let weigh = Weigh {
            terms: &terms,
            idfs: &idfs,
            avglen: &avglen,
            b: settings.b,
            saturation,
        };
        let exact: Vec<Vec<Exact>> = matches
            .par_iter()
            .map(|m| self.exact_scores(m, &weigh))
            .collect::<Result<_>>()?;

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
        let most = |e: &Exact| -> f64 {
            pairs
                .iter()
                .filter(|(mask, _)| e.tokens & mask == *mask)
                .map(|(_, bonus)| bonus.max(0.0))
                .sum::<f64>()
                + FEEDBACK_MAX
        };
        let mut lower: Vec<f64> = exact
            .iter()
            .zip(&sets)
            .flat_map(|(e, sets)| {
                e.iter()
                    .filter(|e| !sets.involved.contains(e.doc))
                    .map(|e| {
                        e.score + FEEDBACK_MIN + pairs.iter().map(|p| p.1.min(0.0)).sum::<f64>()
                    })
            })
            .collect();
        let floor = nth_best(&mut lower, wanted).unwrap_or(f64::NEG_INFINITY);

        let mut candidates: Vec<Candidate> = Vec::new();
        for (s, (exact, sets)) in exact.iter().zip(&sets).enumerate() {
            let m = &matches[s];
            let reach: Vec<&Exact> = exact
                .iter()
                .filter(|e| sets.involved.contains(e.doc) || e.score + most(e) + SLACK >= floor)
                .collect();
            let bonuses = self.pair_bonuses(m, &reach, query, &pairs)?;
            let added = self.index.feedback_added_docs(s);
            for (e, bonus) in reach.into_iter().zip(bonuses) {
                let mut feedback = m.segment.columns.feedback(e.doc)?;
                if let Some(more) = added.get(&e.doc) {
                    feedback.merge(more);
                }
                let score = e.score + bonus + standard::feedback_score(&feedback);
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

    /// The BM25F sum of every candidate of segment match `m` with an exact match, ascending.
    fn exact_scores(&self, m: &SegmentMatch<'a>, weigh: &Weigh<'_, '_>) -> Result<Vec<Exact>> {
        let s = m.s as usize;
        let columns = &m.segment.columns;
        // Per record, the running sum (as bits), and the matched tokens with (above them) the
        // record's place in `touched`, in arrays as long as the segment (reused from search to
        // search); the records touched, listed once with their group lengths, read once.
        let n = m.segment.len() as usize;
        let mut sums = scratch::WORDS.take(n);
        let mut tokens = scratch::WORDS.take(n);
        let mut touched: Vec<(u32, [u32; GROUP_COUNT])> = Vec::new();
        let mut problem: Option<Error> = None;
        for (t, term) in weigh.terms.iter().enumerate() {
            let parsed = &term.segments[s];
            let candidate = |doc: u32| m.sum(doc) != 0;
            for_each_exact(self.index, s, parsed, candidate, |doc, tfs| {
                let d = doc as usize;
                if tokens[d] == 0 {
                    match columns.group_lengths(doc) {
                        Ok(lengths) => touched.push((doc, lengths)),
                        Err(e) => {
                            problem.get_or_insert(e);
                            return;
                        }
                    }
                    tokens[d] = (touched.len() as u64) << 32;
                }
                tokens[d] |= 1 << t;
                let lengths = &touched[(tokens[d] >> 32) as usize - 1].1;
                let w = term_weight(tfs, lengths, weigh.avglen, weigh.b);
                if w > 0.0 {
                    let sum = f64::from_bits(sums[d]) + weigh.idfs[t] * w / (weigh.saturation + w);
                    sums[d] = sum.to_bits();
                }
            })?;
        }
        touched.sort_unstable_by_key(|&(doc, _)| doc);
        let out = touched
            .into_iter()
            .map(|(doc, _)| Exact {
                doc,
                score: f64::from_bits(sums[doc as usize]),
                tokens: tokens[doc as usize] as u32,
            })
            .collect();
        scratch::WORDS.give(sums);
        scratch::WORDS.give(tokens);
        match problem {
            Some(problem) => Err(problem),
            None => Ok(out),
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

/// What turns a token's term frequencies in a record into its BM25F part.
struct Weigh<'t, 'i> {
    terms: &'t [ExactTerm<'i>],
    idfs: &'t [f64],
    avglen: &'t [f64; GROUP_COUNT],
    b: f64,
    saturation: f64,
}
