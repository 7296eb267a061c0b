//! Fixed-width bit packing, least significant bit first: value `i` of width `w` occupies bits
//! `i·w … i·w + w − 1` of the byte string, bit `b` being bit `b mod 8` of byte `b ÷ 8`.
//!
//! [`BitWriter`] and [`bits_at`] do the same for fields of mixed widths up to 64 bits, each
//! written after the previous one.

/// The fewest bits that hold `max` (0 for 0).
pub fn width_of(max: u32) -> u32 {
    u32::BITS - max.leading_zeros()
}

/// The bytes `count` values of `width` bits take.
pub fn packed_len(count: usize, width: u32) -> usize {
    (count * width as usize).div_ceil(8)
}

/// Appends `values`, each below `2^width`, packed at `width` bits ([`packed_len`] bytes).
pub fn pack(values: impl IntoIterator<Item = u32>, width: u32, out: &mut Vec<u8>) {
    debug_assert!(width <= 32);
    if width == 0 {
        return;
    }
    let mut buffer = 0u64;
    let mut filled = 0;
    for value in values {
        debug_assert!(
            u64::from(value) >> width == 0,
            "{value} needs more than {width} bits"
        );
        buffer |= u64::from(value) << filled;
        filled += width;
        while filled >= 8 {
            out.push(buffer as u8);
            buffer >>= 8;
            filled -= 8;
        }
    }
    if filled > 0 {
        out.push(buffer as u8);
    }
}

/// Random access to values packed by [`pack`]. The caller keeps indexes below the count the
/// bytes were sized for; past the end of the bytes, missing bits read as zero.
#[derive(Debug, Clone, Copy)]
pub struct Packed<'a> {
    bytes: &'a [u8],
    width: u32,
    mask: u64,
}

impl<'a> Packed<'a> {
    /// Values of `width` bits (at most 32) in `bytes`.
    pub fn new(bytes: &'a [u8], width: u32) -> Packed<'a> {
        debug_assert!(width <= 32);
        Packed {
            bytes,
            width,
            mask: (1u64 << width) - 1,
        }
    }

    /// The width of each value, in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Value `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        let bit = i * self.width as usize;
        let at = bit / 8;
        let word = match self.bytes.get(at..at + 8) {
            Some(eight) => u64::from_le_bytes(eight.try_into().expect("8 bytes")),
            None => {
                // Near the end: the bytes that are there, zero beyond.
                let mut eight = [0u8; 8];
                let tail = self.bytes.get(at..).unwrap_or(&[]);
                eight[..tail.len().min(8)].copy_from_slice(&tail[..tail.len().min(8)]);
                u64::from_le_bytes(eight)
            }
        };
        ((word >> (bit % 8)) & self.mask) as u32
    }

    /// Calls `visit` with values `from..to` in order: one load of eight bytes for every value
    /// it holds whole, rather than one per value.
    #[inline]
    pub fn for_each_in(&self, from: usize, to: usize, mut visit: impl FnMut(u32)) {
        let width = self.width as usize;
        let mut i = from;
        if width > 0 {
            while i < to {
                let bit = i * width;
                let at = bit / 8;
                let Some(eight) = self.bytes.get(at..at + 8) else {
                    break;
                };
                let word = u64::from_le_bytes(eight.try_into().expect("8 bytes")) >> (bit % 8);
                let whole = ((64 - bit % 8) / width).min(to - i);
                for k in 0..whole {
                    visit(((word >> (k * width)) & self.mask) as u32);
                }
                i += whole;
            }
        }
        for j in i..to {
            visit(self.get(j));
        }
    }
}

/// Appends fields of up to 64 bits each, least significant bit first, each right after the
/// previous one (so a field may straddle bytes).
#[derive(Debug, Default)]
pub struct BitWriter {
    bytes: Vec<u8>,
    buffer: u128,
    filled: u32,
}

impl BitWriter {
    /// An empty writer.
    pub fn new() -> BitWriter {
        BitWriter::default()
    }

    /// Appends `value`, which must be below `2^width`, as `width` bits (at most 64).
    pub fn push(&mut self, value: u64, width: u32) {
        debug_assert!(width <= 64);
        debug_assert!(
            width == 64 || value >> width == 0,
            "{value} needs more than {width} bits"
        );
        if width == 0 {
            return;
        }
        // Fewer than 8 bits wait in the buffer, so 64 more fit.
        self.buffer |= u128::from(value) << self.filled;
        self.filled += width;
        while self.filled >= 8 {
            self.bytes.push(self.buffer as u8);
            self.buffer >>= 8;
            self.filled -= 8;
        }
    }

    /// Bits written so far.
    pub fn bits(&self) -> u64 {
        self.bytes.len() as u64 * 8 + u64::from(self.filled)
    }

    /// The bytes, the last one padded with zero bits.
    pub fn finish(mut self) -> Vec<u8> {
        if self.filled > 0 {
            self.bytes.push(self.buffer as u8);
        }
        self.bytes
    }
}

/// Whether bit `i` of a bit set (64 to a word, low bit first) is set; none past its end.
pub fn bit_set(bits: &[u64], i: u32) -> bool {
    bits.get(i as usize / 64)
        .is_some_and(|word| word >> (i % 64) & 1 != 0)
}

/// The 121 bits (at least) of `bytes` from bit `bit` on, in the low bits of the result: zero
/// past the end. Lets several adjacent values be read with one load.
#[inline]
pub fn bits_from(bytes: &[u8], bit: usize) -> u128 {
    let at = bit / 8;
    let word = match bytes.get(at..at + 16) {
        Some(sixteen) => u128::from_le_bytes(sixteen.try_into().expect("16 bytes")),
        None => {
            let mut sixteen = [0u8; 16];
            let tail = bytes.get(at..).unwrap_or(&[]);
            let len = tail.len().min(16);
            sixteen[..len].copy_from_slice(&tail[..len]);
            u128::from_le_bytes(sixteen)
        }
    };
    word >> (bit % 8)
}

/// The field of `width` bits (at most 64) at bit `bit` of `bytes`, as [`BitWriter`] wrote it.
/// Bits past the end of `bytes` read as zero.
#[inline]
pub fn bits_at(bytes: &[u8], bit: usize, width: u32) -> u64 {
    debug_assert!(width <= 64);
    if width == 0 {
        return 0;
    }
    // At most 7 + 64 bits are needed of the 128 read.
    low_bits(bits_from(bytes, bit) as u64, width)
}

/// The low `width` bits of `value`.
#[inline]
pub fn low_bits(value: u64, width: u32) -> u64 {
    match width {
        0 => 0,
        64.. => value,
        _ => value & ((1 << width) - 1),
    }
}

/// The fewest bits that hold `max` (0 for 0).
pub fn width_of_u64(max: u64) -> u32 {
    u64::BITS - max.leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn widths() {
        assert_eq!(width_of(0), 0);
        assert_eq!(width_of(1), 1);
        assert_eq!(width_of(2), 2);
        assert_eq!(width_of(255), 8);
        assert_eq!(width_of(256), 9);
        assert_eq!(width_of(u32::MAX), 32);
        assert_eq!(width_of_u64(0), 0);
        assert_eq!(width_of_u64(u64::from(u32::MAX) + 1), 33);
        assert_eq!(width_of_u64(u64::MAX), 64);
    }

    #[test]
    fn packs_least_significant_bit_first() {
        let mut out = Vec::new();
        pack([1, 2, 3, 0, 1], 2, &mut out);
        // 01 10 11 00 | 01 → 0b00_11_10_01, 0b01
        assert_eq!(out, vec![0b0011_1001, 0b01]);
        assert_eq!(out.len(), packed_len(5, 2));
    }

    proptest! {
        #[test]
        fn a_range_read_in_bulk_is_each_value_read_alone(
            width in 0u32..=32,
            raw in proptest::collection::vec(any::<u32>(), 0..300),
            ends in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
        ) {
            let values: Vec<u32> = raw
                .iter()
                .map(|v| if width == 32 { *v } else { v & ((1u32 << width) - 1) })
                .collect();
            let mut out = Vec::new();
            pack(values.iter().copied(), width, &mut out);
            let packed = Packed::new(&out, width);
            let (a, b) = (ends.0.index(values.len() + 1), ends.1.index(values.len() + 1));
            let (from, to) = (a.min(b), a.max(b));
            let mut read = Vec::new();
            packed.for_each_in(from, to, |v| read.push(v));
            prop_assert_eq!(&read[..], &values[from..to]);
        }

        #[test]
        fn every_field_of_mixed_widths_reads_back(
            fields in proptest::collection::vec((0u32..=64, any::<u64>()), 0..200),
        ) {
            let fields: Vec<(u32, u64)> = fields
                .into_iter()
                .map(|(w, v)| (w, if w == 64 { v } else { v & ((1u64 << w) - 1) }))
                .collect();
            let mut writer = BitWriter::new();
            let mut at = Vec::new();
            for &(width, value) in &fields {
                at.push(writer.bits() as usize);
                writer.push(value, width);
            }
            let total = writer.bits();
            let bytes = writer.finish();
            prop_assert_eq!(bytes.len() as u64, total.div_ceil(8));
            for (&(width, value), &bit) in fields.iter().zip(&at) {
                prop_assert_eq!(bits_at(&bytes, bit, width), value);
            }
        }

        #[test]
        fn every_value_reads_back(
            width in 0u32..=32,
            raw in proptest::collection::vec(any::<u32>(), 0..300),
        ) {
            let mask = if width == 32 { u32::MAX } else { (1u32 << width) - 1 };
            let values: Vec<u32> = raw.iter().map(|v| v & mask).collect();
            let mut out = Vec::new();
            pack(values.iter().copied(), width, &mut out);
            prop_assert_eq!(out.len(), packed_len(values.len(), width));
            let packed = Packed::new(&out, width);
            for (i, &v) in values.iter().enumerate() {
                prop_assert_eq!(packed.get(i), v);
            }
        }
    }
}
