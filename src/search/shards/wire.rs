//! What shards and the merging side hand each other: plain values that serialize (as JSON) to
//! cross a process or a machine.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};
use crate::schema::GROUP_COUNT;
use crate::search::profiles::bm25f::Collection;
use crate::search::response::Counts;
use crate::search::{CollectionValues, ExactPostings};

/// Phase one of a sharded search: what the profile of one query needs to know of the whole
/// collection (SPEC §5), gathered from every shard and added up with
/// [`CollectionStatistics::combine`] before any shard scores a record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectionStatistics {
    /// Live records (`bm25f`'s N).
    pub live: u64,
    /// Per field group, the summed lengths of the live records (`bm25f`'s avglen).
    pub group_length_sums: [u64; GROUP_COUNT],
    /// Per query token, the live records holding it exactly (`bm25f`'s df); empty unless the
    /// profile is `bm25f`.
    pub document_frequencies: Vec<u64>,
    /// The query's entity lookup candidates (SPEC §5.4) that some live record names, as asked
    /// (lowercased); empty unless the profile is `decay`.
    pub known_entities: Vec<String>,
    /// The best relevance of any candidate (`recency`'s r_max, SPEC §5.2); 0 unless the
    /// profile is `recency`.
    pub best_relevance: f64,
}

impl CollectionStatistics {
    /// The statistics of the union of the shards that gave `parts`.
    pub fn combine(parts: &[CollectionStatistics]) -> CollectionStatistics {
        let mut all = CollectionStatistics::default();
        for part in parts {
            all.live += part.live;
            for (sum, add) in all.group_length_sums.iter_mut().zip(part.group_length_sums) {
                *sum += add;
            }
            if all.document_frequencies.len() < part.document_frequencies.len() {
                all.document_frequencies
                    .resize(part.document_frequencies.len(), 0);
            }
            for (df, add) in all
                .document_frequencies
                .iter_mut()
                .zip(&part.document_frequencies)
            {
                *df += add;
            }
            all.known_entities
                .extend(part.known_entities.iter().cloned());
            all.best_relevance = all.best_relevance.max(part.best_relevance);
        }
        all.known_entities.sort();
        all.known_entities.dedup();
        all
    }

    /// JSON text, to send.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("statistics serialize")
    }

    /// What [`CollectionStatistics::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<CollectionStatistics> {
        serde_json::from_str(text).map_err(|e| wire_error("collection statistics", e))
    }

    /// The collection's document frequencies in place of `postings`' own (a profile other
    /// than `bm25f` gathered none and reads none).
    pub(crate) fn use_document_frequencies(&self, postings: &mut [ExactPostings]) {
        for (p, df) in postings.iter_mut().zip(&self.document_frequencies) {
            p.df = *df;
        }
    }

    /// Whether some record of the collection names this entity (as asked).
    pub(crate) fn knows_entity(&self, name: &str) -> bool {
        self.known_entities
            .binary_search_by(|known| known.as_str().cmp(name))
            .is_ok()
    }

    /// As the bounded `bm25f` ranking reads them.
    pub(crate) fn values(&self) -> CollectionValues<'_> {
        CollectionValues {
            collection: self.collection(),
            document_frequencies: &self.document_frequencies,
        }
    }

    pub(crate) fn collection(&self) -> Collection {
        Collection {
            live: self.live,
            group_length_sums: self.group_length_sums,
        }
    }
}

/// Phase two's question to one shard: the combined statistics, the collection's supersession
/// relations, and how deep into its ranking to go.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShardQuery {
    /// The whole collection's statistics for the query.
    pub statistics: CollectionStatistics,
    /// SPEC §6.1 `supersededBy` over the whole collection: superseded id → the smallest live
    /// id naming it in `supersedes` (see [`Index::superseded_by`](crate::Index::superseded_by)
    /// and [`combine_superseded_by`]). Only the ids the shard holds are read.
    pub superseded_by: BTreeMap<String, String>,
    /// How many records of its ranking the shard sends for a page-bounded search (the
    /// standard, recency and bm25f profiles without rerank, MMR, `--candidates` or
    /// `--explain`); `None` sends every candidate.
    pub depth: Option<usize>,
}

/// The smallest superseder of each superseded id over several shards' maps.
pub fn combine_superseded_by<'a>(
    parts: impl IntoIterator<Item = &'a BTreeMap<String, String>>,
) -> BTreeMap<String, String> {
    let mut all: BTreeMap<String, String> = BTreeMap::new();
    for part in parts {
        for (target, by) in part {
            match all.get_mut(target) {
                Some(smallest) if by.as_bytes() < smallest.as_bytes() => smallest.clone_from(by),
                Some(_) => {}
                None => {
                    all.insert(target.clone(), by.clone());
                }
            }
        }
    }
    all
}

/// Phase two's answer from one shard: its candidates before the post-steps, as records, and
/// what the merge needs to finish the search exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShardCandidates {
    /// `index`, or `scan` when the shard was damaged and scanned its stored records.
    pub backend: String,
    /// Whether the shard answered in a degraded mode (SPEC §9).
    pub degraded: bool,
    /// The shard's own notices (damage); the search's notices are the merge's.
    pub notices: Vec<String>,
    /// Identifies the shard's generation, for the fingerprint.
    pub generation: String,
    /// Whether the shard was built with `--stem`.
    pub stem: bool,
    /// The settings the shard searched with when it read them from its `reliora.toml` (JSON).
    pub settings: Option<(String, String)>,
    /// Live records (less the request's excluded ids).
    pub live: usize,
    /// Live records passing the filters.
    pub passing: usize,
    /// The number and levels of all the shard's candidates.
    pub counts: Counts,
    /// Where the candidates the shard left out rank, when the page could need them: after
    /// this score and id (the last record sent). `None`: nothing left out can reach the page.
    pub bound: Option<Bound>,
    /// The records sent (located), best first for a bounded search; the `--explain` record
    /// too when the shard holds it, candidate or not.
    pub records: Vec<SentRecord>,
}

/// The last record a shard sent: every candidate it left out ranks after it — by score, then
/// id — before the post-steps, which only lower scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    /// Its score.
    pub score: f64,
    /// Its id.
    pub id: String,
}

/// One record a shard sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentRecord {
    /// Where it came from (SPEC §7 `locator`).
    pub locator: String,
    /// The record as its JSON object.
    pub record: serde_json::Value,
}

impl ShardCandidates {
    /// JSON text, to send.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("candidates serialize")
    }

    /// What [`ShardCandidates::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<ShardCandidates> {
        serde_json::from_str(text).map_err(|e| wire_error("shard candidates", e))
    }
}

impl ShardQuery {
    /// JSON text, to send.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("shard queries serialize")
    }

    /// What [`ShardQuery::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<ShardQuery> {
        serde_json::from_str(text).map_err(|e| wire_error("shard query", e))
    }
}

fn wire_error(what: &str, e: serde_json::Error) -> Error {
    Error::query(
        ErrorCode::InvalidOption,
        format!("malformed {what} between shards: {e}"),
    )
}
