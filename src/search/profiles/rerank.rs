//! `--rerank name=weight,…` (SPEC §5.5): the score after the profile is replaced by
//! `Σ w × feature / Σ positive w` over the known features.
//!
//! ```
//! use reliora::internals::search::profiles::rerank::{Features, RerankWeights};
//!
//! let weights = RerankWeights::parse("relevance=3, temporal=1, colour=9").unwrap();
//! let features = Features { relevance: 0.8, salience: 0.2, temporal: 0.4, text_match: 1.0,
//!     vector_match: 0.0 };
//! assert_eq!(weights.score(&features), (3.0 * 0.8 + 1.0 * 0.4) / 4.0);
//! ```

/// The features `--rerank` can weigh.
pub const FEATURES: [&str; 5] = [
    "relevance",
    "salience",
    "temporal",
    "textMatch",
    "vectorMatch",
];

/// The feature values of one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Features {
    /// `rel` of SPEC §5.1.
    pub relevance: f64,
    /// salience × temporal.
    pub salience: f64,
    /// `temporal` of SPEC §5.1.
    pub temporal: f64,
    /// 1 when the standard relevance is positive.
    pub text_match: f64,
    /// Always 0: there is no vector retrieval.
    pub vector_match: f64,
}

impl Features {
    /// The value of the feature named `name`, if it is one of [`FEATURES`].
    pub fn get(&self, name: &str) -> Option<f64> {
        match name {
            "relevance" => Some(self.relevance),
            "salience" => Some(self.salience),
            "temporal" => Some(self.temporal),
            "textMatch" => Some(self.text_match),
            "vectorMatch" => Some(self.vector_match),
            _ => None,
        }
    }

    /// The features by name, in [`FEATURES`] order.
    pub fn named(&self) -> Vec<(&'static str, f64)> {
        FEATURES
            .iter()
            .map(|&name| (name, self.get(name).unwrap_or(0.0)))
            .collect()
    }
}

/// The parsed weights of `--rerank`, in the order given (a repeated name keeps its last weight).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RerankWeights {
    weights: Vec<(String, f64)>,
}

impl RerankWeights {
    /// Parses `name=weight,name=weight,…`. Whitespace around names and weights is ignored;
    /// weights must be finite numbers. Unknown names are kept (and ignored when scoring).
    pub fn parse(text: &str) -> std::result::Result<RerankWeights, String> {
        let mut weights: Vec<(String, f64)> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, weight) = item
                .split_once('=')
                .ok_or_else(|| format!("{item:?} is not name=weight"))?;
            let name = name.trim();
            let weight: f64 = weight
                .trim()
                .parse()
                .ok()
                .filter(|w: &f64| w.is_finite())
                .ok_or_else(|| format!("{item:?}: the weight is not a finite number"))?;
            if name.is_empty() {
                return Err(format!("{item:?} has no feature name"));
            }
            match weights.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = weight,
                None => weights.push((name.to_string(), weight)),
            }
        }
        Ok(RerankWeights { weights })
    }

    /// The weights as given.
    pub fn weights(&self) -> &[(String, f64)] {
        &self.weights
    }

    /// A canonical text, for the fingerprint.
    pub fn canonical(&self) -> String {
        self.weights
            .iter()
            .map(|(n, w)| format!("{n}={}", w.to_bits()))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `Σ w × feature / Σ positive w` over the known features; 0 when no known weight is
    /// positive.
    pub fn score(&self, features: &Features) -> f64 {
        let mut numerator = 0.0;
        let mut positive = 0.0;
        for (name, weight) in &self.weights {
            if let Some(value) = features.get(name) {
                numerator += weight * value;
                if *weight > 0.0 {
                    positive += weight;
                }
            }
        }
        if positive > 0.0 {
            numerator / positive
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: Features = Features {
        relevance: 0.8,
        salience: 0.3,
        temporal: 0.5,
        text_match: 1.0,
        vector_match: 0.0,
    };

    #[test]
    fn rerank_table() {
        let cases = [
            ("relevance=1", 0.8),
            ("relevance=2,temporal=2", (1.6 + 1.0) / 4.0),
            ("relevance=1,unknown=5", 0.8), // unknown names are ignored
            ("relevance=1,temporal=0", 0.8), // zero weights add nothing
            ("relevance=1,salience=-1", (0.8 - 0.3) / 1.0), // negatives count above only
            ("salience=-1", 0.0),           // no positive known weight
            ("unknown=3", 0.0),
            ("", 0.0),
            ("textMatch=1,vectorMatch=1", 0.5),
            ("relevance=1,relevance=3", 0.8), // the last weight wins
            (" relevance = 2 , salience = 2 ", (1.6 + 0.6) / 4.0),
        ];
        for (text, expected) in cases {
            let weights = RerankWeights::parse(text).unwrap();
            assert!(
                (weights.score(&F) - expected).abs() < 1e-12,
                "{text}: {}",
                weights.score(&F)
            );
        }
    }

    #[test]
    fn malformed_weights_are_rejected() {
        for text in [
            "relevance",
            "relevance=x",
            "=1",
            "relevance=inf",
            "relevance=NaN",
        ] {
            assert!(RerankWeights::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn features_map_names_every_feature() {
        let keys: Vec<&str> = F.named().into_iter().map(|(name, _)| name).collect();
        assert_eq!(keys, FEATURES);
    }
}
