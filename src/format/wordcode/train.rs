//! Training a model (the store's blob 0, laid out as the module docs' *Model* says) on a
//! build's records.
//!
//! A model is trained on a spread of the records of at most 48 MiB (the tokens are counted in
//! parallel). A token joins the alphabet when the bits it saves over being spelled, in records
//! as many times the sample as the records are, pay for its bytes in the model. The tokens the
//! records will hold beyond the alphabet are those of the sample left out, and as many new
//! ones as the sample holds tokens seen once (Good and Turing's estimate), its hapaxes standing
//! for them: they weigh the escapes, the spelling codes, and the tokens, empty separators and
//! glue of the pieces that they are cut into. The model depends on the records alone.
//!
//! [`train`] runs these steps: [`count_tokens`], [`choose_tokens`], [`estimate_costs`],
//! [`tally_missing`], [`weigh_alphabet`], [`write_model`].

use std::collections::HashMap;
use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use rayon::prelude::*;

use super::plan::{for_each_piece, plan, Costs, Lookup, Piece, Plan, MAX_SPLIT};
use super::tokens::{for_each_token, kind_of, PAD};
use super::{
    BLOCK, END, ESCAPE, FORMAT, MAX_TEXT, MAX_TOKENS, MAX_TOKEN_LEN, SEPARATOR, SPELLING, WORD,
    WORD_FLAG,
};
use crate::format::bytes::put_varint;
use crate::format::huffman::{self, MAX_LEN};

/// Training: below this many bytes of records no model is trained (it would not pay).
const MIN_TRAINING_BYTES: usize = 16 << 10;
/// Training reads a spread of records of about this many bytes.
const SAMPLE_BYTES: usize = 48 << 20;
/// Training weighs the tokens of the sample in sixteenths.
const ONE: u64 = 16;

/// Trains a model on a spread of `records` (serialized: the store's blob 0), or none (empty)
/// when they are too few for one to pay.
pub fn train(records: &[Vec<u8>]) -> Vec<u8> {
    let total: usize = records.iter().map(Vec::len).sum();
    if total < MIN_TRAINING_BYTES {
        return Vec::new();
    }
    let step = total.div_ceil(SAMPLE_BYTES).max(1);
    let sample: Vec<&[u8]> = records.iter().step_by(step).map(Vec::as_slice).collect();
    // How many times the sample the records are: a token seen once in the sample is expected
    // this many times in the store.
    let scale = records.len() as f64 / sample.len() as f64;
    let tokens = count_tokens(&sample);
    let all: u64 = tokens.iter().map(|t| t.1).sum::<u64>().max(1);
    let Selection {
        mut chosen,
        chosen_order,
        missing,
    } = choose_tokens(&tokens, all, scale);
    let (costs, all_weight) = estimate_costs(&missing, all);
    let known = Chosen {
        weights: &chosen,
        all_weight,
    };
    let tally = tally_missing(&missing, &known, &costs);
    let (alphabet, escapes, spelling) = weigh_alphabet(chosen_order, &mut chosen, tally);
    write_model(&alphabet, escapes, &spelling)
}

/// The distinct tokens of `sample` with their counts: most frequent first, then by hash, for an
/// order that depends on the tokens alone (the map's does not), cheaply.
fn count_tokens<'r>(sample: &[&'r [u8]]) -> Vec<(&'r [u8], u64)> {
    let counts = sample
        .par_chunks(
            sample
                .len()
                .div_ceil(rayon::current_num_threads() * 4)
                .max(1),
        )
        .map(|records| {
            let mut counts: HashMap<&[u8], u64, FixedState> = HashMap::default();
            // Room for about four distinct tokens a record.
            counts.reserve(records.len() * 4);
            for record in records {
                for_each_token(record, |token, _, _| *counts.entry(token).or_default() += 1);
            }
            counts
        })
        .reduce(HashMap::default, |mut a, mut b| {
            if a.len() < b.len() {
                std::mem::swap(&mut a, &mut b);
            }
            for (token, count) in b {
                *a.entry(token).or_default() += count;
            }
            a
        });
    let hasher = FixedState::with_seed(0);
    let mut order: Vec<(std::cmp::Reverse<u64>, u64, &[u8])> = counts
        .into_iter()
        .map(|(token, count)| (std::cmp::Reverse(count), hasher.hash_one(token), token))
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(c, _, t)| (t, c.0)).collect()
}

/// The tokens chosen for the alphabet and those left missing from it.
struct Selection<'t> {
    /// The chosen tokens, weighed (in sixteenths).
    chosen: HashMap<&'t [u8], u64, FixedState>,
    /// The chosen tokens in the order of the counted tokens, for an alphabet in an order that
    /// depends on the tokens alone.
    chosen_order: Vec<&'t [u8]>,
    /// The tokens missing from the model, as the records will hold them, weighed.
    missing: Vec<(&'t [u8], u64)>,
}

/// Chooses the alphabet among `tokens` (of `all` tokens in a sample of records `scale` times
/// smaller than the records).
///
/// A token joins the alphabet when its expected saving (spelling it, escape included, against
/// its own code) pays for its bytes in the model: its span, its space and its own, while the
/// text stays within its bound (with room for the one-byte tokens added later). The tokens
/// missing from the model, as the records will hold them, are those of the sample not chosen,
/// and as many tokens new to the model as the sample holds tokens seen once (Good and Turing's
/// estimate), for which its hapaxes stand — in the part of the records beyond the sample.
fn choose_tokens<'t>(tokens: &[(&'t [u8], u64)], all: u64, scale: f64) -> Selection<'t> {
    const SPELLED_BITS_PER_BYTE: f64 = 5.0;
    const ESCAPE_BITS: f64 = 6.0;
    let code_bits = |count: u64| (all as f64 / count as f64).log2() as f32;
    let novel = ((ONE as f64) * (scale - 1.0) / scale).round() as u64;
    let mut selection = Selection {
        chosen: HashMap::default(),
        chosen_order: Vec::new(),
        missing: Vec::new(),
    };
    let mut text_bytes = 0;
    for &(token, count) in tokens {
        let spelled = ESCAPE_BITS + SPELLED_BITS_PER_BYTE * (token.len() + 1) as f64;
        let saving = count as f64 * scale * (spelled - f64::from(code_bits(count)));
        let cost = 8.0 * (token.len() + 5) as f64;
        if token.len() <= MAX_TOKEN_LEN
            && selection.chosen.len() < MAX_TOKENS - 512
            && text_bytes + token.len() < MAX_TEXT - 1024
            && saving > cost
        {
            text_bytes += token.len() + 1;
            selection.chosen.insert(token, count * ONE);
            selection.chosen_order.push(token);
            if count == 1 && novel > 0 {
                selection.missing.push((token, novel));
            }
        } else {
            selection.missing.push((token, count * ONE));
        }
    }
    selection
}

/// Estimates, from the spelling of the `missing` tokens, what coding a piece of a missing word
/// costs; and the weight of all symbols (`all` tokens in sixteenths, and the escapes), against
/// which a chosen token's code length is estimated.
fn estimate_costs(missing: &[(&[u8], u64)], all: u64) -> (Costs, u64) {
    let mut spelling = [vec![1u64; SPELLING], vec![1u64; SPELLING]];
    let mut escapes = [1u64; 2];
    for &(token, weight) in missing {
        let kind = kind_of(token);
        escapes[kind] += weight;
        for &b in token {
            spelling[kind][b as usize] += weight;
        }
        spelling[kind][END] += weight;
    }
    let bits_of = |counts: &[u64], i: usize| {
        (counts.iter().sum::<u64>() as f64 / counts[i] as f64).log2() as f32
    };
    let all_weight = all * ONE + escapes[0] + escapes[1];
    let code_bits = |weight: u64| (all_weight as f64 / weight as f64).log2() as f32;
    let glue_guess = code_bits(escapes[WORD]) + 2.0;
    let costs = Costs {
        spelled: std::array::from_fn(|b| bits_of(&spelling[WORD], b)),
        escape: code_bits(escapes[WORD]) + bits_of(&spelling[WORD], END),
        // Guesses: about as frequent as spelled words, and glue more so.
        empty: glue_guess + 2.0,
        glue: [glue_guess; 256],
    };
    (costs, all_weight)
}

/// The chosen tokens as [`plan`] sees them: each one's code length estimated from its weight
/// against the weight of all symbols.
struct Chosen<'c> {
    weights: &'c HashMap<&'c [u8], u64, FixedState>,
    all_weight: u64,
}

impl Lookup for Chosen<'_> {
    fn bits(&self, token: &[u8], _: u64) -> Option<f32> {
        self.weights
            .get(token)
            .map(|&weight| (self.all_weight as f64 / weight as f64).log2() as f32)
    }
}

/// Counts what the `missing` tokens will be coded as: the missing words as their pieces
/// ([`plan`] with the `known` tokens and the estimated `costs`), the other missing tokens as
/// their escape and spelling.
fn tally_missing<'t>(missing: &[(&'t [u8], u64)], known: &Chosen<'_>, costs: &Costs) -> Tally<'t> {
    missing
        .par_iter()
        .fold(Tally::default, |mut tally, &(token, weight)| {
            let kind = kind_of(token);
            let plan = match kind {
                WORD if token.len() <= MAX_SPLIT => {
                    let mut buf = [0u8; MAX_SPLIT + PAD];
                    buf[..token.len()].copy_from_slice(token);
                    plan(&buf, 0, token.len(), [false; 2], costs, known)
                }
                _ => Plan::Whole,
            };
            for_each_piece(token, plan, |piece| match piece {
                Piece::Word(piece) if piece != token && known.weights.contains_key(piece) => {
                    tally.pieces.push((piece, weight))
                }
                Piece::Word(piece) => {
                    tally.escapes[kind] += weight;
                    for &b in piece {
                        tally.spelling[kind][b as usize] += weight;
                    }
                    tally.spelling[kind][END] += weight;
                }
                Piece::Empty => tally.empty += weight,
                Piece::Glue(byte) => tally.glue[byte as usize] += weight,
            });
            tally
        })
        .reduce(Tally::default, Tally::merge)
}

/// A token of the alphabet: its bytes, whether it decodes as the other kind than its bytes say
/// (glue: a separator of a letter or digit), and its weight.
type Weighed<'t> = (&'t [u8], bool, u64);

/// The alphabet with the weights of its tokens, from the `chosen` tokens (in `chosen_order`)
/// and what the missing ones add (`tally`): the chosen tokens, the empty separator and glue
/// separators; and the weights of the escapes and of the spelling codes, separators' then
/// words'.
fn weigh_alphabet<'t>(
    chosen_order: Vec<&'t [u8]>,
    chosen: &mut HashMap<&'t [u8], u64, FixedState>,
    tally: Tally<'t>,
) -> (Vec<Weighed<'t>>, [u64; 2], [[u64; SPELLING]; 2]) {
    let Tally {
        pieces,
        glue,
        empty,
        mut escapes,
        mut spelling,
    } = tally;
    for kind in [SEPARATOR, WORD] {
        escapes[kind] += 1;
        for count in &mut spelling[kind] {
            *count += 1;
        }
    }
    for (piece, weight) in pieces {
        *chosen.get_mut(piece).expect("a chosen piece") += weight;
    }
    let mut alphabet: Vec<Weighed<'t>> = chosen_order
        .into_iter()
        .map(|token| (token, false, chosen[token]))
        .collect();
    if empty > 0 {
        alphabet.push((&[], false, empty));
    }
    for (byte, &weight) in glue.iter().enumerate() {
        if weight > 0 {
            alphabet.push((&BYTES[byte..byte + 1], true, weight));
        }
    }
    (alphabet, escapes, spelling)
}

/// Writes the model of the `alphabet` and the weights of the `escapes` and `spelling` codes
/// (separators', words'), as the module docs lay it out: the symbols (the escapes, word then
/// separator, then the tokens) get their code lengths, and the spans follow in canonical
/// order (per code length: the escapes, then the tokens), then the text they point into.
fn write_model(
    alphabet: &[Weighed<'_>],
    escapes: [u64; 2],
    spelling: &[[u64; SPELLING]; 2],
) -> Vec<u8> {
    let mut weights = vec![escapes[WORD], escapes[SEPARATOR]];
    weights.extend(alphabet.iter().map(|t| t.2));
    let lengths = huffman::code_lengths(&weights, MAX_LEN);

    let mut out = vec![FORMAT, lengths[0], lengths[1]];
    let mut by_length: Vec<(u8, &[u8], bool)> = alphabet
        .iter()
        .zip(&lengths[2..])
        .map(|(&(token, odd, _), &len)| (len, token, odd))
        .collect();
    by_length.par_sort_unstable();
    let mut counts = [0u64; MAX_LEN as usize + 1];
    for &(len, _, _) in &by_length {
        counts[len as usize] += 1;
    }
    for &count in &counts[1..] {
        put_varint(count, &mut out);
    }
    for kind in [WORD, SEPARATOR] {
        out.extend_from_slice(&huffman::code_lengths(&spelling[kind], MAX_LEN));
    }
    let mut text = Vec::new();
    let mut tokens = by_length.iter().peekable();
    for len in 1..=MAX_LEN as u8 {
        for (&flag, &escape) in [WORD_FLAG, 0].iter().zip(&lengths[..2]) {
            if escape == len {
                out.extend_from_slice(&(flag | ESCAPE).to_le_bytes());
            }
        }
        while let Some(&(_, token, odd)) = tokens.next_if(|t| t.0 == len) {
            let word = if (kind_of(token) == WORD) != odd {
                WORD_FLAG
            } else {
                0
            };
            text.push(b' ');
            let span = (text.len() as u32) << 8 | word | token.len() as u32;
            text.extend_from_slice(token);
            out.extend_from_slice(&span.to_le_bytes());
        }
    }
    text.extend_from_slice(&[0; BLOCK]);
    out.extend_from_slice(&text);
    out
}

/// What training counts of the missing tokens ([`tally_missing`]).
struct Tally<'t> {
    /// Pieces of words, chosen tokens.
    pieces: Vec<(&'t [u8], u64)>,
    glue: [u64; 256],
    empty: u64,
    escapes: [u64; 2],
    spelling: [[u64; SPELLING]; 2],
}

impl Default for Tally<'_> {
    fn default() -> Self {
        Tally {
            pieces: Vec::new(),
            glue: [0; 256],
            empty: 0,
            escapes: [0; 2],
            spelling: [[0; SPELLING]; 2],
        }
    }
}

impl Tally<'_> {
    fn merge(mut self, other: Self) -> Self {
        self.pieces.extend(other.pieces);
        for (a, b) in self.glue.iter_mut().zip(other.glue) {
            *a += b;
        }
        self.empty += other.empty;
        for kind in [SEPARATOR, WORD] {
            self.escapes[kind] += other.escapes[kind];
            for (a, b) in self.spelling[kind].iter_mut().zip(other.spelling[kind]) {
                *a += b;
            }
        }
        self
    }
}

/// Every byte value, for one-byte tokens.
static BYTES: [u8; 256] = {
    let mut bytes = [0; 256];
    let mut b = 0;
    while b < 256 {
        bytes[b] = b as u8;
        b += 1;
    }
    bytes
};

#[cfg(test)]
mod tests {
    use super::super::tests::corpus;
    use super::*;

    #[test]
    fn training_depends_on_the_records_alone() {
        let records = corpus(3_000);
        let model = train(&records);
        assert!(!model.is_empty());
        assert_eq!(train(&records), model);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        assert_eq!(pool.install(|| train(&records)), model);
    }
}
