//! The encoder's map of the model's tokens (of two bytes or more) to their codes, built once
//! per model and read for every token of every record written with it.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use super::tokens::{load8, token_hash};

/// A code for encoding: `code << 5 | length`; [`NONE`] (0): no code.
pub(super) const NONE: u32 = 0;

/// The longest token an entry of [`CodeMap`] holds (longer ones are looked up apart).
pub(super) const MAP_TOKEN: usize = 24;

/// An entry of [`CodeMap`]: a token and its code (`len` 0: a free entry). Aligned, so that an
/// entry lies in one cache line.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Entry {
    /// The token, then zeros.
    bytes: [u8; MAP_TOKEN],
    len: u8,
    code: u32,
}

/// Tokens of two bytes or more → codes: open addressing, each entry holding its token and
/// code, so that a lookup reads one entry (a large model's map does not fit the caches).
/// Tokens longer than [`MAP_TOKEN`], few, are kept apart.
pub(super) struct CodeMap {
    entries: Vec<Entry>,
    long: HashMap<Vec<u8>, u32, FixedState>,
    mask: usize,
    /// A bit per hash value (modulo its size) of the tokens: a filter small enough for the
    /// caches, for the many lookups of splitting words, most of them failing.
    filter: Vec<u64>,
    filter_mask: usize,
}

impl CodeMap {
    pub(super) fn with_capacity(n: usize) -> CodeMap {
        let size = (n * 2).next_power_of_two().max(16);
        let filter_bits = (n * 16).next_power_of_two().max(64);
        let free = Entry {
            bytes: [0; MAP_TOKEN],
            len: 0,
            code: NONE,
        };
        CodeMap {
            entries: vec![free; size],
            long: HashMap::default(),
            mask: size - 1,
            filter: vec![0; filter_bits / 64],
            filter_mask: filter_bits - 1,
        }
    }

    /// The filter's bit of a hash.
    fn filter_bit(&self, hash: u64) -> (usize, u64) {
        let bit = (hash >> 24) as usize & self.filter_mask;
        (bit / 64, 1 << (bit % 64))
    }

    /// Whether the map may hold a token of hash `hash`: false is sure, true may be wrong.
    pub(super) fn may_hold(&self, hash: u64) -> bool {
        let (word, bit) = self.filter_bit(hash);
        self.filter[word] & bit != 0
    }

    /// Adds `token` (of two bytes or more), unless it is there.
    pub(super) fn insert(&mut self, token: &[u8], code: u32) {
        let hash = token_hash(token);
        let (word, bit) = self.filter_bit(hash);
        self.filter[word] |= bit;
        if token.len() > MAP_TOKEN {
            self.long.entry(token.to_vec()).or_insert(code);
            return;
        }
        if self.get(token, hash) != NONE {
            return;
        }
        let mut at = hash as usize & self.mask;
        while self.entries[at].len != 0 {
            at = (at + 1) & self.mask;
        }
        let entry = &mut self.entries[at];
        entry.bytes[..token.len()].copy_from_slice(token);
        entry.len = token.len() as u8;
        entry.code = code;
    }

    /// Reads the entry where a lookup of `hash` starts.
    #[inline]
    pub(super) fn touch(&self, hash: u64) -> u8 {
        self.entries[hash as usize & self.mask].len
    }

    /// The code of the token of `n` (2 to [`MAP_TOKEN`]) bytes at `start` of `buf` (which
    /// holds [`PAD`] more), of hash `hash`, or [`NONE`]: [`CodeMap::get`] comparing 8 bytes at
    /// a time.
    #[inline]
    pub(super) fn get_at(&self, buf: &[u8], start: usize, n: usize, hash: u64) -> u32 {
        let mut at = hash as usize & self.mask;
        loop {
            let entry = &self.entries[at];
            if entry.len == 0 {
                return NONE;
            }
            if usize::from(entry.len) == n
                && (0..n).step_by(8).all(|i| {
                    let mask = if n - i >= 8 {
                        u64::MAX
                    } else {
                        u64::MAX >> (64 - 8 * (n - i))
                    };
                    load8(buf, start + i) & mask == load8(&entry.bytes, i)
                })
            {
                return entry.code;
            }
            at = (at + 1) & self.mask;
        }
    }

    /// The code of `token` of hash `hash`, or [`NONE`].
    #[inline]
    pub(super) fn get(&self, token: &[u8], hash: u64) -> u32 {
        if token.len() > MAP_TOKEN {
            return self.long.get(token).copied().unwrap_or(NONE);
        }
        let mut at = hash as usize & self.mask;
        loop {
            let entry = &self.entries[at];
            if entry.len == 0 {
                return NONE;
            }
            if usize::from(entry.len) == token.len()
                && entry.bytes.iter().zip(token).all(|(a, b)| a == b)
            {
                return entry.code;
            }
            at = (at + 1) & self.mask;
        }
    }
}
