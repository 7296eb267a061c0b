//! Postings of one term: the records containing it, and per record the field groups it occurs
//! in and how often there (term frequencies, for `bm25f`).
//!
//! One blob of `terms.post` per term, addressed by the term's value in `terms.fst`:
//!
//! ```text
//! docs                         roaring portable serialization, without run containers, of the
//!                              records containing the term in some group (its length follows
//!                              from its header: container count and cardinalities)
//! palette_len varint, palette  the term's distinct group masks, ascending, each a varint: its
//!                              difference from the mask before it (the first: from 0)
//! codes                        ⌈|docs| × width ÷ 8⌉ bytes, width the fewest bits that hold
//!                              palette_len − 1: per record of docs, ascending, the index of its
//!                              group mask in the palette (bitpack.rs)
//! tf_count    varint           Σ over records of the groups in their mask
//! tfs                          tf − 1 per record, per group of its mask ascending, in blocks of
//!                              128 values (the last one shorter), each block a width byte w,
//!                              then its values packed at w & 0x3f bits; where w ≥ 0x80, only
//!                              their low bits: exceptions follow, a count u8, then per
//!                              exception its place in the block u8 (ascending) and its value's
//!                              high bits (value >> width, at least 1) as a varint
//! ```
//!
//! One record set per term with a small code per record, rather than a bitmap per group: a
//! query token is accumulated in one pass over its records ([`TermPostings::for_each`], which
//! walks the serialized containers in place), and the index stores each record number once.
//!
//! Bitmaps for set operations are decoded with validation ([`decode_bitmap`]:
//! `RoaringBitmap::deserialize_from`, which checks every container, plus a check that container
//! keys ascend, which it does not make), never unchecked. Record numbers are checked against the
//! segment wherever they are used.

use roaring::RoaringBitmap;

use crate::error::Result;
use crate::format::bitpack::{pack, packed_len, width_of, Packed};
use crate::format::blobs::BlobFile;
use crate::format::bytes::{put_varint, u16_at, u32_at, u64_at, ByteCursor};
use crate::format::file::IndexFile;
use crate::format::FormatError;
use crate::schema::GROUP_COUNT;

/// Term frequencies are packed in blocks of this many values.
const TF_BLOCK: usize = 128;

/// A term frequency block's width byte with this bit set: exceptions follow the packed values.
const TF_EXCEPTIONS: u8 = 0x80;

/// Roaring's cookie for a serialization without run containers, and its array-container limit.
const NO_RUN_COOKIE: u32 = 12346;
const ARRAY_LIMIT: usize = 4096;
const BITMAP_BYTES: usize = 8192;

/// What [`TermPostings::group_counts`] holds for a code outside the palette.
const OUTSIDE_PALETTE: u8 = u8::MAX;

/// Records per chunk of [`TermPostings::for_each_in_chunk`]: one roaring container's.
pub const CHUNK_RECORDS: usize = 1 << 16;

/// Where a walk over a term's records chunk by chunk stands
/// ([`TermPostings::for_each_in_chunk`]): the next container, its data, its first position.
#[derive(Debug, Clone, Copy)]
pub struct ChunkCursor {
    container: usize,
    data: usize,
    position: usize,
}

/// Where a lookup of records in ascending order stands in a term's serialized containers
/// ([`TermPostings::position_from`]): the container reached, the offset of its data among the
/// containers' data, and the records before it; in a bitmap container, the word reached and the
/// container's records before it; in an array container, the first place (as `word`) of a
/// value not below the last record looked up.
#[derive(Debug, Clone, Copy, Default)]
struct Seek {
    container: usize,
    data: usize,
    position: usize,
    word: usize,
    before: u32,
}

/// Where a walk over a term's records and their term frequencies stands
/// ([`TermPostings::for_each_with_tfs_in_chunk`]): the chunk cursor of the records, and the
/// term frequencies not yet taken.
#[derive(Debug, Clone)]
pub struct TfCursor<'a> {
    chunks: ChunkCursor,
    values: TfValues<'a>,
}

/// A term's blocks of term frequencies (tf − 1 each, bit-packed [`TF_BLOCK`] to a block, a
/// width byte before each), read in order: each decoded or stepped over whole.
#[derive(Debug, Clone)]
struct TfBlocks<'a> {
    bytes: ByteCursor<'a>,
    /// The values of the blocks not yet read.
    remaining: usize,
}

impl<'a> TfBlocks<'a> {
    /// The blocks of a postings blob's term frequency part (their count first).
    fn new(tfs: &'a [u8]) -> std::result::Result<TfBlocks<'a>, FormatError> {
        let mut bytes = ByteCursor::new(tfs);
        let remaining = usize::try_from(bytes.varint()?)
            .map_err(|_| FormatError::from("postings term frequency count is too large"))?;
        Ok(TfBlocks { bytes, remaining })
    }

    /// Reads the next block, the cursor moved past it, into `into` where given (else steps
    /// over it, its exceptions checked all the same); returns its value count.
    fn next_block(
        &mut self,
        mut into: Option<&mut Vec<u32>>,
    ) -> std::result::Result<usize, FormatError> {
        let count = self.remaining.min(TF_BLOCK);
        if count == 0 {
            return Err("more term frequencies needed than recorded".into());
        }
        let cut = |problem: FormatError| problem.within("term frequencies");
        let byte = self.bytes.u8().map_err(cut)?;
        let width = u32::from(byte & !TF_EXCEPTIONS);
        let exceptions = byte & TF_EXCEPTIONS != 0;
        if width > 32 || (exceptions && width >= 32) {
            return Err(format!("term frequency width byte {byte:#x} is invalid").into());
        }
        let packed = Packed::new(
            self.bytes.take(packed_len(count, width)).map_err(cut)?,
            width,
        );
        if let Some(block) = into.as_deref_mut() {
            block.clear();
            match width {
                // Every value 0 (a term once in each of its groups): the common block.
                0 => block.resize(count, 0),
                _ => block.extend((0..count).map(|i| packed.get(i))),
            }
        }
        if exceptions {
            let exceptions = usize::from(self.bytes.u8().map_err(cut)?);
            let mut previous = None;
            for _ in 0..exceptions {
                let place = usize::from(self.bytes.u8().map_err(cut)?);
                let high = self.bytes.varint().map_err(cut)?;
                if place >= count || previous >= Some(place) {
                    return Err(format!(
                        "term frequency exception at {place} of a block of {count} is out of order"
                    )
                    .into());
                }
                if high == 0 || high > u64::from(u32::MAX >> width) {
                    return Err(format!(
                        "term frequency exception {high} above {width} bits is invalid"
                    )
                    .into());
                }
                previous = Some(place);
                if let Some(block) = into.as_deref_mut() {
                    block[place] |= (high as u32) << width;
                }
            }
        }
        self.remaining -= count;
        Ok(count)
    }

    /// Decodes the next block into `block`.
    fn decode(&mut self, block: &mut Vec<u32>) -> std::result::Result<(), FormatError> {
        self.next_block(Some(block)).map(drop)
    }

    /// Steps over the next block without decoding it; returns its value count.
    fn skip(&mut self) -> std::result::Result<usize, FormatError> {
        self.next_block(None)
    }

    /// Whether every block was read and nothing follows them.
    fn is_done(&self) -> bool {
        self.remaining == 0 && self.bytes.is_empty()
    }
}

/// Term frequencies taken in order, a decoded block at a time; values stepped over are only
/// counted until a value past them is taken, and the blocks they fill are stepped over whole,
/// not decoded.
#[derive(Debug, Clone)]
struct TfValues<'a> {
    blocks: TfBlocks<'a>,
    /// The block decoded last, and the next of its values.
    block: Vec<u32>,
    next: usize,
    /// Values stepped over past `next`, not yet passed.
    skipped: usize,
}

impl TfValues<'_> {
    /// The values left in the current block, decoding the next where it is used up.
    #[inline]
    fn available(&mut self) -> std::result::Result<usize, FormatError> {
        if self.next == self.block.len() {
            self.blocks.decode(&mut self.block)?;
            self.next = 0;
        }
        Ok(self.block.len() - self.next)
    }

    /// The stored values (tf − 1) of a posting in the groups of `mask`: a slice of the current
    /// block where it holds them all, else gathered into `spill`.
    #[inline(always)]
    fn take_stored<'v>(
        &'v mut self,
        mask: u16,
        spill: &'v mut [u32; GROUP_COUNT],
    ) -> std::result::Result<&'v [u32], FormatError> {
        let count = mask.count_ones() as usize;
        if self.skipped == 0 && count <= self.block.len() - self.next {
            let from = self.next;
            self.next += count;
            return Ok(&self.block[from..self.next]);
        }
        self.take_stored_slowly(count, spill)
    }

    /// [`TfValues::take_stored`] past values stepped over, or across blocks.
    #[cold]
    fn take_stored_slowly<'v>(
        &'v mut self,
        count: usize,
        spill: &'v mut [u32; GROUP_COUNT],
    ) -> std::result::Result<&'v [u32], FormatError> {
        if self.skipped > 0 {
            self.pass_skipped()?;
        }
        if count <= self.block.len() - self.next {
            let from = self.next;
            self.next += count;
            return Ok(&self.block[from..self.next]);
        }
        for value in spill.iter_mut().take(count) {
            self.available()?;
            *value = self.block[self.next];
            self.next += 1;
        }
        Ok(&spill[..count])
    }

    /// Steps over `count` values.
    #[inline]
    fn skip(&mut self, count: usize) {
        self.skipped += count;
    }

    /// Moves past the values stepped over: within the current block, then whole blocks
    /// without decoding them, then into the block that holds the next value.
    fn pass_skipped(&mut self) -> std::result::Result<(), FormatError> {
        let in_block = self.block.len() - self.next;
        if self.skipped <= in_block {
            self.next += std::mem::take(&mut self.skipped);
            return Ok(());
        }
        self.skipped -= in_block;
        self.next = self.block.len();
        while self.skipped > 0 {
            let count = self.blocks.remaining.min(TF_BLOCK);
            if count > 0 && self.skipped >= count {
                self.blocks.skip()?;
                self.skipped -= count;
            } else {
                self.blocks.decode(&mut self.block)?;
                self.next = std::mem::take(&mut self.skipped);
            }
        }
        Ok(())
    }

    /// Whether every value was taken or stepped over and nothing follows them.
    fn is_done(&mut self) -> std::result::Result<bool, FormatError> {
        self.pass_skipped()?;
        Ok(self.next == self.block.len() && self.blocks.is_done())
    }
}

/// The term frequencies of one posting as stored: its group mask, and tf − 1 per group of the
/// mask, ascending.
#[derive(Debug, Clone, Copy)]
pub struct PostingTfs<'v> {
    pub mask: u16,
    pub stored: &'v [u32],
}

impl PostingTfs<'_> {
    /// `tfs[g]`, the frequency in group `g` (0 outside the mask).
    #[inline]
    pub fn to_array(&self) -> [u32; GROUP_COUNT] {
        let mut tfs = [0u32; GROUP_COUNT];
        let mut groups = self.mask;
        for &value in self.stored {
            let g = groups.trailing_zeros() as usize;
            groups &= groups - 1;
            tfs[g] = value.saturating_add(1);
        }
        tfs
    }
}

/// One posting given to [`encode_term`]: (record, group, term frequency).
pub type Posting = (u32, u8, u32);

/// Appends the postings blob of one term to `out`. `postings` hold (record, group, tf) with
/// records ascending, at most one entry per record and group, tf ≥ 1.
pub fn encode_term(postings: &[Posting], out: &mut Vec<u8>) {
    // Per record: its group mask and tfs in group order.
    let mut docs: Vec<u32> = Vec::new();
    let mut masks: Vec<u16> = Vec::new();
    let mut tfs: Vec<u32> = Vec::new();
    let mut at = 0;
    while at < postings.len() {
        let doc = postings[at].0;
        let end = at + postings[at..].iter().take_while(|p| p.0 == doc).count();
        let mut per_group = [0u32; GROUP_COUNT];
        for &(_, group, tf) in &postings[at..end] {
            debug_assert!(tf >= 1 && per_group[group as usize] == 0);
            per_group[group as usize] = tf;
        }
        let mut mask = 0u16;
        for (g, &tf) in per_group.iter().enumerate() {
            if tf > 0 {
                mask |= 1 << g;
                tfs.push(tf - 1);
            }
        }
        debug_assert!(docs.last().is_none_or(|&last| last < doc), "records ascend");
        docs.push(doc);
        masks.push(mask);
        at = end;
    }

    encode_parts(&docs, &masks, &tfs, out);
}

/// Appends the postings blob of one term merged from `parts`, each a term's postings in one
/// segment (parsed from `file`, of `records` records) and the number its first record takes
/// (`base`): their records renumbered, one after another. Bases must leave the parts' records
/// ascending.
pub fn merge_terms(parts: &[MergePart<'_>], out: &mut Vec<u8>) -> Result<()> {
    let mut docs: Vec<u32> = Vec::new();
    let mut masks: Vec<u16> = Vec::new();
    let mut tfs: Vec<u32> = Vec::new();
    for part in parts {
        let palette = &part.postings.palette;
        let first = masks.len();
        let mut descending = None;
        part.postings
            .for_each(part.records, part.file, |doc, code| {
                let doc = part.base + doc;
                if docs.last().is_some_and(|&last| last >= doc) {
                    descending.get_or_insert(doc);
                }
                docs.push(doc);
                masks.push(palette[code]);
            })?;
        if let Some(doc) = descending {
            return Err(part.file.corrupt(format!(
                "postings: record {doc} does not ascend when merged"
            )));
        }
        let expected: usize = masks[first..].iter().map(|m| m.count_ones() as usize).sum();
        part.postings
            .tf_values(expected, part.file, |values| tfs.extend_from_slice(values))?;
    }
    encode_parts(&docs, &masks, &tfs, out);
    Ok(())
}

/// One term's postings in one segment, for [`merge_terms`].
pub struct MergePart<'a> {
    /// The term's postings in the segment.
    pub postings: TermPostings<'a>,
    /// The file they were read from.
    pub file: &'a IndexFile,
    /// The segment's number of records.
    pub records: u32,
    /// The merged number of the segment's first record.
    pub base: u32,
}

/// Appends a blob: the record set (`docs`, ascending), each record's group mask, and the tfs
/// (tf − 1 per record, per group of its mask ascending).
fn encode_parts(docs: &[u32], masks: &[u16], tfs: &[u32], out: &mut Vec<u8>) {
    serialize_docs(docs, out);

    // The palette is the masks present, ascending; `code[mask]` a mask's index in it.
    let mut code = [u16::MAX; 1 << GROUP_COUNT];
    for &mask in masks {
        code[usize::from(mask)] = 0;
    }
    let mut palette: Vec<u16> = Vec::new();
    for (mask, code) in code.iter_mut().enumerate() {
        if *code == 0 {
            *code = palette.len() as u16;
            palette.push(mask as u16);
        }
    }
    put_varint(palette.len() as u64, out);
    let mut previous = 0;
    for &mask in &palette {
        put_varint(u64::from(mask - previous), out);
        previous = mask;
    }
    let width = width_of(palette.len().saturating_sub(1) as u32);
    pack(
        masks.iter().map(|&m| u32::from(code[usize::from(m)])),
        width,
        out,
    );
    put_varint(tfs.len() as u64, out);
    for block in tfs.chunks(TF_BLOCK) {
        encode_tf_block(block, out);
    }
}

/// Appends a block of term frequencies (tf − 1 each) at the width that takes the fewest bytes:
/// the widest value's, or a narrower one with the values above it as exceptions (patched
/// frame of reference: most values are 0, and one tf of 9 would otherwise widen 127 zeros).
fn encode_tf_block(block: &[u32], out: &mut Vec<u8>) {
    // Values by width: above a width `b`, those of width k take k − b bits in their varint.
    let mut by_width = [0usize; 33];
    for &value in block {
        by_width[width_of(value) as usize] += 1;
    }
    let widest = width_of(block.iter().copied().max().unwrap_or(0));
    let mut best = (packed_len(block.len(), widest), widest);
    for width in 0..widest {
        let high_bytes: usize = (width + 1..=widest)
            .map(|k| by_width[k as usize] * (1 + (k - width).div_ceil(7) as usize))
            .sum();
        let cost = packed_len(block.len(), width) + 1 + high_bytes;
        if cost < best.0 {
            best = (cost, width);
        }
    }
    let width = best.1;
    if width == widest {
        out.push(width as u8);
        pack(block.iter().copied(), width, out);
        return;
    }
    out.push(width as u8 | TF_EXCEPTIONS);
    let low = (1u32 << width) - 1;
    pack(block.iter().map(|&value| value & low), width, out);
    let exceptions: Vec<(usize, u32)> = (block.iter().enumerate())
        .filter(|&(_, &value)| value >> width != 0)
        .map(|(place, &value)| (place, value >> width))
        .collect();
    out.push(exceptions.len() as u8);
    for (place, high) in exceptions {
        out.push(place as u8);
        put_varint(u64::from(high), out);
    }
}

/// Appends `docs` (ascending, distinct) in roaring's portable serialization without run
/// containers — what `RoaringBitmap::serialize_into` writes for them, written straight from
/// the sorted numbers: the cookie and container count, per container its key and cardinality
/// − 1, per container the offset of its data, then each container's data (up to
/// [`ARRAY_LIMIT`] values as `u16` LE, else a bitmap of 1024 `u64` LE words).
fn serialize_docs(docs: &[u32], out: &mut Vec<u8>) {
    let containers: Vec<&[u32]> = docs.chunk_by(|a, b| a >> 16 == b >> 16).collect();
    let start = out.len();
    out.extend_from_slice(&NO_RUN_COOKIE.to_le_bytes());
    out.extend_from_slice(&(containers.len() as u32).to_le_bytes());
    for values in &containers {
        out.extend_from_slice(&((values[0] >> 16) as u16).to_le_bytes());
        out.extend_from_slice(&((values.len() - 1) as u16).to_le_bytes());
    }
    let mut offset = 8 + 8 * containers.len();
    for values in &containers {
        out.extend_from_slice(&(offset as u32).to_le_bytes());
        offset += if values.len() <= ARRAY_LIMIT {
            2 * values.len()
        } else {
            BITMAP_BYTES
        };
    }
    for values in &containers {
        if values.len() <= ARRAY_LIMIT {
            for &doc in *values {
                out.extend_from_slice(&(doc as u16).to_le_bytes());
            }
        } else {
            let mut words = [0u64; BITMAP_BYTES / 8];
            for &doc in *values {
                let low = (doc & 0xFFFF) as usize;
                words[low / 64] |= 1 << (low % 64);
            }
            for word in words {
                out.extend_from_slice(&word.to_le_bytes());
            }
        }
    }
    debug_assert_eq!(out.len() - start, offset);
}

/// A parsed postings blob: where its parts are, every length checked against the blob.
pub struct TermPostings<'a> {
    docs: &'a [u8],
    /// Containers of `docs`, and records in all of them.
    containers: usize,
    len: u64,
    palette: Vec<u16>,
    codes: Packed<'a>,
    tfs: &'a [u8],
}

impl<'a> TermPostings<'a> {
    /// Splits a blob into its parts, checking the record set's header, the palette and every
    /// length against the blob.
    pub fn parse(blob: &'a [u8], file: &IndexFile) -> Result<TermPostings<'a>> {
        TermPostings::parse_bytes(blob, true).map_err(|problem| file.corrupt(problem))
    }

    /// Term `term`'s postings in `postings` (a segment's postings file), parsed; the count of
    /// each bitmap container's records is checked at the first read of the blob in the process
    /// alone ([`BlobFile::get_checked`]: at a million records a frequent term's sixteen bitmap
    /// containers take 16,384 words to count, at every search otherwise).
    pub fn read(postings: &'a BlobFile, term: u64) -> Result<TermPostings<'a>> {
        let file = postings.file();
        postings.get_checked(term as usize, |blob, counted| {
            TermPostings::parse_bytes(blob, !counted).map_err(|problem| file.corrupt(problem))
        })
    }

    /// Parses a postings blob; `count_bitmaps`: checks each bitmap container's records against
    /// its cardinality.
    fn parse_bytes(
        blob: &'a [u8],
        count_bitmaps: bool,
    ) -> std::result::Result<TermPostings<'a>, FormatError> {
        let cut = |problem: FormatError| problem.within("postings blob");
        let mut cursor = ByteCursor::new(blob);
        let records = |problem: FormatError| problem.within("postings records");
        let (containers, len, docs_len) = docs_header(blob, count_bitmaps).map_err(records)?;
        let docs = cursor.take(docs_len).map_err(cut)?;
        let palette_len = cursor.varint().map_err(cut)?;
        if palette_len > 1 << GROUP_COUNT {
            return Err(format!("postings palette of {palette_len} group masks").into());
        }
        // Read here rather than with `ByteCursor::varint`, a call per mask: a search parses a
        // frequent term's hundred masks at each read. A step is below 2^9: two bytes at most.
        let steps = cursor.rest();
        let mut palette = Vec::with_capacity(palette_len as usize);
        let (mut previous, mut at) = (0u32, 0);
        for _ in 0..palette_len {
            let (mut step, mut shift) = (0u32, 0);
            loop {
                let Some(&byte) = steps.get(at) else {
                    return Err(cut(FormatError::from("the group masks are cut short")));
                };
                at += 1;
                step |= u32::from(byte & 0x7f) << shift;
                if byte < 0x80 {
                    break;
                }
                shift += 7;
                if shift > 7 {
                    return Err("postings group mask step of more than two bytes".into());
                }
            }
            let mask = previous + step;
            if step == 0 || mask >> GROUP_COUNT != 0 {
                return Err(format!(
                    "postings group mask {mask:#x} (after {previous:#x}) is invalid"
                )
                .into());
            }
            palette.push(mask as u16);
            previous = mask;
        }
        cursor.take(at).map_err(cut)?;
        if (palette.is_empty()) != (len == 0) {
            return Err("postings palette does not fit the records".into());
        }
        let width = width_of((palette_len as u32).saturating_sub(1));
        let codes = cursor.take(packed_len(len as usize, width)).map_err(cut)?;
        Ok(TermPostings {
            docs,
            containers,
            len,
            palette,
            codes: Packed::new(codes, width),
            tfs: cursor.rest(),
        })
    }

    /// The number of records containing the term.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no record contains the term (never so in a written index).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The distinct group masks; [`TermPostings::for_each`] gives indexes into this.
    pub fn palette(&self) -> &[u16] {
        &self.palette
    }

    /// The groups the term occurs in, as a bit mask.
    pub fn group_mask(&self) -> u16 {
        self.palette.iter().fold(0, |all, m| all | m)
    }

    /// The records containing the term, decoded with validation.
    pub fn records(&self, file: &IndexFile) -> Result<RoaringBitmap> {
        decode_bitmap(self.docs).map_err(|problem| file.corrupt(problem.within("postings bitmap")))
    }

    /// Calls `visit(record, palette index)` for each record containing the term, ascending,
    /// reading the serialized containers in place. Fails, before visiting anything past it, on
    /// a record number at or beyond `records` or a palette index outside the palette.
    #[inline]
    pub fn for_each(
        &self,
        records: u32,
        file: &IndexFile,
        visit: impl FnMut(u32, usize),
    ) -> Result<()> {
        let mut cursor = self.chunk_cursor();
        self.walk_coded(&mut cursor, self.containers, records, file, visit)
    }

    /// A cursor at the first chunk, for [`TermPostings::for_each_in_chunk`].
    pub fn chunk_cursor(&self) -> ChunkCursor {
        ChunkCursor {
            container: 0,
            data: 8 + 8 * self.containers,
            position: 0,
        }
    }

    /// A cursor at chunk `chunk` (at the first of the term's chunks from it on), found from
    /// the containers' headers.
    pub fn cursor_at(&self, chunk: usize) -> ChunkCursor {
        let mut cursor = self.chunk_cursor();
        while cursor.container < self.containers {
            let c = cursor.container;
            if usize::from(u16_at(self.docs, 8 + 4 * c)) >= chunk {
                break;
            }
            let card = usize::from(u16_at(self.docs, 10 + 4 * c)) + 1;
            cursor.data += if card <= ARRAY_LIMIT {
                2 * card
            } else {
                BITMAP_BYTES
            };
            cursor.position += card;
            cursor.container += 1;
        }
        cursor
    }

    /// [`TermPostings::for_each`] over the records of chunk `chunk` alone (records `chunk ×`
    /// [`CHUNK_RECORDS`] up to the next chunk's), from `cursor` (carried from the chunk
    /// before, or [`TermPostings::cursor_at`] the chunk), which it moves past them; once past
    /// the last chunk of the segment, [`TermPostings::finish_chunks`] tells whether records
    /// remain beyond it.
    #[inline]
    pub fn for_each_in_chunk(
        &self,
        cursor: &mut ChunkCursor,
        chunk: u16,
        records: u32,
        file: &IndexFile,
        visit: impl FnMut(u32, usize),
    ) -> Result<()> {
        if cursor.container < self.containers {
            let key = u16_at(self.docs, 8 + 4 * cursor.container);
            debug_assert!(key >= chunk, "chunk {key} was skipped");
            if key == chunk {
                return self.walk_coded(cursor, cursor.container + 1, records, file, visit);
            }
        }
        Ok(())
    }

    /// [`TermPostings::for_each_in_chunk`] from a cursor found for the chunk
    /// ([`TermPostings::cursor_at`]): one chunk walked on its own, in any order.
    #[inline]
    pub fn for_each_in_chunk_at(
        &self,
        chunk: usize,
        records: u32,
        file: &IndexFile,
        visit: impl FnMut(u32, usize),
    ) -> Result<()> {
        let mut cursor = self.cursor_at(chunk);
        self.for_each_in_chunk(&mut cursor, chunk as u16, records, file, visit)
    }

    /// Fails if records remain past `cursor` (after the segment's last chunk: records beyond
    /// it).
    pub fn finish_chunks(
        &self,
        cursor: &ChunkCursor,
        records: u32,
        file: &IndexFile,
    ) -> Result<()> {
        if cursor.container < self.containers {
            let key = u32::from(u16_at(self.docs, 8 + 4 * cursor.container));
            return Err(file.corrupt(format!(
                "postings name records from {}, the segment holds {records}",
                key << 16
            )));
        }
        Ok(())
    }

    /// Calls `visit(record, palette index)` for each record of the containers from the
    /// cursor's up to container `end`, moving the cursor past them.
    #[inline]
    fn walk_coded(
        &self,
        cursor: &mut ChunkCursor,
        end: usize,
        records: u32,
        file: &IndexFile,
        mut visit: impl FnMut(u32, usize),
    ) -> Result<()> {
        let palette = self.palette.len();
        let codes = self.codes;
        if palette == 1 {
            return self.walk(cursor, end, records, file, |doc, _| visit(doc, 0));
        }
        let mut bad = None;
        self.walk(cursor, end, records, file, |doc, i| {
            let code = codes.get(i) as usize;
            if code < palette {
                visit(doc, code);
            } else {
                bad = Some(code);
            }
        })?;
        match bad {
            Some(code) => Err(file.corrupt(format!(
                "postings code {code} is outside a palette of {palette}"
            ))),
            None => Ok(()),
        }
    }

    /// Calls `visit(record, position)` for each record of the containers from the cursor's
    /// up to container `end`, ascending, moving the cursor past them.
    #[inline]
    fn walk(
        &self,
        cursor: &mut ChunkCursor,
        end: usize,
        records: u32,
        file: &IndexFile,
        mut visit: impl FnMut(u32, usize),
    ) -> Result<()> {
        let bytes = self.docs;
        let ChunkCursor {
            container: first,
            mut data,
            mut position,
        } = *cursor;
        let beyond = |doc: u32| {
            file.corrupt(format!(
                "postings name record {doc}, the segment holds {records}"
            ))
        };
        for c in first..end {
            let key = u32::from(u16_at(bytes, 8 + 4 * c));
            let card = usize::from(u16_at(bytes, 10 + 4 * c)) + 1;
            let base = key << 16;
            // Only a container reaching past the segment's last record (its last one, in a
            // sound file) can name a record beyond it; the others' records are not looked at
            // before they are visited.
            let whole = u64::from(base) + u64::from(u16::MAX) < u64::from(records);
            if card <= ARRAY_LIMIT {
                let values = &bytes[data..data + 2 * card];
                // The largest value, not the last: the values are not trusted to ascend.
                let biggest = || {
                    (values.chunks_exact(2))
                        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
                        .max()
                        .unwrap_or(0)
                };
                if !whole && base | u32::from(biggest()) >= records {
                    return Err(beyond(base | u32::from(biggest())));
                }
                for pair in values.chunks_exact(2) {
                    visit(
                        base | u32::from(u16::from_le_bytes([pair[0], pair[1]])),
                        position,
                    );
                    position += 1;
                }
                data += 2 * card;
            } else {
                let words = &bytes[data..data + BITMAP_BYTES];
                if !whole {
                    let last_word = words
                        .chunks_exact(8)
                        .rposition(|w| w != [0; 8])
                        .unwrap_or(0);
                    let top = words[last_word * 8..last_word * 8 + 8]
                        .try_into()
                        .map(u64::from_le_bytes)
                        .expect("8 bytes");
                    let max = base + 64 * last_word as u32 + (63 - top.leading_zeros().min(63));
                    if max >= records {
                        return Err(beyond(max));
                    }
                }
                for (w, word) in words.chunks_exact(8).enumerate() {
                    let mut bits = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                    let at = base + 64 * w as u32;
                    while bits != 0 {
                        visit(at + bits.trailing_zeros(), position);
                        position += 1;
                        bits &= bits - 1;
                    }
                }
                data += BITMAP_BYTES;
            }
        }
        *cursor = ChunkCursor {
            container: end,
            data,
            position,
        };
        Ok(())
    }

    /// The group mask of record `doc`, `None` when the term does not occur in it: a lookup in
    /// the serialized containers, for the few records whose breakdown is shown.
    pub fn mask_of(&self, doc: u32, file: &IndexFile) -> Result<Option<u16>> {
        match self.position_of(doc) {
            Some(position) => self.mask_at(position, file).map(Some),
            None => Ok(None),
        }
    }

    /// Calls `found` with the place in `docs` (ascending) of each record the term occurs in, and
    /// its group mask: a lookup each, every container stepped over once (each bitmap word
    /// counted once).
    pub fn each_mask(
        &self,
        docs: &[u32],
        file: &IndexFile,
        mut found: impl FnMut(usize, u16),
    ) -> Result<()> {
        let mut seek = Seek::default();
        for (i, &doc) in docs.iter().enumerate() {
            if let Some(position) = self.position_from(doc, &mut seek) {
                found(i, self.mask_at(position, file)?);
            }
        }
        Ok(())
    }

    /// Calls `found` with the place in `docs` (ascending) of each record the term occurs in: a
    /// lookup each, every container stepped over once.
    pub fn each_contained(&self, docs: &[u32], mut found: impl FnMut(usize)) {
        let mut seek = Seek::default();
        for (i, &doc) in docs.iter().enumerate() {
            if self.find(doc, &mut seek, false).is_some() {
                found(i);
            }
        }
    }

    /// The place of record `doc` among the term's records, `None` when the term does not occur
    /// in it: a lookup in the serialized containers.
    fn position_of(&self, doc: u32) -> Option<usize> {
        self.position_from(doc, &mut Seek::default())
    }

    /// [`TermPostings::position_of`] from where `seek` stands, which it moves to `doc`'s
    /// container (and in a bitmap container, to its word): records looked up in ascending order
    /// step over each container, and count each bitmap word's records, once.
    fn position_from(&self, doc: u32, seek: &mut Seek) -> Option<usize> {
        self.find(doc, seek, true)
    }

    /// [`TermPostings::position_from`], or without `rank` only whether the term occurs in
    /// record `doc` (`Some(0)` if it does): a bitmap container's words before `doc`'s are then
    /// not counted.
    fn find(&self, doc: u32, seek: &mut Seek, rank: bool) -> Option<usize> {
        let bytes = self.docs;
        let (key, low) = ((doc >> 16) as u16, doc as u16);
        if seek.container > 0 && u16_at(bytes, 8 + 4 * (seek.container - 1)) >= key {
            // Not ascending: from the first container.
            *seek = Seek::default();
        }
        while seek.container < self.containers {
            let c = seek.container;
            let card = usize::from(u16_at(bytes, 10 + 4 * c)) + 1;
            let size = if card <= ARRAY_LIMIT {
                2 * card
            } else {
                BITMAP_BYTES
            };
            let at = u16_at(bytes, 8 + 4 * c);
            if at > key {
                return None;
            }
            if at < key {
                *seek = Seek {
                    container: c + 1,
                    data: seek.data + size,
                    position: seek.position + card,
                    ..Seek::default()
                };
                continue;
            }
            let data = 8 + 8 * self.containers + seek.data;
            let rank = if card <= ARRAY_LIMIT {
                let values = &bytes[data..data + size];
                let value = |i: usize| u16_at(values, 2 * i);
                if seek.word > 0 && value(seek.word - 1) >= low {
                    // Not ascending: from the container's start.
                    seek.word = 0;
                }
                // Galloping from the last place, then halving: records looked up in ascending
                // order cost in proportion to the distance between them.
                let (mut lo, mut step) = (seek.word, 1);
                let mut hi = lo;
                while hi < card && value(hi) < low {
                    lo = hi + 1;
                    hi = lo + step;
                    step *= 2;
                }
                let mut hi = hi.min(card);
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if value(mid) < low {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                seek.word = lo;
                if lo == card || value(lo) != low {
                    return None;
                }
                lo
            } else {
                let words = &bytes[data..data + size];
                let word = |w: usize| u64_at(words, 8 * w);
                let (w, bit) = (usize::from(low) / 64, u32::from(low) % 64);
                if !rank {
                    return (word(w) >> bit & 1 != 0).then_some(0);
                }
                if w < seek.word {
                    // Not ascending: count from the container's start.
                    (seek.word, seek.before) = (0, 0);
                }
                seek.before += (seek.word..w).map(|i| word(i).count_ones()).sum::<u32>();
                seek.word = w;
                if word(w) >> bit & 1 == 0 {
                    return None;
                }
                (seek.before + (word(w) & ((1u64 << bit) - 1)).count_ones()) as usize
            };
            return Some(seek.position + rank);
        }
        None
    }

    /// Per code, the groups of its palette mask; [`OUTSIDE_PALETTE`] past the palette (which
    /// [`TermPostings::parse`] keeps shorter than the table: its masks are distinct).
    fn group_counts(&self) -> [u8; 1 << GROUP_COUNT] {
        let mut groups = [OUTSIDE_PALETTE; 1 << GROUP_COUNT];
        for (of_code, mask) in groups.iter_mut().zip(&self.palette) {
            *of_code = mask.count_ones() as u8;
        }
        groups
    }

    /// The term frequencies the records at positions `from..to` hold: the groups of their
    /// masks, counted from their codes in bulk with `groups` ([`TermPostings::group_counts`]).
    fn values_between(
        &self,
        groups: &[u8; 1 << GROUP_COUNT],
        from: usize,
        to: usize,
        file: &IndexFile,
    ) -> Result<usize> {
        if let [mask] = self.palette[..] {
            return Ok((to - from) * mask.count_ones() as usize);
        }
        let (mut values, mut outside) = (0usize, false);
        self.codes.for_each_in(from, to, |code| {
            let of_code = groups
                .get(code as usize)
                .copied()
                .unwrap_or(OUTSIDE_PALETTE);
            outside |= of_code == OUTSIDE_PALETTE;
            values += usize::from(of_code);
        });
        if outside {
            // Named by the record-at-a-time reading, which finds the code at fault.
            return (from..to).try_fold(0, |values, position| {
                Ok(values + self.mask_at(position, file)?.count_ones() as usize)
            });
        }
        Ok(values)
    }

    /// The group mask of the record at `position` among the term's records.
    fn mask_at(&self, position: usize, file: &IndexFile) -> Result<u16> {
        let code = if self.palette.len() == 1 {
            0
        } else {
            self.codes.get(position) as usize
        };
        match self.palette.get(code) {
            Some(&mask) => Ok(mask),
            None => Err(file.corrupt(format!(
                "postings code {code} is outside a palette of {}",
                self.palette.len()
            ))),
        }
    }

    /// [`TermPostings::for_each_with_tfs`] for the records of `docs` (ascending) alone, for a
    /// few records (a page's): each found in the serialized containers, the term frequencies
    /// before it counted from the group masks (not decoded), whole blocks of them stepped over,
    /// and its own read from its block.
    pub fn for_each_with_tfs_of(
        &self,
        docs: &[u32],
        file: &IndexFile,
        mut visit: impl FnMut(u32, u16, &[u32; GROUP_COUNT]),
    ) -> Result<()> {
        let corrupt = |problem: FormatError| file.corrupt(problem.within("postings"));
        let mut blocks = TfBlocks::new(self.tfs).map_err(corrupt)?;
        let mut block = Vec::with_capacity(TF_BLOCK);
        // The records counted so far and the term frequencies they hold; the index of the first
        // value of `block`, and of the block after it.
        let (mut counted, mut values) = (0usize, 0usize);
        let (mut block_start, mut next_block) = (0usize, 0usize);
        let one_mask = (self.palette.len() == 1).then(|| self.palette[0].count_ones() as usize);
        let groups = self.group_counts();
        let mut seek = Seek::default();
        for &doc in docs {
            let Some(position) = self.position_from(doc, &mut seek) else {
                continue;
            };
            let mask = self.mask_at(position, file)?;
            match one_mask {
                Some(per_record) => values = position * per_record,
                None => {
                    if position < counted {
                        return Err(corrupt("records out of order".into()));
                    }
                    values += self.values_between(&groups, counted, position, file)?;
                    counted = position;
                }
            }
            let mut tfs = [0u32; GROUP_COUNT];
            let mut at = values;
            for (g, tf) in tfs.iter_mut().enumerate() {
                if mask & (1 << g) == 0 {
                    continue;
                }
                if at < block_start {
                    return Err(corrupt("records out of order".into()));
                }
                while at >= next_block {
                    if at >= next_block + TF_BLOCK {
                        next_block += blocks.skip().map_err(corrupt)?;
                    } else {
                        blocks.decode(&mut block).map_err(corrupt)?;
                        block_start = next_block;
                        next_block += block.len();
                    }
                }
                *tf = block[at - block_start].saturating_add(1);
                at += 1;
            }
            visit(doc, mask, &tfs);
        }
        Ok(())
    }

    /// Per group, the records containing the term there.
    pub fn group_records(
        &self,
        records: u32,
        file: &IndexFile,
    ) -> Result<[RoaringBitmap; GROUP_COUNT]> {
        let mut groups: [RoaringBitmap; GROUP_COUNT] = Default::default();
        let palette = &self.palette;
        self.for_each(records, file, |doc, code| {
            let mask = palette[code];
            for (g, group) in groups.iter_mut().enumerate() {
                if mask & (1 << g) != 0 {
                    group.push(doc);
                }
            }
        })?;
        Ok(groups)
    }

    /// Calls `visit(record, group mask, tfs)` for each record, ascending, `tfs[g]` being the
    /// term's frequency in group `g` (0 outside the mask). Checks that the tfs fill their part
    /// of the blob exactly.
    pub fn for_each_with_tfs(
        &self,
        records: u32,
        file: &IndexFile,
        visit: impl FnMut(u32, u16, &[u32; GROUP_COUNT]),
    ) -> Result<()> {
        self.for_each_with_tfs_where(records, file, |_| true, visit)
    }

    /// [`TermPostings::for_each_with_tfs`] for the records `wanted` accepts: the others' term
    /// frequencies are stepped over, not gathered (every block is still decoded and checked).
    pub fn for_each_with_tfs_where(
        &self,
        records: u32,
        file: &IndexFile,
        wanted: impl Fn(u32) -> bool,
        visit: impl FnMut(u32, u16, &[u32; GROUP_COUNT]),
    ) -> Result<()> {
        let mut cursor = self.tf_cursor(file)?;
        let TfCursor { chunks, values } = &mut cursor;
        let end = self.containers;
        let mut visit = visit;
        self.walk_with_tfs(values, chunks, end, records, file, wanted, |doc, tfs| {
            visit(doc, tfs.mask, &tfs.to_array())
        })?;
        self.finish_tfs(&mut cursor, records, file)
    }

    /// A cursor at the first chunk of the records and their term frequencies, for
    /// [`TermPostings::for_each_with_tfs_in_chunk`].
    pub fn tf_cursor(&self, file: &IndexFile) -> Result<TfCursor<'a>> {
        let blocks = TfBlocks::new(self.tfs)
            .map_err(|problem| file.corrupt(problem.within("postings blob")))?;
        Ok(TfCursor {
            chunks: self.chunk_cursor(),
            values: TfValues {
                blocks,
                block: Vec::with_capacity(TF_BLOCK),
                next: 0,
                skipped: 0,
            },
        })
    }

    /// [`TermPostings::for_each_with_tfs_where`] over the records of chunk `chunk` alone, from
    /// `cursor` (carried from the chunk before), which it moves past them; after the last chunk,
    /// [`TermPostings::finish_tfs`] tells whether anything remains.
    pub fn for_each_with_tfs_in_chunk(
        &self,
        cursor: &mut TfCursor<'a>,
        chunk: u16,
        records: u32,
        file: &IndexFile,
        wanted: impl Fn(u32) -> bool,
        visit: impl FnMut(u32, PostingTfs<'_>),
    ) -> Result<()> {
        let TfCursor { chunks, values } = cursor;
        if chunks.container < self.containers {
            let key = u16_at(self.docs, 8 + 4 * chunks.container);
            debug_assert!(key >= chunk, "chunk {key} was skipped");
            if key == chunk {
                let end = chunks.container + 1;
                self.walk_with_tfs(values, chunks, end, records, file, wanted, visit)?;
            }
        }
        Ok(())
    }

    /// [`TermPostings::for_each_with_tfs_in_chunk`] for the records of chunk `chunk` whose bit
    /// is set in `among` (a bit per record of the chunk) alone, for a walk that wants few of
    /// the term's records: the container is matched against the bits without a call per record
    /// (a bitmap container a word at a time), and the term frequencies of the records between
    /// are counted from their codes in bulk and stepped over, not decoded. `hits` is scratch.
    #[allow(clippy::too_many_arguments)]
    pub fn for_each_with_tfs_among(
        &self,
        cursor: &mut TfCursor<'a>,
        chunk: u16,
        records: u32,
        file: &IndexFile,
        among: &[u64; CHUNK_RECORDS / 64],
        hits: &mut Vec<(u32, u32)>,
        mut visit: impl FnMut(u32, PostingTfs<'_>),
    ) -> Result<()> {
        let TfCursor { chunks, values } = cursor;
        let c = chunks.container;
        if c >= self.containers {
            return Ok(());
        }
        let key = u16_at(self.docs, 8 + 4 * c);
        debug_assert!(key >= chunk, "chunk {key} was skipped");
        if key != chunk {
            return Ok(());
        }
        let card = usize::from(u16_at(self.docs, 10 + 4 * c)) + 1;
        let base = u32::from(key) << 16;
        let data = chunks.data;
        // Per record wanted: it, and its place among the container's records.
        hits.clear();
        let (size, count, biggest) = if card <= ARRAY_LIMIT {
            let lows = &self.docs[data..data + 2 * card];
            let mut biggest = 0u16;
            for (i, low) in lows.chunks_exact(2).enumerate() {
                let low = u16::from_le_bytes([low[0], low[1]]);
                // The largest value, not the last: the values are not trusted to ascend.
                biggest = biggest.max(low);
                if among[usize::from(low) / 64] >> (low % 64) & 1 != 0 {
                    hits.push((base | u32::from(low), i as u32));
                }
            }
            (2 * card, card, Some(u32::from(biggest)))
        } else {
            let words = &self.docs[data..data + BITMAP_BYTES];
            let (mut before, mut biggest) = (0u32, None);
            for (w, word) in words.chunks_exact(8).enumerate() {
                let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                if word != 0 {
                    biggest = Some(64 * w as u32 + 63 - word.leading_zeros());
                }
                let mut held = word & among[w];
                while held != 0 {
                    let bit = held.trailing_zeros();
                    let rank = (word & ((1u64 << bit) - 1)).count_ones();
                    hits.push((base + 64 * w as u32 + bit, before + rank));
                    held &= held - 1;
                }
                before += word.count_ones();
            }
            (BITMAP_BYTES, before as usize, biggest)
        };
        if let Some(biggest) = biggest.filter(|&b| base | b >= records) {
            return Err(file.corrupt(format!(
                "postings name record {}, the segment holds {records}",
                base | biggest
            )));
        }
        let corrupt = |problem: FormatError| file.corrupt(problem.within("postings"));
        let groups = self.group_counts();
        let first = chunks.position;
        let mut next = first;
        let mut spill = [0u32; GROUP_COUNT];
        for &(doc, i) in hits.iter() {
            let position = first + i as usize;
            values.skip(self.values_between(&groups, next, position, file)?);
            let mask = self.mask_at(position, file)?;
            let stored = values.take_stored(mask, &mut spill).map_err(corrupt)?;
            visit(doc, PostingTfs { mask, stored });
            next = position + 1;
        }
        values.skip(self.values_between(&groups, next, first + count, file)?);
        *chunks = ChunkCursor {
            container: c + 1,
            data: data + size,
            position: first + count,
        };
        Ok(())
    }

    /// Fails if records remain past `cursor` (after the segment's last chunk: records beyond
    /// it), or term frequencies that no record took.
    pub fn finish_tfs(
        &self,
        cursor: &mut TfCursor<'_>,
        records: u32,
        file: &IndexFile,
    ) -> Result<()> {
        self.finish_chunks(&cursor.chunks, records, file)?;
        let corrupt = |problem: FormatError| file.corrupt(problem.within("postings"));
        if !cursor.values.is_done().map_err(corrupt)? {
            return Err(corrupt("term frequencies do not fit the records".into()));
        }
        Ok(())
    }

    /// The records of the containers from `at` up to container `end` with their term
    /// frequencies, taken from `values`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn walk_with_tfs(
        &self,
        values: &mut TfValues<'a>,
        at: &mut ChunkCursor,
        end: usize,
        records: u32,
        file: &IndexFile,
        wanted: impl Fn(u32) -> bool,
        mut visit: impl FnMut(u32, PostingTfs<'_>),
    ) -> Result<()> {
        let mut problem: Option<FormatError> = None;
        let palette = &self.palette;
        let mut spill = [0u32; GROUP_COUNT];
        self.walk_coded(at, end, records, file, |doc, code| {
            if problem.is_some() {
                return;
            }
            let mask = palette[code];
            let taken = match wanted(doc) {
                true => values
                    .take_stored(mask, &mut spill)
                    .map(|stored| visit(doc, PostingTfs { mask, stored })),
                false => {
                    values.skip(mask.count_ones() as usize);
                    Ok(())
                }
            };
            if let Err(p) = taken {
                problem = Some(p);
            }
        })?;
        match problem {
            Some(problem) => Err(file.corrupt(problem.within("postings"))),
            None => Ok(()),
        }
    }

    /// Calls `visit` with the term frequencies (tf − 1) a block at a time, in order; checks
    /// that they are `expected` values filling their part of the blob exactly.
    pub fn tf_values(
        &self,
        expected: usize,
        file: &IndexFile,
        mut visit: impl FnMut(&[u32]),
    ) -> Result<()> {
        let mut blocks = TfBlocks::new(self.tfs)
            .map_err(|problem| file.corrupt(problem.within("postings blob")))?;
        if blocks.remaining != expected {
            return Err(file.corrupt(format!(
                "postings: {} term frequencies for records that need {expected}",
                blocks.remaining
            )));
        }
        let mut block = Vec::with_capacity(TF_BLOCK);
        while blocks.remaining > 0 {
            blocks
                .decode(&mut block)
                .map_err(|problem| file.corrupt(problem.within("postings")))?;
            visit(&block);
        }
        if !blocks.bytes.is_empty() {
            return Err(file.corrupt("postings: term frequencies do not fit the records"));
        }
        Ok(())
    }
}

/// Checks the header of the serialized record set (roaring's format without run containers)
/// `bytes` start with and that its containers fit them, and with `count_bitmaps` that each
/// bitmap container's bits number its cardinality; returns the container count, the
/// cardinality and the bytes the record set takes (its header implies them).
fn docs_header(
    bytes: &[u8],
    count_bitmaps: bool,
) -> std::result::Result<(usize, u64, usize), FormatError> {
    let mut cursor = ByteCursor::new(bytes);
    let cookie = cursor.u32()?;
    if cookie != NO_RUN_COOKIE {
        return Err(format!("cookie {cookie} is not {NO_RUN_COOKIE}").into());
    }
    let size = cursor.u32()? as usize;
    if size > 1 << 16 {
        return Err(format!("{size} containers").into());
    }
    let header = 8 + 8 * size;
    cursor.take(8 * size)?;
    let mut expected = header;
    let mut len = 0u64;
    let mut previous: Option<u16> = None;
    for c in 0..size {
        let key = u16_at(bytes, 8 + 4 * c);
        if previous.is_some_and(|p| p >= key) {
            return Err(format!("container keys out of order ({key} after {previous:?})").into());
        }
        previous = Some(key);
        let card = usize::from(u16_at(bytes, 10 + 4 * c)) + 1;
        let offset = u32_at(bytes, 8 + 4 * size + 4 * c) as usize;
        if offset != expected {
            return Err(format!("container {c} at {offset}, expected {expected}").into());
        }
        expected += if card <= ARRAY_LIMIT {
            2 * card
        } else {
            BITMAP_BYTES
        };
        len += card as u64;
    }
    if expected > bytes.len() {
        return Err(format!("containers take {expected} bytes of {}", bytes.len()).into());
    }
    // A bitmap container's bits must number its cardinality, or positions would run past the
    // codes; checked here once rather than per record in the walk.
    if !count_bitmaps {
        return Ok((size, len, expected));
    }
    let mut data = header;
    for c in 0..size {
        let card = usize::from(u16_at(bytes, 10 + 4 * c)) + 1;
        if card <= ARRAY_LIMIT {
            data += 2 * card;
        } else {
            let bits: u32 = bytes[data..data + BITMAP_BYTES]
                .chunks_exact(8)
                .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")).count_ones())
                .sum();
            if bits as usize != card {
                return Err(format!("container {c} holds {bits} records, not {card}").into());
            }
            data += BITMAP_BYTES;
        }
    }
    Ok((size, len, expected))
}

/// Decodes a roaring bitmap in the portable format, validating it: the containers are checked
/// by `deserialize_from`, their keys here (a bitmap whose keys do not ascend would answer
/// membership and set operations wrongly), and every byte must be used.
pub fn decode_bitmap(bytes: &[u8]) -> std::result::Result<RoaringBitmap, FormatError> {
    let mut reader = bytes;
    let bitmap = RoaringBitmap::deserialize_from(&mut reader)
        .map_err(|e| FormatError::Invalid(e.to_string()))?;
    if !reader.is_empty() {
        return Err(format!("{} trailing bytes", reader.len()).into());
    }
    // The header is sound now (deserialize_from read it): cookie, then the container keys.
    let mut header = ByteCursor::new(bytes);
    let cookie = header.u32()?;
    let (size, descriptions_at) = if cookie == NO_RUN_COOKIE {
        (header.u32()? as usize, 8)
    } else {
        let size = (cookie >> 16) as usize + 1;
        (size, 4 + size.div_ceil(8))
    };
    let mut previous: Option<u16> = None;
    for i in 0..size {
        let key = ByteCursor::at(bytes, descriptions_at + 4 * i).u16()?;
        if previous.is_some_and(|p| p >= key) {
            return Err(format!(
                "container keys out of order ({key} after {})",
                previous.unwrap_or(0)
            )
            .into());
        }
        previous = Some(key);
    }
    Ok(bitmap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::blobs::BlobWriter;
    use crate::format::file::with_empty_file as with_file;
    use crate::format::footer::FileKind;
    use crate::format::manifest::FileEntry;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// Postings as a map record → per-group tf (0 = absent), the model the blob must answer.
    type Model = BTreeMap<u32, [u32; GROUP_COUNT]>;

    fn postings_of(model: &Model) -> Vec<Posting> {
        let mut out = Vec::new();
        for (&doc, tfs) in model {
            // Groups in descending order: the encoder orders them itself.
            for g in (0..GROUP_COUNT).rev() {
                if tfs[g] > 0 {
                    out.push((doc, g as u8, tfs[g]));
                }
            }
        }
        out
    }

    fn model_strategy() -> impl Strategy<Value = Model> {
        // Records spread over several containers, some dense enough for bitmap containers.
        let doc = prop_oneof![0u32..300, 65_000u32..75_000, 131_072u32..131_072 + 5000];
        let tfs = proptest::collection::vec(
            prop_oneof![3 => Just(0u32), 2 => 1u32..3, 1 => 1u32..5000],
            GROUP_COUNT,
        )
        .prop_filter("some group", |t| t.iter().any(|&x| x > 0));
        proptest::collection::btree_map(doc, tfs, 0..400).prop_map(|m| {
            m.into_iter()
                .map(|(d, t)| (d, t.try_into().unwrap()))
                .collect()
        })
    }

    fn read_back(blob: &[u8], file: &IndexFile) -> Model {
        let postings = TermPostings::parse(blob, file).unwrap();
        let mut model = Model::new();
        postings
            .for_each_with_tfs(1 << 20, file, |doc, mask, tfs| {
                for (g, &tf) in tfs.iter().enumerate() {
                    assert_eq!(tf > 0, mask & (1 << g) != 0);
                }
                assert!(model.insert(doc, *tfs).is_none());
            })
            .unwrap();
        model
    }

    proptest! {
        /// The record set is written as roaring writes it: dense containers (bitmaps) and
        /// sparse ones (arrays) alike.
        #[test]
        fn record_sets_serialize_as_roaring_does(
            sparse in prop::collection::btree_set(0u32..1 << 20, 0..300),
            dense_from in 0u32..4,
            dense_len in 4090u32..4200,
        ) {
            let mut docs: Vec<u32> = sparse.into_iter().collect();
            docs.extend((0..dense_len).map(|i| (dense_from << 20) + (5 << 16) + 3 * i));
            docs.sort_unstable();
            docs.dedup();
            let mut ours = Vec::new();
            serialize_docs(&docs, &mut ours);
            let mut theirs = Vec::new();
            RoaringBitmap::from_sorted_iter(docs.iter().copied())
                .unwrap()
                .serialize_into(&mut theirs)
                .unwrap();
            prop_assert_eq!(ours, theirs);
        }

        #[test]
        fn every_record_group_and_frequency_reads_back(model in model_strategy()) {
            with_file(|file| {
                let mut blob = Vec::new();
                encode_term(&postings_of(&model), &mut blob);
                assert_eq!(read_back(&blob, file), model);

                let postings = TermPostings::parse(&blob, file).unwrap();
                assert_eq!(postings.len(), model.len() as u64);
                let records = postings.records(file).unwrap();
                assert!(records.iter().eq(model.keys().copied()));
                let groups = postings.group_records(1 << 20, file).unwrap();
                for (g, group) in groups.iter().enumerate() {
                    let expected = model.iter().filter(|(_, t)| t[g] > 0).map(|(&d, _)| d);
                    assert!(group.iter().eq(expected), "group {g}");
                }
                let mut visited = Vec::new();
                postings
                    .for_each(1 << 20, file, |doc, code| visited.push((doc, postings.palette()[code])))
                    .unwrap();
                let expected: Vec<(u32, u16)> = model
                    .iter()
                    .map(|(&d, t)| {
                        let mask = (0..GROUP_COUNT).filter(|&g| t[g] > 0).fold(0u16, |m, g| m | 1 << g);
                        (d, mask)
                    })
                    .collect();
                assert_eq!(visited, expected);
                // Chunk by chunk, the cursor carried along: the same records and codes.
                let mut chunked = Vec::new();
                let mut cursor = postings.chunk_cursor();
                for chunk in 0..(1u32 << 20).div_ceil(CHUNK_RECORDS as u32) {
                    postings
                        .for_each_in_chunk(&mut cursor, chunk as u16, 1 << 20, file, |doc, code| {
                            assert_eq!(doc as usize / CHUNK_RECORDS, chunk as usize);
                            chunked.push((doc, postings.palette()[code]));
                        })
                        .unwrap();
                }
                postings.finish_chunks(&cursor, 1 << 20, file).unwrap();
                assert_eq!(chunked, expected);
                // Each chunk from a cursor found for it: the same again.
                let mut jumped = Vec::new();
                for chunk in 0..(1usize << 20).div_ceil(CHUNK_RECORDS) {
                    let mut cursor = postings.cursor_at(chunk);
                    postings
                        .for_each_in_chunk(&mut cursor, chunk as u16, 1 << 20, file, |doc, code| {
                            jumped.push((doc, postings.palette()[code]));
                        })
                        .unwrap();
                }
                assert_eq!(jumped, expected);
                let past = postings.cursor_at((1usize << 20).div_ceil(CHUNK_RECORDS));
                postings.finish_chunks(&past, 1 << 20, file).unwrap();
                for &(doc, mask) in &expected {
                    assert_eq!(postings.mask_of(doc, file).unwrap(), Some(mask));
                    if !model.contains_key(&(doc + 1)) {
                        assert_eq!(postings.mask_of(doc + 1, file).unwrap(), None);
                    }
                }
                assert_eq!(postings.mask_of(1 << 20, file).unwrap(), None);
                // The masks of the records asked about (ascending) that hold the term: those
                // around each held record, every 3rd record, every 7,919th.
                let around: Vec<u32> = (expected.iter())
                    .flat_map(|&(doc, _)| doc.saturating_sub(1)..doc + 2)
                    .collect::<BTreeSet<u32>>()
                    .into_iter()
                    .collect();
                let strides = [3, 7_919].map(|stride| (0..1 << 20).step_by(stride).collect());
                for asked in [vec![around], strides.to_vec()].concat() {
                    let mut found = Vec::new();
                    (postings.each_mask(&asked, file, |i, mask| found.push((asked[i], mask))))
                        .unwrap();
                    let wanted: Vec<(u32, u16)> = (expected.iter().copied())
                        .filter(|(doc, _)| asked.binary_search(doc).is_ok())
                        .collect();
                    assert_eq!(found, wanted);
                }
                // With their term frequencies, chunk by chunk: every third record stepped
                // over; all but every 97th (whole blocks of term frequencies stepped over
                // undecoded); all: the same as the whole walk and the model.
                let walks: [&dyn Fn(u32) -> bool; 3] =
                    [&|doc| doc % 3 != 1, &|doc| doc % 97 == 5, &|_| false];
                for wanted in walks {
                    let expected: Vec<(u32, [u32; GROUP_COUNT])> = model
                        .iter()
                        .filter(|(&d, _)| wanted(d))
                        .map(|(&d, t)| (d, *t))
                        .collect();
                    assert_eq!(with_tfs_whole(&postings, file, wanted).unwrap(), expected);
                    assert_eq!(with_tfs_chunked(&postings, file, wanted).unwrap(), expected);
                    let near: Vec<u32> = model.keys().flat_map(|&d| [d, d + 1]).collect();
                    assert_eq!(with_tfs_among(&postings, file, &near, wanted).unwrap(), expected);
                }
                // A few records looked up, among records without the term: theirs alone. Every
                // 7th record reads neighbouring blocks; every 97th and the last (over a hundred
                // values apart, as a rule) step over whole blocks undecoded.
                for stride in [7, 97] {
                    let asked: Vec<u32> = model
                        .keys()
                        .step_by(stride)
                        .chain(model.keys().last())
                        .flat_map(|&d| [d, d + 1])
                        .collect::<BTreeSet<u32>>()
                        .into_iter()
                        .collect();
                    let expected: Vec<(u32, [u32; GROUP_COUNT])> = model
                        .iter()
                        .filter(|(d, _)| asked.contains(d))
                        .map(|(&d, t)| (d, *t))
                        .collect();
                    let mut looked_up = Vec::new();
                    postings
                        .for_each_with_tfs_of(&asked, file, |doc, _, tfs| looked_up.push((doc, *tfs)))
                        .unwrap();
                    assert_eq!(looked_up, expected);
                }
            });
        }

        /// Cut or altered blobs are errors, never panics or wrong records beyond the segment.
        #[test]
        fn damaged_blobs_fail_cleanly(model in model_strategy(), cut in any::<prop::sample::Index>(), flip in any::<prop::sample::Index>(), bit in 0u8..8) {
            with_file(|file| {
                let mut blob = Vec::new();
                encode_term(&postings_of(&model), &mut blob);
                let short = &blob[..cut.index(blob.len().max(1)).min(blob.len().saturating_sub(1))];
                if let Ok(postings) = TermPostings::parse(short, file) {
                    let _ = postings.for_each_with_tfs(1 << 20, file, |_, _, _| {});
                }
                let mut flipped = blob.clone();
                if !flipped.is_empty() {
                    let at = flip.index(flipped.len());
                    flipped[at] ^= 1 << bit;
                }
                if let Ok(postings) = TermPostings::parse(&flipped, file) {
                    let _ = postings.records(file);
                    let _ = postings.group_records(1 << 20, file);
                    let mut docs = Vec::new();
                    if postings.for_each(200_000, file, |doc, _| docs.push(doc)).is_ok() {
                        assert!(docs.iter().all(|&d| d < 200_000));
                    }
                    let _ = postings.for_each_with_tfs(1 << 20, file, |_, _, _| {});
                    let asked: Vec<u32> = (0..200_000).step_by(997).collect();
                    let _ = postings.for_each_with_tfs_of(&asked, file, |_, _, _| {});
                    // Chunk by chunk, the same records and the same verdict.
                    let wanted = |doc: u32| doc.is_multiple_of(2);
                    let whole = with_tfs_whole(&postings, file, wanted);
                    let chunked = with_tfs_chunked(&postings, file, wanted);
                    match (&whole, &chunked) {
                        (Ok(a), Ok(b)) => assert_eq!(a, b),
                        (Err(_), Err(_)) => {}
                        _ => panic!("whole {whole:?}, chunked {chunked:?}"),
                    }
                    // For the records of a bit array alone: the same again.
                    let even: Vec<u32> = (0..1 << 20).step_by(2).collect();
                    let among = with_tfs_among(&postings, file, &even, wanted);
                    match (&chunked, &among) {
                        (Ok(a), Ok(b)) => assert_eq!(a, b),
                        (Err(_), Err(_)) => {}
                        _ => panic!("chunked {chunked:?}, among {among:?}"),
                    }
                }
            });
        }
    }

    type WithTfs = Vec<(u32, [u32; GROUP_COUNT])>;

    fn with_tfs_whole(
        postings: &TermPostings<'_>,
        file: &IndexFile,
        wanted: impl Fn(u32) -> bool,
    ) -> Result<WithTfs> {
        let mut out = Vec::new();
        postings
            .for_each_with_tfs_where(1 << 20, file, wanted, |doc, _, tfs| out.push((doc, *tfs)))?;
        Ok(out)
    }

    fn with_tfs_chunked(
        postings: &TermPostings<'_>,
        file: &IndexFile,
        wanted: impl Fn(u32) -> bool + Copy,
    ) -> Result<WithTfs> {
        let mut out = Vec::new();
        let mut cursor = postings.tf_cursor(file)?;
        for chunk in 0..(1usize << 20).div_ceil(CHUNK_RECORDS) {
            postings.for_each_with_tfs_in_chunk(
                &mut cursor,
                chunk as u16,
                1 << 20,
                file,
                wanted,
                |doc, tfs| {
                    assert_eq!(doc as usize / CHUNK_RECORDS, chunk);
                    out.push((doc, tfs.to_array()));
                },
            )?;
        }
        postings.finish_tfs(&mut cursor, 1 << 20, file)?;
        Ok(out)
    }

    /// [`TermPostings::for_each_with_tfs_among`] chunk by chunk, each chunk's bits set for the
    /// records of `near` that `wanted` accepts.
    fn with_tfs_among(
        postings: &TermPostings<'_>,
        file: &IndexFile,
        near: &[u32],
        wanted: impl Fn(u32) -> bool,
    ) -> Result<WithTfs> {
        let mut out = Vec::new();
        let mut cursor = postings.tf_cursor(file)?;
        let mut hits = Vec::new();
        let chunks = (1usize << 20).div_ceil(CHUNK_RECORDS);
        let mut bits = vec![[0u64; CHUNK_RECORDS / 64]; chunks];
        for &doc in near.iter().filter(|&&doc| wanted(doc)) {
            let (chunk, at) = (doc as usize / CHUNK_RECORDS, doc as usize % CHUNK_RECORDS);
            bits[chunk][at / 64] |= 1 << (at % 64);
        }
        for (chunk, among) in bits.iter().enumerate() {
            postings.for_each_with_tfs_among(
                &mut cursor,
                chunk as u16,
                1 << 20,
                file,
                among,
                &mut hits,
                |doc, tfs| {
                    assert_eq!(doc as usize / CHUNK_RECORDS, chunk);
                    out.push((doc, tfs.to_array()));
                },
            )?;
        }
        postings.finish_tfs(&mut cursor, 1 << 20, file)?;
        Ok(out)
    }

    /// Records looked up in bitmap containers (more than 4,096 records of one chunk) and array
    /// ones, in ascending order (each container and bitmap word stepped over once) and one at a
    /// time in any order: each record's place, group mask and term frequencies as written.
    #[test]
    fn records_are_found_in_bitmap_and_array_containers() {
        let mut model = Model::new();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Chunk 0 dense (a bitmap), chunk 1 sparse (an array), chunk 3 dense again.
        for doc in (0..65_536u32).chain(200_000..262_144) {
            if next() % 3 == 0 {
                let g = (next() % GROUP_COUNT as u64) as usize;
                let mut tfs = [0u32; GROUP_COUNT];
                tfs[g] = 1 + (next() % 4) as u32;
                if next() % 5 == 0 {
                    tfs[(g + 1) % GROUP_COUNT] = 1;
                }
                model.insert(doc, tfs);
            }
        }
        for doc in (65_536..131_072u32).step_by(37) {
            model.insert(doc, [1; GROUP_COUNT]);
        }
        with_file(|file| {
            let mut blob = Vec::new();
            encode_term(&postings_of(&model), &mut blob);
            let postings = TermPostings::parse(&blob, file).unwrap();
            for stride in [1, 61, 1009] {
                let asked: Vec<u32> = (0..270_000u32).step_by(stride).collect();
                let expected: Vec<(u32, [u32; GROUP_COUNT])> = asked
                    .iter()
                    .filter_map(|d| model.get(d).map(|t| (*d, *t)))
                    .collect();
                let mut looked_up = Vec::new();
                postings
                    .for_each_with_tfs_of(&asked, file, |doc, _, tfs| looked_up.push((doc, *tfs)))
                    .unwrap();
                assert_eq!(looked_up, expected, "stride {stride}");
            }
            // Walked chunk by chunk for the records asked about alone: every record, every 3rd,
            // every 61st (most values between stepped over), none.
            let every: Vec<u32> = (0..270_000).collect();
            let walks: [&dyn Fn(u32) -> bool; 4] = [
                &|_| true,
                &|doc| doc % 3 == 0,
                &|doc| doc % 61 == 7,
                &|_| false,
            ];
            for wanted in walks {
                let expected: Vec<(u32, [u32; GROUP_COUNT])> = model
                    .iter()
                    .filter(|(&d, _)| wanted(d))
                    .map(|(&d, t)| (d, *t))
                    .collect();
                assert_eq!(
                    with_tfs_among(&postings, file, &every, wanted).unwrap(),
                    expected
                );
            }
            let places: BTreeMap<u32, usize> =
                model.keys().enumerate().map(|(i, &d)| (d, i)).collect();
            for doc in (0..270_000u32).rev().step_by(13) {
                assert_eq!(
                    postings.position_of(doc),
                    places.get(&doc).copied(),
                    "{doc}"
                );
            }
            // One seek carried through lookups that go back as well as forth, within an array
            // container, within a bitmap and across containers.
            let mut seek = Seek::default();
            for doc in [
                69_236u32, 65_980, 65_573, 130_000, 65_536, 69_236, 200_003, 1_000, 262_000,
                65_573, 60_000, 30_000,
            ] {
                let found = postings.position_from(doc, &mut seek);
                assert_eq!(found, places.get(&doc).copied(), "{doc}");
            }
            // Whether each record asked about (ascending) holds the term: exactly the model's.
            for stride in [1, 7, 61, 1009] {
                let asked: Vec<u32> = (0..270_000u32).step_by(stride).collect();
                let mut found = Vec::new();
                postings.each_contained(&asked, |i| found.push(asked[i]));
                let expected: Vec<u32> = asked
                    .iter()
                    .copied()
                    .filter(|d| model.contains_key(d))
                    .collect();
                assert_eq!(found, expected, "stride {stride}");
            }
        });
    }

    #[test]
    fn a_record_beyond_the_segment_is_reported() {
        with_file(|file| {
            let mut blob = Vec::new();
            encode_term(&[(3, 0, 1), (70_000, 2, 1)], &mut blob);
            let postings = TermPostings::parse(&blob, file).unwrap();
            let error = postings
                .for_each(1000, file, |_, _| {})
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("record 70000, the segment holds 1000"),
                "{error}"
            );
            assert!(postings.for_each(70_001, file, |_, _| {}).is_ok());
        });
    }

    /// Only a container reaching past the segment's last record is searched for records
    /// beyond it (the others' records are all below it), in either kind of container.
    #[test]
    fn records_beyond_the_segment_are_reported_from_either_kind_of_container() {
        with_file(|file| {
            let few: Vec<u32> = vec![3, 65_535, 65_600, 70_000];
            let many: Vec<u32> = (0..5000).chain(65_536..70_536).collect();
            for docs in [few, many] {
                let entries: Vec<Posting> = docs.iter().map(|&doc| (doc, 2, 1)).collect();
                let mut blob = Vec::new();
                encode_term(&entries, &mut blob);
                let postings = TermPostings::parse(&blob, file).unwrap();
                let error = postings
                    .for_each(70_000, file, |_, _| {})
                    .unwrap_err()
                    .to_string();
                let last = docs.last().unwrap();
                assert!(
                    error.contains(&format!("record {last}, the segment holds 70000")),
                    "{error}"
                );
                let mut walked = Vec::new();
                postings
                    .for_each(last + 1, file, |doc, _| walked.push(doc))
                    .unwrap();
                assert_eq!(walked, docs);
            }
        });
    }

    /// A bitmap container whose bits do not number its cardinality is refused when its blob is
    /// read from a postings file, at every read (a blob that failed is never taken as checked),
    /// though its CRC is sound; a sound blob's counts are checked at its first read alone.
    #[test]
    fn bitmap_counts_are_checked_until_a_read_passes() {
        let docs: Vec<u32> = (0..5000).collect();
        let entries: Vec<Posting> = docs.iter().map(|&doc| (doc, 2, 1)).collect();
        let mut sound = Vec::new();
        encode_term(&entries, &mut sound);
        // Record 4999's bit cleared: 4,999 bits for a cardinality of 5,000.
        let mut miscounted = sound.clone();
        let data = 8 + 8; // cookie and size, one container's key and offset
        let at = data + 4999 / 8;
        assert_ne!(miscounted[at] & 1 << (4999 % 8), 0);
        miscounted[at] &= !(1 << (4999 % 8));

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("terms.post");
        let mut writer = BlobWriter::create(&path, FileKind::Postings).unwrap();
        writer.push(&sound).unwrap();
        writer.push(&miscounted).unwrap();
        let footer = writer.finish().unwrap();
        let file = IndexFile::open(&path, FileKind::Postings, &FileEntry::from(footer)).unwrap();
        let postings = BlobFile::open(file).unwrap();
        for _ in 0..2 {
            let Err(error) = TermPostings::read(&postings, 1) else {
                panic!("a miscounted bitmap container was read");
            };
            let error = error.to_string();
            assert!(error.contains("holds 4999 records, not 5000"), "{error}");
            assert_eq!(TermPostings::read(&postings, 0).unwrap().len(), 5000);
        }
        // The count alone refuses it: parsed without counting, the rest of it is sound.
        assert!(TermPostings::parse_bytes(&miscounted, false).is_ok());
    }

    /// Walked chunk by chunk over a segment's chunks, records in a chunk past the segment's
    /// last are reported when the walk finishes, and those past its end within its last chunk
    /// when that chunk is walked.
    #[test]
    fn a_chunked_walk_reports_records_beyond_the_segment() {
        with_file(|file| {
            let mut blob = Vec::new();
            encode_term(&[(3, 0, 1), (70_000, 2, 1)], &mut blob);
            let postings = TermPostings::parse(&blob, file).unwrap();
            let mut cursor = postings.chunk_cursor();
            let mut docs = Vec::new();
            postings
                .for_each_in_chunk(&mut cursor, 0, 1000, file, |doc, _| docs.push(doc))
                .unwrap();
            assert_eq!(docs, [3]);
            let error = postings
                .finish_chunks(&cursor, 1000, file)
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("records from 65536, the segment holds 1000"),
                "{error}"
            );

            let past = postings.cursor_at(1);
            assert!(postings.finish_chunks(&past, 1000, file).is_err());
            // Walked for some records alone, the chunk's records are checked all the same.
            let mut cursor = postings.tf_cursor(file).unwrap();
            let none = [0u64; CHUNK_RECORDS / 64];
            let mut hits = Vec::new();
            for chunk in 0..2 {
                let walked = postings.for_each_with_tfs_among(
                    &mut cursor,
                    chunk,
                    69_000,
                    file,
                    &none,
                    &mut hits,
                    |_, _| panic!("no record asked for"),
                );
                assert_eq!(walked.is_ok(), chunk == 0);
            }
            let mut cursor = postings.chunk_cursor();
            for chunk in 0..2 {
                let walked =
                    postings.for_each_in_chunk(&mut cursor, chunk, 69_000, file, |_, _| {});
                assert_eq!(walked.is_ok(), chunk == 0);
            }
        });
    }

    #[test]
    fn a_code_outside_the_palette_before_a_looked_up_record_is_named() {
        with_file(|file| {
            // Three records, masks {0}, {1}, {0, 1}: a palette of three, codes two bits wide.
            let mut blob = Vec::new();
            encode_term(&[(1, 0, 1), (2, 1, 1), (3, 0, 1), (3, 1, 2)], &mut blob);
            // docs (one array container of three), the palette's length and its three steps
            // (1, 1, 1), then the codes.
            let docs_len = 8 + 8 + 3 * 2;
            assert_eq!(blob[docs_len..docs_len + 4], [3, 1, 1, 1]);
            let codes = docs_len + 4;
            assert_eq!(blob[codes], 0b10_01_00);
            // The first record's code becomes 3, past the palette.
            blob[codes] |= 0b11;
            let postings = TermPostings::parse(&blob, file).unwrap();
            let looked_up = postings.for_each_with_tfs_of(&[3], file, |_, _, _| {});
            let problem = looked_up.unwrap_err().to_string();
            assert!(
                problem.contains("postings code 3 is outside a palette of 3"),
                "{problem}"
            );
        });
    }

    /// The palette's masks are stored as steps from the one before: a step of 0 (a mask
    /// repeated) or one past the last group is refused, naming the mask, not decoded.
    #[test]
    fn a_palette_that_does_not_ascend_within_the_groups_is_refused() {
        with_file(|file| {
            // Masks {0}, {1}, {0, 1}: steps 1, 1, 1 after the palette's length.
            let mut blob = Vec::new();
            encode_term(&[(1, 0, 1), (2, 1, 1), (3, 0, 1), (3, 1, 2)], &mut blob);
            let palette = 8 + 8 + 3 * 2;
            assert_eq!(blob[palette..palette + 4], [3, 1, 1, 1]);
            assert!(TermPostings::parse(&blob, file).is_ok());
            // The third step 0, then 0x1ff (a varint of two bytes).
            for (steps, named) in [
                (&[3, 1, 1, 0][..], "mask 0x2 (after 0x2)"),
                (&[3, 1, 1, 0xff, 0x03][..], "mask 0x201 (after 0x2)"),
            ] {
                let damaged = [&blob[..palette], steps, &blob[palette + 4..]].concat();
                let Err(error) = TermPostings::parse(&damaged, file) else {
                    panic!("a palette of steps {steps:?} was read");
                };
                let error = error.to_string();
                assert!(
                    error.contains(&format!("postings group {named} is invalid")),
                    "{error}"
                );
            }
            // A step of three bytes, however small its value.
            let long = [
                &blob[..palette],
                &[3, 1, 1, 0x80, 0x80, 0][..],
                &blob[palette + 4..],
            ];
            let Err(error) = TermPostings::parse(&long.concat(), file) else {
                panic!("a step of three bytes was read");
            };
            assert!(error.to_string().contains("step of more than two bytes"));
        });
    }

    /// A block of term frequencies mostly 1 keeps the few larger ones as exceptions above a
    /// narrower width (here 0: no packed bits at all), reads every value back, and refuses an
    /// exception out of its block's order or without high bits, naming it.
    #[test]
    fn term_frequencies_above_a_blocks_width_are_exceptions() {
        with_file(|file| {
            let tfs = |doc: u32| match doc {
                5 => 1000,
                130 => 2,
                200 => 70_000,
                _ => 1,
            };
            let postings: Vec<Posting> = (0..300).map(|doc| (doc, 3, tfs(doc))).collect();
            let mut blob = Vec::new();
            encode_term(&postings, &mut blob);
            let read = |blob: &[u8]| -> Result<Vec<u32>> {
                let postings = TermPostings::parse(blob, file)?;
                let mut values = Vec::new();
                postings.tf_values(300, file, |block| values.extend_from_slice(block))?;
                Ok(values)
            };
            let expected: Vec<u32> = (0..300).map(|doc| tfs(doc) - 1).collect();
            assert_eq!(read(&blob).unwrap(), expected);
            // The frequencies: their count (300, two varint bytes), then the first block's width
            // byte (0, exceptions follow), one exception: place 5, 999 as a varint.
            let at = blob.len() - (2 + 5 + 8 + 1);
            assert_eq!(blob[at..at + 7], [0xac, 0x02, 0x80, 1, 5, 0xe7, 0x07]);
            // Second block: two exceptions, 2 − 1 = 1 at place 2 (record 130) and 69,999 at
            // place 72 (record 200); the third block all 0 at width 0, with none.
            assert_eq!(blob[at + 7..], [0x80, 2, 2, 1, 72, 0xef, 0xa2, 0x04, 0]);
            for (place, value, named) in [
                (at + 5, 0, "exception 0 above 0 bits is invalid"),
                (
                    at + 9,
                    200,
                    "exception at 200 of a block of 128 is out of order",
                ),
            ] {
                let mut damaged = blob.clone();
                damaged[place] = value;
                let error = read(&damaged).unwrap_err().to_string();
                assert!(error.contains(named), "{error}");
            }
        });
    }

    #[test]
    fn one_group_mask_needs_no_codes() {
        let mut blob = Vec::new();
        encode_term(&[(1, 4, 1), (2, 4, 1), (9, 4, 1)], &mut blob);
        let mut docs = RoaringBitmap::new();
        docs.extend([1, 2, 9]);
        // docs, a palette of one mask (0x10, a step of 16 from 0), codes of width 0 (none),
        // three tfs (their count, then one block: width 0).
        let docs_len = docs.serialized_size();
        assert_eq!(blob[docs_len..], [1, 16, 3, 0]);
    }
}
