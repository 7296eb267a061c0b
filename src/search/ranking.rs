//! The candidate list between the source and the response: each profile's pass over it
//! (SPEC §5), `--rerank`, and near-duplicate demotion (SPEC §6.2). The formulas live in
//! [`profiles`](super::profiles) and [`mmr`](super::mmr); this module gathers their inputs from
//! the source — column values for every candidate, stored records only where SPEC needs their
//! text, for the bounded list.

use crate::search::breakdown::{
    DecayBreakdown, ProfileBreakdown, RecencyBreakdown, RerankBreakdown, ScoreBreakdown,
};
use std::collections::HashMap;
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::error::Result;
use crate::schema::GROUP_COUNT;
use crate::search::decoded::Decoded;
use crate::search::entities::{query_entities, Needles};
use crate::search::mmr::{demotion, head_bytes, head_prefix, near_duplicates, record_prefix};
use crate::search::profiles::age_days;
use crate::search::profiles::bm25f::{self, idf, term_weight};
use crate::search::profiles::decay::{self, DecayInput};
use crate::search::profiles::recency::{self, RecencyInput};
use crate::search::profiles::rerank::{Features, RerankWeights};
use crate::search::query::PreparedQuery;
use crate::search::request::{Profile, SearchRequest};
use crate::search::standard::{self, MatchLevel, Relevance};
use crate::search::{sort_by_score, DocRef, Hit, RecordValues, Source};
use crate::settings::{Bm25fVariant, Settings};

/// What the profile computed for a candidate, for its breakdown.
#[derive(Debug, Clone)]
pub(crate) enum Detail {
    /// SPEC §4 (and every empty-query result).
    Standard { feedback: f64 },
    /// SPEC §5.1.
    Decay(Box<DecayBreakdown>),
    /// SPEC §5.2.
    Recency(RecencyBreakdown),
    /// SPEC §5.3.
    Bm25f { bm25f: f64, feedback: f64 },
}

/// Why a candidate of SPEC §4 is not in the list any more (for `--explain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Removal {
    /// `decay` removed it as superseded.
    Superseded,
    /// It ranked here, beyond the `--candidates` cap.
    BeyondCandidates(usize),
}

/// One candidate and everything its score came from.
pub(crate) struct Ranked<'a> {
    pub hit: Hit<'a>,
    pub relevance: Relevance,
    pub level: MatchLevel,
    pub score: f64,
    pub detail: Detail,
    /// The profile's score and the features, when `--rerank` replaced it.
    pub rerank: Option<(f64, Features)>,
    pub supersession: f64,
    pub mmr: f64,
    /// Decay's score if some query entity occurs in the record, while the entity check (which
    /// reads the record's text) has not been made; `score` and `detail` are the score if none
    /// does. `None` once decided, or when the check cannot change the score.
    pub undecided: Option<Undecided>,
}

/// What an undecided entity check leaves of the score it would give ([`Ranked::undecided`]):
/// the score, and the best relevance it was computed against, from which [`Step::decide`]
/// computes its breakdown when some entity occurs. The breakdown itself is not kept: most
/// candidates never reach the page, and a breakdown costs allocations.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Undecided {
    pub score: f64,
    r_max: f64,
}

impl<'a> Ranked<'a> {
    /// A candidate scored by the standard profile.
    pub fn new(hit: Hit<'a>, relevance: Relevance, feedback: f64, level: MatchLevel) -> Self {
        Ranked {
            hit,
            relevance,
            level,
            score: relevance.relevance + feedback,
            detail: Detail::Standard { feedback },
            rerank: None,
            supersession: 0.0,
            mmr: 0.0,
            undecided: None,
        }
    }

    /// The greatest score the candidate can have before the post-steps (which only lower
    /// scores): its score, or the greater of its two while its entity check is undecided.
    pub fn upper(&self) -> f64 {
        match &self.undecided {
            Some(with) => self.score.max(with.score),
            None => self.score,
        }
    }

    /// The `scoreBreakdown`: the profile's keys, then `rerank` (the change it made) and
    /// `rerankFeatures`, then `supersession` and `mmr` when they changed the score.
    pub fn breakdown(&self, group_masks: &[u32; GROUP_COUNT]) -> ScoreBreakdown {
        let profile = match &self.detail {
            Detail::Standard { feedback } => ProfileBreakdown::Standard(standard::breakdown(
                group_masks,
                &self.relevance,
                *feedback,
            )),
            Detail::Decay(s) => ProfileBreakdown::Decay((**s).clone()),
            Detail::Recency(s) => ProfileBreakdown::Recency(*s),
            Detail::Bm25f { bm25f, feedback } => {
                ProfileBreakdown::Bm25f(bm25f::breakdown(*bm25f, *feedback))
            }
        };
        let mut breakdown = ScoreBreakdown::of(profile);
        if let Some((before, features)) = &self.rerank {
            let after = self.score - self.supersession - self.mmr;
            breakdown.rerank = Some(RerankBreakdown {
                change: after - before,
                features: features.named(),
            });
        }
        breakdown.supersession = (self.supersession != 0.0).then_some(self.supersession);
        breakdown.mmr = (self.mmr != 0.0).then_some(self.mmr);
        breakdown
    }
}

/// What every pass needs.
pub(crate) struct Step<'s> {
    pub source: &'s dyn Source,
    pub request: &'s SearchRequest,
    pub settings: &'s Settings,
    pub query: &'s PreparedQuery,
    /// The reference time as (unix seconds, nanoseconds).
    pub now: (i64, u32),
    /// The best relevance of the whole collection's candidates when the source is one shard of
    /// it (see [`Context`](super::Context)); else the list's own.
    pub best_relevance: Option<f64>,
    /// Records decoded by one pass and read again by a later one (decay's entity check, then
    /// MMR's content prefix): each candidate's record is decoded once per search.
    pub records: Decoded,
    /// The query's entities once a step asked for them ([`Step::query_entities`]): the
    /// profile's step and the page's ask the same.
    pub entities: OnceLock<Vec<String>>,
}

fn best_relevance(ranked: &[Ranked<'_>]) -> f64 {
    ranked
        .iter()
        .map(|r| r.relevance.relevance)
        .fold(0.0, f64::max)
}

impl Step<'_> {
    /// SPEC §5.1: superseded records out (unless `--include-superseded`), the top
    /// `--candidates` by (r desc, id), then the decay score of each. The entity check is made
    /// only where it can change a score, and there only if `decide`; else it is left undecided
    /// for [`decay_page`](super::decay_page) to make where the page needs it.
    pub fn decay(
        &self,
        ranked: &mut Vec<Ranked<'_>>,
        removed: &mut HashMap<DocRef, Removal>,
        decide: bool,
    ) -> Result<()> {
        if !self.request.include_superseded {
            ranked.retain(|r| {
                let superseded = r.hit.superseded_by.is_some();
                if superseded {
                    removed.insert(r.hit.doc, Removal::Superseded);
                }
                !superseded
            });
        }
        ranked.par_sort_unstable_by(|a, b| {
            b.relevance
                .relevance
                .total_cmp(&a.relevance.relevance)
                .then_with(|| a.hit.id.as_bytes().cmp(b.hit.id.as_bytes()))
        });
        let cap = self
            .request
            .candidates
            .unwrap_or(self.settings.decay.candidates);
        for (i, r) in ranked.iter().enumerate().skip(cap) {
            removed.insert(r.hit.doc, Removal::BeyondCandidates(i + 1));
        }
        ranked.truncate(cap);
        let r_max = best_relevance(ranked);

        let entities = self.query_entities()?;
        ranked.par_iter_mut().try_for_each(|r| -> Result<()> {
            let values = self.source.values(r.hit.doc)?;
            let input = |entity_occurs: bool| self.decay_input(r, &values, r_max, entity_occurs);
            let without = decay::score(&input(false), &self.settings.decay);
            // With an entity the breakdown differs exactly where the adjustments applied do.
            let with = (!entities.is_empty())
                .then(|| {
                    decay::score_against(&input(true), &self.settings.decay, &without.adjustments)
                })
                .filter(|&(_, same)| !same);
            r.score = without.score;
            r.detail = Detail::Decay(Box::new(without));
            r.undecided = with.map(|(score, _)| Undecided { score, r_max });
            Ok(())
        })?;
        if decide {
            self.decide_entities(ranked, entities)?;
        }
        Ok(())
    }

    /// What decay's score of `r` reads, with its record's `values`.
    fn decay_input<'v>(
        &self,
        r: &Ranked<'_>,
        values: &'v RecordValues<'_>,
        r_max: f64,
        entity_occurs: bool,
    ) -> DecayInput<'v> {
        DecayInput {
            relevance: r.relevance.relevance,
            r_max,
            age_days: age_days(self.now, r.hit.created_at),
            decay_factor: values.decay_factor,
            salience: values.salience,
            memory_type: &values.memory_type,
            entity_occurs,
            feedback: r.hit.feedback,
        }
    }

    /// Settles `r`'s undecided entity check: whether some query entity occurs in its record.
    pub fn decide(&self, r: &mut Ranked<'_>, entity_occurs: bool) -> Result<()> {
        let Some(with) = r.undecided.take() else {
            return Ok(());
        };
        if entity_occurs {
            let values = self.source.values(r.hit.doc)?;
            let input = self.decay_input(r, &values, with.r_max, true);
            let breakdown = decay::score(&input, &self.settings.decay);
            debug_assert_eq!(breakdown.score.to_bits(), with.score.to_bits());
            r.score = breakdown.score;
            r.detail = Detail::Decay(Box::new(breakdown));
        }
        Ok(())
    }

    /// The query's entities (SPEC §5.4) when some decay adjustment tests them, else none;
    /// found once per search.
    pub fn query_entities(&self) -> Result<&[String]> {
        if let Some(entities) = self.entities.get() {
            return Ok(entities);
        }
        let uses_entities = self
            .settings
            .decay
            .adjustments
            .iter()
            .any(|a| a.condition.uses_entities());
        let entities = if uses_entities {
            query_entities(
                &self.query.text,
                &self.request.entities,
                &self.settings.entities,
                |name| self.source.entity_known(name),
            )?
        } else {
            Vec::new()
        };
        Ok(self.entities.get_or_init(|| entities))
    }

    /// Makes the entity check of every undecided candidate.
    pub fn decide_entities(&self, ranked: &mut [Ranked<'_>], entities: &[String]) -> Result<()> {
        self.decide_entities_unread(ranked, entities)?;
        let needles = Needles::new(entities);
        ranked
            .par_iter_mut()
            .filter(|r| r.undecided.is_some())
            .try_for_each(|r| -> Result<()> {
                let occurs = self.entity_check(&needles, r.hit.doc)?;
                self.decide(r, occurs)
            })
    }

    /// Makes the entity check (SPEC §5.4) of the undecided candidates where the source can make
    /// it without reading their records, and of every one when the query has no entity.
    pub fn decide_entities_unread(
        &self,
        ranked: &mut [Ranked<'_>],
        entities: &[String],
    ) -> Result<()> {
        let undecided: Vec<usize> = (0..ranked.len())
            .filter(|&i| ranked[i].undecided.is_some())
            .collect();
        let docs: Vec<DocRef> = undecided.iter().map(|&i| ranked[i].hit.doc).collect();
        let checks = if entities.iter().all(String::is_empty) {
            vec![Some(false); docs.len()]
        } else {
            self.source.entity_checks(&docs, entities)?
        };
        for (i, check) in undecided.into_iter().zip(checks) {
            if let Some(occurs) = check {
                self.decide(&mut ranked[i], occurs)?;
            }
        }
        Ok(())
    }

    /// Whether one of the query's entities (`needles`) occurs in the record at `doc` (SPEC
    /// §5.4), read: from the record when this search decoded it already, else from its text
    /// in place.
    pub fn entity_check(&self, needles: &Needles, doc: DocRef) -> Result<bool> {
        if needles.is_empty() {
            return Ok(false);
        }
        if let Some(stored) = self.records.cached(doc) {
            let record = &stored.record;
            return Ok(needles.occur_in(&record.entities, || record.content_parts()));
        }
        self.source.test_text(doc, &|text| {
            needles.occur_in(&text.entities, || text.parts.iter().copied())
        })
    }

    /// SPEC §5.2 over every candidate.
    pub fn recency(&self, ranked: &mut [Ranked<'_>]) -> Result<()> {
        let r_max = self
            .best_relevance
            .unwrap_or_else(|| best_relevance(ranked));
        ranked.par_iter_mut().try_for_each(|r| -> Result<()> {
            let values = self.source.values(r.hit.doc)?;
            let s = recency::score(
                &RecencyInput {
                    relevance: r.relevance.relevance,
                    r_max,
                    age_days: age_days(self.now, r.hit.created_at),
                    pinned: values.pinned,
                    superseded: r.hit.superseded_by.is_some(),
                },
                &self.settings.recency,
            );
            r.score = s.score;
            r.detail = Detail::Recency(s);
            Ok(())
        })
    }

    /// SPEC §5.3: the candidates with an exact match, scored by BM25F plus feedback.
    pub fn bm25f<'a>(&self, ranked: Vec<Ranked<'a>>) -> Result<Vec<Ranked<'a>>> {
        let collection = self.source.collection()?;
        let docs: Vec<DocRef> = ranked.iter().map(|r| r.hit.doc).collect();
        let postings = self.source.exact_postings(self.query, &docs)?;
        let avglen = collection.average_lengths();
        let saturation = self.settings.bm25f.saturation_constant(&avglen);
        let idfs: Vec<f64> = postings
            .iter()
            .map(|p| idf(collection.live, p.df))
            .collect();
        let position: HashMap<DocRef, usize> = ranked
            .iter()
            .enumerate()
            .map(|(i, r)| (r.hit.doc, i))
            .collect();
        let mut terms: Vec<Vec<(usize, [u32; GROUP_COUNT])>> = vec![Vec::new(); ranked.len()];
        for (t, p) in postings.iter().enumerate() {
            for (doc, tf) in &p.docs {
                if let Some(&i) = position.get(doc) {
                    terms[i].push((t, *tf));
                }
            }
        }
        let pairs = self.pair_bonuses(&ranked, &terms, &idfs)?;
        ranked
            .into_par_iter()
            .zip(terms)
            .zip(pairs)
            .filter(|((_, terms), _)| !terms.is_empty())
            .map(|((mut r, terms), pairs)| -> Result<Ranked<'a>> {
                let values = self.source.values(r.hit.doc)?;
                let score = bm25f::score(
                    terms.iter().map(|(t, tf)| {
                        (
                            idfs[*t],
                            term_weight(tf, &values.group_lengths, &avglen, self.settings.bm25f.b),
                        )
                    }),
                    saturation,
                ) + pairs;
                let feedback = standard::feedback_score(&r.hit.feedback);
                r.score = score + feedback;
                r.detail = Detail::Bm25f {
                    bm25f: score,
                    feedback,
                };
                Ok(r)
            })
            .collect()
    }

    /// Per candidate, the adaptive variant's proximity signal: for each query word pair found
    /// as adjacent words of the record, `proximity × (idf(first) + idf(second)) / 2`. Each pair
    /// is looked up once, for the candidates holding both of its words.
    fn pair_bonuses(
        &self,
        ranked: &[Ranked<'_>],
        terms: &[Vec<(usize, [u32; GROUP_COUNT])>],
        idfs: &[f64],
    ) -> Result<Vec<f64>> {
        let mut bonuses = vec![0.0; ranked.len()];
        let weight = match self.settings.bm25f.variant {
            Bm25fVariant::Adaptive => self.settings.bm25f.proximity,
            Bm25fVariant::Classic => 0.0,
        };
        if weight == 0.0 {
            return Ok(bonuses);
        }
        for pair in &self.query.pairs {
            let holders: Vec<usize> = (0..ranked.len())
                .filter(|&i| {
                    let holds = |token: usize| terms[i].iter().any(|&(t, _)| t == token);
                    holds(pair.first) && holds(pair.second)
                })
                .collect();
            let docs: Vec<DocRef> = holders.iter().map(|&i| ranked[i].hit.doc).collect();
            let bonus = weight * bm25f::pair_idf(idfs[pair.first], idfs[pair.second]);
            for (i, occurs) in holders
                .into_iter()
                .zip(self.source.pair_occurs(&pair.phrase, &docs)?)
            {
                if occurs {
                    bonuses[i] += bonus;
                }
            }
        }
        Ok(bonuses)
    }

    /// SPEC §5.5 `--rerank`: the score after the profile becomes the weighted feature mix, with
    /// `rel` and `temporal` as in SPEC §5.1 and r_max over the candidates.
    pub fn rerank(&self, ranked: &mut [Ranked<'_>], weights: &RerankWeights) -> Result<()> {
        let r_max = best_relevance(ranked);
        let d = &self.settings.decay;
        ranked.par_iter_mut().try_for_each(|r| -> Result<()> {
            let values = self.source.values(r.hit.doc)?;
            let temporal =
                decay::temporal(values.decay_factor, age_days(self.now, r.hit.created_at), d);
            let features = Features {
                relevance: decay::rel(r.relevance.relevance, r_max, d),
                salience: values.salience * temporal,
                temporal,
                text_match: if r.relevance.relevance > 0.0 {
                    1.0
                } else {
                    0.0
                },
                vector_match: 0.0,
            };
            let before = r.score;
            r.score = weights.score(&features);
            r.rerank = Some((before, features));
            Ok(())
        })
    }

    /// MMR's content prefix of the record at `doc`: from the record when this search decoded
    /// it, else from its head, and from the whole record only where the head falls short.
    pub fn content_prefix(&self, doc: DocRef, chars: usize) -> Result<String> {
        if let Some(stored) = self.records.cached(doc) {
            return Ok(record_prefix(&stored.record, chars));
        }
        let head = self.source.stored_head(doc, head_bytes(chars))?;
        match head_prefix(&head, chars) {
            Some(prefix) => Ok(prefix),
            None => Ok(record_prefix(
                &self.records.get(self.source, doc)?.record,
                chars,
            )),
        }
    }

    /// SPEC §6.2: demote each result whose normalized content prefix equals a higher-ranked
    /// one's, then re-sort once. Reads the stored text of every candidate in the list.
    pub fn mmr(&self, ranked: &mut [Ranked<'_>]) -> Result<()> {
        let chars = self.settings.mmr.prefix_chars;
        let prefixes = ranked
            .par_iter()
            .map(|r| self.content_prefix(r.hit.doc, chars))
            .collect::<Result<Vec<_>>>()?;
        let decay = self.request.profile == Profile::Decay;
        let mut changed = false;
        for (r, duplicate) in ranked
            .iter_mut()
            .zip(near_duplicates(prefixes.iter().map(String::as_str)))
        {
            if duplicate {
                let delta = demotion(
                    r.score,
                    decay,
                    self.settings.mmr.decay_penalty,
                    self.settings.mmr.relative_penalty,
                );
                r.score += delta;
                r.mmr += delta;
                changed = true;
            }
        }
        if changed {
            sort_by_score(ranked);
        }
        Ok(())
    }
}
