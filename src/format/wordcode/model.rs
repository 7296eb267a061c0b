//! A model read in place: [`Model::parse`] checks the layout of the module docs (*Model*) and
//! keeps the bytes, so that decoding reads the tokens' spans and text where they lie — in the
//! mapped store — and builds only its decoding tables.

use std::ops::Deref;

use super::{
    BLOCK, ESCAPE, FORMAT, MAX_TEXT, MAX_TOKENS, MAX_TOKEN_LEN, SEPARATOR, SPELLING, WORD,
    WORD_FLAG,
};
use crate::format::bytes::{u32_at, ByteCursor};
use crate::format::huffman::{self, Decoder, MAX_LEN};
use crate::format::FormatError;

/// Bits of the decoding tables of tokens and of spelling.
const TOKEN_BITS: u32 = 12;
const SPELLING_BITS: u32 = 10;

/// A parsed model: what decoding needs.
pub struct Model {
    /// `None`: no model (records are stored as they are).
    pub(super) tokens: Option<Tokens>,
}

/// The bytes a model is read from: its blob, mapped or in memory.
type ModelBytes = Box<dyn Deref<Target = [u8]> + Send + Sync>;

/// The model's alphabet, for decoding: read in place from its bytes.
pub(super) struct Tokens {
    bytes: ModelBytes,
    /// Where the spans (a u32 per symbol, in canonical order) and the text start in `bytes`.
    spans_at: usize,
    text_at: usize,
    /// The number of symbols.
    symbols: usize,
    /// Per code length, the number of symbols of that length.
    pub(super) counts: [u32; MAX_LEN as usize + 1],
    /// Code lengths of the spelling codes (bytes, then the end mark): separators', words'.
    pub(super) spelling_lengths: [Vec<u8>; 2],
    pub(super) decoder: Decoder,
    pub(super) spelling: [Decoder; 2],
}

/// The span of `symbol` in `spans`.
#[inline(always)]
pub(super) fn span_of(spans: &[u8], symbol: usize) -> u32 {
    u32_at(spans, 4 * symbol)
}

impl Tokens {
    /// The number of symbols.
    pub(super) fn len(&self) -> usize {
        self.symbols
    }

    /// The spans, a u32 per symbol.
    pub(super) fn spans(&self) -> &[u8] {
        &self.bytes[self.spans_at..self.text_at]
    }

    /// The text the spans point into.
    pub(super) fn text(&self) -> &[u8] {
        &self.bytes[self.text_at..]
    }

    /// The token of `symbol` (an escape: none).
    pub(super) fn token(&self, symbol: usize) -> &[u8] {
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
    ) -> Result<Model, FormatError> {
        if bytes.is_empty() {
            return Ok(Model { tokens: None });
        }
        let mut reader = ByteCursor::new(&bytes);
        let (escapes, mut counts) = read_counts(&mut reader, bytes.len())?;
        let (escape_at, symbols) = place_escapes(escapes, &mut counts)?;
        let spelling_lengths = read_spelling(&mut reader)?;
        let spans_at = reader.position();
        let spans = reader.take(4 * symbols)?;
        let text_at = reader.position();
        let text = bytes.len() - text_at;
        if !(BLOCK + 1..=MAX_TEXT).contains(&text) {
            return Err(FormatError::Invalid(format!(
                "its text of {text} bytes is out of bounds"
            )));
        }
        check_spans(spans, escape_at, text)?;
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
}

/// Reads the format, the escapes' code lengths and, per code length, the number of tokens of
/// a model of `len` bytes.
fn read_counts(
    reader: &mut ByteCursor<'_>,
    len: usize,
) -> Result<([u8; 2], [u32; MAX_LEN as usize + 1]), FormatError> {
    let format = reader.u8()?;
    if format != FORMAT {
        return Err(FormatError::Invalid(format!(
            "it has format {format}, not {FORMAT}"
        )));
    }
    let escapes = [reader.u8()?, reader.u8()?];
    if escapes.iter().any(|len| !(1..=MAX_LEN as u8).contains(len)) {
        return Err(FormatError::Invalid(format!(
            "its escapes have codes of {escapes:?} bits"
        )));
    }
    let mut counts = [0u32; MAX_LEN as usize + 1];
    let mut total = 0usize;
    for count in &mut counts[1..] {
        let n = reader.varint()?;
        // Each token takes four bytes at least.
        if n > (MAX_TOKENS - total) as u64 || n > (len / 4 - total) as u64 {
            return Err(FormatError::Invalid(format!(
                "it states more tokens than it holds ({n} of a length)"
            )));
        }
        *count = n as u32;
        total += n as usize;
    }
    Ok((escapes, counts))
}

/// Counts the escapes into `counts` (per code length, the number of tokens becomes that of
/// symbols) and checks that the code lengths fit a prefix code. Returns where the escapes fall
/// in canonical order (word escape, separator escape) and the number of symbols.
fn place_escapes(
    escapes: [u8; 2],
    counts: &mut [u32; MAX_LEN as usize + 1],
) -> Result<([usize; 2], usize), FormatError> {
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
    Ok((escape_at, symbols))
}

/// Reads the spelling code lengths, words' then separators', each checked to fit a prefix
/// code; returns them indexed by kind.
fn read_spelling(reader: &mut ByteCursor<'_>) -> Result<[Vec<u8>; 2], FormatError> {
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
    Ok(spelling_lengths)
}

/// Checks the spans: the escapes where canonical order puts them (`escape_at`), tokens
/// elsewhere, each in the text of `text` bytes with a byte before it and a block after its
/// start.
fn check_spans(spans: &[u8], escape_at: [usize; 2], text: usize) -> Result<(), FormatError> {
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
            return Err(FormatError::Invalid(format!(
                "the span of symbol {symbol} ({span:#x}) is out of bounds"
            )));
        }
    }
    Ok(())
}
