//! Term-at-a-time accumulation over one segment: each query token's postings added into a
//! dense per-record array, the filters and dead records applied, and the candidates listed.

use rayon::prelude::*;
use roaring::RoaringBitmap;

use crate::error::Result;
use crate::format::bitpack::bit_set;
use crate::format::mmap::WorkArray;
use crate::format::postings::{TermPostings, CHUNK_RECORDS};
use crate::index::segment::Segment;
use crate::schema::{GROUP_COUNT, MASK_WEIGHTS};
use crate::search::filters::Filters;
use crate::search::query::PreparedQuery;
use crate::search::scratch;
use crate::search::TokenGroups;
use crate::work;

use super::terms::{expand, filter_records, phrase_records};
use super::IndexSource;

/// What one segment contributes to a search before any record is read: the candidates, the
/// per-record sums of term-at-a-time accumulation, and the records the phrase may occur in.
pub(super) struct SegmentMatch<'a> {
    pub(super) s: u32,
    pub(super) segment: &'a Segment,
    pub(super) live: usize,
    pub(super) passing: usize,
    /// Per record, its key in one word so that accumulation touches one place per posting (and
    /// a chunk of them stays in a core's cache): `field_sum × stride + matched tokens` with
    /// `field_sum = Σ_g weight[g] × |tokens matching g|` (see [`Keys`]). Zero for records that
    /// are not candidates. Which tokens a record matched is looked up for the records shown
    /// ([`SegmentMatch::coverages`]).
    pub(super) sums: WorkArray<u32>,
    /// Query tokens + 1.
    pub(super) stride: u32,
    pub(super) candidates: CandidateSet,
    /// Bit per record: candidates whose postings allow the phrase (empty: none). Their text
    /// is checked only where it matters, unless `phrase_exact`.
    pub(super) phrase: Vec<u64>,
    /// The phrase bits are exact: set ⇔ the phrase occurs (a two-word phrase of indexed words).
    pub(super) phrase_exact: bool,
    /// Per query token, the terms it matches in this segment.
    pub(super) terms: Vec<Vec<u64>>,
}

impl Drop for SegmentMatch<'_> {
    fn drop(&mut self) {
        scratch::RECORD_COUNTS.give(std::mem::take(&mut self.sums));
    }
}

/// A bit per record of (at most 64) `sums`, set for the candidates: no branch per record (about
/// as many records are candidates as not). Thirty-two records at a time, each test shifted to
/// its bit and the bits OR-ed into a 32-bit word: the compiler compares four records per vector
/// instruction and packs their bits in vector registers. A third faster than gathering eight
/// records' tests as bytes by a multiplication (which baseline x86-64 has no vector form of),
/// and three times as fast as a shift per record into a 64-bit word: a survey tests every record
/// of a segment.
#[inline]
pub(super) fn candidate_bits(sums: &[u32]) -> u64 {
    let Ok(sums) = <&[u32; 64]>::try_from(sums) else {
        return (sums.iter().enumerate())
            .fold(0u64, |bits, (i, &sum)| bits | u64::from(sum != 0) << i);
    };
    let mut bits = 0u64;
    for (k, half) in sums.chunks_exact(32).enumerate() {
        let half =
            (half.iter().enumerate()).fold(0u32, |bits, (j, &sum)| bits | u32::from(sum != 0) << j);
        bits |= u64::from(half) << (32 * k);
    }
    bits
}

/// Calls `visit` with each record whose sum in `sums` is not zero, ascending, within the chunks
/// of 64 records (record number ÷ 64) that `chunk` accepts: a bit per record first
/// ([`candidate_bits`]), then the records.
fn each_candidate(sums: &[u32], chunk: impl Fn(usize) -> bool, mut visit: impl FnMut(u32)) {
    for (w, sums) in sums.chunks(64).enumerate() {
        if !chunk(w) {
            continue;
        }
        let mut bits = candidate_bits(sums);
        while bits != 0 {
            visit(64 * w as u32 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
}

/// The records whose `sums` are not zero: few are, and a segment's records are many.
fn listed(sums: &[u32]) -> RoaringBitmap {
    let mut docs = RoaringBitmap::new();
    each_candidate(
        sums,
        |_| true,
        |doc| {
            docs.push(doc);
        },
    );
    docs
}

/// Where a segment's candidates are listed.
pub(super) enum CandidateSet {
    /// The records with non-zero sums: most of the segment, scanned in place.
    Dense,
    /// Few records, or for an empty query the records passing the filters.
    Listed(RoaringBitmap),
}

impl SegmentMatch<'_> {
    /// `Σ_g weight[g] × |tokens matching g|` of record `doc`.
    pub(super) fn field_sum(&self, doc: u32) -> u32 {
        self.sum(doc) / self.stride
    }

    /// The key of record `doc` (0 for a query without postings here).
    pub(super) fn sum(&self, doc: u32) -> u32 {
        self.sums.get(doc as usize).copied().unwrap_or(0)
    }

    /// The number of query tokens record `doc` matches.
    pub(super) fn matched(&self, doc: u32) -> u32 {
        self.sum(doc) % self.stride
    }

    /// The matched query tokens of each of `docs` (ascending), one bit each, from the tokens'
    /// postings (the sums keep only their number).
    pub(super) fn coverages(&self, docs: &[u32]) -> Result<Vec<u32>> {
        coverages(self.segment, &self.terms, docs, |doc| self.matched(doc))
    }

    /// Whether record `doc` is a candidate.
    pub(super) fn is_candidate(&self, doc: u32) -> bool {
        match &self.candidates {
            CandidateSet::Dense => self.sums.get(doc as usize).is_some_and(|&s| s != 0),
            CandidateSet::Listed(docs) => docs.contains(doc),
        }
    }

    /// Whether the postings of candidate `doc` allow the phrase.
    pub(super) fn maybe_phrase(&self, doc: u32) -> bool {
        bit_set(&self.phrase, doc)
    }

    /// What the postings tell of the phrase in a record they allow it in or not.
    pub(super) fn known_phrase(&self, maybe_phrase: bool) -> Option<bool> {
        match (maybe_phrase, self.phrase_exact) {
            (false, _) => Some(false),
            (true, true) => Some(true),
            (true, false) => None,
        }
    }

    /// Calls `visit` with each candidate, ascending, and whether its postings allow the phrase.
    pub(super) fn for_each_candidate(&self, visit: impl FnMut(u32, bool)) {
        self.for_each_candidate_in(|_| true, visit);
    }

    /// [`SegmentMatch::for_each_candidate`] restricted to the chunks of 64 records (record
    /// number ÷ 64) that `chunk` accepts.
    pub(super) fn for_each_candidate_in(
        &self,
        chunk: impl Fn(usize) -> bool,
        mut visit: impl FnMut(u32, bool),
    ) {
        match &self.candidates {
            CandidateSet::Dense => {
                each_candidate(&self.sums, chunk, |doc| visit(doc, self.maybe_phrase(doc)));
            }
            CandidateSet::Listed(docs) => docs.iter().for_each(|doc| {
                if chunk(doc as usize / 64) {
                    visit(doc, self.maybe_phrase(doc))
                }
            }),
        }
    }

    /// [`SegmentMatch::coverages`] and [`SegmentMatch::token_groups`] of `docs` (candidates,
    /// ascending), a page's: few records take one lookup per record and term for both.
    pub(super) fn coverages_and_groups(&self, docs: &[u32]) -> Result<(Vec<u32>, TokenGroups)> {
        if docs.is_empty() || docs.len() > LOOKUPS {
            return Ok((self.coverages(docs)?, self.token_groups(docs)?));
        }
        work::coverages_looked_up(docs.len());
        let segment = self.segment;
        let file = segment.postings.file();
        let mut coverages = vec![0u32; docs.len()];
        let mut out = Vec::with_capacity(self.terms.len());
        for (t, terms) in self.terms.iter().enumerate() {
            let mut groups: [RoaringBitmap; GROUP_COUNT] = Default::default();
            for &term in terms {
                let postings = TermPostings::read(&segment.postings, term)?;
                postings.each_mask(docs, file, |i, mask| {
                    coverages[i] |= 1 << t;
                    add_to_groups(&mut groups, docs[i], mask);
                })?;
            }
            out.push(groups);
        }
        Ok((coverages, out))
    }

    /// Per token, per group: which of `docs` (candidates, ascending) the token matches there,
    /// from one pass over each term's postings (a page's few records are looked up one by one
    /// in [`SegmentMatch::coverages_and_groups`]).
    pub(super) fn token_groups(&self, docs: &[u32]) -> Result<TokenGroups> {
        if docs.is_empty() {
            return Ok(vec![Default::default(); self.terms.len()]);
        }
        let segment = self.segment;
        let file = segment.postings.file();
        let mut out = Vec::with_capacity(self.terms.len());
        for terms in &self.terms {
            let mut groups: [RoaringBitmap; GROUP_COUNT] = Default::default();
            for &term in terms {
                let postings = TermPostings::read(&segment.postings, term)?;
                let all = postings.group_records(segment.len(), file)?;
                for (group, records) in groups.iter_mut().zip(all) {
                    *group |= records;
                }
            }
            out.push(groups);
        }
        Ok(out)
    }
}

impl<'a> IndexSource<'a> {
    /// One segment's match, in steps: the records left out (dead, excluded) and the filters,
    /// each token's postings accumulated, the candidates listed, the phrase bits.
    pub(super) fn segment_match(
        &self,
        s: u32,
        segment: &'a Segment,
        query: &PreparedQuery,
        filters: &Filters,
    ) -> Result<SegmentMatch<'a>> {
        let n = segment.len();
        // Records replaced or deleted in the log, and records this search leaves out.
        let mut absent = self.index.dead(s as usize).clone();
        for id in &filters.exclude {
            absent.extend(segment.doc_of_id(id)?);
        }
        let allowed = filter_records(segment, filters)?;
        let live = n as usize - absent.len() as usize;
        let passing = match &allowed {
            Some(allowed) => (allowed - &absent).len() as usize,
            None => live,
        };

        let stride = query.tokens.len() as u32 + 1;
        let (terms, token_postings) = token_postings(segment, query)?;
        let postings_total: u64 = token_postings.iter().flatten().map(TermPostings::len).sum();
        // No posting, no candidate: no per-record array either.
        let mut sums = if postings_total == 0 {
            WorkArray::default()
        } else {
            scratch::RECORD_COUNTS.take_unzeroed(n as usize)
        };
        accumulate(segment, &token_postings, stride, &mut sums)?;
        keep_allowed(&mut sums, allowed.as_ref(), &absent, n);

        let candidates = if query.is_empty() {
            let mut docs = allowed.unwrap_or_else(|| (0..n).collect());
            docs -= &absent;
            CandidateSet::Listed(docs)
        } else if postings_total * 16 < u64::from(n) {
            CandidateSet::Listed(listed(&sums))
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
}

/// Records a page's token groups are looked up for one by one, at most; more take one pass
/// over each term's postings.
const LOOKUPS: usize = 256;

/// Adds `doc` to each of `groups` that `mask` names.
fn add_to_groups(groups: &mut [RoaringBitmap; GROUP_COUNT], doc: u32, mask: u16) {
    for (g, group) in groups.iter_mut().enumerate() {
        if mask & (1 << g) != 0 {
            group.insert(doc);
        }
    }
}

/// Per query token, the terms it matches in `segment` and their parsed postings.
#[allow(clippy::type_complexity)]
fn token_postings<'s>(
    segment: &'s Segment,
    query: &PreparedQuery,
) -> Result<(Vec<Vec<u64>>, Vec<Vec<TermPostings<'s>>>)> {
    let mut terms = Vec::with_capacity(query.tokens.len());
    let mut token_postings = Vec::with_capacity(query.tokens.len());
    for token in &query.tokens {
        let token_terms = expand(segment, token, query.analyzer)?;
        work::token_expanded(token_terms.len());
        token_postings.push(
            token_terms
                .iter()
                .map(|&term| TermPostings::read(&segment.postings, term))
                .collect::<Result<Vec<_>>>()?,
        );
        terms.push(token_terms);
    }
    Ok((terms, token_postings))
}

/// Term-at-a-time accumulation into a dense per-record array (see [`SegmentMatch::sums`]), one
/// chunk of [`CHUNK_RECORDS`] records at a time so that the chunk's sums stay in cache while
/// every token's postings are added to them (a pass per token over the whole array would miss
/// the cache on nearly every posting at a million records); the chunks are shared by the
/// pool's threads. Every value of `sums` is written: it need not come zeroed. A record's group
/// mask is turned into its weight by table.
fn accumulate(
    segment: &Segment,
    token_postings: &[Vec<TermPostings<'_>>],
    stride: u32,
    sums: &mut [u32],
) -> Result<()> {
    if sums.is_empty() {
        return Ok(());
    }
    let n = segment.len();
    let file = segment.postings.file();
    // Records in a chunk past the segment's last are refused before any chunk is walked (those
    // past its end within its last chunk, by the walk).
    let chunks = sums.len().div_ceil(CHUNK_RECORDS);
    for postings in token_postings.iter().flatten() {
        postings.finish_chunks(&postings.cursor_at(chunks), n, file)?;
    }
    // Adds a token's group weights to the field sum, and one matched token.
    let weight = |mask: u16| MASK_WEIGHTS[mask as usize] * stride + 1;
    // Per token, the term it walks first, its longest (the first of them), and what each of
    // that term's palette entries adds.
    let firsts: Vec<(usize, Vec<u32>)> = token_postings
        .iter()
        .map(|terms| {
            let first = (0..terms.len())
                .max_by_key(|&t| (terms[t].len(), std::cmp::Reverse(t)))
                .unwrap_or(0);
            let adds = terms
                .get(first)
                .map(|postings| postings.palette().iter().map(|&m| weight(m)).collect());
            (first, adds.unwrap_or_default())
        })
        .collect();
    let several = token_postings.iter().any(|terms| terms.len() > 1);
    sums.par_chunks_mut(CHUNK_RECORDS)
        .enumerate()
        .try_for_each_init(
            || Tagged::new(several),
            |tagged, (chunk, chunk_sums)| {
                chunk_sums.fill(0);
                let base = (chunk * CHUNK_RECORDS) as u32;
                for (terms, (first, add)) in token_postings.iter().zip(&firsts) {
                    match terms.as_slice() {
                        [] => {}
                        [postings] => {
                            postings.for_each_in_chunk_at(chunk, n, file, |doc, code| {
                                let slot = &mut chunk_sums[(doc - base) as usize];
                                *slot += add[code];
                            })?;
                        }
                        terms => {
                            // A record matching the token through several terms counts each
                            // group once: each posting adds what its groups add to those the
                            // token matched in the record before (and one matched token at
                            // the first). The first term walked finds no record tagged yet,
                            // so it adds and tags without looking; walking the longest first
                            // leaves the fewest postings to look.
                            let tag = tagged.next();
                            let masks = &mut tagged.masks;
                            let palette = terms[*first].palette();
                            terms[*first].for_each_in_chunk_at(chunk, n, file, |doc, code| {
                                let at = (doc - base) as usize;
                                masks[at] = tag << GROUP_COUNT | palette[code];
                                chunk_sums[at] += add[code];
                            })?;
                            let rest = (terms.iter().enumerate())
                                .filter_map(|(t, postings)| (t != *first).then_some(postings));
                            for postings in rest {
                                let palette = postings.palette();
                                postings.for_each_in_chunk_at(chunk, n, file, |doc, code| {
                                    let at = (doc - base) as usize;
                                    let entry = masks[at];
                                    let before = if entry >> GROUP_COUNT == tag {
                                        entry & GROUP_BITS
                                    } else {
                                        0
                                    };
                                    let after = before | palette[code];
                                    masks[at] = tag << GROUP_COUNT | after;
                                    let added = (MASK_WEIGHTS[after as usize]
                                        - MASK_WEIGHTS[before as usize])
                                        * stride
                                        + u32::from(before == 0);
                                    chunk_sums[at] += added;
                                })?;
                            }
                        }
                    }
                }
                Ok(())
            },
        )
}

/// The group masks a token of several terms has matched per record of a chunk, each tagged
/// with the walk (token and chunk) it was set in, so that no walk clears what the one before
/// left: an entry of another tag counts as no groups. Tags run from 1 to [`Tagged::LAST`];
/// when they run out, the masks are cleared and tags start again. The last tag given is kept
/// after the chunk's entries, so that the array goes back to its pool as it is and the next
/// search's walks go on from that tag instead of clearing the array.
struct Tagged {
    /// A chunk's entries, then the last tag given: no entry's tag is greater.
    masks: Vec<u16>,
}

impl Tagged {
    /// The greatest tag that fits beside a group mask in 16 bits.
    const LAST: u16 = u16::MAX >> GROUP_COUNT;

    /// Masks for a chunk when some token has several terms (else none are needed).
    fn new(several: bool) -> Tagged {
        Tagged {
            masks: if several {
                // Only `Tagged` takes from this pool, with this length: an array comes fresh
                // (zeroed: no tag given yet) or as a `Tagged` left it.
                scratch::TAGGED.take_unzeroed(CHUNK_RECORDS + 1)
            } else {
                Vec::new()
            },
        }
    }

    /// The tag of the next walk, kept as the last given before any entry takes it.
    fn next(&mut self) -> u16 {
        let last = self.masks[CHUNK_RECORDS];
        let walk = if last == Tagged::LAST {
            self.masks.fill(0);
            1
        } else {
            last + 1
        };
        self.masks[CHUNK_RECORDS] = walk;
        walk
    }
}

impl Drop for Tagged {
    fn drop(&mut self) {
        scratch::TAGGED.give(std::mem::take(&mut self.masks));
    }
}

/// The group bits of a [`Tagged`] entry.
const GROUP_BITS: u16 = (1 << GROUP_COUNT) - 1;

/// Clears the sums of records outside the filters' `allowed` set and of `absent` records.
fn keep_allowed(sums: &mut [u32], allowed: Option<&RoaringBitmap>, absent: &RoaringBitmap, n: u32) {
    if let Some(allowed) = allowed {
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
        for doc in absent {
            sums[doc as usize] = 0;
        }
    }
}

/// The matched query tokens of each of `docs` (ascending) of `segment`, one bit each, from the
/// postings of `terms` (per query token, the terms it matches there); `matched` gives the
/// number of tokens a record matched. Few records are looked up one by one; many take one pass
/// over each term's postings.
pub(super) fn coverages(
    segment: &Segment,
    terms: &[Vec<u64>],
    docs: &[u32],
    matched: impl Fn(u32) -> u32,
) -> Result<Vec<u32>> {
    let file = segment.postings.file();
    let n = segment.len();
    let mut out = vec![0u32; docs.len()];
    if docs.is_empty() {
        return Ok(out);
    }
    work::coverages_looked_up(docs.len());
    let few = docs.len() * 64 <= n as usize;
    let mut dense = if few {
        WorkArray::default()
    } else {
        scratch::RECORD_COUNTS.take(n as usize)
    };
    // Looked up one by one, a record is asked about a term only while it lacks the term's
    // token and the tokens found fall short of the number its key counts (a record without
    // a key is asked about every term).
    let matched: Vec<u32> = if few {
        (docs.iter())
            .map(|&doc| Some(matched(doc)).filter(|&m| m > 0).unwrap_or(u32::MAX))
            .collect()
    } else {
        Vec::new()
    };
    let mut asked: Vec<u32> = Vec::new();
    let mut places: Vec<usize> = Vec::new();
    for (t, terms) in terms.iter().enumerate() {
        for &term in terms {
            if few {
                asked.clear();
                places.clear();
                for (i, &doc) in docs.iter().enumerate() {
                    let found = out[i];
                    if found & 1 << t == 0 && found.count_ones() < matched[i] {
                        asked.push(doc);
                        places.push(i);
                    }
                }
                if asked.is_empty() {
                    continue;
                }
            }
            let postings = TermPostings::read(&segment.postings, term)?;
            if few {
                postings.each_contained(&asked, |k| out[places[k]] |= 1 << t);
            } else {
                postings.for_each(n, file, |doc, _| dense[doc as usize] |= 1 << t)?;
            }
        }
    }
    if !few {
        for (coverage, &doc) in out.iter_mut().zip(docs) {
            *coverage = dense[doc as usize];
        }
        scratch::RECORD_COUNTS.give(dense);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every record's bit is its own test, whatever its neighbours hold: each of 64 records a
    /// candidate alone, all but it, and patterns of runs; and short runs of sums.
    #[test]
    fn candidate_bits_test_each_record() {
        let one_by_one = |sums: &[u32]| -> u64 {
            (sums.iter().enumerate()).fold(0, |bits, (i, &s)| bits | u64::from(s != 0) << i)
        };
        let mut patterns: Vec<u64> =
            vec![0, u64::MAX, 0x5555_5555_5555_5555, 0x0F0F_00FF_F0F0_FF00];
        for i in 0..64 {
            patterns.extend([1 << i, !(1 << i), (1 << i) - 1]);
        }
        for pattern in patterns {
            let sums: Vec<u32> = (0..64)
                .map(|i| {
                    if pattern >> i & 1 == 1 {
                        1 + (i as u32) * 0x0101_0101
                    } else {
                        0
                    }
                })
                .collect();
            assert_eq!(candidate_bits(&sums), pattern, "{pattern:#x}");
            for len in [0, 1, 7, 8, 9, 63] {
                assert_eq!(candidate_bits(&sums[..len]), one_by_one(&sums[..len]));
            }
        }
        assert_eq!(candidate_bits(&[u32::MAX; 64]), u64::MAX);
    }

    #[test]
    fn listed_candidates_are_the_records_with_sums() {
        let mut sums = vec![0u32; 1000];
        let docs = [0, 5, 63, 64, 127, 640, 998, 999];
        for doc in docs {
            sums[doc as usize] = doc + 1;
        }
        assert_eq!(listed(&sums).iter().collect::<Vec<_>>(), docs);
        assert!(listed(&[]).is_empty());
    }

    /// Tags run from 1 to the last that fits beside a group mask; then the masks are cleared
    /// and tags start again, so an entry left by a walk is never taken for a later walk's. The
    /// array, given back and taken again, goes on from the last tag given.
    #[test]
    fn tags_go_on_from_the_last_given_and_wrap_around_with_the_masks_cleared() {
        let mut tagged = Tagged {
            masks: vec![0; CHUNK_RECORDS + 1],
        };
        let first = tagged.next();
        assert_eq!(first, 1);
        tagged.masks[7] = first << GROUP_COUNT | 0b101;
        let mut tagged = Tagged {
            masks: std::mem::take(&mut tagged.masks),
        };
        for expected in 2..=Tagged::LAST {
            assert_eq!(tagged.next(), expected);
        }
        assert_eq!(Tagged::LAST << GROUP_COUNT >> GROUP_COUNT, Tagged::LAST);
        assert_eq!(tagged.masks[7] >> GROUP_COUNT, 1);
        assert_eq!(tagged.next(), 1);
        assert_eq!(tagged.masks[7], 0);
        assert_eq!(tagged.masks[CHUNK_RECORDS], 1);
        assert_eq!(Tagged::new(true).masks.len(), CHUNK_RECORDS + 1);
        assert!(Tagged::new(false).masks.is_empty());
    }
}
