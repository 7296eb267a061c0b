//! Configurable numbers of the profiles (SPEC §5.5): weights, half-lives, bonuses, caps and the
//! decay adjustments, read from a TOML file (`--config FILE`, or `reliora.toml` in the index
//! directory).
//!
//! Every key is optional; a missing key keeps the SPEC default, an unknown key is an error. Keys
//! are camelCase, as in the JSON output. The defaults, written out:
//!
//! ```toml
//! [decay]
//! candidates = 200            # default --candidates (at most 500)
//! relevanceFloor = 0.30       # rel = floor + span × (r / r_max) × min(1, r_max / saturation)
//! relevanceSpan = 0.52
//! relevanceSaturation = 18.0
//! decayFactorCap = 0.1        # temporal = exp(−min(decayFactor, cap) × age)
//! temporalWeight = 0.1        # base = rel × (1 + temporalWeight × temporal) × (1 + salienceWeight × salience)
//! salienceWeight = 0.1
//! posteriorWeight = 0.3       # posterior = clamp(1 + weight × (mean − 0.5), min, max)
//! posteriorMin = 0.85
//! posteriorMax = 1.15
//!
//! # The adjustment list, in order. Giving [decay.adjustments] replaces the whole list.
//! [decay.adjustments.recentEpisodic]
//! memoryType = "episodic"
//! maxAgeDays = 7
//! add = 0.05
//!
//! [decay.adjustments.staleSemantic]
//! memoryType = "semantic"
//! minAgeDays = 30
//! minSalience = 0.85
//! subtract = 0.05
//!
//! [decay.adjustments.entity]
//! entity = true               # a query entity occurs in the record (false: none does)
//! multiply = 1.3
//!
//! [recency]
//! halfLifeDays = 30.0
//! weight = 0.3
//! pinBonus = 0.5
//! supersededPenalty = 10.0
//!
//! [bm25f]
//! variant = "adaptive"        # or "classic": SPEC §5.3's formula with k1 exactly
//! k1 = 1.2                    # classic: the saturation
//! saturation = 0.009          # adaptive: × the average weighted record length
//! b = 0.75
//! proximity = 0.2             # adaptive: × mean idf, per query word pair found adjacent
//!
//! [mmr]
//! prefixChars = 100
//! decayPenalty = 0.1          # subtracted in `decay`
//! relativePenalty = 0.1       # × |score| in the other profiles
//!
//! [entities]
//! maxCapitalized = 8
//! maxLookup = 64
//! maxSubstringChars = 8
//!
//! [federation]
//! rrfK = 60.0
//! floor = 0.30
//! ceiling = 0.82
//! ```
//!
//! An adjustment's condition may test `memoryType`, `minAgeDays`/`maxAgeDays`,
//! `minSalience`/`maxSalience` (bounds inclusive, each optional), `entity` (presence or
//! absence), and `allOf` (a list of such conditions); all given tests must hold. Its operation
//! is exactly one of `add`, `subtract` or `multiply`. A test on age is false when the age is
//! unknown.

use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};

use crate::error::{Error, ErrorCode, Result};

/// The settings file read from an index directory when a search names no `--config`.
pub const CONFIG_FILE: &str = "reliora.toml";

/// The largest settings file read: a handful of tables of numbers.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Every configurable number, with the SPEC values as defaults.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// The `decay` profile (SPEC §5.1).
    pub decay: DecaySettings,
    /// The `recency` profile (SPEC §5.2).
    pub recency: RecencySettings,
    /// The `bm25f` profile (SPEC §5.3).
    pub bm25f: Bm25fSettings,
    /// Near-duplicate demotion (SPEC §6.2).
    pub mmr: MmrSettings,
    /// Query entities (SPEC §5.4).
    pub entities: EntitySettings,
    /// Federated search over several indexes.
    pub federation: FederationSettings,
}

/// The numbers of SPEC §5.1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DecaySettings {
    /// The default of `--candidates` (200).
    pub candidates: usize,
    /// The lowest `rel` (0.30).
    pub relevance_floor: f64,
    /// The span of `rel` above its floor (0.52).
    pub relevance_span: f64,
    /// The r_max at which `rel` stops being scaled down (18).
    pub relevance_saturation: f64,
    /// The cap on a record's decay factor per day (0.1).
    pub decay_factor_cap: f64,
    /// The weight of `temporal` in `base` (0.1).
    pub temporal_weight: f64,
    /// The weight of salience in `base` (0.1).
    pub salience_weight: f64,
    /// The weight of the feedback mean in the posterior (0.3).
    pub posterior_weight: f64,
    /// The lowest posterior (0.85).
    pub posterior_min: f64,
    /// The highest posterior (1.15).
    pub posterior_max: f64,
    /// The adjustments, applied in order.
    #[serde(deserialize_with = "adjustments_from_table")]
    pub adjustments: Vec<Adjustment>,
}

impl Default for DecaySettings {
    fn default() -> Self {
        DecaySettings {
            candidates: 200,
            relevance_floor: 0.30,
            relevance_span: 0.52,
            relevance_saturation: 18.0,
            decay_factor_cap: 0.1,
            temporal_weight: 0.1,
            salience_weight: 0.1,
            posterior_weight: 0.3,
            posterior_min: 0.85,
            posterior_max: 1.15,
            adjustments: default_adjustments(),
        }
    }
}

/// The three default adjustments of SPEC §5.1.
pub fn default_adjustments() -> Vec<Adjustment> {
    vec![
        Adjustment {
            name: "recentEpisodic".into(),
            condition: Condition {
                memory_type: Some("episodic".into()),
                max_age_days: Some(7.0),
                ..Condition::default()
            },
            operation: Operation::Add(0.05),
        },
        Adjustment {
            name: "staleSemantic".into(),
            condition: Condition {
                memory_type: Some("semantic".into()),
                min_age_days: Some(30.0),
                min_salience: Some(0.85),
                ..Condition::default()
            },
            operation: Operation::Subtract(0.05),
        },
        Adjustment {
            name: "entity".into(),
            condition: Condition {
                entity: Some(true),
                ..Condition::default()
            },
            operation: Operation::Multiply(1.3),
        },
    ]
}

/// One decay adjustment: when its condition holds, its operation changes the score.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Adjustment {
    /// Its name (the TOML key), listed in the breakdown when applied.
    pub name: String,
    /// When it applies.
    pub condition: Condition,
    /// What it does.
    pub operation: Operation,
}

/// A condition on a record; every test given must hold (an empty condition always holds).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Condition {
    /// The memory type equals this (trimmed, lowercased).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_type: Option<String>,
    /// age ≥ this many days (false when the age is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_age_days: Option<f64>,
    /// age ≤ this many days (false when the age is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_age_days: Option<f64>,
    /// salience ≥ this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_salience: Option<f64>,
    /// salience ≤ this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_salience: Option<f64>,
    /// `true`: some query entity occurs in the record; `false`: none does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<bool>,
    /// Every one of these holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub all_of: Vec<Condition>,
}

impl Condition {
    /// Whether this condition (or one nested in it) tests entity presence.
    pub fn uses_entities(&self) -> bool {
        self.entity.is_some() || self.all_of.iter().any(Condition::uses_entities)
    }

    fn normalize(&mut self) {
        if let Some(t) = &mut self.memory_type {
            *t = t.trim().to_lowercase();
        }
        self.all_of.iter_mut().for_each(Condition::normalize);
    }

    fn numbers(&self) -> Vec<(&'static str, f64)> {
        let mut out: Vec<(&'static str, f64)> = [
            ("minAgeDays", self.min_age_days),
            ("maxAgeDays", self.max_age_days),
            ("minSalience", self.min_salience),
            ("maxSalience", self.max_salience),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect();
        for c in &self.all_of {
            out.extend(c.numbers());
        }
        out
    }
}

/// What an adjustment does to the score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Operation {
    /// score + x
    Add(f64),
    /// score − x
    Subtract(f64),
    /// score × x
    Multiply(f64),
}

impl Operation {
    /// Applies the operation to `score`.
    pub fn apply(self, score: f64) -> f64 {
        match self {
            Operation::Add(x) => score + x,
            Operation::Subtract(x) => score - x,
            Operation::Multiply(x) => score * x,
        }
    }
}

/// An adjustment as written in TOML: the condition's keys and one operation key.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AdjustmentSpec {
    memory_type: Option<String>,
    min_age_days: Option<f64>,
    max_age_days: Option<f64>,
    min_salience: Option<f64>,
    max_salience: Option<f64>,
    entity: Option<bool>,
    #[serde(default)]
    all_of: Vec<Condition>,
    add: Option<f64>,
    subtract: Option<f64>,
    multiply: Option<f64>,
}

fn adjustments_from_table<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Vec<Adjustment>, D::Error> {
    use serde::de::Error as _;
    let table = toml::Table::deserialize(deserializer)?;
    let mut out = Vec::with_capacity(table.len());
    for (name, value) in table {
        let spec: AdjustmentSpec = value
            .try_into()
            .map_err(|e| D::Error::custom(format!("adjustment {name:?}: {e}")))?;
        let operation = match (spec.add, spec.subtract, spec.multiply) {
            (Some(x), None, None) => Operation::Add(x),
            (None, Some(x), None) => Operation::Subtract(x),
            (None, None, Some(x)) => Operation::Multiply(x),
            _ => {
                return Err(D::Error::custom(format!(
                    "adjustment {name:?}: give exactly one of add, subtract, multiply"
                )))
            }
        };
        out.push(Adjustment {
            name,
            condition: Condition {
                memory_type: spec.memory_type,
                min_age_days: spec.min_age_days,
                max_age_days: spec.max_age_days,
                min_salience: spec.min_salience,
                max_salience: spec.max_salience,
                entity: spec.entity,
                all_of: spec.all_of,
            },
            operation,
        });
    }
    Ok(out)
}

/// The numbers of SPEC §5.2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct RecencySettings {
    /// recency = 0.5^(age / halfLifeDays) (30).
    pub half_life_days: f64,
    /// The weight of recency in the score (0.3).
    pub weight: f64,
    /// Added for a pinned record (0.5).
    pub pin_bonus: f64,
    /// Subtracted from a superseded record (10).
    pub superseded_penalty: f64,
}

impl Default for RecencySettings {
    fn default() -> Self {
        RecencySettings {
            half_life_days: 30.0,
            weight: 0.3,
            pin_bonus: 0.5,
            superseded_penalty: 10.0,
        }
    }
}

/// The formula of the `bm25f` profile (SPEC §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bm25fVariant {
    /// The saturation adapts to the collection: [`Bm25fSettings::saturation`] times its
    /// average weighted record length (the default).
    #[default]
    Adaptive,
    /// SPEC §5.3's formula exactly: the saturation is [`Bm25fSettings::k1`].
    Classic,
}

/// The numbers of SPEC §5.3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Bm25fSettings {
    /// `adaptive` (default) or `classic`.
    pub variant: Bm25fVariant,
    /// `classic`: term-frequency saturation (1.2).
    pub k1: f64,
    /// `adaptive`: the saturation as a fraction of the collection's average weighted record
    /// length `Σ_g weight[g] × avglen(g)` (0.009).
    pub saturation: f64,
    /// Length normalization (0.75).
    pub b: f64,
    /// `adaptive`: the weight of an adjacent query word pair found as adjacent words of the
    /// record, times the mean idf of its two words.
    pub proximity: f64,
}

impl Default for Bm25fSettings {
    fn default() -> Self {
        Bm25fSettings {
            variant: Bm25fVariant::Adaptive,
            k1: 1.2,
            saturation: 0.009,
            b: 0.75,
            proximity: 0.2,
        }
    }
}

impl Bm25fSettings {
    /// The saturation constant `k` of `w / (k + w)` for a collection with these average group
    /// lengths: `k1` in the classic variant; in the adaptive one `saturation × Σ_g weight[g] ×
    /// avglen(g)`, the weighted length of an average record scaled down, so a term saturates
    /// at the same fraction of an average record's text in a corpus of abstracts as in one of
    /// short notes.
    pub fn saturation_constant(&self, avglen: &[f64; crate::schema::GROUP_COUNT]) -> f64 {
        match self.variant {
            Bm25fVariant::Classic => self.k1,
            Bm25fVariant::Adaptive => {
                let weighted: f64 = crate::schema::FieldGroup::ALL
                    .iter()
                    .map(|&g| f64::from(g.weight()) * avglen[g as usize])
                    .sum();
                self.saturation * weighted
            }
        }
    }
}

/// The numbers of SPEC §6.2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct MmrSettings {
    /// Characters of normalized content compared (100).
    pub prefix_chars: usize,
    /// Subtracted from a near duplicate in `decay` (0.1).
    pub decay_penalty: f64,
    /// Times |score|, subtracted from a near duplicate in the other profiles (0.1).
    pub relative_penalty: f64,
}

impl Default for MmrSettings {
    fn default() -> Self {
        MmrSettings {
            prefix_chars: 100,
            decay_penalty: 0.1,
            relative_penalty: 0.1,
        }
    }
}

/// The caps of SPEC §5.4.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct EntitySettings {
    /// Capitalized query words kept (8).
    pub max_capitalized: usize,
    /// Lookup candidates kept, words and CJK substrings together (64).
    pub max_lookup: usize,
    /// The longest CJK substring tried (8).
    pub max_substring_chars: usize,
}

impl Default for EntitySettings {
    fn default() -> Self {
        EntitySettings {
            max_capitalized: 8,
            max_lookup: 64,
            max_substring_chars: 8,
        }
    }
}

/// The numbers of federated search (`--index A --index B`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct FederationSettings {
    /// The reciprocal rank fusion constant: Σ 1 / (k + rank) (60).
    pub rrf_k: f64,
    /// Fused scores map to `floor + (ceiling − floor) × fused / best`; those below
    /// `floor × best` are dropped (0.30).
    pub floor: f64,
    /// The mapped score of the best result (0.82).
    pub ceiling: f64,
}

impl Default for FederationSettings {
    fn default() -> Self {
        FederationSettings {
            rrf_k: 60.0,
            floor: 0.30,
            ceiling: 0.82,
        }
    }
}

impl Settings {
    /// Parses settings from TOML text; `origin` names the file in error messages.
    pub fn from_toml(text: &str, origin: &str) -> Result<Settings> {
        let mut settings: Settings = toml::from_str(text).map_err(|e| {
            Error::query(
                ErrorCode::InvalidOption,
                format!("{origin}: invalid configuration: {}", e.message()),
            )
        })?;
        for adjustment in &mut settings.decay.adjustments {
            adjustment.condition.normalize();
        }
        settings.validate().map_err(|problem| {
            Error::query(
                ErrorCode::InvalidOption,
                format!("{origin}: invalid configuration: {problem}"),
            )
        })?;
        Ok(settings)
    }

    /// Reads and parses a TOML file.
    pub fn load(path: &Path) -> Result<Settings> {
        let text =
            crate::format::fsio::read_user_file_text(path, MAX_CONFIG_BYTES).map_err(|e| {
                Error::query(
                    ErrorCode::InvalidOption,
                    format!("--config {}: cannot read it: {e}", path.display()),
                )
            })?;
        Settings::from_toml(&text, &path.display().to_string())
    }

    fn validate(&self) -> std::result::Result<(), String> {
        let d = &self.decay;
        let mut numbers = vec![
            ("decay.relevanceFloor", d.relevance_floor),
            ("decay.relevanceSpan", d.relevance_span),
            ("decay.relevanceSaturation", d.relevance_saturation),
            ("decay.decayFactorCap", d.decay_factor_cap),
            ("decay.temporalWeight", d.temporal_weight),
            ("decay.salienceWeight", d.salience_weight),
            ("decay.posteriorWeight", d.posterior_weight),
            ("decay.posteriorMin", d.posterior_min),
            ("decay.posteriorMax", d.posterior_max),
            ("recency.halfLifeDays", self.recency.half_life_days),
            ("recency.weight", self.recency.weight),
            ("recency.pinBonus", self.recency.pin_bonus),
            ("recency.supersededPenalty", self.recency.superseded_penalty),
            ("bm25f.k1", self.bm25f.k1),
            ("bm25f.saturation", self.bm25f.saturation),
            ("bm25f.b", self.bm25f.b),
            ("bm25f.proximity", self.bm25f.proximity),
            ("mmr.decayPenalty", self.mmr.decay_penalty),
            ("mmr.relativePenalty", self.mmr.relative_penalty),
            ("federation.rrfK", self.federation.rrf_k),
            ("federation.floor", self.federation.floor),
            ("federation.ceiling", self.federation.ceiling),
        ];
        for a in &d.adjustments {
            let (Operation::Add(x) | Operation::Subtract(x) | Operation::Multiply(x)) = a.operation;
            numbers.push(("decay.adjustments operation", x));
            numbers.extend(a.condition.numbers());
        }
        if let Some((key, value)) = numbers.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!("{key} = {value} is not a finite number"));
        }
        let checks = [
            (
                (1..=500).contains(&d.candidates),
                "decay.candidates must be in 1..=500",
            ),
            (
                d.relevance_saturation > 0.0,
                "decay.relevanceSaturation must be > 0",
            ),
            (
                d.posterior_min <= d.posterior_max,
                "decay.posteriorMin must not exceed decay.posteriorMax",
            ),
            (
                self.recency.half_life_days > 0.0,
                "recency.halfLifeDays must be > 0",
            ),
            (self.bm25f.k1 >= 0.0, "bm25f.k1 must be ≥ 0"),
            (self.bm25f.saturation >= 0.0, "bm25f.saturation must be ≥ 0"),
            (self.bm25f.proximity >= 0.0, "bm25f.proximity must be ≥ 0"),
            (
                (0.0..=1.0).contains(&self.bm25f.b),
                "bm25f.b must be in [0, 1]",
            ),
            (self.mmr.prefix_chars >= 1, "mmr.prefixChars must be ≥ 1"),
            (
                self.entities.max_substring_chars >= 2,
                "entities.maxSubstringChars must be ≥ 2",
            ),
            (self.federation.rrf_k >= 0.0, "federation.rrfK must be ≥ 0"),
        ];
        match checks.iter().find(|(ok, _)| !ok) {
            Some((_, problem)) => Err(problem.to_string()),
            None => Ok(()),
        }
    }

    /// The dotted keys whose value differs from the default, in a stable order.
    pub fn changed_keys(&self) -> Vec<String> {
        let ours = serde_json::to_value(self).expect("settings serialize");
        let default = serde_json::to_value(Settings::default()).expect("settings serialize");
        let mut out = Vec::new();
        diff("", &ours, &default, &mut out);
        out
    }

    /// A canonical text of every setting, for the fingerprint.
    pub fn canonical(&self) -> String {
        serde_json::to_string(self).expect("settings serialize")
    }
}

fn diff(prefix: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    match (a, b) {
        (serde_json::Value::Object(x), serde_json::Value::Object(y)) => {
            for (key, value) in x {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                match y.get(key) {
                    Some(other) => diff(&path, value, other, out),
                    None => out.push(path),
                }
            }
        }
        _ if a != b => out.push(prefix.to_string()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_the_spec_defaults() {
        let settings = Settings::from_toml("", "t.toml").unwrap();
        assert_eq!(settings, Settings::default());
        assert!(settings.changed_keys().is_empty());
        let names: Vec<&str> = settings
            .decay
            .adjustments
            .iter()
            .map(|a| a.name.as_str())
            .collect();
        assert_eq!(names, ["recentEpisodic", "staleSemantic", "entity"]);
    }

    #[test]
    fn the_documented_defaults_parse_to_the_defaults() {
        let doc = include_str!("settings.rs");
        let toml_text: String = doc
            .lines()
            .skip_while(|l| !l.starts_with("//! ```toml"))
            .skip(1)
            .take_while(|l| !l.starts_with("//! ```"))
            .map(|l| l.trim_start_matches("//!").trim_start())
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(toml_text.contains("[decay]"));
        assert_eq!(
            Settings::from_toml(&toml_text, "doc").unwrap(),
            Settings::default()
        );
    }

    #[test]
    fn adjustments_keep_file_order_and_replace_the_defaults() {
        let text = r#"
            [decay.adjustments.zeta]
            allOf = [{ memoryType = " Semantic " }, { minSalience = 0.5 }]
            multiply = 2.0
            [decay.adjustments.alpha]
            entity = false
            subtract = 0.1
        "#;
        let settings = Settings::from_toml(text, "t.toml").unwrap();
        let a = &settings.decay.adjustments;
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].name, "zeta");
        assert_eq!(
            a[0].condition.all_of[0].memory_type.as_deref(),
            Some("semantic")
        );
        assert_eq!(a[0].operation, Operation::Multiply(2.0));
        assert_eq!(a[1].name, "alpha");
        assert_eq!(a[1].condition.entity, Some(false));
        assert_eq!(settings.changed_keys(), ["decay.adjustments"]);
    }

    #[test]
    fn bad_files_are_invalid_option_naming_the_file_and_key() {
        let cases = [
            ("[decay]\nbogus = 1", "bogus"),
            ("[decay]\ncandidates = 0", "decay.candidates"),
            ("[bm25f]\nb = 2.0", "bm25f.b"),
            ("[recency]\nhalfLifeDays = 0.0", "recency.halfLifeDays"),
            (
                "[decay.adjustments.x]\nadd = 1.0\nmultiply = 2.0",
                "exactly one",
            ),
            ("[decay.adjustments.x]\nmemoryType = \"a\"", "exactly one"),
            ("[decay.adjustments.x]\nadd = 1.0\nsoon = true", "soon"),
            ("[decay.adjustments.x]\nadd = nan", "finite"),
            ("not toml at all", "t.toml"),
        ];
        for (text, mention) in cases {
            let err = Settings::from_toml(text, "t.toml").unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidOption, "{text}");
            let message = err.to_string();
            assert!(message.contains("t.toml"), "{message}");
            assert!(message.contains(mention), "{text}: {message}");
        }
    }

    #[test]
    fn changed_keys_name_each_difference() {
        let settings =
            Settings::from_toml("[recency]\nweight = 0.5\n[bm25f]\nk1 = 0.9", "t").unwrap();
        assert_eq!(settings.changed_keys(), ["recency.weight", "bm25f.k1"]);
        assert_ne!(settings.canonical(), Settings::default().canonical());
    }
}
