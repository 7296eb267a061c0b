//! The word-pair file of a segment (`<segment>.pairs`, a blob file; see `index/pairs.rs` for
//! what the pairs mean). With W frequent words and P pairs, pairs numbered in id order (first
//! word, then second word), and n blobs:
//!
//! ```text
//! per word a, in id order:
//!   blob          the records of each pair a starts that more than 64 records hold, one blob
//!                 each in pair order: count u32 LE, then the gaps (the first record, then each
//!                 record − previous − 1) in blocks of 128 (the last one shorter), each block a
//!                 width byte then its gaps packed at that width (bitpack.rs)
//!   blob          a's partners: two widths u8, s and p; the second words of the pairs a
//!                 starts, ids ascending, packed at s bits; per pair, packed at p bits, where
//!                 its records are: the offset of its list among the lists that follow × 2, or
//!                 (the number of this blob − the number of its own blob) × 2 + 1; then the
//!                 lists of the pairs at most 64 records hold, in pair order, each its count u8
//!                 and its gaps as one block
//! blob n − 1      W u32 LE; each frequent word as u16 LE length + UTF-8, in byte order (a
//!                 word's id is its position); then per word, the number of the first pair it
//!                 starts, u32 LE; then P u32 LE; then per word, the number of its partners
//!                 blob, u32 LE
//! ```
//!
//! A lookup reads at most three blobs (each checked against its CRC): the words, the first
//! word's partners with most pairs' records, and a pair's own blob where many records hold it.
//! Gaps packed per block take a byte or two a record where a roaring array takes two; a short
//! list inside its partners blob costs no blob of its own (a directory entry of 8 bytes and a
//! 4-byte count); a pair's second word and place take about 12 and 17 bits, not 2 and 4 bytes. Each blob is written once its records are known, the words last, so a build
//! or a merge streams the pairs word by word.

use std::ops::{ControlFlow, Range};

use crate::error::Result;
use crate::format::bitpack::{pack, packed_len, width_of, Packed};
use crate::format::blobs::BlobWriter;
use crate::format::bytes::ByteCursor;
use crate::format::directory::FileTarget;
use crate::format::file::IndexFile;
use crate::format::footer::{FileKind, Footer};
use crate::format::FormatError;

const BLOCK: usize = 128;

/// A pair that at most this many records hold keeps its list in its first word's partners
/// blob (one block, its count in a byte).
pub const INLINE_MAX: usize = 64;

/// A pair's record list, encoded for [`PairsWriter::push_word`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodedList {
    /// Kept in the partners blob: count u8, then one block.
    Inline(Vec<u8>),
    /// A blob of its own: count u32 LE, then the blocks.
    Own(Vec<u8>),
}

impl EncodedList {
    /// The list of `records` (ascending, distinct, at least one) in the form its length asks
    /// for.
    pub fn new(records: &[u32]) -> EncodedList {
        debug_assert!(!records.is_empty(), "a pair some record holds");
        let mut out = Vec::new();
        match u8::try_from(records.len()) {
            Ok(count) if records.len() <= INLINE_MAX => {
                out.push(count);
                encode_blocks(records, &mut out);
                EncodedList::Inline(out)
            }
            _ => {
                out.extend_from_slice(&(records.len() as u32).to_le_bytes());
                encode_blocks(records, &mut out);
                EncodedList::Own(out)
            }
        }
    }
}

/// Appends a record list (ascending, distinct) as gaps packed in blocks.
fn encode_blocks(records: &[u32], out: &mut Vec<u8>) {
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

/// Writes a pairs file word by word, the words last.
pub struct PairsWriter {
    writer: BlobWriter,
    /// Per word written, the number of its first pair, then the pairs written.
    first_pairs: Vec<u32>,
    pairs: u32,
    /// Per word written, the number of its partners blob.
    partners_blobs: Vec<u32>,
}

impl PairsWriter {
    /// Creates the pairs file at `path`.
    pub fn create(path: impl Into<FileTarget>) -> Result<PairsWriter> {
        Ok(PairsWriter {
            writer: BlobWriter::create(path, FileKind::Postings)?,
            first_pairs: Vec::new(),
            pairs: 0,
            partners_blobs: Vec::new(),
        })
    }

    /// Writes the pairs the next word starts: per pair, its second word (ascending) and its
    /// records' list.
    pub fn push_word(&mut self, pairs: &[(u16, EncodedList)]) -> Result<()> {
        debug_assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0));
        let mut lists = Vec::new();
        // Offsets × 2, and own blobs' numbers, made distances once the partners blob's is known.
        let mut places: Vec<(u64, bool)> = Vec::with_capacity(pairs.len());
        for (_, list) in pairs {
            places.push(match list {
                EncodedList::Inline(bytes) => {
                    let offset = lists.len() as u64;
                    lists.extend_from_slice(bytes);
                    (offset, false)
                }
                EncodedList::Own(bytes) => (self.writer.push(bytes)?, true),
            });
        }
        let number = self.writer.len();
        let places: Vec<u32> = places
            .into_iter()
            .map(|(value, own)| match own {
                true => (number - value) << 1 | 1,
                false => value << 1,
            })
            .map(|place| u32::try_from(place).expect("a partners blob < 2 GiB"))
            .collect();
        let seconds_width = width_of(pairs.last().map_or(0, |p| u32::from(p.0)));
        let places_width = width_of(places.iter().copied().max().unwrap_or(0));
        let mut partners = vec![seconds_width as u8, places_width as u8];
        pack(
            pairs.iter().map(|p| u32::from(p.0)),
            seconds_width,
            &mut partners,
        );
        pack(places, places_width, &mut partners);
        partners.extend_from_slice(&lists);
        self.first_pairs.push(self.pairs);
        self.pairs += pairs.len() as u32;
        self.partners_blobs
            .push(self.writer.push(&partners)? as u32);
        Ok(())
    }

    /// Writes the words (sorted, distinct, one for each [`PairsWriter::push_word`] in order)
    /// and the directory, and syncs the file.
    pub fn finish(mut self, words: &[String]) -> Result<Footer> {
        debug_assert_eq!(words.len(), self.partners_blobs.len());
        let mut header = Vec::new();
        header.extend_from_slice(&(words.len() as u32).to_le_bytes());
        for word in words {
            header.extend_from_slice(&(word.len() as u16).to_le_bytes());
            header.extend_from_slice(word.as_bytes());
        }
        self.first_pairs.push(self.pairs);
        for number in self.first_pairs.iter().chain(&self.partners_blobs) {
            header.extend_from_slice(&number.to_le_bytes());
        }
        self.writer.push(&header)?;
        self.writer.finish()
    }
}

/// A parsed header (the last blob).
#[derive(Debug, Default)]
pub struct PairHeader {
    /// The frequent words, in byte order.
    pub words: Vec<String>,
    /// Per word, the number of the first pair it starts; then the pair count.
    pub first_pairs: Vec<u32>,
    /// Per word, the number of its partners blob.
    pub partners_blobs: Vec<u32>,
}

impl PairHeader {
    /// Parses the header of a file of `blobs` blobs, checking the words are UTF-8 in strictly
    /// ascending order, the pair numbers do not decrease and the partners blobs ascend before
    /// the header.
    pub fn parse(blob: &[u8], blobs: usize, file: &IndexFile) -> Result<PairHeader> {
        PairHeader::parse_bytes(blob, blobs).map_err(|problem| file.corrupt(problem))
    }

    fn parse_bytes(blob: &[u8], blobs: usize) -> std::result::Result<PairHeader, FormatError> {
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
        let mut numbers = |count: usize| {
            (0..count)
                .map(|_| cursor.u32())
                .collect::<std::result::Result<Vec<u32>, _>>()
                .map_err(cut)
        };
        let first_pairs = numbers(word_count + 1)?;
        if first_pairs.windows(2).any(|w| w[0] > w[1]) || first_pairs[0] != 0 {
            return Err("pair numbers are out of order".into());
        }
        let partners_blobs = numbers(word_count)?;
        if partners_blobs.windows(2).any(|w| w[0] >= w[1])
            || partners_blobs
                .last()
                .is_some_and(|&last| last as usize + 1 >= blobs)
        {
            return Err(format!("partners blobs out of order in a file of {blobs} blobs").into());
        }
        if !cursor.is_empty() {
            return Err("pair header has trailing bytes".into());
        }
        Ok(PairHeader {
            words,
            first_pairs,
            partners_blobs,
        })
    }

    /// The number of pairs.
    pub fn pairs(&self) -> u32 {
        self.first_pairs.last().copied().unwrap_or(0)
    }

    /// The blob holding the pairs word `first` starts.
    pub fn partners_blob(&self, first: usize) -> usize {
        self.partners_blobs[first] as usize
    }

    /// The pairs word `first` starts, read from its partners blob, whose size is checked
    /// against their number.
    pub fn partners<'a>(
        &self,
        first: usize,
        blob: &'a [u8],
        file: &IndexFile,
    ) -> Result<Partners<'a>> {
        let count = (self.first_pairs[first + 1] - self.first_pairs[first]) as usize;
        let mut cursor = ByteCursor::new(blob);
        let mut parts = || -> std::result::Result<(Packed<'a>, Packed<'a>), FormatError> {
            let [seconds, places] = cursor.array::<2>()?.map(u32::from);
            if seconds > 16 || places > 32 {
                return Err(format!("widths of {seconds} and {places} bits").into());
            }
            Ok((
                Packed::new(cursor.take(packed_len(count, seconds))?, seconds),
                Packed::new(cursor.take(packed_len(count, places))?, places),
            ))
        };
        let (seconds, places) = parts().map_err(|problem| {
            file.corrupt(format!(
                "word {first} starts {count} pairs, its partners blob of {} bytes does not hold \
                 them: {problem}",
                blob.len()
            ))
        })?;
        Ok(Partners {
            seconds,
            places,
            lists: cursor.rest(),
            count,
            number: self.partners_blob(first),
        })
    }
}

/// The pairs one word starts: their second words, and where each one's records are.
#[derive(Debug, Clone, Copy)]
pub struct Partners<'a> {
    seconds: Packed<'a>,
    places: Packed<'a>,
    lists: &'a [u8],
    count: usize,
    /// The number of the partners blob.
    number: usize,
}

/// Where a pair's records are.
#[derive(Debug, Clone)]
pub enum PairList<'a> {
    /// In the partners blob, whose lists' bytes `at` it takes.
    Inline {
        records: PairRecords<'a>,
        at: Range<usize>,
    },
    /// In blob number (of the file) `.0`.
    Own(usize),
}

impl<'a> Partners<'a> {
    /// How many pairs the word starts.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the word starts no pair.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The second word of pair `j`.
    pub fn second(&self, j: usize) -> u16 {
        // Open checked the width: at most 16 bits.
        self.seconds.get(j) as u16
    }

    /// The place of the pair with second word `second`, if the word starts it.
    pub fn find(&self, second: u16) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.second(mid) < second {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo < self.count && self.second(lo) == second).then_some(lo)
    }

    /// The second words, checked to ascend and to be among the `words` frequent words.
    pub fn seconds(&self, words: usize, file: &IndexFile) -> Result<Vec<u16>> {
        let seconds: Vec<u16> = (0..self.count).map(|j| self.second(j)).collect();
        if seconds.windows(2).any(|w| w[0] >= w[1])
            || seconds.last().is_some_and(|&b| usize::from(b) >= words)
        {
            return Err(file.corrupt("the partners of a frequent word are out of order"));
        }
        Ok(seconds)
    }

    /// Where the records of pair `j` are: its list, checked to lie in the partners blob, or
    /// its blob's number.
    pub fn list(&self, j: usize, file: &IndexFile) -> Result<PairList<'a>> {
        let place = self.places.get(j);
        if place & 1 == 1 {
            let distance = (place >> 1) as usize;
            return match self.number.checked_sub(distance) {
                Some(blob) if distance > 0 => Ok(PairList::Own(blob)),
                _ => Err(file.corrupt(format!(
                    "pair {j} of partners blob {} names a blob {distance} before it",
                    self.number
                ))),
            };
        }
        let place = place >> 1;
        let cut = |problem: FormatError| file.corrupt(problem.within("pair records"));
        let lists = self.lists;
        let mut cursor = ByteCursor::new(lists.get(place as usize..).unwrap_or_default());
        let count = cursor.u8().map_err(cut)?;
        let width = u32::from(cursor.u8().map_err(cut)?);
        if count == 0 || usize::from(count) > INLINE_MAX || width > 32 {
            return Err(file.corrupt(format!(
                "a pair list inside its partners blob holds {count} records at width {width}"
            )));
        }
        let start = place as usize;
        let at = start..start + 2 + packed_len(usize::from(count), width);
        let blocks = lists
            .get(start + 1..at.end)
            .ok_or_else(|| cut("a pair list runs past its partners blob".into()))?;
        Ok(PairList::Inline {
            records: PairRecords {
                blocks,
                len: u32::from(count),
            },
            at,
        })
    }

    /// The bytes the lists inside the partners blob take.
    pub fn inline_bytes(&self) -> usize {
        self.lists.len()
    }
}

/// The records of one pair a segment indexes, read in place, as far as a reader needs them;
/// none when the segment holds no such pair.
#[derive(Clone, Copy, Debug)]
pub struct PairRecords<'a> {
    /// The blocks of gaps (empty: no record).
    blocks: &'a [u8],
    len: u32,
}

impl<'a> PairRecords<'a> {
    /// A pair no record holds.
    pub const NONE: PairRecords<'static> = PairRecords {
        blocks: &[],
        len: 0,
    };

    /// The records of a pair's own blob; fails on a blob too short for its count.
    pub fn new(blob: &'a [u8], file: &IndexFile) -> Result<PairRecords<'a>> {
        let len = ByteCursor::new(blob)
            .u32()
            .map_err(|problem| file.corrupt(problem.within("pair records")))?;
        Ok(PairRecords {
            blocks: &blob[4..],
            len,
        })
    }

    /// How many records hold the pair.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether no record holds the pair.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Calls `visit` with each record, ascending; fails on a record at or beyond `records`, or
    /// on blocks that do not fill the list exactly.
    pub fn for_each(
        &self,
        records: u32,
        file: &IndexFile,
        mut visit: impl FnMut(u32),
    ) -> Result<()> {
        walk_records(self.blocks, self.len, records, file, |record| {
            visit(record);
            ControlFlow::Continue(())
        })
    }

    /// Calls `visit` with each record, ascending, until it breaks; fails as
    /// [`PairRecords::for_each`] does on what it reads (the blob's CRC covers the rest).
    pub fn try_for_each(
        &self,
        records: u32,
        file: &IndexFile,
        visit: impl FnMut(u32) -> ControlFlow<()>,
    ) -> Result<()> {
        walk_records(self.blocks, self.len, records, file, visit)
    }
}

/// The `len` records of `blocks`, ascending, until `visit` breaks (without checking the rest).
fn walk_records(
    blocks: &[u8],
    len: u32,
    records: u32,
    file: &IndexFile,
    mut visit: impl FnMut(u32) -> ControlFlow<()>,
) -> Result<()> {
    let cut = |problem: FormatError| file.corrupt(problem.within("pair records"));
    let mut cursor = ByteCursor::new(blocks);
    let mut remaining = len as usize;
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
    use crate::format::blobs::BlobFile;
    use crate::format::file::with_empty_file as with_file;
    use crate::format::manifest::FileEntry;
    use proptest::prelude::*;

    /// Writes a pairs file of `words` with `pairs` (first word, second word, records) in id
    /// order, and opens it.
    fn written(
        dir: &std::path::Path,
        words: &[&str],
        pairs: &[(usize, u16, Vec<u32>)],
    ) -> BlobFile {
        let path = dir.join("pairs");
        let mut writer = PairsWriter::create(path.as_path()).unwrap();
        for first in 0..words.len() {
            let theirs: Vec<(u16, EncodedList)> = pairs
                .iter()
                .filter(|p| p.0 == first)
                .map(|p| (p.1, EncodedList::new(&p.2)))
                .collect();
            writer.push_word(&theirs).unwrap();
        }
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let footer = writer.finish(&words).unwrap();
        BlobFile::open(
            IndexFile::open(&path, FileKind::Postings, &FileEntry::from(footer)).unwrap(),
        )
        .unwrap()
    }

    /// The records of pair (`first`, `second`), `None` when the file does not hold it.
    fn records_of(blobs: &BlobFile, first: usize, second: u16) -> Option<Vec<u32>> {
        let file = blobs.file();
        let header =
            PairHeader::parse(blobs.get(blobs.len() - 1).unwrap(), blobs.len(), file).unwrap();
        let partners = header
            .partners(first, blobs.get(header.partners_blob(first)).unwrap(), file)
            .unwrap();
        let j = partners.find(second)?;
        let list = match partners.list(j, file).unwrap() {
            PairList::Inline { records, .. } => records,
            PairList::Own(blob) => PairRecords::new(blobs.get(blob).unwrap(), file).unwrap(),
        };
        let mut read = Vec::new();
        list.for_each(1 << 20, file, |r| read.push(r)).unwrap();
        assert_eq!(read.len(), list.len() as usize);
        Some(read)
    }

    /// Short lists are kept in their word's partners blob and long ones in blobs of their own,
    /// written before it; the words come last; every pair reads back.
    #[test]
    fn pairs_read_back_short_lists_inline_long_ones_apart() {
        let dir = tempfile::tempdir().unwrap();
        let long: Vec<u32> = (0..1000).map(|r| 3 * r).collect();
        let short = vec![5, 9, 700_000];
        let most_inline: Vec<u32> = (0..INLINE_MAX as u32).collect();
        let least_apart: Vec<u32> = (0..=INLINE_MAX as u32).collect();
        // Pairs (a, ab), (a, b), (b, a), (b, b): word a starts pairs 0..2, ab none, b 2..4.
        let pairs = [
            (0, 1, short.clone()),
            (0, 2, long.clone()),
            (2, 0, most_inline.clone()),
            (2, 2, least_apart.clone()),
        ];
        let blobs = written(dir.path(), &["a", "ab", "b"], &pairs);
        // Two lists apart, three partners blobs, the words.
        assert_eq!(blobs.len(), 6);
        let file = blobs.file();
        let header = PairHeader::parse(blobs.get(5).unwrap(), 6, file).unwrap();
        assert_eq!(header.words, ["a", "ab", "b"]);
        assert_eq!(header.first_pairs, [0, 2, 2, 4]);
        assert_eq!(header.partners_blobs, [1, 2, 4]);
        assert_eq!(header.pairs(), 4);
        for (first, second, records) in &pairs {
            assert_eq!(records_of(&blobs, *first, *second).as_ref(), Some(records));
        }
        assert_eq!(records_of(&blobs, 0, 0), None);
        assert_eq!(records_of(&blobs, 1, 2), None);
        let partners = header.partners(2, blobs.get(4).unwrap(), file).unwrap();
        assert!(matches!(
            partners.list(0, file).unwrap(),
            PairList::Inline { .. }
        ));
        assert!(matches!(partners.list(1, file).unwrap(), PairList::Own(3)));
        assert_eq!(partners.seconds(3, file).unwrap(), [0, 2]);
        assert!(
            partners.seconds(2, file).is_err(),
            "a second word past the words"
        );

        // A header that names blobs out of order, or more than the file holds, is refused.
        let mut header_blob = blobs.get(5).unwrap().to_vec();
        assert!(PairHeader::parse(&header_blob, 5, file).is_err());
        let at = header_blob.len() - 8;
        header_blob[at..at + 4].copy_from_slice(&0u32.to_le_bytes());
        assert!(PairHeader::parse(&header_blob, 6, file).is_err());
        let blob = blobs.get(5).unwrap();
        assert!(PairHeader::parse(&blob[..blob.len() - 1], 6, file).is_err());
    }

    /// A place inside a partners blob that does not hold a whole list of one to 64 records is
    /// refused, never read past.
    #[test]
    fn a_list_place_is_checked_against_its_partners_blob() {
        with_file(|file| {
            let header = PairHeader {
                words: vec!["a".into()],
                first_pairs: vec![0, 1],
                partners_blobs: vec![0],
            };
            let EncodedList::Inline(list) = EncodedList::new(&[1, 2, 3]) else {
                panic!("three records are kept inline");
            };
            // Second word 7 at 3 bits, the place at the bits it needs, the lists.
            let blob = |place: u32, list: &[u8]| {
                let width = width_of(place);
                let mut blob = vec![3, width as u8];
                pack([7], 3, &mut blob);
                pack([place], width, &mut blob);
                blob.extend_from_slice(list);
                blob
            };
            let good = blob(0, &list);
            let partners = header.partners(0, &good, file).unwrap();
            assert_eq!(partners.len(), 1);
            assert_eq!(partners.inline_bytes(), list.len());
            assert!(partners.list(0, file).is_ok());
            assert_eq!(partners.second(0), 7);
            // Offsets (× 2): 1, not where a list starts, and far past the lists; own blobs
            // (odd): the partners blob itself, one before blob 0.
            for bad in [
                blob(2, &list),
                blob(0, &list[..list.len() - 1]),
                blob(0, &[0, 0]),
                blob(0, &[65, 0]),
                blob(0, &[1, 33, 0, 0, 0, 0, 0]),
                blob(u32::MAX - 1, &list),
                blob(1, &list),
                blob(3, &list),
            ] {
                let partners = header.partners(0, &bad, file).unwrap();
                assert!(partners.list(0, file).is_err(), "{bad:?}");
            }
            // Too short for its second words; a second word wider than 16 bits.
            assert!(header.partners(0, &good[..2], file).is_err());
            let mut wide = good.clone();
            wide[0] = 17;
            assert!(header.partners(0, &wide, file).is_err());
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
        fn record_lists_read_back(set in proptest::collection::btree_set(0u32..300_000, 1..700)) {
            with_file(|file| {
                let records: Vec<u32> = set.into_iter().collect();
                // Read in place, whole or as far as asked, whichever form the list takes.
                let encoded = EncodedList::new(&records);
                let header = PairHeader {
                    words: vec!["a".into()],
                    first_pairs: vec![0, 1],
                    partners_blobs: vec![0],
                };
                let blob = match &encoded {
                    // Second word 0 and place 0, both at width 0.
                    EncodedList::Inline(bytes) => [&[0, 0][..], bytes].concat(),
                    EncodedList::Own(bytes) => bytes.clone(),
                };
                let list = match encoded {
                    EncodedList::Inline(_) => {
                        assert!(records.len() <= INLINE_MAX);
                        let partners = header.partners(0, &blob, file).unwrap();
                        match partners.list(0, file).unwrap() {
                            PairList::Inline { records, .. } => records,
                            PairList::Own(_) => panic!("an inline place"),
                        }
                    }
                    EncodedList::Own(_) => {
                        assert!(records.len() > INLINE_MAX);
                        PairRecords::new(&blob, file).unwrap()
                    }
                };
                assert_eq!(list.len() as usize, records.len());
                let mut read = Vec::new();
                list.for_each(300_000, file, |r| read.push(r)).unwrap();
                assert_eq!(read, records);
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
                let last = *records.last().unwrap();
                assert!(list.for_each(last, file, |_| {}).is_err());
                for cut in [1, 2, list.blocks.len() / 2] {
                    if cut < list.blocks.len() {
                        let shorter = PairRecords { blocks: &list.blocks[..list.blocks.len() - cut], len: list.len };
                        let _ = shorter.for_each(300_000, file, |_| {});
                    }
                }
                let longer_bytes = [list.blocks, &[0]].concat();
                let longer = PairRecords { blocks: &longer_bytes, len: list.len };
                assert!(longer.for_each(300_000, file, |_| {}).is_err());
            });
        }
    }
}
