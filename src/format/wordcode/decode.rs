//! Decoding a frame (module docs, *Frame*) back into its record: symbols are decoded a batch
//! at a time, then their tokens copied from the model's text.
//!
//! Decoding checks what it reads and fails (with a problem for the caller to name its file)
//! rather than panic, loop or allocate past the stated length: every code takes at least one
//! bit, the bit stream may not be read past its end, and no token may pass the stated length.

use super::model::{span_of, Model};
use super::{BLOCK, END, ESCAPE};
use crate::format::bytes::ByteCursor;
use crate::format::huffman::BitReader;
use crate::format::FormatError;

/// Symbols decoded before their tokens are copied.
const BATCH: usize = 32;

impl Model {
    /// Decodes a frame of at most `limit` bytes.
    pub fn decode(&self, frame: &[u8], limit: usize) -> Result<Vec<u8>, FormatError> {
        self.decode_prefix(frame, limit, usize::MAX)
            .map(|(bytes, _)| bytes)
    }

    /// Decodes at least the first `want` bytes of a frame of at most `limit` bytes (all of it
    /// when it is shorter), and whether that is all of it. A frame decoded in part is checked
    /// as far as it was read: the store's CRC has checked its bytes.
    pub fn decode_prefix(
        &self,
        frame: &[u8],
        limit: usize,
        want: usize,
    ) -> Result<(Vec<u8>, bool), FormatError> {
        let mut out = Vec::new();
        let whole = self.decode_prefix_into(frame, limit, want, &mut out)?;
        Ok((out, whole))
    }

    /// [`Model::decode_prefix`] into `out` (cleared first), so that a caller decoding many
    /// frames reuses one buffer.
    pub fn decode_prefix_into(
        &self,
        frame: &[u8],
        limit: usize,
        want: usize,
        out: &mut Vec<u8>,
    ) -> Result<bool, FormatError> {
        out.clear();
        let mut reader = ByteCursor::new(frame);
        let len = reader.varint()?;
        if len > limit as u64 {
            return Err(FormatError::Invalid(format!(
                "it states a length of {len} bytes, more than the {limit}-byte limit"
            )));
        }
        let len = len as usize;
        let rest = &frame[reader.position()..];
        let Some(tokens) = &self.tokens else {
            if rest.len() != len {
                return Err(FormatError::Invalid(format!(
                    "it holds {} bytes, its header states {len}",
                    rest.len()
                )));
            }
            out.extend_from_slice(&rest[..len.min(want)]);
            return Ok(want >= len);
        };
        let (spans, text) = (tokens.spans(), tokens.text());
        out.reserve(len.min(want.saturating_add(BATCH * BLOCK)));
        let mut bits = BitReader::new(rest);
        let passed =
            || FormatError::Invalid(format!("its tokens pass its stated length of {len} bytes"));
        // 1 after a word: a word then is preceded by a space.
        let mut after_word = 0;
        // The bytes of the tokens decoded.
        let mut total = 0;
        // Symbols are decoded a batch at a time, then their tokens copied, so that the loads of
        // the tokens' text come close together, which the processor overlaps (a large model's
        // text does not fit its caches). The batch holds `from << 8 | n`: the `n` bytes to
        // copy from `from` in the text.
        let mut batch = [0u32; BATCH];
        while total < len && total < want {
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
        if total < len {
            return Ok(false);
        }
        bits.finish()?;
        Ok(true)
    }
}
