//! How to code a word missing from the model: whole (spelled), or in pieces — two words with an
//! empty separator between them, or words around a one-byte separator of a letter or digit
//! (glue) — whichever costs the fewest bits. The encoder plans with the model's codes, training
//! with its estimates of them.

use super::tokens::hash_at;

/// The costs, in bits, of the ways of coding a word missing from the model.
pub(super) struct Costs {
    /// Per byte, its code length spelling a word.
    pub(super) spelled: [f32; 256],
    /// The code lengths of the word escape and of the end mark.
    pub(super) escape: f32,
    /// The code length of an empty separator.
    pub(super) empty: f32,
    /// Per byte, the code length of a one-byte separator of it (glue).
    pub(super) glue: [f32; 256],
}

/// The longest word [`plan`] tries to split.
pub(super) const MAX_SPLIT: usize = 32;

/// How to code a word missing from the model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Plan {
    /// Spelled.
    Whole,
    /// Its bytes before and from the cut, an empty separator between them.
    Cut(usize),
    /// Its bytes before the cut (if any), the byte at it as a separator (glue), then the rest
    /// (if any).
    Glue(usize),
}

/// A piece of a word missing from the model, as [`Plan`] cuts it.
pub(super) enum Piece<'a> {
    Word(&'a [u8]),
    Empty,
    Glue(u8),
}

/// Calls `visit` with the pieces of `word` cut by `plan`.
pub(super) fn for_each_piece<'w>(word: &'w [u8], plan: Plan, mut visit: impl FnMut(Piece<'w>)) {
    match plan {
        Plan::Whole => visit(Piece::Word(word)),
        Plan::Cut(at) => {
            visit(Piece::Word(&word[..at]));
            visit(Piece::Empty);
            visit(Piece::Word(&word[at..]));
        }
        Plan::Glue(at) => {
            if at > 0 {
                visit(Piece::Word(&word[..at]));
            }
            visit(Piece::Glue(word[at]));
            if at + 1 < word.len() {
                visit(Piece::Word(&word[at + 1..]));
            }
        }
    }
}

/// What [`plan`] asks of a model.
pub(super) trait Lookup {
    /// The code length of word `token`, of hash `hash` ([`token_hash`]), if the model holds
    /// it.
    fn bits(&self, token: &[u8], hash: u64) -> Option<f32>;

    /// Whether the model may hold a token of `len` bytes of hash `hash`, and a load of what
    /// [`Lookup::bits`] would read.
    fn touch(&self, _hash: u64, _len: usize) -> (bool, u8) {
        (true, 0)
    }
}

/// The cheapest way of coding the word missing from the model of the `n` bytes at `start` of
/// `buf` (which holds [`PAD`] more): whole, cut in two words with an empty separator between
/// them, or around a byte as a separator (glue), each word a token of the model or spelled.
/// `spaced`: whether an uncoded space precedes and follows the word, so that it may not start
/// or end with a separator.
pub(super) fn plan(
    buf: &[u8],
    start: usize,
    n: usize,
    spaced: [bool; 2],
    costs: &Costs,
    known: &impl Lookup,
) -> Plan {
    if !(1..=MAX_SPLIT).contains(&n) {
        return Plan::Whole;
    }
    let word = &buf[start..start + n];
    // Per prefix, its spelling's code length.
    let mut spelled = [0f32; MAX_SPLIT + 1];
    for (i, &b) in word.iter().enumerate() {
        spelled[i + 1] = spelled[i] + costs.spelled[b as usize];
    }
    let hash = |from: usize, to: usize| hash_at(buf, start + from, to - from);
    // The hashes of the prefixes and suffixes first, and a touch of what their lookups read,
    // by loads the processor overlaps: a large model's map does not fit the caches. A hash
    // the model surely lacks is 0.
    let mut prefix_hash = [0u64; MAX_SPLIT + 1];
    let mut suffix_hash = [0u64; MAX_SPLIT + 1];
    let mut touched = 0;
    for i in 1..n {
        for (hashes, start, end) in [(&mut prefix_hash, 0, i), (&mut suffix_hash, i, n)] {
            let hash = hash(start, end);
            let (may_hold, touch) = known.touch(hash, end - start);
            hashes[i] = if may_hold { hash } else { 0 };
            touched ^= touch;
        }
    }
    std::hint::black_box(touched);
    let piece = |start: usize, end: usize, hash: u64| {
        let token = &word[start..end];
        let bits = match token {
            [_] => known.bits(token, 0),
            _ if hash == 0 => None,
            _ => known.bits(token, hash),
        };
        bits.unwrap_or_else(|| costs.escape + spelled[end] - spelled[start])
    };
    let mut best = (costs.escape + spelled[n], Plan::Whole);
    let mut prefix = [0f32; MAX_SPLIT + 1];
    let mut suffix = [0f32; MAX_SPLIT + 1];
    for i in 1..n {
        prefix[i] = piece(0, i, prefix_hash[i]);
        suffix[i] = piece(i, n, suffix_hash[i]);
    }
    for i in 0..n {
        if i > 0 {
            let cut = prefix[i] + costs.empty + suffix[i];
            if cut < best.0 {
                best = (cut, Plan::Cut(i));
            }
        }
        if (i > 0 || !spaced[0]) && (i + 1 < n || !spaced[1]) {
            let glue = prefix[i] + costs.glue[word[i] as usize] + suffix[i + 1];
            if glue < best.0 {
                best = (glue, Plan::Glue(i));
            }
        }
    }
    best.1
}
