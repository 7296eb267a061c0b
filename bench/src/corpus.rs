//! A deterministic, seeded generator of experience records and query workloads with natural
//! word statistics: a Zipf-like vocabulary of pronounceable words, 1–2 KB of text per record,
//! varied tags and project contexts, and 1–12-token queries mixing common and rare words.
//!
//! The same seed gives the same bytes on every machine.

use std::io::{self, Write};

/// SplitMix64: small, fast, and good enough for workloads.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// A float in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// An RFC 3339 creation time on one of `days` days from 2024-01-01 (months of 28 days).
    pub fn created_at(&mut self, days: usize) -> String {
        let day = self.below(days);
        let (year, rest) = (2024 + day / 365, day % 365);
        format!(
            "{year}-{:02}-{:02}T{:02}:{:02}:00Z",
            1 + rest / 31 % 12,
            1 + rest % 28,
            self.below(24),
            self.below(60)
        )
    }
}

/// A vocabulary whose word ranks follow a Zipf law (exponent ~1.07, as in English text).
pub struct Vocabulary {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

const ONSETS: &[&str] = &[
    "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br",
    "cl", "dr", "fl", "gr", "pl", "pr", "sk", "sl", "sp", "st", "tr", "ch", "sh", "th",
];
const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"];
const CODAS: &[&str] = &[
    "", "", "n", "r", "s", "t", "l", "x", "ck", "nd", "rt", "st", "ng",
];

impl Vocabulary {
    /// `size` distinct words, most frequent first.
    pub fn new(size: usize, rng: &mut Rng) -> Vocabulary {
        let mut seen = std::collections::HashSet::new();
        let mut words = Vec::with_capacity(size);
        while words.len() < size {
            // Frequent words are short, rare words long, as in natural language.
            let rank = words.len();
            let syllables = match rank {
                0..=99 => 1,
                100..=2_999 => rng.between(1, 2),
                3_000..=29_999 => rng.between(2, 3),
                _ => rng.between(2, 4),
            };
            let mut word = String::new();
            for _ in 0..syllables {
                word.push_str(ONSETS[rng.below(ONSETS.len())]);
                word.push_str(VOWELS[rng.below(VOWELS.len())]);
                word.push_str(CODAS[rng.below(CODAS.len())]);
            }
            if word.len() >= 2 && seen.insert(word.clone()) {
                words.push(word);
            }
        }
        let mut cumulative = Vec::with_capacity(size);
        let mut total = 0.0;
        for rank in 0..size {
            total += 1.0 / ((rank + 1) as f64).powf(1.07);
            cumulative.push(total);
        }
        Vocabulary { words, cumulative }
    }

    /// A word drawn by its Zipf weight.
    pub fn sample(&self, rng: &mut Rng) -> &str {
        let target = rng.unit() * self.cumulative[self.cumulative.len() - 1];
        let i = self.cumulative.partition_point(|&c| c < target);
        &self.words[i.min(self.words.len() - 1)]
    }

    /// A word from the rare tail (ranks in the last 90%).
    pub fn rare(&self, rng: &mut Rng) -> &str {
        let start = self.words.len() / 10;
        &self.words[start + rng.below(self.words.len() - start)]
    }

    /// The word of rank `rank`.
    pub fn word(&self, rank: usize) -> &str {
        &self.words[rank]
    }
}

/// Generates records and queries.
pub struct Generator {
    rng: Rng,
    vocabulary: Vocabulary,
    tags: Vec<String>,
    contexts: Vec<String>,
}

impl Generator {
    /// A generator for `seed` with a 200,000-word vocabulary.
    pub fn new(seed: u64) -> Generator {
        let mut rng = Rng::new(seed);
        let vocabulary = Vocabulary::new(200_000, &mut rng);
        let tags = (0..600)
            .map(|i| vocabulary.word(200 + i * 7).to_string())
            .collect();
        let contexts = (0..2_000)
            .map(|_| {
                let n = rng.between(3, 7);
                (0..n)
                    .map(|_| vocabulary.sample(&mut rng).to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        Generator {
            rng,
            vocabulary,
            tags,
            contexts,
        }
    }

    fn sentence(&mut self, lo: usize, hi: usize) -> String {
        let n = self.rng.between(lo, hi);
        let mut s = String::with_capacity(n * 7);
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(self.vocabulary.sample(&mut self.rng));
        }
        s
    }

    fn list(&mut self, lo: usize, hi: usize, words: (usize, usize)) -> Vec<String> {
        let n = self.rng.between(lo, hi);
        (0..n).map(|_| self.sentence(words.0, words.1)).collect()
    }

    /// Record number `i` as a JSON object.
    pub fn record(&mut self, i: usize) -> serde_json::Value {
        let tag_count = self.rng.between(2, 5);
        let tags: Vec<String> = (0..tag_count)
            .map(|_| {
                // Zipf over tags too: a few tags are very common.
                let r = (self.rng.unit().powi(3) * self.tags.len() as f64) as usize;
                self.tags[r.min(self.tags.len() - 1)].clone()
            })
            .collect();
        let context = self.contexts[self.rng.below(self.contexts.len())].clone();
        let created = self.rng.created_at(1_000);
        serde_json::json!({
            "id": format!("syn-{i:08}"),
            "title": self.sentence(5, 11),
            "task": self.sentence(12, 28),
            "problems": self.list(1, 3, (8, 22)),
            "solution": self.sentence(25, 55),
            "whyItWorked": self.sentence(12, 28),
            "failedAttempts": self.list(0, 2, (8, 18)),
            "warnings": self.list(0, 1, (6, 14)),
            "tags": tags,
            "projectContext": context,
            "applicability": self.sentence(6, 14),
            "createdAt": created,
            "salience": (self.rng.below(100) as f64) / 100.0,
            "feedback": {"success": self.rng.below(4), "failure": self.rng.below(2)},
        })
    }

    /// Query number `i`: 1–12 tokens, mixing common words with rarer ones.
    pub fn query(&mut self, i: usize) -> serde_json::Value {
        let n = [1, 1, 2, 2, 2, 3, 3, 4, 5, 6, 8, 12][self.rng.below(12)];
        let words: Vec<String> = (0..n)
            .map(|_| {
                if self.rng.below(3) == 0 {
                    self.vocabulary.rare(&mut self.rng).to_string()
                } else {
                    self.vocabulary.sample(&mut self.rng).to_string()
                }
            })
            .collect();
        serde_json::json!({"id": format!("q{i:05}"), "query": words.join(" ")})
    }

    /// Writes `records` records as JSON Lines.
    pub fn write_records(&mut self, records: usize, out: &mut dyn Write) -> io::Result<()> {
        for i in 0..records {
            writeln!(out, "{}", self.record(i))?;
        }
        Ok(())
    }

    /// Writes `queries` queries as JSON Lines (`{"id", "query"}`).
    pub fn write_queries(&mut self, queries: usize, out: &mut dyn Write) -> io::Result<()> {
        for i in 0..queries {
            writeln!(out, "{}", self.query(i))?;
        }
        Ok(())
    }
}
