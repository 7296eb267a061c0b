//! `scoreBreakdown` as types: what each profile's score is made of (SPEC §4–6), then what
//! `--rerank`, supersession and MMR changed. Serialized as the JSON object SPEC names, keys in
//! SPEC order.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::schema::{FieldGroup, GROUP_COUNT};

/// Every component of a result's score.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreBreakdown {
    /// The profile's own components.
    pub profile: ProfileBreakdown,
    /// With `--rerank`: the change it made to the profile's score, and the features weighed.
    pub rerank: Option<RerankBreakdown>,
    /// The supersession penalty, when it changed the score.
    pub supersession: Option<f64>,
    /// The MMR change, when it changed the score.
    pub mmr: Option<f64>,
}

/// The components of one profile's score.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub enum ProfileBreakdown {
    /// SPEC §4 (and every result of an empty query).
    Standard(StandardBreakdown),
    /// SPEC §5.1.
    Decay(DecayBreakdown),
    /// SPEC §5.2.
    Recency(RecencyBreakdown),
    /// SPEC §5.3.
    Bm25f(Bm25fBreakdown),
    /// A federated search's fusion (several `--index`).
    Federated(FederatedBreakdown),
}

/// SPEC §4: each field group's `field[g] × coverageMultiplier`, `exactPhrase`,
/// `coverageMultiplier`, `feedback`.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StandardBreakdown {
    /// Per field group, in [`FieldGroup::ALL`] order.
    pub groups: [f64; GROUP_COUNT],
    /// The exact-phrase bonus times the coverage multiplier.
    pub exact_phrase: f64,
    /// The coverage multiplier.
    pub coverage_multiplier: f64,
    /// The feedback term.
    pub feedback: f64,
}

/// SPEC §5.1's keys.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct DecayBreakdown {
    /// r.
    pub relevance: f64,
    /// `rel`.
    pub rel: f64,
    /// Age in days, `None` (null) when unknown.
    pub age_days: Option<f64>,
    /// `temporal`.
    pub temporal: f64,
    /// The salience used.
    pub salience: f64,
    /// `base`.
    pub base: f64,
    /// Names of the adjustments applied, in order.
    pub adjustments: Vec<String>,
    /// The adjusted base clamped to [0, 1].
    pub clamped: f64,
    /// The feedback posterior.
    pub posterior: f64,
    /// `clamped × posterior`: the profile's score (not a key of the JSON).
    pub score: f64,
}

/// SPEC §5.2's keys.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecencyBreakdown {
    /// r.
    pub relevance: f64,
    /// `r / r_max`.
    pub text: f64,
    /// Age in days, `None` (null) when unknown.
    pub age_days: Option<f64>,
    /// The recency term before its weight.
    pub recency: f64,
    /// Whether the pin bonus was added.
    pub pinned: bool,
    /// Whether the superseded penalty was subtracted.
    pub superseded: bool,
    /// `text + 0.3 × recency + (pinned ? 0.5 : 0) − (superseded ? 10 : 0)`: the profile's
    /// score (not a key of the JSON).
    pub score: f64,
}

/// SPEC §5.3: `bm25f` and `feedback`, whose sum is the score.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25fBreakdown {
    /// The bm25f relevance (the proximity term of the adaptive variant included).
    pub bm25f: f64,
    /// The feedback term.
    pub feedback: f64,
}

/// The fusion of a federated search: `rrf`, `ranks` (per index that ranked it), `indexScore`
/// and `indexBreakdown` (the result's own, from its best index).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct FederatedBreakdown {
    /// The reciprocal-rank-fusion sum.
    pub rrf: f64,
    /// The 1-based rank in each index that ranked it, by index name.
    pub ranks: Vec<(String, usize)>,
    /// The score in the index it is reported from.
    pub index_score: f64,
    /// The breakdown in that index.
    pub index_breakdown: Box<ScoreBreakdown>,
}

/// What `--rerank` did: `rerank` (the change to the score) and `rerankFeatures`.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub struct RerankBreakdown {
    /// The reranked score minus the profile's.
    pub change: f64,
    /// The features, by name, in SPEC order.
    pub features: Vec<(&'static str, f64)>,
}

impl ScoreBreakdown {
    /// The profile's components with nothing changed after them.
    pub fn of(profile: ProfileBreakdown) -> ScoreBreakdown {
        ScoreBreakdown {
            profile,
            rerank: None,
            supersession: None,
            mmr: None,
        }
    }

    /// The JSON object, keys in SPEC order.
    pub fn to_map(&self) -> Map<String, Value> {
        let mut map = Map::new();
        self.for_each_entry(|key, value| {
            map.insert(key.to_string(), value);
        });
        map
    }

    /// The value under `key` in the JSON object, if present.
    pub fn get(&self, key: &str) -> Option<Value> {
        let mut found = None;
        self.for_each_entry(|k, v| {
            if k == key {
                found = Some(v);
            }
        });
        found
    }

    /// Whether the JSON object has `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The JSON object's entries, in order.
    fn for_each_entry(&self, mut put: impl FnMut(&str, Value)) {
        match &self.profile {
            ProfileBreakdown::Standard(s) => {
                for g in FieldGroup::ALL {
                    put(g.name(), s.groups[g as usize].into());
                }
                put("exactPhrase", s.exact_phrase.into());
                put("coverageMultiplier", s.coverage_multiplier.into());
                put("feedback", s.feedback.into());
            }
            ProfileBreakdown::Decay(d) => {
                put("relevance", d.relevance.into());
                put("rel", d.rel.into());
                put("ageDays", d.age_days.into());
                put("temporal", d.temporal.into());
                put("salience", d.salience.into());
                put("base", d.base.into());
                put("adjustments", d.adjustments.clone().into());
                put("clamped", d.clamped.into());
                put("posterior", d.posterior.into());
            }
            ProfileBreakdown::Recency(r) => {
                put("relevance", r.relevance.into());
                put("text", r.text.into());
                put("ageDays", r.age_days.into());
                put("recency", r.recency.into());
                put("pinned", r.pinned.into());
                put("superseded", r.superseded.into());
            }
            ProfileBreakdown::Bm25f(b) => {
                put("bm25f", b.bm25f.into());
                put("feedback", b.feedback.into());
            }
            ProfileBreakdown::Federated(f) => {
                put("rrf", f.rrf.into());
                let ranks: Map<String, Value> = f
                    .ranks
                    .iter()
                    .map(|(name, rank)| (name.clone(), (*rank).into()))
                    .collect();
                put("ranks", Value::Object(ranks));
                put("indexScore", f.index_score.into());
                put("indexBreakdown", Value::Object(f.index_breakdown.to_map()));
            }
        }
        if let Some(rerank) = &self.rerank {
            put("rerank", rerank.change.into());
            let features: Map<String, Value> = rerank
                .features
                .iter()
                .map(|&(name, value)| (name.to_string(), value.into()))
                .collect();
            put("rerankFeatures", Value::Object(features));
        }
        if let Some(supersession) = self.supersession {
            put("supersession", supersession.into());
        }
        if let Some(mmr) = self.mmr {
            put("mmr", mmr.into());
        }
    }
}

impl Serialize for ScoreBreakdown {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let map = self.to_map();
        let mut out = serializer.serialize_map(Some(map.len()))?;
        for (key, value) in &map {
            out.serialize_entry(key, value)?;
        }
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_spec_order_then_the_changes() {
        let mut b = ScoreBreakdown::of(ProfileBreakdown::Bm25f(Bm25fBreakdown {
            bm25f: 2.5,
            feedback: 0.25,
        }));
        b.rerank = Some(RerankBreakdown {
            change: 0.5,
            features: vec![("relevance", 1.0)],
        });
        b.mmr = Some(-0.125);
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            r#"{"bm25f":2.5,"feedback":0.25,"rerank":0.5,"rerankFeatures":{"relevance":1.0},"mmr":-0.125}"#
        );
        assert_eq!(b.get("feedback"), Some(Value::from(0.25)));
        assert!(!b.contains_key("supersession"));
    }

    #[test]
    fn standard_names_every_group() {
        let b = ScoreBreakdown::of(ProfileBreakdown::Standard(StandardBreakdown {
            groups: [1.0; GROUP_COUNT],
            exact_phrase: 0.0,
            coverage_multiplier: 1.0,
            feedback: 0.0,
        }));
        let keys: Vec<String> = b.to_map().keys().cloned().collect();
        let mut expected: Vec<String> = FieldGroup::ALL.iter().map(|g| g.name().into()).collect();
        expected.extend(["exactPhrase", "coverageMultiplier", "feedback"].map(String::from));
        assert_eq!(keys, expected);
    }
}
