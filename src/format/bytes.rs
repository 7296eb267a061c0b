//! The one byte cursor of the index files, and the integers it reads.
//!
//! Every integer in Reliora's binary layouts is little-endian: `u16`, `u32` or `u64` LE, or a
//! varint — unsigned LEB128 of at most 64 bits, seven bits a byte, least significant first,
//! the high bit set on every byte but the last.
//!
//! [`ByteCursor`] reads a byte string front to back, and each of its reads is checked against
//! the string's end: a read past it fails with [`FormatError::Truncated`] (and leaves the
//! cursor where it was), so no length a damaged file states is trusted. [`u16_at`], [`u32_at`]
//! and [`u64_at`] read at an offset that a check made before them already bounded — in the hot
//! loops that walk a validated structure — and panic otherwise.

use crate::format::FormatError;

/// Reads little-endian integers and varints from a byte string, front to back.
#[derive(Debug, Clone)]
pub struct ByteCursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> ByteCursor<'a> {
    /// A cursor at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> ByteCursor<'a> {
        ByteCursor { bytes, at: 0 }
    }

    /// A cursor at offset `at` of `bytes` (past their end, every read fails).
    pub fn at(bytes: &'a [u8], at: usize) -> ByteCursor<'a> {
        ByteCursor { bytes, at }
    }

    /// Where the next read starts.
    pub fn position(&self) -> usize {
        self.at
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.at..).unwrap_or_default()
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.rest().is_empty()
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        let end = self.at.saturating_add(n);
        let bytes = self.bytes.get(self.at..end).ok_or(FormatError::Truncated {
            need: end,
            have: self.bytes.len(),
        })?;
        self.at = end;
        Ok(bytes)
    }

    /// The next `N` bytes, as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], FormatError> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }

    /// The next byte.
    pub fn u8(&mut self) -> Result<u8, FormatError> {
        Ok(self.take(1)?[0])
    }

    /// The next `u16`, little-endian.
    pub fn u16(&mut self) -> Result<u16, FormatError> {
        self.array().map(u16::from_le_bytes)
    }

    /// The next `u32`, little-endian.
    pub fn u32(&mut self) -> Result<u32, FormatError> {
        self.array().map(u32::from_le_bytes)
    }

    /// The next `u64`, little-endian.
    pub fn u64(&mut self) -> Result<u64, FormatError> {
        self.array().map(u64::from_le_bytes)
    }

    /// The next varint: an unsigned LEB128 of at most 64 bits.
    pub fn varint(&mut self) -> Result<u64, FormatError> {
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
        Err(FormatError::Invalid(format!(
            "a number at byte {} overflows",
            self.at
        )))
    }
}

/// Appends `value` as a varint (what [`ByteCursor::varint`] reads).
pub fn put_varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The `u16` LE at `at` of `bytes`, which a check made before bounds.
#[inline]
pub fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

/// The `u32` LE at `at` of `bytes`, which a check made before bounds.
#[inline]
pub fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// The `u64` LE at `at` of `bytes`, which a check made before bounds.
#[inline]
pub fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_are_little_endian_and_stop_at_the_end() {
        let bytes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        let mut cursor = ByteCursor::new(&bytes);
        assert_eq!(cursor.u8(), Ok(1));
        assert_eq!(cursor.u16(), Ok(0x0302));
        assert_eq!(cursor.u32(), Ok(0x0706_0504));
        assert_eq!(cursor.position(), 7);
        assert_eq!(cursor.u64(), Ok(0x0F0E_0D0C_0B0A_0908));
        assert!(cursor.is_empty());
        let error = cursor.u8().unwrap_err();
        assert_eq!(error, FormatError::Truncated { need: 16, have: 15 });
        assert_eq!(
            error.to_string(),
            "it ends before byte 16 (it holds 15 bytes)"
        );
        assert_eq!(cursor.position(), 15, "a failed read moves nothing");
        let mut past = ByteCursor::at(&bytes, 40);
        assert_eq!(past.rest(), b"");
        assert_eq!(
            past.u32(),
            Err(FormatError::Truncated { need: 44, have: 15 })
        );
        assert_eq!(u16_at(&bytes, 1), 0x0302);
        assert_eq!(u32_at(&bytes, 3), 0x0706_0504);
        assert_eq!(u64_at(&bytes, 7), 0x0F0E_0D0C_0B0A_0908);
    }

    #[test]
    fn a_varint_past_64_bits_overflows() {
        let mut cursor = ByteCursor::new(&[0xFF; 11]);
        let error = cursor.varint().unwrap_err().to_string();
        assert_eq!(error, "a number at byte 10 overflows");
        let mut max = Vec::new();
        put_varint(u64::MAX, &mut max);
        assert_eq!(max.len(), 10);
        assert_eq!(ByteCursor::new(&max).varint(), Ok(u64::MAX));
    }

    proptest! {
        #[test]
        fn varints_read_back(values in prop::collection::vec(any::<u64>(), 0..20)) {
            let mut bytes = Vec::new();
            for &value in &values {
                put_varint(value, &mut bytes);
            }
            let mut cursor = ByteCursor::new(&bytes);
            for &value in &values {
                prop_assert_eq!(cursor.varint(), Ok(value));
            }
            prop_assert!(cursor.is_empty());
        }
    }
}
