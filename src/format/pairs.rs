//! The word-pair file of a segment (`<segment>.pairs`, a blob file; see `index/pairs.rs` for
//! what the pairs mean). With W frequent words and P pairs, pairs numbered in id order
//! (first word, then second word):
//!
//! ```text
//! blob 0         W u32 LE; each frequent word as u16 LE length + UTF-8, in byte order (a
//!                word's id is its position); then per word, the number of the first pair it
//!                starts, u32 LE; then P u32 LE
//! blob 1 + a     the second words of the pairs that word a starts, u16 LE ids ascending
//! blob 1 + W + i the records holding pair i: count u32 LE, then the gaps (the first record,
//!                then each record − previous − 1) in blocks of 128 (the last one shorter),
//!                each block a width byte then its gaps packed at that width (bitpack.rs)
//! ```
//!
//! A lookup reads three small blobs (each checked against its CRC): the words, the first
//! word's partners, the pair's records. Gaps packed per block take a byte or two a record where
//! a roaring array takes two.

use std::ops::ControlFlow;

use crate::error::Result;
use crate::format::bitpack::{pack, packed_len, width_of, Packed};
use crate::format::blobs::BlobWriter;
use crate::format::bytes::{u16_at, ByteCursor};
use crate::format::file::IndexFile;
use crate::format::FormatError;

const BLOCK: usize = 128;

/// Appends blob 0: the words (sorted, distinct) and, per word, the number of its first pair,
/// then the pair count.
pub fn encode_header(words: &[String], first_pairs: &[u32], pairs: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&(words.len() as u32).to_le_bytes());
    for word in words {
        out.extend_from_slice(&(word.len() as u16).to_le_bytes());
        out.extend_from_slice(word.as_bytes());
    }
    for first in first_pairs {
        out.extend_from_slice(&first.to_le_bytes());
    }
    out.extend_from_slice(&pairs.to_le_bytes());
}

/// Appends a blob of second-word ids (ascending).
pub fn encode_partners(seconds: &[u16], out: &mut Vec<u8>) {
    for second in seconds {
        out.extend_from_slice(&second.to_le_bytes());
    }
}

/// Writes blob 0 and the partner blobs of a pairs file into `writer`, which is empty: the
/// words (sorted, distinct) and, per word, the second words of the pairs it starts
/// (ascending). Each pair's records blob follows, pushed by the caller in pair order.
pub fn write_head(writer: &mut BlobWriter, words: &[String], partners: &[Vec<u16>]) -> Result<()> {
    debug_assert_eq!(words.len(), partners.len());
    let mut first_pairs = Vec::with_capacity(words.len());
    let mut pairs = 0u32;
    for seconds in partners {
        first_pairs.push(pairs);
        pairs += seconds.len() as u32;
    }
    let mut bytes = Vec::new();
    encode_header(words, &first_pairs, pairs, &mut bytes);
    writer.push(&bytes)?;
    for seconds in partners {
        bytes.clear();
        encode_partners(seconds, &mut bytes);
        writer.push(&bytes)?;
    }
    Ok(())
}

/// Appends a record list (ascending, distinct) as gaps packed in blocks.
pub fn encode_records(records: &[u32], out: &mut Vec<u8>) {
    out.extend_from_slice(&(records.len() as u32).to_le_bytes());
    let mut previous: Option<u32> = None;
    let gaps: Vec<u32> = records
        .iter()
        .map(|&r| {
            let gap = previous.map_or(r, |p| r - p - 1);
            previous = Some(r);
            gap
        })
        .collect();
    for block in gaps.chunks(BLOCK) {
        let width = width_of(block.iter().copied().max().unwrap_or(0));
        out.push(width as u8);
        pack(block.iter().copied(), width, out);
    }
}

/// A parsed blob 0.
#[derive(Debug, Default)]
pub struct PairHeader {
    /// The frequent words, in byte order.
    pub words: Vec<String>,
    /// Per word, the number of the first pair it starts; then the pair count.
    pub first_pairs: Vec<u32>,
}

impl PairHeader {
    /// Parses blob 0, checking the words are UTF-8 in strictly ascending order and the pair
    /// numbers do not decrease.
    pub fn parse(blob: &[u8], file: &IndexFile) -> Result<PairHeader> {
        PairHeader::parse_bytes(blob).map_err(|problem| file.corrupt(problem))
    }

    fn parse_bytes(blob: &[u8]) -> std::result::Result<PairHeader, FormatError> {
        let cut = |problem: FormatError| problem.within("pair header");
        let mut cursor = ByteCursor::new(blob);
        let word_count = cursor.u32().map_err(cut)? as usize;
        if word_count > u16::MAX as usize + 1 {
            return Err(format!("{word_count} frequent words").into());
        }
        let mut words: Vec<String> = Vec::with_capacity(word_count);
        for _ in 0..word_count {
            let len = usize::from(cursor.u16().map_err(cut)?);
            let word = std::str::from_utf8(cursor.take(len).map_err(cut)?)
                .map_err(|_| FormatError::from("a frequent word is not UTF-8"))?;
            if words.last().is_some_and(|last| last.as_str() >= word) {
                return Err("frequent words are out of order".into());
            }
            words.push(word.to_string());
        }
        let first_pairs = (0..=word_count)
            .map(|_| cursor.u32())
            .collect::<std::result::Result<Vec<u32>, _>>()
            .map_err(cut)?;
        if first_pairs.windows(2).any(|w| w[0] > w[1]) || first_pairs[0] != 0 {
            return Err("pair numbers are out of order".into());
        }
        if !cursor.is_empty() {
            return Err("pair header has trailing bytes".into());
        }
        Ok(PairHeader { words, first_pairs })
    }

    /// The number of pairs.
    pub fn pairs(&self) -> u32 {
        self.first_pairs.last().copied().unwrap_or(0)
    }

    /// The blob holding the second words of the pairs word `first` starts.
    pub fn partners_blob(&self, first: usize) -> usize {
        1 + first
    }

    /// The blob holding the records of pair number `pair`.
    pub fn records_blob(&self, pair: u32) -> usize {
        1 + self.words.len() + pair as usize
    }

    /// The number of the pair (`first`, `second`) given the partners blob of `first`, if the
    /// segment holds it.
    pub fn pair_number(
        &self,
        first: usize,
        second: u16,
        partners: &[u8],
        file: &IndexFile,
    ) -> Result<Option<u32>> {
        let (starts, count) = self.partner_count(first, partners, file)?;
        let at = |i: usize| u16_at(partners, 2 * i);
        let (mut lo, mut hi) = (0, count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if at(mid) < second {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok((lo < count && at(lo) == second).then_some(starts + lo as u32))
    }

    /// The second words of the pairs word `first` starts (its partners blob), ascending, and
    /// the number of its first pair.
    pub fn partners(
        &self,
        first: usize,
        partners: &[u8],
        file: &IndexFile,
    ) -> Result<(u32, Vec<u16>)> {
        let (starts, _) = self.partner_count(first, partners, file)?;
        let seconds: Vec<u16> = partners
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect();
        if seconds.windows(2).any(|w| w[0] >= w[1])
            || seconds
                .last()
                .is_some_and(|&b| usize::from(b) >= self.words.len())
        {
            return Err(file.corrupt(format!("the partners of word {first} are out of order")));
        }
        Ok((starts, seconds))
    }

    /// The number of the first pair word `first` starts and how many it starts, checked
    /// against the size of its partners blob.
    fn partner_count(
        &self,
        first: usize,
        partners: &[u8],
        file: &IndexFile,
    ) -> Result<(u32, usize)> {
        let starts = self.first_pairs[first];
        let count = (self.first_pairs[first + 1] - starts) as usize;
        if partners.len() != 2 * count {
            return Err(file.corrupt(format!(
                "word {first} starts {count} pairs, its partners blob holds {} bytes",
                partners.len()
            )));
        }
        Ok((starts, count))
    }
}

/// Calls `visit` with each record of a record list blob, ascending; fails on a record at or
/// beyond `records`, or on a blob whose blocks do not fill it exactly.
pub fn for_each_record(
    blob: &[u8],
    records: u32,
    file: &IndexFile,
    mut visit: impl FnMut(u32),
) -> Result<()> {
    walk_records(blob, records, file, |record| {
        visit(record);
        ControlFlow::Continue(())
    })
}

/// The records of one pair a segment indexes, read from its blob in place, as far as a reader
/// needs them; none when the segment holds no such pair.
#[derive(Clone, Copy, Debug)]
pub struct PairRecords<'a> {
    /// The record list blob (empty: no record).
    blob: &'a [u8],
    len: u32,
}

impl<'a> PairRecords<'a> {
    /// A pair no record holds.
    pub const NONE: PairRecords<'static> = PairRecords { blob: &[], len: 0 };

    /// The records of a record list blob; fails on a blob too short for its count.
    pub fn new(blob: &'a [u8], file: &IndexFile) -> Result<PairRecords<'a>> {
        let len = ByteCursor::new(blob)
            .u32()
            .map_err(|problem| file.corrupt(problem.within("pair records")))?;
        Ok(PairRecords { blob, len })
    }

    /// How many records hold the pair.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether no record holds the pair.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Calls `visit` with each record, ascending, until it breaks; fails as
    /// [`for_each_record`] does on what it reads (the blob's CRC covers the rest).
    pub fn try_for_each(
        &self,
        records: u32,
        file: &IndexFile,
        visit: impl FnMut(u32) -> ControlFlow<()>,
    ) -> Result<()> {
        if self.blob.is_empty() {
            return Ok(());
        }
        walk_records(self.blob, records, file, visit)
    }
}

/// [`for_each_record`], stopping where `visit` breaks (without checking the rest).
fn walk_records(
    blob: &[u8],
    records: u32,
    file: &IndexFile,
    mut visit: impl FnMut(u32) -> ControlFlow<()>,
) -> Result<()> {
    let cut = |problem: FormatError| file.corrupt(problem.within("pair records"));
    let mut cursor = ByteCursor::new(blob);
    let mut remaining = cursor.u32().map_err(cut)? as usize;
    let mut next: u64 = 0;
    while remaining > 0 {
        let width = u32::from(cursor.u8().map_err(cut)?);
        if width > 32 {
            return Err(file.corrupt(format!("pair gap width {width} is invalid")));
        }
        let count = remaining.min(BLOCK);
        let packed = Packed::new(cursor.take(packed_len(count, width)).map_err(cut)?, width);
        for i in 0..count {
            let record = next + u64::from(packed.get(i));
            if record >= u64::from(records) {
                return Err(file.corrupt(format!(
                    "pair records name record {record}, the segment holds {records}"
                )));
            }
            if visit(record as u32).is_break() {
                return Ok(());
            }
            next = record + 1;
        }
        remaining -= count;
    }
    if !cursor.is_empty() {
        return Err(file.corrupt("pair records have trailing bytes"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::file::with_empty_file as with_file;
    use proptest::prelude::*;

    #[test]
    fn the_header_reads_back_and_finds_pairs() {
        with_file(|file| {
            let words: Vec<String> = ["a", "ab", "b"].map(String::from).to_vec();
            // Pairs (a, ab), (a, b), (b, a): word a starts pairs 0..2, ab none, b pair 2.
            let mut blob = Vec::new();
            encode_header(&words, &[0, 2, 2], 3, &mut blob);
            let header = PairHeader::parse(&blob, file).unwrap();
            assert_eq!(header.words, words);
            assert_eq!(header.pairs(), 3);
            let mut partners = Vec::new();
            encode_partners(&[1, 2], &mut partners);
            assert_eq!(header.pair_number(0, 2, &partners, file).unwrap(), Some(1));
            assert_eq!(header.pair_number(0, 0, &partners, file).unwrap(), None);
            assert!(header.pair_number(1, 0, &partners, file).is_err());
            assert_eq!(header.records_blob(2), 6);
            let mut unordered = Vec::new();
            encode_header(&words, &[0, 2, 1], 3, &mut unordered);
            assert!(PairHeader::parse(&unordered, file).is_err());
            assert!(PairHeader::parse(&blob[..blob.len() - 1], file).is_err());
        });
    }

    #[test]
    fn a_pair_no_record_holds_reads_as_none() {
        with_file(|file| {
            let none = PairRecords::NONE;
            assert!(none.is_empty());
            none.try_for_each(10, file, |_| panic!("no record"))
                .unwrap();
            assert!(PairRecords::new(&[1, 0, 0], file).is_err());
        });
    }

    proptest! {
        #[test]
        fn record_lists_read_back(set in proptest::collection::btree_set(0u32..300_000, 0..700)) {
            with_file(|file| {
                let records: Vec<u32> = set.into_iter().collect();
                let mut blob = Vec::new();
                encode_records(&records, &mut blob);
                let mut read = Vec::new();
                for_each_record(&blob, 300_000, file, |r| read.push(r)).unwrap();
                assert_eq!(read, records);
                // Read in place, as far as asked.
                let list = PairRecords::new(&blob, file).unwrap();
                assert_eq!(list.len() as usize, records.len());
                let half = records.len() / 2;
                let mut head = Vec::new();
                list.try_for_each(300_000, file, |r| {
                    head.push(r);
                    match head.len() > half {
                        true => ControlFlow::Break(()),
                        false => ControlFlow::Continue(()),
                    }
                })
                .unwrap();
                assert_eq!(head, records[..records.len().min(half + 1)]);
                if let Some(&last) = records.last() {
                    assert!(for_each_record(&blob, last, file, |_| {}).is_err());
                }
                for cut in [1, 2, blob.len() / 2] {
                    if cut < blob.len() && !records.is_empty() {
                        let _ = for_each_record(&blob[..blob.len() - cut], 300_000, file, |_| {});
                    }
                }
                let mut longer = blob.clone();
                longer.push(0);
                assert!(for_each_record(&longer, 300_000, file, |_| {}).is_err());
            });
        }
    }
}
