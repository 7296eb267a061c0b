//! Encoding a record into a frame (module docs, *Frame*): its tokens cut and hashed first,
//! then looked up in the model's [`CodeMap`] and written as their codes, a word missing from the
//! model whole or in pieces ([`plan`]), spelled when it has no code.

use super::code_map::{CodeMap, MAP_TOKEN, NONE};
use super::model::{span_of, Model};
use super::plan::{for_each_piece, plan, Costs, Lookup, Piece};
use super::tokens::{hash_at, kind_of, word_lanes, IS_WORD, PAD};
use super::{END, ESCAPE, MAX_TOKEN_LEN, SEPARATOR, SPELLING, WORD};
use crate::format::bytes::put_varint;
use crate::format::huffman::{self, BitWriter, MAX_LEN};

impl Model {
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
        if !self.map.may_hold(hash) {
            return (false, 0);
        }
        (true, self.map.touch(hash))
    }
}
