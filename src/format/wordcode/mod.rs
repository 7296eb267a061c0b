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
//! a space. Codes are canonical and at most [`MAX_LEN`](crate::format::huffman::MAX_LEN) bits
//! (huffman.rs).
//!
//! A word missing from the alphabet may be coded in pieces when that is cheaper (`plan.rs`): two
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
//! # Training
//!
//! A model is trained on a spread of the records of at most 48 MiB; see `train.rs` for which
//! tokens join its alphabet. The model depends on the records alone.
//!
//! # Files
//!
//! - `tokens.rs`: how a record is cut into words and separators, and how tokens are hashed.
//! - `model.rs`: a model read in place and checked ([`Model::parse`]).
//! - `decode.rs`: a frame decoded back into its record ([`Model::decode`]).
//! - `encode.rs`: a record coded into a frame ([`Encoder`]), with `code_map.rs`, the map of
//!   the model's tokens to their codes.
//! - `plan.rs`: how a word missing from the model is cut into pieces, for the encoder and for
//!   training alike.
//! - `train.rs`: a model trained on a build's records (`train`).

mod code_map;
mod decode;
mod encode;
mod model;
mod plan;
mod tokens;
mod train;

pub use encode::Encoder;
pub use model::Model;
pub use train::train;

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

/// The kinds of token, indexing escapes and spelling codes.
const SEPARATOR: usize = 0;
const WORD: usize = 1;

/// A symbol's span when decoding: `start << 8 | word << 7 | len`, its token's start in the text
/// and its length; an escape's length is `ESCAPE`.
const ESCAPE: u32 = 0x7F;
const WORD_FLAG: u32 = 0x80;
/// Tokens are copied as blocks of this many bytes, then cut back.
const BLOCK: usize = 16;

#[cfg(test)]
mod tests {
    use super::tokens::IS_WORD;
    use super::*;

    /// Sentences of a small vocabulary, as bincode would frame them: a length byte before each.
    pub(super) fn corpus(n: usize) -> Vec<Vec<u8>> {
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
        // Decoded in part: a start of the record at least as long as asked, whole only when
        // it is all of it.
        for want in (0..=record.len() + 1).step_by(1.max(record.len() / 97)) {
            let (start, whole) = model.decode_prefix(&frame, 1 << 20, want).unwrap();
            assert!(record.starts_with(&start), "{want} bytes asked");
            assert!(start.len() >= want.min(record.len()), "{want} bytes asked");
            assert_eq!(whole, start.len() == record.len(), "{want} bytes asked");
        }
        frame
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
}
