//! Tokens: how a record is cut into words (maximal runs of ASCII letters and digits) and
//! separators (maximal runs of any other bytes), and how a token is hashed to find its code.
//!
//! The encoder reads a record 8 bytes at a time ([`word_lanes`]) from a copy followed by
//! [`PAD`] zero bytes; training cuts its sample with [`for_each_token`]. Both cut alike: a
//! single space between two words is implied, not coded.

use super::{MAX_TOKEN_LEN, SEPARATOR, WORD};

/// Which bytes make words: ASCII letters and digits.
pub(super) static IS_WORD: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    table
};

/// The kind of a token of these bytes, as records are cut.
pub(super) fn kind_of(token: &[u8]) -> usize {
    match token.first() {
        Some(&b) if IS_WORD[b as usize] => WORD,
        _ => SEPARATOR,
    }
}

/// Zero bytes after a record's copy, so that its tokens are read 8 bytes at a time.
pub(super) const PAD: usize = 8;
/// The high bit of each byte of a `u64`.
pub(super) const HIGH: u64 = 0x8080_8080_8080_8080;

/// The 8 bytes at `at` of `buf`, little-endian.
#[inline]
pub(super) fn load8(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"))
}

/// Per byte of `x`, its high bit set if it is a letter or a digit, all other bits clear:
/// [`IS_WORD`] of 8 bytes at once.
#[inline]
pub(super) fn word_lanes(x: u64) -> u64 {
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
pub(super) fn for_each_token<'r>(record: &'r [u8], mut visit: impl FnMut(&'r [u8], usize, bool)) {
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

/// The hash of the `len` bytes at `start` of `buf`, which holds [`PAD`] more: their 8-byte
/// words folded, then mixed (the finalizer of MurmurHash3).
#[inline]
pub(super) fn hash_at(buf: &[u8], start: usize, len: usize) -> u64 {
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
pub(super) fn token_hash(token: &[u8]) -> u64 {
    let mut buf = [0u8; MAX_TOKEN_LEN + PAD];
    buf[..token.len()].copy_from_slice(token);
    hash_at(&buf, 0, token.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
