//! What the term dictionary and postings of one segment say before any record is read: the
//! terms a query token expands to (FST: exact and prefix), the records passing the filters, and
//! where the phrase may occur (pair postings, or every word's terms in one group).

use std::ops::ControlFlow;

use roaring::RoaringBitmap;

use crate::error::Result;
use crate::format::bitpack::bit_set;
use crate::format::file::IndexFile;
use crate::format::pairs::PairRecords;
use crate::format::postings::TermPostings;
use crate::format::{FACET_ENTITY, FACET_TAG, FACET_TYPE, STOP_MARKER};
use crate::index::segment::Segment;
use crate::index::Index;
use crate::schema::{FieldGroup, GROUP_COUNT};
use crate::search::filters::Filters;
use crate::search::query::MIN_PREFIX_CHARS;
use crate::search::scratch;
use crate::search::{entities, DocRef};
use crate::text::{self, Analyzer, Token};

const ALL_GROUPS: u16 = (1 << GROUP_COUNT) - 1;

/// The term numbers a query token matches (SPEC §3): the exact term, every longer term it is a
/// prefix of (a range scan) and every shorter term that is a prefix of it (point lookups), the
/// prefix rules only when the shorter side has at least five characters. Stop-word terms are
/// skipped for `english`.
pub(crate) fn expand(segment: &Segment, token: &Token, analyzer: Analyzer) -> Result<Vec<u64>> {
    let english = analyzer == Analyzer::English;
    let mut terms = Vec::new();
    let lookup = |key: &[u8], terms: &mut Vec<u64>| exact_terms(segment, key, !english, terms);
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

/// Appends the term number of `key` in `segment`, and with `stop` that of the stop word
/// `key` (its key with [`STOP_MARKER`]), where the dictionary holds them.
fn exact_terms(segment: &Segment, key: &[u8], stop: bool, terms: &mut Vec<u64>) -> Result<()> {
    if let Some(t) = segment.terms.get(key)? {
        terms.push(t);
    }
    if stop {
        if let Some(t) = segment.terms.get(&[key, &[STOP_MARKER]].concat())? {
            terms.push(t);
        }
    }
    Ok(())
}

/// For each record of `docs`, what the postings of its segment tell of SPEC §5.4's entity
/// check without reading the record: `Some(true)` when one of `entities` occurs in it,
/// `Some(false)` when none does, `None` when they cannot tell. Both answers need the record not
/// [`irregular`](Segment::irregular): then every alphanumeric run of its text is one of its
/// terms and every term is such a run, so
///
/// - an entity that is one plain word (`plain_words` gives it back whole) occurs in it exactly
///   when it holds that word as a term;
/// - none occurs when, for each entity, it lacks one of its
///   [`plain_words`](entities::plain_words) as a term and does not name the entity (in
///   `entities`, which the terms do not hold): the segment's entity facets tell which records
///   name it; a segment written before them tells only that no record of it does.
///
/// All `None` with stemming (a term is then a stem) and in a segment whose irregular records
/// are not read yet.
pub(super) fn entity_checks(
    index: &Index,
    docs: &[DocRef],
    entities: &[String],
) -> Result<Vec<Option<bool>>> {
    let mut checks = vec![None; docs.len()];
    let needles: Vec<String> = entities
        .iter()
        .map(|e| e.to_lowercase())
        .filter(|needle| !needle.is_empty())
        .collect();
    if index.manifest().stem || needles.is_empty() {
        return Ok(checks);
    }
    let words: Vec<Option<Vec<&str>>> = needles
        .iter()
        .map(|needle| entities::plain_words(needle))
        .collect();
    // Each segment's records of `docs`, ascending, with their places in `docs`.
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_unstable_by_key(|&i| (docs[i].segment, docs[i].doc));
    for places in order.chunk_by(|&a, &b| docs[a].segment == docs[b].segment) {
        let segment = &index.segments()[docs[places[0]].segment as usize];
        let Some(irregular) = segment.irregular()? else {
            continue;
        };
        // The irregular records stay `None`: their terms tell nothing, so they are not looked up.
        let regular: Vec<usize> = places
            .iter()
            .copied()
            .filter(|&i| !bit_set(irregular, docs[i].doc))
            .collect();
        let records: Vec<u32> = regular.iter().map(|&i| docs[i].doc).collect();
        for (place, told) in regular
            .into_iter()
            .zip(told(segment, &records, &needles, &words)?)
        {
            checks[place] = told;
        }
    }
    Ok(checks)
}

/// What the postings of `segment` tell of the entities (`needles`, lowercased, with their
/// plain `words`) in each of its regular `records` (ascending): `Some(true)` where it names an
/// entity (its entity facet holds it) or holds an entity that is one plain word; `Some(false)`
/// where it lacks a word of each entity and names none; `None` otherwise. A segment without
/// entity facets tells that it names none only where no record of it names one.
fn told(
    segment: &Segment,
    records: &[u32],
    needles: &[String],
    words: &[Option<Vec<&str>>],
) -> Result<Vec<Option<bool>>> {
    let mut occurs = vec![false; records.len()];
    // Holding every plain word of some entity.
    let mut maybe = vec![false; records.len()];
    // Whether lacking a word of each entity (and naming none) shows that none occurs.
    let mut absence_tells = true;
    for (needle, words) in needles.iter().zip(words) {
        if segment.entity_facets {
            let naming = segment.facet(&[FACET_ENTITY, needle.as_bytes()].concat())?;
            if !naming.is_empty() {
                for (occurs, &doc) in occurs.iter_mut().zip(records) {
                    *occurs |= naming.contains(doc);
                }
            }
        } else if segment.entities.get(needle.as_bytes())?.is_some() {
            absence_tells = false;
        }
        let Some(words) = words else {
            absence_tells = false;
            continue;
        };
        let whole = words.len() == 1 && words[0] == needle.as_str();
        for (i, holds) in holding_every(segment, words, records)?
            .into_iter()
            .enumerate()
        {
            maybe[i] |= holds;
            occurs[i] |= holds && whole;
        }
    }
    Ok((0..records.len())
        .map(|i| match (occurs[i], absence_tells && !maybe[i]) {
            (true, _) => Some(true),
            (false, true) => Some(false),
            (false, false) => None,
        })
        .collect())
}

/// For each of `records` (ascending), whether it holds each of `words` as a term: a lookup
/// in each term's serialized postings, none decoded.
fn holding_every(segment: &Segment, words: &[&str], records: &[u32]) -> Result<Vec<bool>> {
    let mut every = vec![true; records.len()];
    for word in words {
        let mut terms = Vec::new();
        exact_terms(segment, word.as_bytes(), true, &mut terms)?;
        let mut holds = vec![false; records.len()];
        for t in terms {
            TermPostings::read(&segment.postings, t)?.each_contained(records, |i| holds[i] = true);
        }
        for (every, holds) in every.iter_mut().zip(holds) {
            *every &= holds;
        }
    }
    Ok(every)
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
        let postings = TermPostings::read(&segment.postings, term)?;
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
pub(super) fn filter_records(
    segment: &Segment,
    filters: &Filters,
) -> Result<Option<RoaringBitmap>> {
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
pub(super) fn phrase_records(
    segment: &Segment,
    query: &str,
    index: &Index,
) -> Result<Option<(Vec<u64>, bool)>> {
    let n = segment.len() as usize;
    let words = text::words(query);
    let (lists, every_pair) = indexed_pairs(segment, &words)?;
    let exact = every_pair && words.len() == 2;
    let held = if lists.is_empty() {
        None
    } else {
        let held = held_by_all(segment, lists, None)?;
        if held.is_empty() {
            // No record holds every indexed pair: whatever the other words' postings say.
            return Ok(Some((Vec::new(), exact)));
        }
        let mut bits = vec![0u64; n.div_ceil(64)];
        held.iter()
            .for_each(|&doc| bits[doc as usize / 64] |= 1 << (doc % 64));
        Some(bits)
    };
    if every_pair {
        let held = held.unwrap_or_else(|| vec![0; n.div_ceil(64)]);
        return Ok(Some((held, exact)));
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

/// The word pairs of a phrase's `words` that `segment` indexes, and whether it indexes every
/// one (so the phrase has two words or more, none CJK).
fn indexed_pairs<'s>(
    segment: &'s Segment,
    words: &[String],
) -> Result<(Vec<PairRecords<'s>>, bool)> {
    let not_cjk = words
        .iter()
        .all(|w| !w.chars().next().is_some_and(text::is_cjk_char));
    let mut every_pair = words.len() >= 2 && not_cjk;
    let mut lists = Vec::new();
    if not_cjk {
        for pair in words.windows(2) {
            match segment.pair(&pair[0], &pair[1])? {
                Some(list) => lists.push(list),
                None => every_pair = false,
            }
        }
    }
    Ok((lists, every_pair))
}

/// The records (ascending) holding every one of `lists` (at least one), among `asked`
/// (ascending, distinct) where given, else the shortest list's: each list read only as far as
/// the records still held, rarest first, until none is.
fn held_by_all(
    segment: &Segment,
    mut lists: Vec<PairRecords<'_>>,
    asked: Option<Vec<u32>>,
) -> Result<Vec<u32>> {
    let n = segment.len();
    let file = segment.pairs.file();
    lists.sort_by_key(PairRecords::len);
    let (mut held, rest) = match asked {
        Some(asked) => (asked, &lists[..]),
        None => {
            let mut held = Vec::with_capacity(lists[0].len() as usize);
            lists[0].for_each(n, file, |doc| held.push(doc))?;
            (held, &lists[1..])
        }
    };
    for list in rest {
        if held.is_empty() {
            break;
        }
        held = held_among(&held, list, n, file)?;
    }
    Ok(held)
}

/// Which of `docs` (ascending) `list` holds, ascending; its records are read up to the last
/// of `docs`.
fn held_among(docs: &[u32], list: &PairRecords<'_>, n: u32, file: &IndexFile) -> Result<Vec<u32>> {
    let mut kept = Vec::new();
    let mut at = 0;
    list.try_for_each(n, file, |doc| {
        while at < docs.len() && docs[at] < doc {
            at += 1;
        }
        match docs.get(at) {
            None => return ControlFlow::Break(()),
            Some(&wanted) if wanted == doc => {
                kept.push(doc);
                at += 1;
            }
            Some(_) => {}
        }
        ControlFlow::Continue(())
    })?;
    Ok(kept)
}

/// Per record of `docs` (of one segment), whether the postings let the phrase of `query` occur
/// there, and whether that answer is exact (a two-word phrase whose pair the segment indexes);
/// where it is not, a record it lets through is to be verified on the stored text. The records
/// are looked up, not the postings walked: a phrase check asks about a few records.
pub(super) fn phrase_among(
    segment: &Segment,
    query: &str,
    index: &Index,
    docs: &[u32],
) -> Result<(Vec<bool>, bool)> {
    let words = text::words(query);
    let mut possible = vec![true; docs.len()];
    let (lists, every_pair) = indexed_pairs(segment, &words)?;
    if !lists.is_empty() {
        // The records asked about, ascending, each once.
        let mut asked = docs.to_vec();
        asked.sort_unstable();
        asked.dedup();
        let asked = held_by_all(segment, lists, Some(asked))?;
        for (possible, doc) in possible.iter_mut().zip(docs) {
            *possible = asked.binary_search(doc).is_ok();
        }
    }
    if every_pair || !possible.contains(&true) {
        return Ok((possible, every_pair && words.len() == 2));
    }
    // Every key of the words in one group.
    let file = segment.postings.file();
    let mut postings = Vec::new();
    for key in &phrase_keys(query, index) {
        match segment.terms.get(key)? {
            Some(term) => postings.push(TermPostings::read(&segment.postings, term)?),
            None => return Ok((vec![false; docs.len()], false)),
        }
    }
    for (possible, &doc) in possible.iter_mut().zip(docs) {
        let mut groups = ALL_GROUPS;
        for postings in &postings {
            if !*possible || groups == 0 {
                break;
            }
            groups &= postings.mask_of(doc, file)?.unwrap_or(0);
        }
        *possible &= groups != 0;
    }
    Ok((possible, false))
}

/// The index keys of the words of `query` (a stop word's with its marker), sorted, each once;
/// a lone CJK character gives none (it may sit inside a longer run's bigrams).
fn phrase_keys(query: &str, index: &Index) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut tokens = Vec::new();
    for word in text::words(query) {
        let first = word.chars().next();
        if word.chars().count() == 1 && first.is_some_and(text::is_cjk_char) {
            continue;
        }
        tokens.clear();
        index.analyzer().index_tokens(&word, &mut tokens);
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
    keys
}

/// Records that contain, in one group, every term of every word of the query, as a bit per
/// record: a superset of the records where the phrase occurs, which are then verified on the
/// stored text. `None` when the words give no constraint.
fn phrase_prefilter(segment: &Segment, query: &str, index: &Index) -> Result<Option<Vec<u64>>> {
    let keys = phrase_keys(query, index);
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
        postings.push(TermPostings::read(&segment.postings, term)?);
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
    let mut common = scratch::RECORD_MASKS.take(n);
    common.fill(ALL_GROUPS);
    let mut next = scratch::RECORD_MASKS.take(n);
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
    scratch::RECORD_MASKS.give(common);
    scratch::RECORD_MASKS.give(next);
    Ok(Some(bits))
}
