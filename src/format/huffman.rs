//! Canonical Huffman codes of limited length, and the bit streams they are written to: the
//! entropy coder of the record store's word model (wordcode/).
//!
//! - Code lengths are optimal under a length limit: package-merge ([`code_lengths`]).
//! - A code is canonical: symbols are ordered by (code length, symbol number) and numbered
//!   consecutively from 0, each length continuing where the shorter ones ended, shifted. So a
//!   code is determined by its lengths alone, and longer codes are numerically larger when
//!   read left-aligned.
//! - Bits are written most significant first, into bytes filled from their high bit; the last
//!   byte is padded with zero bits.
//! - Decoding peeks [`MAX_LEN`] bits: a table indexed by the first `bits` of them gives the
//!   symbol of every code of at most `bits` bits; a longer code is found by comparing the
//!   left-aligned peek with each longer length's upper bound, starting at the shortest code
//!   under that table entry.
//!
//! Decoding checks everything it reads: a code no symbol has, or a stream read past its end, is
//! an error (as a string, for the caller to name its file), never a panic.

/// The longest code.
pub const MAX_LEN: u32 = 24;

/// Optimal code lengths for symbols of `weights` under the limit `max_len` (≤ [`MAX_LEN`]):
/// package-merge (Larmore and Hirschberg). A symbol of weight 0 gets no code (length 0); a sole
/// symbol of positive weight gets a 1-bit code. At most `2^max_len` symbols may have weight.
pub fn code_lengths(weights: &[u64], max_len: u32) -> Vec<u8> {
    assert!((1..=MAX_LEN).contains(&max_len));
    let mut lengths = vec![0u8; weights.len()];
    let mut leaves: Vec<usize> = (0..weights.len()).filter(|&i| weights[i] > 0).collect();
    let n = leaves.len();
    assert!(
        n as u64 <= 1 << max_len,
        "{n} symbols cannot have codes of {max_len} bits"
    );
    match n {
        0 => return lengths,
        1 => {
            lengths[leaves[0]] = 1;
            return lengths;
        }
        _ => {}
    }
    leaves.sort_by_key(|&i| (weights[i], i));
    let leaf_weights: Vec<u64> = leaves.iter().map(|&i| weights[i]).collect();
    // The list of the deepest level holds the leaves alone; each shallower level merges the
    // leaves with the packages (adjacent pairs) of the level below it. Only whether each item
    // is a package is kept per level: the selection below needs nothing else.
    let mut list = leaf_weights.clone();
    let mut is_package: Vec<Vec<bool>> = Vec::with_capacity(max_len as usize);
    is_package.push(vec![false; n]);
    for _ in 1..max_len {
        let packages: Vec<u64> = list.chunks_exact(2).map(|p| p[0] + p[1]).collect();
        let mut merged = Vec::with_capacity(n + packages.len());
        let mut flags = Vec::with_capacity(n + packages.len());
        let (mut l, mut p) = (0, 0);
        while l < n || p < packages.len() {
            if p == packages.len() || (l < n && leaf_weights[l] <= packages[p]) {
                merged.push(leaf_weights[l]);
                flags.push(false);
                l += 1;
            } else {
                merged.push(packages[p]);
                flags.push(true);
                p += 1;
            }
        }
        list = merged;
        is_package.push(flags);
    }
    // Select the first 2n − 2 items of the shallowest list; the packages among the first m
    // selected items of a level select the first 2·(their number) items of the level below.
    // A leaf's code length is the number of levels that selected it.
    let mut selected = 2 * n - 2;
    for flags in is_package.iter().rev() {
        let packages = flags[..selected].iter().filter(|&&p| p).count();
        for &leaf in &leaves[..selected - packages] {
            lengths[leaf] += 1;
        }
        selected = 2 * packages;
    }
    lengths
}

/// Whether code `lengths` (0: no code) fit a prefix code: the Kraft sum is at most 1 and no
/// length exceeds [`MAX_LEN`].
pub fn kraft_ok(lengths: impl IntoIterator<Item = u8>) -> bool {
    let mut sum = 0u64;
    for len in lengths {
        if u32::from(len) > MAX_LEN {
            return false;
        }
        if len > 0 {
            sum += 1 << (MAX_LEN - u32::from(len));
        }
    }
    sum <= 1 << MAX_LEN
}

/// The canonical codes of symbols of `lengths` (which [`kraft_ok`]), each `(code, length)`,
/// the code right-aligned; symbols without a code get `(0, 0)`.
pub fn canonical_codes(lengths: &[u8]) -> Vec<(u32, u8)> {
    let mut count = [0u32; MAX_LEN as usize + 1];
    for &len in lengths {
        count[len as usize] += 1;
    }
    count[0] = 0;
    let mut next = [0u32; MAX_LEN as usize + 2];
    let mut code = 0u32;
    for len in 1..=MAX_LEN as usize {
        code = (code + count[len - 1]) << 1;
        next[len] = code;
    }
    lengths
        .iter()
        .map(|&len| {
            if len == 0 {
                return (0, 0);
            }
            let code = next[len as usize];
            next[len as usize] += 1;
            (code, len)
        })
        .collect()
}

/// Appends bits to a byte string, most significant first.
pub struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    buffer: u64,
    filled: u32,
}

impl<'a> BitWriter<'a> {
    /// A writer appending to `out`.
    pub fn new(out: &'a mut Vec<u8>) -> BitWriter<'a> {
        BitWriter {
            out,
            buffer: 0,
            filled: 0,
        }
    }

    /// Writes the low `len` (≤ 32) bits of `code`.
    #[inline]
    pub fn put(&mut self, code: u32, len: u32) {
        debug_assert!(len <= 32 && (len == 32 || code >> len == 0));
        self.buffer = (self.buffer << len) | u64::from(code);
        self.filled += len;
        if self.filled >= 32 {
            self.filled -= 32;
            self.out
                .extend_from_slice(&((self.buffer >> self.filled) as u32).to_be_bytes());
        }
    }

    /// Writes the bits still buffered, the last byte padded with zero bits.
    pub fn finish(mut self) {
        while self.filled >= 8 {
            self.filled -= 8;
            self.out.push((self.buffer >> self.filled) as u8);
        }
        if self.filled > 0 {
            self.out.push((self.buffer << (8 - self.filled)) as u8);
        }
    }
}

/// Reads bits from a byte string, most significant first. Past the end it reads zeros and
/// counts them, so that a caller checks [`BitReader::overrun`] rather than every read.
pub struct BitReader<'a> {
    bytes: &'a [u8],
    /// The next byte to load (may pass the end: zeros were loaded for those).
    next: usize,
    /// The unread bits, left-aligned.
    buffer: u64,
    /// How many bits of `buffer` are loaded.
    available: u32,
}

impl<'a> BitReader<'a> {
    /// A reader of `bytes`.
    pub fn new(bytes: &'a [u8]) -> BitReader<'a> {
        let mut reader = BitReader {
            bytes,
            next: 0,
            buffer: 0,
            available: 0,
        };
        reader.refill();
        reader
    }

    /// Loads bytes until at least 56 bits are available.
    #[inline]
    fn refill(&mut self) {
        if let Some(word) = self.bytes.get(self.next..self.next + 8) {
            let word = u64::from_be_bytes(word.try_into().expect("8 bytes"));
            self.buffer |= word >> self.available;
            self.next += (63 - self.available as usize) / 8;
            self.available |= 56;
        } else {
            while self.available <= 56 {
                let byte = self.bytes.get(self.next).copied().unwrap_or(0);
                self.buffer |= u64::from(byte) << (56 - self.available);
                self.next += 1;
                self.available += 8;
            }
        }
    }

    /// The next [`MAX_LEN`] bits, left-aligned in the low 24 bits of the result.
    #[inline(always)]
    pub fn peek(&mut self) -> u32 {
        if self.available < MAX_LEN {
            self.refill();
        }
        (self.buffer >> (64 - MAX_LEN)) as u32
    }

    /// Skips `len` (≤ [`MAX_LEN`]) bits, which [`BitReader::peek`] loaded.
    #[inline]
    pub fn consume(&mut self, len: u32) {
        debug_assert!(len <= self.available);
        self.buffer <<= len;
        self.available -= len;
    }

    /// How many bits were read.
    pub fn position(&self) -> usize {
        self.next * 8 - self.available as usize
    }

    /// Whether more bits were read than the bytes hold.
    #[inline]
    pub fn overrun(&self) -> bool {
        self.position() > self.bytes.len() * 8
    }

    /// Checks that the bits read end in the last byte and that its remaining bits are zero.
    pub fn finish(&self) -> Result<(), String> {
        let read = self.position();
        let total = self.bytes.len() * 8;
        if read > total {
            return Err("its bit stream ends in the middle of a code".into());
        }
        if total - read >= 8 {
            return Err(format!(
                "{} bytes follow the end of its bit stream",
                (total - read) / 8
            ));
        }
        let padding = (total - read) as u32;
        if padding > 0 && self.bytes[self.bytes.len() - 1] & ((1 << padding) - 1) != 0 {
            return Err("the padding of its bit stream is not zero".into());
        }
        Ok(())
    }
}

/// A table entry: `symbol << 8 | length` for a code of at most the table's bits; for a longer
/// code, `LONG | length` of the shortest code under that prefix; 0 where no code starts.
const LONG: u32 = 0x80;

/// Per length, the end of its codes (left-aligned) and the rank of its first code minus that
/// code, for codes of `count[len]` symbols of each length.
fn bounds(
    count: &[u32; MAX_LEN as usize + 1],
) -> ([u32; MAX_LEN as usize + 1], [u32; MAX_LEN as usize + 1]) {
    let mut limit = [0u32; MAX_LEN as usize + 1];
    let mut offset = [0u32; MAX_LEN as usize + 1];
    let (mut code, mut rank) = (0u32, 0u32);
    for len in 1..=MAX_LEN as usize {
        code = (code + count[len - 1]) << 1;
        offset[len] = rank.wrapping_sub(code);
        rank += count[len];
        limit[len] = (code + count[len]) << (MAX_LEN as usize - len);
    }
    (limit, offset)
}

/// Decodes one canonical code.
pub struct Decoder {
    /// Bits indexing `table`.
    bits: u32,
    table: Vec<u32>,
    /// Per length, the left-aligned (24-bit) end of its codes: the codes of a length occupy the
    /// values from the previous length's end up to its own.
    limit: [u32; MAX_LEN as usize + 1],
    /// Per length, the canonical rank of its first code minus that code (wrapping): a code's
    /// rank is this plus the code.
    offset: [u32; MAX_LEN as usize + 1],
    /// The symbols in canonical order; empty when that is their order.
    by_rank: Vec<u32>,
    /// The number of symbols with a code.
    symbols: u32,
}

impl Decoder {
    /// The decoder of the canonical code of `lengths` (which [`kraft_ok`]; fewer than 2^24
    /// symbols), with a table of `bits` (≤ 16) bits.
    pub fn new(lengths: &[u8], bits: u32) -> Decoder {
        assert!((1..=16).contains(&bits) && lengths.len() < 1 << 24);
        debug_assert!(kraft_ok(lengths.iter().copied()));
        let mut count = [0u32; MAX_LEN as usize + 1];
        for &len in lengths {
            count[len as usize] += 1;
        }
        count[0] = 0;
        let (limit, offset) = bounds(&count);
        let mut by_rank: Vec<u32> = (0..lengths.len() as u32)
            .filter(|&s| lengths[s as usize] > 0)
            .collect();
        let symbols = by_rank.len() as u32;
        if lengths.is_sorted() && lengths.first().is_some_and(|&len| len > 0) {
            // Every symbol has a code and canonical order is symbol order: skip a lookup.
            // (Sorted lengths that start with zeros rank the first coded symbol 0.)
            by_rank = Vec::new();
        } else {
            by_rank.sort_by_key(|&s| (lengths[s as usize], s));
        }
        let codes = canonical_codes(lengths);
        let mut table = vec![0u32; 1 << bits];
        for (symbol, &(code, len)) in codes.iter().enumerate() {
            let symbol = symbol as u32;
            if len == 0 {
                continue;
            }
            let len = u32::from(len);
            if len <= bits {
                let first = (code << (bits - len)) as usize;
                table[first..first + (1 << (bits - len))].fill(symbol << 8 | len);
            } else {
                // The shortest code under the prefix.
                let prefix = (code >> (len - bits)) as usize;
                if table[prefix] == 0 || table[prefix] & 0x1F > len {
                    table[prefix] = LONG | len;
                }
            }
        }
        Decoder {
            bits,
            table,
            limit,
            offset,
            by_rank,
            symbols,
        }
    }

    /// The decoder of a canonical code whose symbols are numbered in canonical order, `counts`
    /// giving the number of codes of each length (0 for length 0; their Kraft sum at most 1;
    /// fewer than 2^24 symbols), with a table of `bits` (≤ 16) bits. Its cost is that of the
    /// table, whatever the number of symbols.
    pub fn canonical(counts: &[u32; MAX_LEN as usize + 1], bits: u32) -> Decoder {
        assert!((1..=16).contains(&bits) && counts[0] == 0);
        let symbols: u32 = counts.iter().sum();
        assert!(symbols < 1 << 24);
        let (limit, offset) = bounds(counts);
        let mut table = vec![0u32; 1 << bits];
        let (mut code, mut rank) = (0u32, 0u32);
        for len in 1..=MAX_LEN {
            code = (code + counts[len as usize - 1]) << 1;
            let count = counts[len as usize];
            if len <= bits {
                let width = 1 << (bits - len);
                for k in 0..count {
                    let first = ((code + k) << (bits - len)) as usize;
                    table[first..first + width].fill((rank + k) << 8 | len);
                }
            } else if count > 0 {
                // The shortest code under each prefix: lengths come in increasing order.
                for prefix in code >> (len - bits)..=(code + count - 1) >> (len - bits) {
                    if table[prefix as usize] == 0 {
                        table[prefix as usize] = LONG | len;
                    }
                }
            }
            rank += count;
        }
        Decoder {
            bits,
            table,
            limit,
            offset,
            by_rank: Vec::new(),
            symbols,
        }
    }

    /// Decodes the next symbol, or fails on a code no symbol has.
    #[inline(always)]
    pub fn decode(&self, reader: &mut BitReader) -> Result<u32, String> {
        let peek = reader.peek();
        let entry = self.table[(peek >> (MAX_LEN - self.bits)) as usize];
        let len = entry & 0xFF;
        if len.wrapping_sub(1) < self.bits {
            reader.consume(len);
            return Ok(entry >> 8);
        }
        self.decode_long(reader, peek, entry)
    }

    /// A code longer than the table's bits: its length is the first, from the shortest under
    /// its prefix, whose end lies beyond the peeked bits.
    fn decode_long(&self, reader: &mut BitReader, peek: u32, entry: u32) -> Result<u32, String> {
        if entry & LONG != 0 {
            for len in (entry & 0x1F)..=MAX_LEN {
                if peek < self.limit[len as usize] {
                    let rank = self.offset[len as usize].wrapping_add(peek >> (MAX_LEN - len));
                    if rank >= self.symbols {
                        break;
                    }
                    reader.consume(len);
                    return Ok(match self.by_rank.get(rank as usize) {
                        Some(&symbol) => symbol,
                        None => rank,
                    });
                }
            }
        }
        Err("it holds a code no symbol has".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The cost (Σ weight × length) of code lengths.
    fn cost(weights: &[u64], lengths: &[u8]) -> u64 {
        weights
            .iter()
            .zip(lengths)
            .map(|(&w, &l)| w * u64::from(l))
            .sum()
    }

    /// The least cost of a prefix code of at most `max_len` bits for `weights` (all positive),
    /// by trying every assignment of lengths.
    fn brute_force(weights: &[u64], max_len: u8) -> u64 {
        let mut best = u64::MAX;
        let mut lengths = vec![1u8; weights.len()];
        loop {
            if kraft_ok(lengths.iter().copied()) {
                best = best.min(cost(weights, &lengths));
            }
            let Some(i) = lengths.iter().position(|&l| l < max_len) else {
                return best;
            };
            lengths[i] += 1;
            lengths[..i].fill(1);
        }
    }

    /// Symbols and their codes, written and read back.
    fn round_trip(lengths: &[u8], symbols: &[u32]) {
        let codes = canonical_codes(lengths);
        let mut out = Vec::new();
        let mut writer = BitWriter::new(&mut out);
        for &s in symbols {
            let (code, len) = codes[s as usize];
            writer.put(code, u32::from(len));
        }
        writer.finish();
        let decoder = Decoder::new(lengths, 4);
        let mut reader = BitReader::new(&out);
        for &s in symbols {
            assert_eq!(decoder.decode(&mut reader), Ok(s));
            assert!(!reader.overrun());
        }
        reader.finish().unwrap();
        // Numbered in canonical order, the same symbols from the counts of their lengths.
        let mut order: Vec<u32> = (0..lengths.len() as u32)
            .filter(|&s| lengths[s as usize] > 0)
            .collect();
        order.sort_by_key(|&s| (lengths[s as usize], s));
        let mut counts = [0u32; MAX_LEN as usize + 1];
        for &s in &order {
            counts[lengths[s as usize] as usize] += 1;
        }
        let decoder = Decoder::canonical(&counts, 4);
        let mut reader = BitReader::new(&out);
        for &s in symbols {
            let rank = order.iter().position(|&o| o == s).unwrap() as u32;
            assert_eq!(decoder.decode(&mut reader), Ok(rank));
        }
        reader.finish().unwrap();
    }

    #[test]
    fn small_cases() {
        assert_eq!(code_lengths(&[], 24), Vec::<u8>::new());
        assert_eq!(code_lengths(&[0, 5, 0], 24), [0, 1, 0]);
        assert_eq!(code_lengths(&[1, 1], 1), [1, 1]);
        assert_eq!(code_lengths(&[1, 1, 2, 4], 24), [3, 3, 2, 1]);
        // The limit binds: a Fibonacci-like distribution wants 5 bits.
        let weights = [1, 1, 2, 3, 5, 8];
        assert_eq!(code_lengths(&weights, 24).iter().max(), Some(&5));
        let limited = code_lengths(&weights, 3);
        assert!(limited.iter().all(|&l| l <= 3));
        assert_eq!(cost(&weights, &limited), brute_force(&weights, 3));
        assert_eq!(
            canonical_codes(&[2, 1, 3, 3, 0]),
            [(2, 2), (0, 1), (6, 3), (7, 3), (0, 0)]
        );
    }

    #[test]
    fn codes_of_every_length_read_back() {
        // Weights doubling: lengths 1, 2, …, 24, 24.
        let weights: Vec<u64> = (0..25).map(|i| 1u64 << i.max(1)).rev().collect();
        let lengths = code_lengths(&weights, 24);
        assert_eq!(*lengths.iter().max().unwrap(), 24);
        let symbols: Vec<u32> = (0..25).chain((0..25).rev()).collect();
        round_trip(&lengths, &symbols);
    }

    #[test]
    fn codes_no_symbol_has_are_errors() {
        // One 1-bit code only, "0": "1…" has no symbol.
        let decoder = Decoder::new(&[0, 1], 4);
        let mut reader = BitReader::new(&[0b0010_0000]);
        assert_eq!(decoder.decode(&mut reader), Ok(1));
        assert_eq!(decoder.decode(&mut reader), Ok(1));
        assert!(decoder.decode(&mut reader).is_err());
        // A long code's prefix with no code under part of it.
        let decoder = Decoder::new(&[1, 6], 4);
        let mut reader = BitReader::new(&[0b1000_0011, 0xFF, 0xFF, 0xFF]);
        assert_eq!(decoder.decode(&mut reader), Ok(1));
        assert!(decoder.decode(&mut reader).is_err());
    }

    /// Sorted lengths that start with symbols without a code: a long code decodes to its own
    /// symbol, not to its canonical rank.
    #[test]
    fn sorted_lengths_after_symbols_without_a_code_decode_their_own_symbols() {
        let lengths = [0, 0, 1, 10, 10];
        let codes = canonical_codes(&lengths);
        let mut bytes = Vec::new();
        let mut writer = BitWriter::new(&mut bytes);
        for symbol in [4, 2, 3, 4] {
            let (code, len) = codes[symbol];
            writer.put(code, u32::from(len));
        }
        writer.finish();
        let decoder = Decoder::new(&lengths, 4);
        let mut reader = BitReader::new(&bytes);
        for symbol in [4, 2, 3, 4] {
            assert_eq!(decoder.decode(&mut reader), Ok(symbol));
        }
        reader.finish().unwrap();
        // The case a property found: one code of ten zero bits, a table of one bit.
        let decoder = Decoder::new(&[0, 10], 1);
        assert_eq!(decoder.decode(&mut BitReader::new(&[0, 0])), Ok(1));
    }

    #[test]
    fn the_end_of_a_bit_stream_is_checked() {
        let decoder = Decoder::new(&[1, 1], 4);
        // Three codes, then zero padding.
        let mut reader = BitReader::new(&[0b1010_0000]);
        for s in [1, 0, 1] {
            assert_eq!(decoder.decode(&mut reader), Ok(s));
        }
        reader.finish().unwrap();
        // Padding that is not zero.
        let mut reader = BitReader::new(&[0b1010_0001]);
        for _ in 0..3 {
            decoder.decode(&mut reader).unwrap();
        }
        assert!(reader.finish().unwrap_err().contains("padding"));
        // A byte past the codes.
        let mut reader = BitReader::new(&[0b1010_0000, 0]);
        for _ in 0..3 {
            decoder.decode(&mut reader).unwrap();
        }
        assert!(reader.finish().unwrap_err().contains("1 bytes follow"));
        // Reading past the end.
        let mut reader = BitReader::new(&[0xFF]);
        for _ in 0..9 {
            decoder.decode(&mut reader).unwrap();
        }
        assert!(reader.overrun());
        assert!(reader.finish().unwrap_err().contains("middle of a code"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn lengths_are_optimal_under_the_limit(
            weights in prop::collection::vec(1u64..1_000, 2..7),
            max_len in 3u8..6,
        ) {
            prop_assume!(weights.len() <= 1 << max_len);
            let lengths = code_lengths(&weights, u32::from(max_len));
            prop_assert!(lengths.iter().all(|&l| (1..=max_len).contains(&l)));
            prop_assert_eq!(cost(&weights, &lengths), brute_force(&weights, max_len));
        }

        #[test]
        fn lengths_make_complete_codes_that_read_back(
            weights in prop::collection::vec(prop_oneof![Just(0u64), 1u64..10, 1u64..1 << 40], 2..400),
            max_len in 9u32..=24,
            picks in prop::collection::vec(any::<prop::sample::Index>(), 0..300),
        ) {
            let lengths = code_lengths(&weights, max_len);
            let used: Vec<u32> = (0..weights.len() as u32).filter(|&s| weights[s as usize] > 0).collect();
            prop_assume!(used.len() >= 2);
            prop_assert!(lengths.iter().all(|&l| u32::from(l) <= max_len));
            prop_assert!(lengths.iter().zip(&weights).all(|(&l, &w)| (l > 0) == (w > 0)));
            // Complete: the Kraft sum is exactly 1.
            let kraft: u64 = lengths.iter().filter(|&&l| l > 0).map(|&l| 1u64 << (MAX_LEN - u32::from(l))).sum();
            prop_assert_eq!(kraft, 1 << MAX_LEN);
            let symbols: Vec<u32> = picks.iter().map(|i| used[i.index(used.len())]).collect();
            round_trip(&lengths, &symbols);
        }

        #[test]
        fn any_bits_decode_or_fail_cleanly(
            lengths in prop::collection::vec(0u8..=24, 1..64),
            bytes in prop::collection::vec(any::<u8>(), 0..64),
            bits in 1u32..=16,
        ) {
            prop_assume!(kraft_ok(lengths.iter().copied()));
            let decoder = Decoder::new(&lengths, bits);
            let mut reader = BitReader::new(&bytes);
            for _ in 0..bytes.len() * 8 + 2 {
                match decoder.decode(&mut reader) {
                    Ok(s) => prop_assert!(lengths[s as usize] > 0),
                    Err(_) => break,
                }
            }
        }
    }
}
