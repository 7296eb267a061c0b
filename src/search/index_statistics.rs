//! What the profiles ask of the memory-mapped index beyond candidates: column values, the
//! collection statistics of `bm25f` (live records and group length sums from the manifest,
//! O(segments)), exact-term postings with their term frequencies, and the entity dictionary.

use std::borrow::Cow;
use std::collections::BTreeMap;

use roaring::RoaringBitmap;

use crate::error::Result;
use crate::format::bitpack::bit_set;
use crate::format::postings::TermPostings;
use crate::format::STOP_MARKER;
use crate::index::Index;
use crate::schema::GROUP_COUNT;
use crate::search::profiles::bm25f::Collection;
use crate::search::query::PreparedQuery;
use crate::search::{DocRef, ExactPostings, RecordValues};
use crate::text::Analyzer;

/// The column values of `doc`.
pub(crate) fn values(index: &Index, doc: DocRef) -> Result<RecordValues<'_>> {
    let weighed = index.segments()[doc.segment as usize]
        .columns
        .weighed(doc.doc)?;
    Ok(RecordValues {
        salience: weighed.salience,
        decay_factor: weighed.decay_factor,
        memory_type: Cow::Borrowed(weighed.memory_type),
        pinned: weighed.pinned,
        group_lengths: weighed.group_lengths,
    })
}

/// Live records and summed group lengths over every segment.
/// Records the log replaced or deleted are subtracted (their lengths read from the columns,
/// O(log)); the log's own records are a segment.
pub(crate) fn collection(index: &Index) -> Result<Collection> {
    let mut collection = Collection::default();
    for (s, segment) in index.segments().iter().enumerate() {
        let dead = index.dead(s);
        collection.live += u64::from(segment.len()) - dead.len();
        for (sum, add) in collection
            .group_length_sums
            .iter_mut()
            .zip(segment.group_length_sums)
        {
            *sum += add;
        }
        for doc in dead {
            let lengths = segment.columns.row(doc)?.group_lengths;
            for (sum, sub) in collection.group_length_sums.iter_mut().zip(lengths) {
                *sum -= u64::from(sub);
            }
        }
    }
    Ok(collection)
}

/// One query token's exact terms: per segment the postings of the term itself and, for a
/// `multilingual` query, of the term that came from a stop word (keyed with [`STOP_MARKER`]);
/// and its document frequency over the live records.
pub(crate) struct ExactTerm<'i> {
    pub df: u64,
    pub segments: Vec<Vec<TermPostings<'i>>>,
}

/// Per query token, its [`ExactTerm`].
pub(crate) fn exact_terms<'i>(
    index: &'i Index,
    query: &PreparedQuery,
) -> Result<Vec<ExactTerm<'i>>> {
    let mut out = Vec::with_capacity(query.tokens.len());
    for token in &query.tokens {
        let mut keys = vec![token.text.as_bytes().to_vec()];
        if query.analyzer == Analyzer::Multilingual {
            keys.push([token.text.as_bytes(), &[STOP_MARKER]].concat());
        }
        let mut term = ExactTerm {
            df: 0,
            segments: Vec::with_capacity(index.segments().len()),
        };
        for (s, segment) in index.segments().iter().enumerate() {
            let file = segment.postings.file();
            let mut parsed = Vec::new();
            for key in &keys {
                if let Some(t) = segment.terms.get(key)? {
                    parsed.push(TermPostings::read(&segment.postings, t)?);
                }
            }
            let dead = index.dead(s);
            term.df += match parsed.as_slice() {
                [] => 0,
                [one] if dead.is_empty() => one.len(),
                several => {
                    let mut records = RoaringBitmap::new();
                    for postings in several {
                        records |= postings.records(file)?;
                    }
                    (records - dead).len()
                }
            };
            term.segments.push(parsed);
        }
        out.push(term);
    }
    Ok(out)
}

/// Calls `visit(doc, tfs)` for each live record of segment `s` in `postings` (one token's
/// exact terms there) that `wanted` accepts, ascending, with the token's frequency in each
/// group summed over its terms.
pub(crate) fn for_each_exact(
    index: &Index,
    s: usize,
    postings: &[TermPostings<'_>],
    wanted: impl Fn(u32) -> bool,
    mut visit: impl FnMut(u32, &[u32; GROUP_COUNT]),
) -> Result<()> {
    let segment = &index.segments()[s];
    let file = segment.postings.file();
    let dead = index.dead(s);
    let keep = |doc: u32| wanted(doc) && (dead.is_empty() || !dead.contains(doc));
    match postings {
        [] => Ok(()),
        [one] => one.for_each_with_tfs_where(segment.len(), file, keep, |doc, _, tfs| {
            visit(doc, tfs);
        }),
        several => {
            let mut per_doc: BTreeMap<u32, [u32; GROUP_COUNT]> = BTreeMap::new();
            for postings in several {
                postings.for_each_with_tfs_where(segment.len(), file, keep, |doc, _, tfs| {
                    let sums = per_doc.entry(doc).or_default();
                    for (sum, tf) in sums.iter_mut().zip(tfs) {
                        *sum += tf;
                    }
                })?;
            }
            per_doc.iter().for_each(|(&doc, tfs)| visit(doc, tfs));
            Ok(())
        }
    }
}

/// Per query token, its document frequency over the live records and its term frequencies in
/// `docs` (ascending).
pub(crate) fn exact_postings(
    index: &Index,
    query: &PreparedQuery,
    docs: &[DocRef],
) -> Result<Vec<ExactPostings>> {
    // Per segment, a bit per record asked about (tested once per posting of every term).
    let mut wanted: Vec<Vec<u64>> = vec![Vec::new(); index.segments().len()];
    for doc in docs {
        if let Some(bits) = wanted.get_mut(doc.segment as usize) {
            let word = doc.doc as usize / 64;
            if bits.len() <= word {
                bits.resize(word + 1, 0);
            }
            bits[word] |= 1 << (doc.doc % 64);
        }
    }

    // Per segment, the records asked about when they are few enough to be looked up one by one.
    let mut few: Vec<Vec<u32>> = vec![Vec::new(); index.segments().len()];
    for doc in docs {
        if let Some(docs) = few.get_mut(doc.segment as usize) {
            docs.push(doc.doc);
        }
    }
    for docs in &mut few {
        docs.sort_unstable();
        docs.dedup();
        if docs.len() > LOOKED_UP {
            docs.clear();
        }
    }

    let mut out = Vec::with_capacity(query.tokens.len());
    for term in exact_terms(index, query)? {
        let mut postings = ExactPostings {
            df: term.df,
            docs: Vec::new(),
        };
        for (s, parsed) in term.segments.iter().enumerate() {
            if wanted[s].is_empty() {
                continue;
            }
            let visit = |doc, tfs: &[u32; GROUP_COUNT]| {
                let at = DocRef {
                    segment: s as u32,
                    doc,
                };
                postings.docs.push((at, *tfs));
            };
            if few[s].is_empty() {
                for_each_exact(index, s, parsed, |doc| bit_set(&wanted[s], doc), visit)?;
            } else {
                for_each_exact_of(index, s, parsed, &few[s], visit)?;
            }
        }
        out.push(postings);
    }
    Ok(out)
}

/// Up to how many records of a segment [`exact_postings`] looks up one by one rather than walk
/// every posting of the query's terms.
const LOOKED_UP: usize = 256;

/// [`for_each_exact`] for the records of `docs` (ascending, a few) alone, each looked up.
fn for_each_exact_of(
    index: &Index,
    s: usize,
    postings: &[TermPostings<'_>],
    docs: &[u32],
    mut visit: impl FnMut(u32, &[u32; GROUP_COUNT]),
) -> Result<()> {
    let file = index.segments()[s].postings.file();
    let dead = index.dead(s);
    let live: Vec<u32> = docs
        .iter()
        .copied()
        .filter(|&doc| dead.is_empty() || !dead.contains(doc))
        .collect();
    match postings {
        [] => Ok(()),
        [one] => one.for_each_with_tfs_of(&live, file, |doc, _, tfs| visit(doc, tfs)),
        several => {
            let mut per_doc: BTreeMap<u32, [u32; GROUP_COUNT]> = BTreeMap::new();
            for postings in several {
                postings.for_each_with_tfs_of(&live, file, |doc, _, tfs| {
                    let sums = per_doc.entry(doc).or_default();
                    for (sum, tf) in sums.iter_mut().zip(tfs) {
                        *sum += tf;
                    }
                })?;
            }
            per_doc.iter().for_each(|(&doc, tfs)| visit(doc, tfs));
            Ok(())
        }
    }
}

/// Whether some segment's entity dictionary holds `name` (lowercased).
/// Records the log replaced or deleted do not count.
pub(crate) fn entity_known(index: &Index, name: &str) -> Result<bool> {
    let mut naming = 0u64;
    for segment in index.segments() {
        naming += segment.entities.get(name.as_bytes())?.unwrap_or(0);
    }
    if naming > 0 && index.any_dead() {
        naming -= index.dead_naming(name)?.min(naming);
    }
    Ok(naming > 0)
}
