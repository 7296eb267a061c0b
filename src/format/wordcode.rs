//! The record store's compression: a semi-static, word-based Huffman model, as in the MG system
//! ("Managing Gigabytes", Witten, Moffat and Bell), trained on a sample of a build's records and
//! coding each record on its own.
//!
//! A record (any bytes) is cut into tokens that alternate between *words* (maximal runs of
//! ASCII letters and digits) and *separators* (maximal runs of any other bytes). The model's
//! alphabet holds the sample's most frequent tokens of both kinds and an escape per kind. A
//! token of the alphabet is coded by its Huffman code; any other by its kind's escape followed
//! by its bytes and an end mark, each coded by that kind's byte-level Huffman code (its
//! *spelling*). A single space between two words is not coded at all ("spaceless words", de
//! Moura, Navarro, Ziviani and Baeza-Yates): a word decoded right after a word is preceded by
//! a space. Codes are canonical and at most [`MAX_LEN`] bits (huffman.rs).
//!
//! A word missing from the alphabet may be coded in pieces when that is cheaper ([`plan`]): two
//! words with an empty separator between them, or words around a one-byte separator made of a
//! letter or digit. So a word glued to another by a byte, as bincode's length bytes glue the
//! text of two fields, costs little more than the two words.
//!
//! # Model (the store's blob 0)
//!
//! A model is read in place, from the mapped store: opening one reads its header and checks its
//! spans, and never copies or rebuilds its tokens, so a process that decodes a few records pays
//! little for a model of a few hundred thousand tokens.
//!
//! ```text
//! empty               no model: frames hold records as they are (too little training text)
//! format     u8       2
//! escapes    2 × u8   the code lengths (1..=24) of the word escape and the separator escape
//! counts     24 × varint   the number of tokens of each code length 1..=24
//! spelling   2 × 257 × u8  the code lengths (1..=24) of bytes 0..=255 and of the end mark,
//!                     for words, then for separators
//! spans      u32 LE per symbol, in canonical order: start << 8 | word << 7 | length, the
//!                     token's start in the text, whether it decodes as a word (a separator of
//!                     a letter or digit, or the empty separator, does not), its length (at
//!                     most 64); an escape is word << 7 | 0x7F
//! text                the tokens, each preceded by a space (so that a word after a word is
//!                     copied with its space), then 16 zero bytes
//! ```
//!
//! Canonical order numbers the symbols by code length; within a length, the word escape comes
//! first, then the separator escape, then the tokens (written bytewise; decoding needs only
//! the spans).
//!
//! # Frame (a record)
//!
//! ```text
//! length     varint   the record's length in bytes (at most the caller's limit)
//! bits                no model: the record's bytes. Otherwise the codes of its tokens, until
//!                     the stated length is reached; zero bits to the byte's end
//! ```
//!
//! Decoding checks what it reads and fails (with a problem for the caller to name its file)
//! rather than panic, loop or allocate past the stated length: every code takes at least one
//! bit, the bit stream may not be read past its end, and no token may pass the stated length.
//!
//! # Training
//!
//! A model is trained on a spread of the records of at most 48 MiB (the tokens are counted in
//! parallel). A token joins the alphabet when the bits it saves over being spelled, in records
//! as many times the sample as the records are, pay for its bytes in the model. The tokens the
//! records will hold beyond the alphabet are those of the sample left out, and as many new
//! ones as the sample holds tokens seen once (Good and Turing's estimate), its hapaxes standing
//! for them: they weigh the escapes, the spelling codes, and the tokens, empty separators and
//! glue of the pieces that they are cut into. The model depends on the records alone.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::ops::Deref;

use foldhash::fast::FixedState;
use rayon::prelude::*;

use crate::format::huffman::{self, BitReader, BitWriter, Decoder, MAX_LEN};

/// The model format written.
const FORMAT: u8 = 2;
/// The end mark of a spelled token, after the 256 byte values.
const END: usize = 256;
const SPELLING: usize = 257;
/// The most tokens a model may hold.
const MAX_TOKENS: usize = 1 << 20;
/// The longest token a model may hold.
const MAX_TOKEN_LEN: usize = 64;
/// The most bytes a model's text may hold (which keeps spans in 32 bits).
const MAX_TEXT: usize = 1 << 24;
/// Bits of the decoding tables of tokens and of spelling.
const TOKEN_BITS: u32 = 12;
const SPELLING_BITS: u32 = 10;

/// The kinds of token, indexing escapes and spelling codes.
const SEPARATOR: usize = 0;
const WORD: usize = 1;

/// Which bytes make words: ASCII letters and digits.
static IS_WORD: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    table
};

/// The kind of a token of these bytes, as records are cut.
fn kind_of(token: &[u8]) -> usize {
    match token.first() {
        Some(&b) if IS_WORD[b as usize] => WORD,
        _ => SEPARATOR,
    }
}

/// A symbol's span when decoding: `start << 8 | word << 7 | len`, its token's start in the text
/// and its length; an escape's length is `ESCAPE`.
const ESCAPE: u32 = 0x7F;
const WORD_FLAG: u32 = 0x80;
/// Tokens are copied as blocks of this many bytes, then cut back.
const BLOCK: usize = 16;
/// Symbols decoded before their tokens are copied.
const BATCH: usize = 32;

/// A parsed model: what decoding needs.
pub struct Model {
    /// `None`: no model (records are stored as they are).
    tokens: Option<Tokens>,
}

/// The bytes a model is read from: its blob, mapped or in memory.
type ModelBytes = Box<dyn Deref<Target = [u8]> + Send + Sync>;

/// The model's alphabet, for decoding: read in place from its bytes.
struct Tokens {
    bytes: ModelBytes,
    /// Where the spans (a u32 per symbol, in canonical order) and the text start in `bytes`.
    spans_at: usize,
    text_at: usize,
    /// The number of symbols.
    symbols: usize,
    /// Per code length, the number of symbols of that length.
    counts: [u32; MAX_LEN as usize + 1],
    /// Code lengths of the spelling codes (bytes, then the end mark): separators', words'.
    spelling_lengths: [Vec<u8>; 2],
    decoder: Decoder,
    spelling: [Decoder; 2],
}

/// The span of `symbol` in `spans`.
#[inline(always)]
fn span_of(spans: &[u8], symbol: usize) -> u32 {
    let at = 4 * symbol;
    u32::from_le_bytes(spans[at..at + 4].try_into().expect("4 bytes"))
}

impl Tokens {
    /// The number of symbols.
    fn len(&self) -> usize {
        self.symbols
    }

    /// The spans, a u32 per symbol.
    fn spans(&self) -> &[u8] {
        &self.bytes[self.spans_at..self.text_at]
    }

    /// The text the spans point into.
    fn text(&self) -> &[u8] {
        &self.bytes[self.text_at..]
    }

    /// The token of `symbol` (an escape: none).
    fn token(&self, symbol: usize) -> &[u8] {
        let span = span_of(self.spans(), symbol);
        match span & 0x7F {
            ESCAPE => &[],
            len => {
                let start = (span >> 8) as usize;
                &self.text()[start..start + len as usize]
            }
        }
    }
}

impl Model {
    /// Parses and checks a model (an empty one: no model), which keeps `bytes` and reads its
    /// tokens from them in place. The checks bound every read decoding makes: each span lies
    /// in the text, with room for a block after it.
    pub fn parse(
        bytes: impl Deref<Target = [u8]> + Send + Sync + 'static,
    ) -> Result<Model, String> {
        if bytes.is_empty() {
            return Ok(Model { tokens: None });
        }
        let mut reader = ByteReader {
            bytes: &bytes,
            at: 0,
        };
        let format = reader.u8()?;
        if format != FORMAT {
            return Err(format!("it has format {format}, not {FORMAT}"));
        }
        let escapes = [reader.u8()?, reader.u8()?];
        if escapes.iter().any(|len| !(1..=MAX_LEN as u8).contains(len)) {
            return Err(format!("its escapes have codes of {escapes:?} bits"));
        }
        // Per code length, the number of tokens, then of symbols (escapes too); and where the
        // escapes fall in canonical order.
        let mut counts = [0u32; MAX_LEN as usize + 1];
        let mut total = 0usize;
        for count in &mut counts[1..] {
            let n = reader.varint()?;
            // Each token takes four bytes at least.
            if n > (MAX_TOKENS - total) as u64 || n > (bytes.len() / 4 - total) as u64 {
                return Err(format!(
                    "it states more tokens than it holds ({n} of a length)"
                ));
            }
            *count = n as u32;
            total += n as usize;
        }
        let mut escape_at = [usize::MAX; 2];
        let mut symbols = 0;
        for (len, count) in counts.iter_mut().enumerate().skip(1) {
            let tokens = *count as usize;
            for (slot, &escape) in escapes.iter().enumerate() {
                if usize::from(escape) == len {
                    escape_at[slot] = symbols;
                    symbols += 1;
                    *count += 1;
                }
            }
            symbols += tokens;
        }
        let kraft: u64 = (1..=MAX_LEN)
            .map(|len| u64::from(counts[len as usize]) << (MAX_LEN - len))
            .sum();
        if kraft > 1 << MAX_LEN {
            return Err("its code lengths fit no prefix code".into());
        }
        let mut spelling_lengths = [Vec::new(), Vec::new()];
        for kind in [WORD, SEPARATOR] {
            let lengths = reader.take(SPELLING)?;
            if lengths
                .iter()
                .any(|&len| !(1..=MAX_LEN as u8).contains(&len))
                || !huffman::kraft_ok(lengths.iter().copied())
            {
                return Err("its spelling code lengths fit no prefix code".into());
            }
            spelling_lengths[kind] = lengths.to_vec();
        }
        let spans_at = reader.at;
        let spans = reader.take(4 * symbols)?;
        let text_at = reader.at;
        let text = bytes.len() - text_at;
        if !(BLOCK + 1..=MAX_TEXT).contains(&text) {
            return Err(format!("its text of {text} bytes is out of bounds"));
        }
        // The escapes where canonical order puts them, tokens elsewhere, each in the text with
        // a byte before it and a block after its start.
        for (symbol, span) in spans.chunks_exact(4).enumerate() {
            let span = u32::from_le_bytes(span.try_into().expect("4 bytes"));
            let escape = match escape_at.iter().position(|&at| at == symbol) {
                Some(0) => Some(WORD_FLAG | ESCAPE),
                Some(_) => Some(ESCAPE),
                None => None,
            };
            let (start, len) = ((span >> 8) as usize, (span & 0x7F) as usize);
            let fits = match escape {
                Some(escape) => span == escape,
                None => len <= MAX_TOKEN_LEN && start > 0 && start + len.max(BLOCK) <= text,
            };
            if !fits {
                return Err(format!(
                    "the span of symbol {symbol} ({span:#x}) is out of bounds"
                ));
            }
        }
        let decoder = Decoder::canonical(&counts, TOKEN_BITS);
        let spelling = spelling_lengths
            .each_ref()
            .map(|lengths| Decoder::new(lengths, SPELLING_BITS));
        Ok(Model {
            tokens: Some(Tokens {
                bytes: Box::new(bytes),
                spans_at,
                text_at,
                symbols,
                counts,
                spelling_lengths,
                decoder,
                spelling,
            }),
        })
    }

    /// Decodes a frame of at most `limit` bytes.
    pub fn decode(&self, frame: &[u8], limit: usize) -> Result<Vec<u8>, String> {
        let mut reader = ByteReader {
            bytes: frame,
            at: 0,
        };
        let len = reader.varint()?;
        if len > limit as u64 {
            return Err(format!(
                "it states a length of {len} bytes, more than the {limit}-byte limit"
            ));
        }
        let len = len as usize;
        let rest = &frame[reader.at..];
        let Some(tokens) = &self.tokens else {
            if rest.len() != len {
                return Err(format!(
                    "it holds {} bytes, its header states {len}",
                    rest.len()
                ));
            }
            return Ok(rest.to_vec());
        };
        let (spans, text) = (tokens.spans(), tokens.text());
        let mut out = Vec::with_capacity(len);
        let mut bits = BitReader::new(rest);
        let passed = || format!("its tokens pass its stated length of {len} bytes");
        // 1 after a word: a word then is preceded by a space.
        let mut after_word = 0;
        // The bytes of the tokens decoded.
        let mut total = 0;
        // Symbols are decoded a batch at a time, then their tokens copied, so that the loads of
        // the tokens' text come close together, which the processor overlaps (a large model's
        // text does not fit its caches). The batch holds `from << 8 | n`: the `n` bytes to
        // copy from `from` in the text.
        let mut batch = [0u32; BATCH];
        while total < len {
            let mut decoded = 0;
            let mut escape = None;
            while decoded < BATCH && total < len {
                let symbol = tokens.decoder.decode(&mut bits)?;
                let span = span_of(spans, symbol as usize);
                let word = (span >> 7) & 1;
                let space = after_word & word;
                after_word = word;
                if span & 0x7F == ESCAPE {
                    escape = Some((word as usize, space));
                    break;
                }
                let n = (span & 0x7F) + space;
                total += n as usize;
                batch[decoded] = ((span >> 8) - space) << 8 | n;
                decoded += 1;
            }
            if bits.overrun() {
                return Err("its bit stream ends in the middle of a code".into());
            }
            if total > len {
                return Err(passed());
            }
            for &entry in &batch[..decoded] {
                let from = (entry >> 8) as usize;
                let n = (entry & 0xFF) as usize;
                if n <= BLOCK && len - out.len() >= BLOCK {
                    // Copying a whole block, then cutting back, is cheaper than copying `n`.
                    let block: &[u8; BLOCK] = text[from..from + BLOCK].try_into().expect("a block");
                    let end = out.len() + n;
                    out.extend_from_slice(block);
                    out.truncate(end);
                } else {
                    out.extend_from_slice(&text[from..from + n]);
                }
            }
            if let Some((word, space)) = escape {
                let spelling = &tokens.spelling[word];
                let mut byte = if space == 1 {
                    u32::from(b' ')
                } else {
                    spelling.decode(&mut bits)?
                };
                while byte != END as u32 {
                    if out.len() == len {
                        return Err(passed());
                    }
                    out.push(byte as u8);
                    byte = spelling.decode(&mut bits)?;
                }
                total = out.len();
            }
            if bits.overrun() {
                return Err("its bit stream ends in the middle of a code".into());
            }
        }
        bits.finish()?;
        Ok(out)
    }

    /// What encoding with this model needs: its codes, and a map of its tokens.
    pub fn encoder(&self) -> Encoder {
        let codes = self.tokens.as_ref().map(|tokens| {
            let pack = |(code, len): (u32, u8)| code << 5 | u32::from(len);
            let lengths: Vec<u8> = (1..=MAX_LEN as u8)
                .flat_map(|len| std::iter::repeat_n(len, tokens.counts[len as usize] as usize))
                .collect();
            let codes = huffman::canonical_codes(&lengths);
            let mut map = CodeMap::with_capacity(tokens.len());
            let mut singles = [NONE; 256];
            let mut glue = [NONE; 256];
            let mut escapes = [NONE; 2];
            let mut empty = NONE;
            for (symbol, &code) in codes.iter().enumerate() {
                let span = span_of(tokens.spans(), symbol);
                let code = pack(code);
                let kind = (span >> 7) as usize & 1;
                if span & 0x7F == ESCAPE {
                    escapes[kind] = code;
                    continue;
                }
                // A damaged model may repeat a token: the first keeps it.
                let token = tokens.token(symbol);
                match (token, kind == kind_of(token)) {
                    ([], true) if empty == NONE => empty = code,
                    ([byte], true) if singles[*byte as usize] == NONE => {
                        singles[*byte as usize] = code
                    }
                    ([byte], false) if kind == SEPARATOR && glue[*byte as usize] == NONE => {
                        glue[*byte as usize] = code
                    }
                    ([_, _, ..], true) => map.insert(token, code),
                    _ => {}
                }
            }
            let spelling = tokens.spelling_lengths.each_ref().map(|lengths| {
                let mut codes = [NONE; SPELLING];
                for (packed, code) in codes.iter_mut().zip(huffman::canonical_codes(lengths)) {
                    *packed = pack(code);
                }
                codes
            });
            let bits = |code: u32| (code & 31) as f32;
            let spelled_glue = bits(escapes[SEPARATOR]) + bits(spelling[SEPARATOR][END]);
            Codes {
                costs: Costs {
                    spelled: std::array::from_fn(|b| bits(spelling[WORD][b])),
                    escape: bits(escapes[WORD]) + bits(spelling[WORD][END]),
                    empty: match empty {
                        NONE => spelled_glue,
                        code => bits(code),
                    },
                    glue: std::array::from_fn(|b| match glue[b] {
                        NONE => spelled_glue + bits(spelling[SEPARATOR][b]),
                        code => bits(code),
                    }),
                },
                spelling,
                escapes,
                empty,
                map,
                singles,
                glue,
            }
        });
        Encoder { codes }
    }
}

/// Encodes records with a model.
pub struct Encoder {
    codes: Option<Codes>,
}

/// A code for encoding: `code << 5 | length`; [`NONE`] (0): no code.
const NONE: u32 = 0;

/// The model's codes, for encoding.
struct Codes {
    /// The words and separators of two bytes or more.
    map: CodeMap,
    /// The code of each one-byte word or separator.
    singles: [u32; 256],
    /// The code of each one-byte separator of a letter or digit (glue).
    glue: [u32; 256],
    /// The code of the empty separator.
    empty: u32,
    /// The codes of the escapes: separators', words'.
    escapes: [u32; 2],
    /// The spelling codes: separators', words'.
    spelling: [[u32; SPELLING]; 2],
    costs: Costs,
}

impl Codes {
    /// The code of word or separator `token` (of hash `hash`, if of two bytes or more).
    #[inline]
    fn code(&self, token: &[u8], hash: u64) -> u32 {
        match token {
            [] => self.empty,
            [byte] => self.singles[*byte as usize],
            _ if token.len() > MAX_TOKEN_LEN => NONE,
            _ => self.map.get(token, hash),
        }
    }

    /// Writes the word missing from the model of the `n` bytes at `start` of `buf` (which holds
    /// [`PAD`] more), whole or in pieces.
    fn put_missing_word(
        &self,
        buf: &[u8],
        start: usize,
        n: usize,
        spaced: [bool; 2],
        bits: &mut BitWriter,
    ) {
        let plan = plan(buf, start, n, spaced, &self.costs, self);
        let word = &buf[start..start + n];
        for_each_piece(word, plan, |piece| match piece {
            Piece::Word(token) => {
                let at = token.as_ptr() as usize - buf.as_ptr() as usize;
                let code = self.code(token, hash_at(buf, at, token.len()));
                self.put(token, code, WORD, bits)
            }
            Piece::Empty => self.put(&[], self.empty, SEPARATOR, bits),
            Piece::Glue(byte) => self.put(&[byte], self.glue[byte as usize], SEPARATOR, bits),
        });
    }

    /// Writes `token` of `kind`: its `code`, or ([`NONE`]) spelled.
    #[inline]
    fn put(&self, token: &[u8], code: u32, kind: usize, bits: &mut BitWriter) {
        let put = |bits: &mut BitWriter, code: u32| bits.put(code >> 5, code & 31);
        if code != NONE {
            put(bits, code);
            return;
        }
        put(bits, self.escapes[kind]);
        let spelling = &self.spelling[kind];
        for &byte in token {
            put(bits, spelling[byte as usize]);
        }
        put(bits, spelling[END]);
    }
}

impl Encoder {
    /// Appends the frame of `record`.
    pub fn encode(&self, record: &[u8], out: &mut Vec<u8>) {
        put_varint(record.len() as u64, out);
        let Some(codes) = &self.codes else {
            out.extend_from_slice(record);
            return;
        };
        // The record with zeros after it, read 8 bytes at a time.
        let len = record.len();
        let mut buf = Vec::with_capacity(len + PAD);
        buf.extend_from_slice(record);
        buf.extend_from_slice(&[0; PAD]);
        // Tokens are cut (as `for_each_token` cuts them) and hashed first, then their map
        // entries touched in a tight loop, by loads independent of each other that the
        // processor overlaps: a large model's map does not fit the caches, and missing them
        // token by token would cost more than coding.
        // A bit per byte of the record, set for a letter or digit; then zeros.
        let mut word_bits = vec![0u64; len / 64 + 2];
        for (i, chunk) in buf[..len.div_ceil(8) * 8].chunks_exact(8).enumerate() {
            let lanes = word_lanes(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
            // The high bit of each lane, gathered into a byte.
            let byte = (lanes >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
            word_bits[i / 8] |= byte << (8 * (i % 8));
        }
        // The first byte at or after `at` that is a word byte (`word`) or not.
        let next = |at: usize, word: bool| {
            let flip = if word { 0 } else { u64::MAX };
            let mut i = at / 64;
            let mut bits = (word_bits[i] ^ flip) & (u64::MAX << (at % 64));
            while bits == 0 && i * 64 < len {
                i += 1;
                bits = word_bits[i] ^ flip;
            }
            (i * 64 + bits.trailing_zeros() as usize).min(len)
        };
        let mut pending: Vec<(u32, u32, u64)> = Vec::with_capacity(len / 4);
        let mut start = 0;
        // Whether a space precedes the token, not coded: a single space between two words.
        let mut spaced = false;
        while start < len {
            let word = IS_WORD[buf[start] as usize];
            let end = next(start, !word);
            let n = end - start;
            let hash = if (2..=MAX_TOKEN_LEN).contains(&n) {
                hash_at(&buf, start, n)
            } else {
                0
            };
            let spaced_after =
                word && buf[end] == b' ' && end + 1 < len && IS_WORD[buf[end + 1] as usize];
            let flags = (n as u32) << 3
                | u32::from(spaced_after) << 2
                | u32::from(spaced) << 1
                | u32::from(word);
            pending.push((start as u32, flags, hash));
            spaced = spaced_after;
            start = end + usize::from(spaced_after);
        }
        let mut touched = 0;
        for &(_, _, hash) in &pending {
            touched ^= codes.map.touch(hash);
        }
        std::hint::black_box(touched);
        let mut bits = BitWriter::new(out);
        for &(start, flags, hash) in &pending {
            let start = start as usize;
            let n = (flags >> 3) as usize;
            let token = &record[start..start + n];
            let kind = (flags & 1) as usize;
            let code = match n {
                1 => codes.singles[token[0] as usize],
                2..=MAP_TOKEN => codes.map.get_at(&buf, start, n, hash),
                _ => codes.code(token, hash),
            };
            if code == NONE && kind == WORD {
                let spaced = [flags & 2 != 0, flags & 4 != 0];
                codes.put_missing_word(&buf, start, n, spaced, &mut bits);
            } else {
                codes.put(token, code, kind, &mut bits);
            }
        }
        bits.finish();
    }
}

/// Zero bytes after a record's copy, so that its tokens are read 8 bytes at a time.
const PAD: usize = 8;
/// The high bit of each byte of a `u64`.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The 8 bytes at `at` of `buf`, little-endian.
#[inline]
fn load8(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"))
}

/// Per byte of `x`, its high bit set if it is a letter or a digit, all other bits clear:
/// [`IS_WORD`] of 8 bytes at once.
#[inline]
fn word_lanes(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Below 0x80, sums of a byte's low 7 bits and a constant below 0x80 carry into no other
    // byte: their high bit tells whether the byte reaches 0x80 minus the constant.
    let low = x & !HIGH;
    let digit = (low + ONES * (0x80 - b'0' as u64)) & !(low + ONES * (0x80 - b'9' as u64 - 1));
    let folded = low | (ONES * 0x20);
    let letter =
        (folded + ONES * (0x80 - b'a' as u64)) & !(folded + ONES * (0x80 - b'z' as u64 - 1));
    (digit | letter) & !x & HIGH
}

/// Calls `visit` with each token of `record` that is coded, its kind, and whether a space it
/// does not code precedes it: every token is coded but a single space between two words.
#[inline]
fn for_each_token<'r>(record: &'r [u8], mut visit: impl FnMut(&'r [u8], usize, bool)) {
    let Some(&first) = record.first() else {
        return;
    };
    let mut kind = usize::from(IS_WORD[first as usize]);
    let mut start = 0;
    let mut spaced = false;
    while start < record.len() {
        let end = record[start..]
            .iter()
            .position(|&b| IS_WORD[b as usize] != (kind == WORD))
            .map_or(record.len(), |n| start + n);
        let implied = kind == SEPARATOR
            && end - start == 1
            && record[start] == b' '
            && start > 0
            && end < record.len();
        if !implied {
            visit(&record[start..end], kind, spaced);
        }
        spaced = implied;
        start = end;
        kind ^= 1;
    }
}

/// The costs, in bits, of the ways of coding a word missing from the model.
struct Costs {
    /// Per byte, its code length spelling a word.
    spelled: [f32; 256],
    /// The code lengths of the word escape and of the end mark.
    escape: f32,
    /// The code length of an empty separator.
    empty: f32,
    /// Per byte, the code length of a one-byte separator of it (glue).
    glue: [f32; 256],
}

/// The longest word [`plan`] tries to split.
const MAX_SPLIT: usize = 32;

/// How to code a word missing from the model.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Plan {
    /// Spelled.
    Whole,
    /// Its bytes before and from the cut, an empty separator between them.
    Cut(usize),
    /// Its bytes before the cut (if any), the byte at it as a separator (glue), then the rest
    /// (if any).
    Glue(usize),
}

/// A piece of a word missing from the model, as [`Plan`] cuts it.
enum Piece<'a> {
    Word(&'a [u8]),
    Empty,
    Glue(u8),
}

/// Calls `visit` with the pieces of `word` cut by `plan`.
fn for_each_piece<'w>(word: &'w [u8], plan: Plan, mut visit: impl FnMut(Piece<'w>)) {
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
trait Lookup {
    /// The code length of word `token`, of hash `hash` ([`token_hash`]), if the model holds
    /// it.
    fn bits(&self, token: &[u8], hash: u64) -> Option<f32>;

    /// Whether the model may hold a token of `len` bytes of hash `hash`, and a load of what
    /// [`Lookup::bits`] would read.
    fn touch(&self, _hash: u64, _len: usize) -> (bool, u8) {
        (true, 0)
    }
}

impl Lookup for Codes {
    fn bits(&self, token: &[u8], hash: u64) -> Option<f32> {
        let code = match token {
            [byte] => self.singles[*byte as usize],
            _ => self.map.get(token, hash),
        };
        (code != NONE).then_some((code & 31) as f32)
    }

    fn touch(&self, hash: u64, len: usize) -> (bool, u8) {
        if len < 2 {
            return (true, 0);
        }
        let (word, bit) = self.map.filter_bit(hash);
        if self.map.filter[word] & bit == 0 {
            return (false, 0);
        }
        (true, self.map.touch(hash))
    }
}

/// The cheapest way of coding the word missing from the model of the `n` bytes at `start` of
/// `buf` (which holds [`PAD`] more): whole, cut in two words with an empty separator between
/// them, or around a byte as a separator (glue), each word a token of the model or spelled.
/// `spaced`: whether an uncoded space precedes and follows the word, so that it may not start
/// or end with a separator.
fn plan(
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

/// The hash of the `len` bytes at `start` of `buf`, which holds [`PAD`] more: their 8-byte
/// words folded, then mixed (the finalizer of MurmurHash3).
#[inline]
fn hash_at(buf: &[u8], start: usize, len: usize) -> u64 {
    let end = start + len;
    let mut hash = (len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut at = start;
    while at + 8 < end {
        hash = (hash ^ load8(buf, at))
            .wrapping_mul(0xFF51_AFD7_ED55_8CCD)
            .rotate_left(31);
        at += 8;
    }
    if at < end {
        hash ^= load8(buf, at) & u64::MAX >> (64 - 8 * (end - at));
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    hash ^ hash >> 33
}

/// [`hash_at`] of a token of at most [`MAX_TOKEN_LEN`] bytes.
fn token_hash(token: &[u8]) -> u64 {
    let mut buf = [0u8; MAX_TOKEN_LEN + PAD];
    buf[..token.len()].copy_from_slice(token);
    hash_at(&buf, 0, token.len())
}

/// The longest token an entry of [`CodeMap`] holds (longer ones are looked up apart).
const MAP_TOKEN: usize = 24;

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
struct CodeMap {
    entries: Vec<Entry>,
    long: HashMap<Vec<u8>, u32, FixedState>,
    mask: usize,
    /// A bit per hash value (modulo its size) of the tokens: a filter small enough for the
    /// caches, for the many lookups of splitting words, most of them failing.
    filter: Vec<u64>,
    filter_mask: usize,
}

impl CodeMap {
    fn with_capacity(n: usize) -> CodeMap {
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

    /// Adds `token` (of two bytes or more), unless it is there.
    fn insert(&mut self, token: &[u8], code: u32) {
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
    fn touch(&self, hash: u64) -> u8 {
        self.entries[hash as usize & self.mask].len
    }

    /// The code of the token of `n` (2 to [`MAP_TOKEN`]) bytes at `start` of `buf` (which
    /// holds [`PAD`] more), of hash `hash`, or [`NONE`]: [`CodeMap::get`] comparing 8 bytes at
    /// a time.
    #[inline]
    fn get_at(&self, buf: &[u8], start: usize, n: usize, hash: u64) -> u32 {
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
    fn get(&self, token: &[u8], hash: u64) -> u32 {
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

/// Reads a model or a frame's header.
struct ByteReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> ByteReader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let bytes = self
            .bytes
            .get(self.at..self.at.saturating_add(n))
            .ok_or_else(|| format!("it ends before byte {}", self.at.saturating_add(n)))?;
        self.at += n;
        Ok(bytes)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    /// An unsigned LEB128 of at most 64 bits.
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            let bits = u64::from(byte & 0x7F);
            if shift == 63 && bits > 1 {
                break;
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(format!("a number at byte {} overflows", self.at))
    }
}

fn put_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

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
    // Most frequent first; then by hash, for an order that depends on the tokens alone (the
    // map's does not), cheaply.
    let hasher = FixedState::with_seed(0);
    let mut order: Vec<(std::cmp::Reverse<u64>, u64, &[u8])> = counts
        .into_iter()
        .map(|(token, count)| (std::cmp::Reverse(count), hasher.hash_one(token), token))
        .collect();
    order.sort_unstable();
    let tokens: Vec<(&[u8], u64)> = order.into_iter().map(|(c, _, t)| (t, c.0)).collect();
    let all: u64 = tokens.iter().map(|t| t.1).sum::<u64>().max(1);
    let code_bits = |count: u64| (all as f64 / count as f64).log2() as f32;

    // A token joins the alphabet when its expected saving (spelling it, escape included,
    // against its own code) pays for its bytes in the model: its span, its space and its own,
    // while the text stays within its bound (with room for the one-byte tokens added below).
    const SPELLED_BITS_PER_BYTE: f64 = 5.0;
    const ESCAPE_BITS: f64 = 6.0;
    // The tokens missing from the model, as the records will hold them: those of the sample
    // not chosen, and as many tokens new to the model as the sample holds tokens seen once
    // (Good and Turing's estimate), for which its hapaxes stand — in the part of the records
    // beyond the sample.
    let novel = ((ONE as f64) * (scale - 1.0) / scale).round() as u64;
    let mut chosen: HashMap<&[u8], u64, FixedState> = HashMap::default();
    // The chosen tokens in the order of `tokens`, for an alphabet in an order that depends on
    // the tokens alone.
    let mut chosen_order = Vec::new();
    let mut missing = Vec::new();
    let mut text_bytes = 0;
    for &(token, count) in &tokens {
        let spelled = ESCAPE_BITS + SPELLED_BITS_PER_BYTE * (token.len() + 1) as f64;
        let saving = count as f64 * scale * (spelled - f64::from(code_bits(count)));
        let cost = 8.0 * (token.len() + 5) as f64;
        if token.len() <= MAX_TOKEN_LEN
            && chosen.len() < MAX_TOKENS - 512
            && text_bytes + token.len() < MAX_TEXT - 1024
            && saving > cost
        {
            text_bytes += token.len() + 1;
            chosen.insert(token, count * ONE);
            chosen_order.push(token);
            if count == 1 && novel > 0 {
                missing.push((token, novel));
            }
        } else {
            missing.push((token, count * ONE));
        }
    }

    // The spelling of the missing tokens, to estimate what spelling a piece costs.
    let mut spelling = [vec![1u64; SPELLING], vec![1u64; SPELLING]];
    let mut escapes = [1u64; 2];
    for &(token, weight) in &missing {
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
    struct Chosen<'c, F>(&'c HashMap<&'c [u8], u64, FixedState>, F);
    impl<F: Fn(u64) -> f32> Lookup for Chosen<'_, F> {
        fn bits(&self, token: &[u8], _: u64) -> Option<f32> {
            self.0.get(token).map(|&weight| (self.1)(weight))
        }
    }
    let known = Chosen(&chosen, code_bits);

    // The missing words count for their pieces (`plan`), the other missing tokens for their
    // escape and spelling.
    let tally = missing
        .par_iter()
        .fold(Tally::default, |mut tally, &(token, weight)| {
            let kind = kind_of(token);
            let plan = match kind {
                WORD if token.len() <= MAX_SPLIT => {
                    let mut buf = [0u8; MAX_SPLIT + PAD];
                    buf[..token.len()].copy_from_slice(token);
                    plan(&buf, 0, token.len(), [false; 2], &costs, &known)
                }
                _ => Plan::Whole,
            };
            for_each_piece(token, plan, |piece| match piece {
                Piece::Word(piece) if piece != token && chosen.contains_key(piece) => {
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
        .reduce(Tally::default, Tally::merge);
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

    // The alphabet: the escapes (word, separator), the chosen tokens, the empty separator,
    // glue separators.
    let mut alphabet: Vec<(&[u8], bool, u64)> = chosen_order
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
    // The spans in canonical order (per code length: the escapes, then the tokens), and the
    // text they point into.
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

/// What training counts of the missing tokens (`train`).
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
    use super::*;
    use proptest::prelude::*;

    /// Sentences of a small vocabulary, as bincode would frame them: a length byte before each.
    fn corpus(n: usize) -> Vec<Vec<u8>> {
        let words = [
            "pool",
            "connection",
            "timeout",
            "the",
            "raise",
            "limit",
            "under",
            "load",
            "cache",
            "retry",
            "error",
            "of",
            "and",
            "query",
            "index",
            "slow",
        ];
        let mut state = 7u64;
        let mut next = move |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as usize % n
        };
        (0..n)
            .map(|_| {
                let mut record = Vec::new();
                for _ in 0..4 {
                    let text: Vec<&str> =
                        (0..8 + next(9)).map(|_| words[next(words.len())]).collect();
                    let text = text.join(" ");
                    record.push(text.len() as u8);
                    record.extend_from_slice(text.as_bytes());
                }
                record
            })
            .collect()
    }

    fn round_trip(model: &Model, record: &[u8]) -> Vec<u8> {
        let mut frame = Vec::new();
        model.encoder().encode(record, &mut frame);
        assert_eq!(model.decode(&frame, 1 << 20).as_deref(), Ok(record));
        frame
    }

    #[test]
    fn word_lanes_are_is_word_of_each_byte() {
        for b in 0..=255u8 {
            for lane in 0..8 {
                let x = 0x5A5A_5A5A_5A5A_5A5A & !(0xFF << (8 * lane)) | u64::from(b) << (8 * lane);
                let lanes = word_lanes(x);
                assert_eq!(lanes >> (8 * lane + 7) & 1 == 1, IS_WORD[b as usize], "{b}");
                assert_eq!(lanes & !HIGH, 0);
            }
        }
    }

    #[test]
    fn spaces_words_and_separators_read_back() {
        let model = Model::parse(train(&corpus(3_000))).unwrap();
        for record in [
            &b""[..],
            b" ",
            b"  ",
            b"pool",
            b" pool",
            b"pool ",
            b" pool timeout ",
            b"pool  timeout",
            b"pool timeout",
            b"pool\x00timeout",
            b"poolq timeout",
            b"pool qtimeout",
            b"q",
            b"q q q",
            b"unknownword",
            b"poolxtimeout",
            b"pool7",
            "caf\u{e9} na\u{ef}ve".as_bytes(),
            &[0xFF; 100],
        ] {
            round_trip(&model, record);
        }
        // A long record, and one of a long word.
        round_trip(&model, &corpus(200).concat());
        round_trip(&model, &[b'z'; 5_000]);
    }

    #[test]
    fn glued_words_cost_little_more_than_the_words() {
        let records = corpus(3_000);
        let model = Model::parse(train(&records)).unwrap();
        // A length byte that glues fields' words in the corpus.
        let glue = records
            .iter()
            .flat_map(|r| r.windows(3))
            .find(|w| IS_WORD[w[0] as usize] && w[1].is_ascii_uppercase())
            .expect("a letter glued")[1];
        let apart = round_trip(&model, b"connection timeout").len();
        let glued = round_trip(&model, &[&b"connection"[..], &[glue], b"timeout"].concat()).len();
        let unknown = round_trip(&model, b"xkcdwvqzjyjgfbpmhq").len();
        assert!(glued <= apart + 1, "{glued} bytes glued, {apart} apart");
        assert!(glued < unknown, "{glued} bytes glued, {unknown} unknown");
    }

    #[test]
    fn no_model_stores_records_as_they_are() {
        let records = corpus(10);
        assert!(train(&records).is_empty());
        let model = Model::parse(Vec::new()).unwrap();
        let frame = round_trip(&model, b"as it is");
        assert_eq!(frame, b"\x08as it is");
    }

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

    proptest! {
        #[test]
        fn hashes_of_pieces_are_those_of_tokens(
            bytes in prop::collection::vec(any::<u8>(), 1..80),
            start in any::<prop::sample::Index>(),
            len in 0..=MAX_TOKEN_LEN,
        ) {
            let start = start.index(bytes.len());
            let len = len.min(bytes.len() - start);
            let mut buf = bytes.clone();
            buf.extend_from_slice(&[0xAB; PAD]);
            // The bytes after a piece are not zeros: the hash masks them.
            prop_assert_eq!(hash_at(&buf, start, len), token_hash(&bytes[start..start + len]));
        }
    }
}
