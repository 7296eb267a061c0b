//! What the profiles ask of the memory-mapped index beyond candidates: column values, the
//! collection statistics of `bm25f` (live records and group length sums from the manifest,
//! O(segments)), exact-term postings with their term frequencies, and the entity dictionary.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::error::Result;
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
    let row = index.segments()[doc.segment as usize]
        .columns
        .row(doc.doc)?;
    Ok(RecordValues {
        salience: row.salience,
        decay_factor: row.decay_factor,
        memory_type: Cow::Borrowed(row.memory_type),
        pinned: row.pinned,
        group_lengths: row.group_lengths,
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

/// Per query token, its exact matches: the term itself, and for a `multilingual` query also the
/// term that came from a stop word (keyed with [`STOP_MARKER`]).
pub(crate) fn exact_postings(index: &Index, query: &PreparedQuery) -> Result<Vec<ExactPostings>> {
    let mut out = Vec::with_capacity(query.tokens.len());
    for token in &query.tokens {
        let mut keys = vec![token.text.as_bytes().to_vec()];
        if query.analyzer == Analyzer::Multilingual {
            keys.push([token.text.as_bytes(), &[STOP_MARKER]].concat());
        }
        let mut postings = ExactPostings::default();
        for (s, segment) in index.segments().iter().enumerate() {
            let file = segment.postings.file();
            let mut per_doc: BTreeMap<u32, [u32; GROUP_COUNT]> = BTreeMap::new();
            let dead = index.dead(s);
            for key in &keys {
                let Some(term) = segment.terms.get(key)? else {
                    continue;
                };
                let parsed = TermPostings::parse(segment.postings.get(term as usize)?, file)?;
                parsed.for_each_with_tfs(segment.len(), file, |doc, _, tfs| {
                    if !dead.contains(doc) {
                        let sums = per_doc.entry(doc).or_default();
                        for (sum, tf) in sums.iter_mut().zip(tfs) {
                            *sum += tf;
                        }
                    }
                })?;
            }
            postings.df += per_doc.len() as u64;
            postings.docs.extend(per_doc.into_iter().map(|(doc, tf)| {
                (
                    DocRef {
                        segment: s as u32,
                        doc,
                    },
                    tf,
                )
            }));
        }
        out.push(postings);
    }
    Ok(out)
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
