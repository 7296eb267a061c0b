//! Fixed-width bit packing, least significant bit first: value `i` of width `w` occupies bits
//! `i·w … i·w + w − 1` of the byte string, bit `b` being bit `b mod 8` of byte `b ÷ 8`.

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
