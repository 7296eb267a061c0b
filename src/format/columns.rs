//! Per-record columns: the values profiles and filters need, readable without decoding records.
//!
//! Each record's values are bit-packed into a row of `W` bits, `W` the sum of the columns'
//! widths, each column at the width its values across the file need: a constant column (nobody
//! pinned, every createdAt on the whole second) takes no bits. Rows follow each other without
//! padding, so row `r` starts at bit `r·W` and any row is read in O(1); as a block holds
//! [`BLOCK_ROWS`] rows, a multiple of 8, every block starts on a byte and is `8·W` bytes long.
//!
//! ```text
//! rows      ⌈n·W / 8⌉ bytes: row r at bits r·W … r·W + W − 1 (least significant bit first),
//!           its fields in column order, column c of width w_c, each field an unsigned
//!           code that the column's encoding in the header turns into the value:
//!              0  created_secs     createdAt's unix seconds as u64 with the sign bit flipped
//!                                  (order preserving); any value when createdAt is absent
//!              1  created_nanos    0 when createdAt is absent, else nanoseconds + 1
//!              2  memory_type      index into the type table
//!              3  salience         f64 bits (default applied)
//!              4  decay_factor     f64 bits (default applied)
//!              5  feedback         5 columns: success, partial, failure, notApplicable, outdated
//!             10  pinned           0 or 1
//!             11  group_lengths    9 columns: tokens per field group (stop words included)
//!             20  id_len           bytes of the id
//!             21  supersedes_len   0 when absent, else bytes + 1
//!             22  strings_at       where the row's strings start in its block's strings, less
//!                                  (row's index in its block) × row_strings_min
//! strings   per row: the id's UTF-8 bytes, then the supersedes id's (no lengths: they are
//!           columns); the rows of a block have their strings together
//! header    u32 count, then each memory type as u32 length + UTF-8 bytes;
//!           row_strings_min u64 (the fewest string bytes of any row);
//!           per column in row order: width u8, palette count u16, then
//!             count 0 (linear):  base u64, step u64   value = base + code × step (wrapping)
//!             count k (palette): k × u64              value = palette[code]
//! blocks    per block of BLOCK_ROWS rows: strings_start u64 (its strings end where the next
//!           block's start, the last block's at the end of the area), crc u32 (CRC-32 of the
//!           block's row bytes followed by its string bytes)
//! trailer   n u64, strings_offset u64, header_offset u64, blocks_offset u64, header_crc u32,
//!           zero u32
//! ```
//!
//! The writer picks per column the cheaper of a linear encoding (the minimum as base, the
//! greatest common divisor of the differences as step: timestamps on the minute take 6 bits
//! less) and a palette of at most [`MAX_PALETTE`] distinct values (salience and decay factors,
//! whose f64 bit patterns are far apart but few).
//!
//! Opening checks the geometry and the header (its CRC, then its encodings) only. A block's CRC
//! is verified the first time one of its rows is read, so damage is reported before any value
//! of the block is used, without reading the whole file at open.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::format::bitpack::{bits_at, width_of_u64, BitWriter};
use crate::format::file::{read_u32, read_u64, IndexFile};
use crate::format::footer::{FileKind, FileWriter, Footer};
use crate::record::Feedback;
use crate::schema::GROUP_COUNT;

/// Rows per checksummed block: small, because the first read of a row verifies its whole block
/// and a search reads rows scattered over the file; a multiple of 8, so blocks start on a byte.
pub const BLOCK_ROWS: usize = 64;
/// The most distinct values a palette column holds (the header is verified at open).
pub const MAX_PALETTE: usize = 256;
const BLOCK_LEN: usize = 12;
const TRAILER_LEN: usize = 40;
/// Block states in [`Columns::checked`].
const UNCHECKED: u8 = 0;
const SOUND: u8 = 1;
const DAMAGED: u8 = 2;

/// Column numbers, in row order.
const SECS: usize = 0;
const NANOS: usize = 1;
const TYPE: usize = 2;
const SALIENCE: usize = 3;
const DECAY: usize = 4;
const FEEDBACK: usize = 5;
const PINNED: usize = FEEDBACK + 5;
const GROUPS: usize = PINNED + 1;
const ID_LEN: usize = GROUPS + GROUP_COUNT;
const SUPERSEDES_LEN: usize = ID_LEN + 1;
const STRINGS_AT: usize = SUPERSEDES_LEN + 1;
const COLUMNS: usize = STRINGS_AT + 1;
const SIGN: u64 = 1 << 63;

/// The column values of one record, as written and as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<'a> {
    /// `createdAt` as (unix seconds, nanoseconds), if given.
    pub created_at: Option<(i64, u32)>,
    /// Normalized memory type (trimmed, lowercased, `episodic` by default).
    pub memory_type: &'a str,
    /// Salience, default applied.
    pub salience: f64,
    /// Decay factor per day, default applied.
    pub decay_factor: f64,
    /// Feedback counts.
    pub feedback: Feedback,
    /// Whether the record is pinned.
    pub pinned: bool,
    /// Tokens per field group (for `bm25f`).
    pub group_lengths: [u32; GROUP_COUNT],
    /// The record's id.
    pub id: &'a str,
    /// The id this record supersedes.
    pub supersedes: Option<&'a str>,
}

/// How a column turns a packed code into its value.
#[derive(Debug, Clone, PartialEq)]
enum Decode {
    /// `base + code × step`, wrapping.
    Linear { base: u64, step: u64 },
    /// `palette[code]`.
    Palette(Box<[u64]>),
}

/// One column: its encoding, width and bit offset within a row.
#[derive(Debug, Clone)]
struct Column {
    decode: Decode,
    width: u32,
    offset: usize,
}

impl Column {
    /// The encoding and width that take the fewest bits for the column `values()` iterates
    /// (with the palette's bytes in the header counted).
    fn choose<I: Iterator<Item = u64>>(values: impl Fn() -> I) -> (Decode, u32) {
        let (Some(min), Some(max)) = (values().min(), values().max()) else {
            return (Decode::Linear { base: 0, step: 1 }, 0);
        };
        let mut step = 0;
        for v in values() {
            step = gcd(step, v - min);
            if step == 1 {
                break;
            }
        }
        let step = step.max(1);
        let linear_width = width_of_u64((max - min) / step);
        let linear = (Decode::Linear { base: min, step }, linear_width);
        if linear_width <= 1 {
            return linear;
        }
        let mut distinct = BTreeSet::new();
        let mut n = 0u64;
        for v in values() {
            n += 1;
            distinct.insert(v);
            if distinct.len() > MAX_PALETTE {
                return linear;
            }
        }
        let palette_width = width_of_u64(distinct.len() as u64 - 1);
        let palette_bits = n * u64::from(palette_width) + 64 * distinct.len() as u64;
        if palette_bits < n * u64::from(linear_width) {
            (
                Decode::Palette(distinct.into_iter().collect()),
                palette_width,
            )
        } else {
            linear
        }
    }

    /// The code of `value`, which the column was chosen for.
    fn encode(&self, value: u64) -> u64 {
        match &self.decode {
            Decode::Linear { base, step } => (value - base) / step,
            Decode::Palette(palette) => palette
                .binary_search(&value)
                .expect("the palette holds every value")
                as u64,
        }
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Writes the columns file row by row.
pub struct ColumnsWriter {
    path: PathBuf,
    /// Per column, the value of every row (`STRINGS_AT`: the offset in the block's strings).
    values: Vec<ColumnBuffer>,
    rows: usize,
    strings: Vec<u8>,
    /// Where each block's strings start.
    block_strings: Vec<u64>,
    types: Vec<String>,
}

impl ColumnsWriter {
    /// Starts a columns file at `path`; rows are buffered and written by `finish`.
    pub fn new(path: impl Into<PathBuf>) -> ColumnsWriter {
        ColumnsWriter {
            path: path.into(),
            values: (0..COLUMNS).map(|_| ColumnBuffer::default()).collect(),
            rows: 0,
            strings: Vec::new(),
            block_strings: Vec::new(),
            types: Vec::new(),
        }
    }

    /// Appends the next record's row.
    pub fn push(&mut self, row: &Row<'_>) {
        let type_index = match self.types.iter().position(|t| t == row.memory_type) {
            Some(i) => i,
            None => {
                self.types.push(row.memory_type.to_string());
                self.types.len() - 1
            }
        };
        if self.rows.is_multiple_of(BLOCK_ROWS) {
            self.block_strings.push(self.strings.len() as u64);
        }
        let block_start = *self.block_strings.last().expect("a block");
        let (secs, nanos) = match row.created_at {
            Some((secs, nanos)) => (secs as u64 ^ SIGN, u64::from(nanos) + 1),
            // The seconds are set by `finish` to some present value, which costs no width.
            None => (0, 0),
        };
        let f = row.feedback;
        let mut values = [0u64; COLUMNS];
        values[SECS] = secs;
        values[NANOS] = nanos;
        values[TYPE] = type_index as u64;
        values[SALIENCE] = row.salience.to_bits();
        values[DECAY] = row.decay_factor.to_bits();
        values[FEEDBACK..PINNED].copy_from_slice(&[
            f.success,
            f.partial,
            f.failure,
            f.not_applicable,
            f.outdated,
        ]);
        values[PINNED] = u64::from(row.pinned);
        for (value, &len) in values[GROUPS..ID_LEN].iter_mut().zip(&row.group_lengths) {
            *value = u64::from(len);
        }
        values[ID_LEN] = row.id.len() as u64;
        values[SUPERSEDES_LEN] = row.supersedes.map_or(0, |s| s.len() as u64 + 1);
        values[STRINGS_AT] = self.strings.len() as u64 - block_start;
        for (column, value) in self.values.iter_mut().zip(values) {
            column.push(value);
        }
        self.rows += 1;
        self.strings.extend_from_slice(row.id.as_bytes());
        self.strings
            .extend_from_slice(row.supersedes.unwrap_or("").as_bytes());
    }

    /// Writes the file with its header, block table, trailer and footer, and syncs it.
    pub fn finish(self) -> Result<Footer> {
        let n = self.rows;
        // Rows without createdAt take the seconds of one with it: no extra width.
        let present = self.values[SECS]
            .values()
            .zip(self.values[NANOS].values())
            .find_map(|(secs, nanos)| (nanos != 0).then_some(secs));
        // The strings offset less what the rows before it in its block take at least.
        let row_strings_min = self.values[ID_LEN]
            .values()
            .zip(self.values[SUPERSEDES_LEN].values())
            .map(|(id, supersedes)| id + supersedes.saturating_sub(1))
            .min()
            .unwrap_or(0);
        // Column `c` as written.
        let column = |c: usize| -> Box<dyn Iterator<Item = u64> + '_> {
            match c {
                SECS => Box::new(
                    self.values[SECS]
                        .values()
                        .zip(self.values[NANOS].values())
                        .map(move |(secs, nanos)| match present {
                            Some(present) if nanos == 0 => present,
                            _ => secs,
                        }),
                ),
                STRINGS_AT => Box::new(
                    self.values[STRINGS_AT]
                        .values()
                        .enumerate()
                        .map(move |(r, at)| at - (r % BLOCK_ROWS) as u64 * row_strings_min),
                ),
                c => Box::new(self.values[c].values()),
            }
        };

        let mut header = Vec::new();
        header.extend_from_slice(&(self.types.len() as u32).to_le_bytes());
        for t in &self.types {
            let len = u32::try_from(t.len()).expect("a memory type under 4 GiB");
            header.extend_from_slice(&len.to_le_bytes());
            header.extend_from_slice(t.as_bytes());
        }
        header.extend_from_slice(&row_strings_min.to_le_bytes());
        let mut columns = Vec::with_capacity(COLUMNS);
        let mut offset = 0;
        for c in 0..COLUMNS {
            let (decode, width) = Column::choose(|| column(c));
            header.push(width as u8);
            match &decode {
                Decode::Linear { base, step } => {
                    header.extend_from_slice(&0u16.to_le_bytes());
                    header.extend_from_slice(&base.to_le_bytes());
                    header.extend_from_slice(&step.to_le_bytes());
                }
                Decode::Palette(palette) => {
                    header.extend_from_slice(&(palette.len() as u16).to_le_bytes());
                    for v in palette.iter() {
                        header.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
            columns.push(Column {
                decode,
                width,
                offset,
            });
            offset += width as usize;
        }
        let row_bits = offset;

        let mut rows = BitWriter::new();
        let mut values: Vec<_> = (0..COLUMNS).map(column).collect();
        for _ in 0..n {
            for (column, values) in columns.iter().zip(&mut values) {
                let value = values.next().expect("a value per row and column");
                rows.push(column.encode(value), column.width);
            }
        }
        drop(values);
        let rows = rows.finish();
        debug_assert_eq!(rows.len(), (n * row_bits).div_ceil(8));

        let mut blocks = Vec::with_capacity(n.div_ceil(BLOCK_ROWS) * BLOCK_LEN);
        for (b, &start) in self.block_strings.iter().enumerate() {
            let end = self
                .block_strings
                .get(b + 1)
                .copied()
                .unwrap_or(self.strings.len() as u64);
            let block_rows = block_rows(b, row_bits, rows.len());
            let mut crc = crc32fast::Hasher::new();
            crc.update(&rows[block_rows]);
            crc.update(&self.strings[start as usize..end as usize]);
            blocks.extend_from_slice(&start.to_le_bytes());
            blocks.extend_from_slice(&crc.finalize().to_le_bytes());
        }

        let mut out = FileWriter::create(&self.path, FileKind::Columns)?;
        out.write_all(&rows)?;
        let strings_offset = out.position();
        out.write_all(&self.strings)?;
        let header_offset = out.position();
        out.write_all(&header)?;
        let blocks_offset = out.position();
        out.write_all(&blocks)?;
        for v in [n as u64, strings_offset, header_offset, blocks_offset] {
            out.write_all(&v.to_le_bytes())?;
        }
        out.write_all(&crc32fast::hash(&header).to_le_bytes())?;
        out.write_all(&[0; 4])?;
        out.finish()
    }
}

/// One column's values as a writer receives them, kept compact until `finish` chooses the
/// column's encoding: blocks of [`BLOCK_ROWS`] values, each its minimum (u64 LE), a width byte
/// and its values less the minimum packed at that width. Most columns need a few bits a value,
/// so a writer of many rows (a merge of a large build's spills) holds a fraction of the 8 bytes
/// a value that plain vectors would.
#[derive(Default)]
struct ColumnBuffer {
    blocks: Vec<u8>,
    /// The values of the block being filled.
    open: Vec<u64>,
}

impl ColumnBuffer {
    fn push(&mut self, value: u64) {
        self.open.push(value);
        if self.open.len() == BLOCK_ROWS {
            let min = self.open.iter().copied().min().unwrap_or(0);
            let max = self.open.iter().copied().max().unwrap_or(0);
            let width = width_of_u64(max - min);
            self.blocks.extend_from_slice(&min.to_le_bytes());
            self.blocks.push(width as u8);
            let mut packed = BitWriter::new();
            for &v in &self.open {
                packed.push(v - min, width);
            }
            self.blocks.extend_from_slice(&packed.finish());
            self.open.clear();
        }
    }

    /// The values, in order.
    fn values(&self) -> impl Iterator<Item = u64> + '_ {
        let mut at = 0;
        let blocks = std::iter::from_fn(move || {
            let header = self.blocks.get(at..at + 9)?;
            let min = u64::from_le_bytes(header[..8].try_into().expect("8 bytes"));
            let width = u32::from(header[8]);
            let len = (BLOCK_ROWS * width as usize).div_ceil(8);
            let packed = &self.blocks[at + 9..at + 9 + len];
            at += 9 + len;
            Some((0..BLOCK_ROWS).map(move |i| min + bits_at(packed, i * width as usize, width)))
        });
        blocks.flatten().chain(self.open.iter().copied())
    }
}

/// The bytes of block `block`'s rows, rows of `row_bits` bits taking `rows_len` bytes.
fn block_rows(block: usize, row_bits: usize, rows_len: usize) -> Range<usize> {
    // BLOCK_ROWS × row_bits is a whole number of bytes. The caller's geometry keeps this from
    // overflowing; saturating keeps a bad block number harmless.
    let block_len = BLOCK_ROWS / 8 * row_bits;
    let start = block.saturating_mul(block_len).min(rows_len);
    start..start.saturating_add(block_len).min(rows_len)
}

/// The columns file opened for reading.
pub struct Columns {
    file: IndexFile,
    len: usize,
    strings_offset: usize,
    header_offset: usize,
    blocks_offset: usize,
    types: Vec<String>,
    row_strings_min: u64,
    columns: Box<[Column]>,
    row_bits: usize,
    /// Per block: UNCHECKED, SOUND or DAMAGED. Allocated on first use; a block is hashed once.
    checked: OnceLock<Box<[AtomicU8]>>,
}

/// A row of a block that passed its checksum: the block's row bytes and strings, and the
/// row's bit offset in those bytes.
struct CheckedRow<'a> {
    doc: usize,
    rows: &'a [u8],
    strings: &'a [u8],
    /// The row's index within its block.
    index: usize,
    bit: usize,
}

impl Columns {
    /// Checks the trailer, the geometry and the (small) header: memory types and encodings.
    pub fn open(file: IndexFile) -> Result<Columns> {
        let body = file.body();
        if body.len() < TRAILER_LEN {
            return Err(file.corrupt("columns file too short for its trailer"));
        }
        let t = body.len() - TRAILER_LEN;
        let n = read_u64(&file, body, t)?;
        let strings_offset = read_u64(&file, body, t + 8)?;
        let header_offset = read_u64(&file, body, t + 16)?;
        let blocks_offset = read_u64(&file, body, t + 24)?;
        let header_crc = read_u32(&file, body, t + 32)?;
        if read_u32(&file, body, t + 36)? != 0 {
            return Err(file.corrupt("columns trailer ends in a nonzero word"));
        }
        let inconsistent = |why: &str| {
            file.corrupt(format!(
                "columns geometry is inconsistent ({n} rows, sections at {strings_offset}, \
                 {header_offset}, {blocks_offset}, trailer at {t}: {why})"
            ))
        };
        let sections_ok = strings_offset <= header_offset
            && header_offset <= blocks_offset
            && n.div_ceil(BLOCK_ROWS as u64)
                .checked_mul(BLOCK_LEN as u64)
                .and_then(|b| b.checked_add(blocks_offset))
                == Some(t as u64);
        if !sections_ok {
            return Err(inconsistent(
                "sections out of order or block table misplaced",
            ));
        }
        // Every offset is now at most t, so within the body.
        let (n, strings_offset, header_offset, blocks_offset) = (
            n as usize,
            strings_offset as usize,
            header_offset as usize,
            blocks_offset as usize,
        );
        let header = &body[header_offset..blocks_offset];
        if crc32fast::hash(header) != header_crc {
            return Err(file.corrupt("columns header fails its checksum"));
        }
        let (types, row_strings_min, columns) = read_header(&file, header)?;
        let row_bits: usize = columns.iter().map(|c| c.width as usize).sum();
        // The rows fill the bytes before the strings, and every block's bytes are addressable.
        let rows_ok = n.checked_mul(row_bits).map(|bits| bits.div_ceil(8)) == Some(strings_offset)
            && n.div_ceil(BLOCK_ROWS)
                .checked_mul(BLOCK_ROWS * row_bits)
                .is_some();
        if !rows_ok {
            return Err(inconsistent(&format!(
                "rows of {row_bits} bits do not fill the rows section"
            )));
        }
        Ok(Columns {
            file,
            len: n,
            strings_offset,
            header_offset,
            blocks_offset,
            types,
            row_strings_min,
            columns,
            row_bits,
            checked: OnceLock::new(),
        })
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The distinct memory types, by index.
    pub fn memory_types(&self) -> &[String] {
        &self.types
    }

    /// The underlying file.
    pub fn file(&self) -> &IndexFile {
        &self.file
    }

    /// Verifies block `block` once (later calls answer from the cache) and returns the ranges
    /// of its row bytes and of its strings in the body.
    fn check_block(&self, block: usize) -> Result<(Range<usize>, Range<usize>)> {
        let blocks = self.len.div_ceil(BLOCK_ROWS);
        let states = self
            .checked
            .get_or_init(|| (0..blocks).map(|_| AtomicU8::new(UNCHECKED)).collect());
        let state = states.get(block).ok_or_else(|| {
            self.file
                .corrupt(format!("column block {block} does not exist"))
        })?;
        let failed = || {
            self.file
                .corrupt(format!("column block {block} fails its checksum"))
        };
        if state.load(Ordering::Acquire) == DAMAGED {
            return Err(failed());
        }
        let body = self.file.body();
        let at = self.blocks_offset + block * BLOCK_LEN;
        let start = read_u64(&self.file, body, at)?;
        // The string area ends where the header starts.
        let strings_len = (self.header_offset - self.strings_offset) as u64;
        let end = if block + 1 < blocks {
            read_u64(&self.file, body, at + BLOCK_LEN)?
        } else {
            strings_len
        };
        let rows = block_rows(block, self.row_bits, self.strings_offset);
        let strings = (start <= end && end <= strings_len)
            .then(|| self.strings_offset + start as usize..self.strings_offset + end as usize);
        let sound = match (&strings, state.load(Ordering::Acquire)) {
            (None, _) => false,
            (Some(_), SOUND) => true,
            (Some(strings), _) => {
                let crc = read_u32(&self.file, body, at + 8)?;
                let mut hasher = crc32fast::Hasher::new();
                hasher.update(&body[rows.clone()]);
                hasher.update(&body[strings.clone()]);
                hasher.finalize() == crc
            }
        };
        state.store(if sound { SOUND } else { DAMAGED }, Ordering::Release);
        match strings {
            Some(strings) if sound => Ok((rows, strings)),
            _ => Err(failed()),
        }
    }

    /// Row `doc`'s block bytes, after the block passed its checksum.
    fn checked_row(&self, doc: u32) -> Result<CheckedRow<'_>> {
        let doc = doc as usize;
        if doc >= self.len {
            return Err(self
                .file
                .corrupt(format!("row {doc} requested of {}", self.len)));
        }
        let (rows, strings) = self.check_block(doc / BLOCK_ROWS)?;
        let body = self.file.body();
        let index = doc % BLOCK_ROWS;
        Ok(CheckedRow {
            doc,
            rows: &body[rows],
            strings: &body[strings],
            index,
            bit: index * self.row_bits,
        })
    }

    /// The value of column `c` in row `r`.
    #[inline]
    fn value(&self, r: &CheckedRow<'_>, c: usize) -> Result<u64> {
        let column = &self.columns[c];
        let code = bits_at(r.rows, r.bit + column.offset, column.width);
        match &column.decode {
            Decode::Linear { base, step } => Ok(base.wrapping_add(code.wrapping_mul(*step))),
            Decode::Palette(palette) => palette.get(code as usize).copied().ok_or_else(|| {
                self.file.corrupt(format!(
                    "row {}: code {code} is past the palette of column {c}",
                    r.doc
                ))
            }),
        }
    }

    /// The feedback counts of row `r`.
    fn feedback_of(&self, r: &CheckedRow<'_>) -> Result<Feedback> {
        Ok(Feedback {
            success: self.value(r, FEEDBACK)?,
            partial: self.value(r, FEEDBACK + 1)?,
            failure: self.value(r, FEEDBACK + 2)?,
            not_applicable: self.value(r, FEEDBACK + 3)?,
            outdated: self.value(r, FEEDBACK + 4)?,
        })
    }

    /// The id and supersedes bytes of row `r`, within its block's strings.
    fn strings_of<'a>(&self, r: &CheckedRow<'a>) -> Result<(&'a [u8], Option<&'a [u8]>)> {
        let id_len = self.value(r, ID_LEN)?;
        let supersedes_len = self.value(r, SUPERSEDES_LEN)?;
        let strings_at = self.value(r, STRINGS_AT)?;
        let start = (r.index as u64)
            .checked_mul(self.row_strings_min)
            .and_then(|before| before.checked_add(strings_at));
        let id_end = start.and_then(|s| s.checked_add(id_len));
        let end = id_end.and_then(|e| e.checked_add(supersedes_len.saturating_sub(1)));
        let slice = |from: Option<u64>, to: Option<u64>| {
            let (from, to) = (usize::try_from(from?).ok()?, usize::try_from(to?).ok()?);
            r.strings.get(from..to)
        };
        let out_of_bounds = || {
            self.file
                .corrupt(format!("row {}: its strings are out of its block's", r.doc))
        };
        let id = slice(start, id_end).ok_or_else(out_of_bounds)?;
        let supersedes = if supersedes_len == 0 {
            None
        } else {
            Some(slice(id_end, end).ok_or_else(out_of_bounds)?)
        };
        Ok((id, supersedes))
    }

    /// The row of record `doc`, after its block passed its checksums.
    pub fn row(&self, doc: u32) -> Result<Row<'_>> {
        let r = self.checked_row(doc)?;
        let corrupt = |what: String| self.file.corrupt(format!("row {doc} {what}"));
        let nanos = self.value(&r, NANOS)?;
        let created_at = match nanos {
            0 => None,
            1..=1_000_000_000 => Some(((self.value(&r, SECS)? ^ SIGN) as i64, nanos as u32 - 1)),
            _ => return Err(corrupt(format!("has {} nanoseconds", nanos - 1))),
        };
        let type_index = self.value(&r, TYPE)?;
        let memory_type = usize::try_from(type_index)
            .ok()
            .and_then(|i| self.types.get(i))
            .ok_or_else(|| corrupt(format!("has memory type {type_index}, which is unknown")))?;
        let pinned = match self.value(&r, PINNED)? {
            0 => false,
            1 => true,
            other => return Err(corrupt(format!("has pinned flag {other}"))),
        };
        let mut group_lengths = [0u32; GROUP_COUNT];
        for (g, len) in group_lengths.iter_mut().enumerate() {
            let value = self.value(&r, GROUPS + g)?;
            *len =
                u32::try_from(value).map_err(|_| corrupt(format!("has group length {value}")))?;
        }
        let (id, supersedes) = self.strings_of(&r)?;
        fn utf8(bytes: &[u8], error: impl FnOnce() -> Error) -> Result<&str> {
            std::str::from_utf8(bytes).map_err(|_| error())
        }
        Ok(Row {
            created_at,
            memory_type,
            salience: f64::from_bits(self.value(&r, SALIENCE)?),
            decay_factor: f64::from_bits(self.value(&r, DECAY)?),
            feedback: self.feedback_of(&r)?,
            pinned,
            group_lengths,
            id: utf8(id, || corrupt("has an id not in UTF-8".into()))?,
            supersedes: supersedes
                .map(|s| utf8(s, || corrupt("has a supersedes id not in UTF-8".into())))
                .transpose()?,
        })
    }

    /// The id of record `doc`.
    pub fn id(&self, doc: u32) -> Result<&str> {
        std::str::from_utf8(self.id_bytes(doc)?).map_err(|_| {
            self.file
                .corrupt(format!("row {doc} has an id not in UTF-8"))
        })
    }

    /// The feedback counts of record `doc`, read without the rest of its row.
    pub fn feedback(&self, doc: u32) -> Result<Feedback> {
        self.feedback_of(&self.checked_row(doc)?)
    }

    /// The id of record `doc` as bytes, for ordering ties (its block passed its checksums).
    pub fn id_bytes(&self, doc: u32) -> Result<&[u8]> {
        Ok(self.strings_of(&self.checked_row(doc)?)?.0)
    }
}

/// Parses the header: the memory types, `row_strings_min` and the columns' encodings.
fn read_header(file: &IndexFile, header: &[u8]) -> Result<(Vec<String>, u64, Box<[Column]>)> {
    let mut at = 0;
    let count = read_u32(file, header, at)? as usize;
    at += 4;
    let mut types = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let len = read_u32(file, header, at)? as usize;
        let bytes = at
            .checked_add(4 + len)
            .and_then(|end| header.get(at + 4..end))
            .ok_or_else(|| file.corrupt(format!("memory type at {at} is out of bounds")))?;
        let t = std::str::from_utf8(bytes)
            .map_err(|_| file.corrupt(format!("memory type at {at} is not UTF-8")))?;
        types.push(t.to_string());
        at += 4 + len;
    }
    let row_strings_min = read_u64(file, header, at)?;
    at += 8;
    let mut columns = Vec::with_capacity(COLUMNS);
    let mut offset = 0;
    for c in 0..COLUMNS {
        let encoding = header
            .get(at..at + 3)
            .ok_or_else(|| file.corrupt(format!("column {c}'s encoding is out of bounds")))?;
        let width = u32::from(encoding[0]);
        let count = usize::from(u16::from_le_bytes([encoding[1], encoding[2]]));
        at += 3;
        if width > 64 || count > MAX_PALETTE {
            return Err(file.corrupt(format!(
                "column {c} has width {width} and a palette of {count}"
            )));
        }
        let decode = if count == 0 {
            let base = read_u64(file, header, at)?;
            let step = read_u64(file, header, at + 8)?;
            at += 16;
            Decode::Linear { base, step }
        } else {
            let mut palette = Vec::with_capacity(count);
            for _ in 0..count {
                palette.push(read_u64(file, header, at)?);
                at += 8;
            }
            Decode::Palette(palette.into())
        };
        columns.push(Column {
            decode,
            width,
            offset,
        });
        offset += width as usize;
    }
    if at != header.len() {
        return Err(file.corrupt(format!(
            "columns header is {} bytes, its contents {at}",
            header.len()
        )));
    }
    Ok((types, row_strings_min, columns.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::footer::write_file;
    use crate::format::manifest::FileEntry;
    use proptest::prelude::*;
    use std::path::Path;

    fn row(id: &str) -> Row<'_> {
        Row {
            created_at: Some((1_700_000_000, 5)),
            memory_type: "episodic",
            salience: 0.5,
            decay_factor: 0.02,
            feedback: Feedback {
                success: 2,
                ..Feedback::default()
            },
            pinned: false,
            group_lengths: [1, 2, 3, 4, 5, 6, 7, 8, 9],
            id,
            supersedes: None,
        }
    }

    fn write(path: &Path, rows: &[Row<'_>]) -> FileEntry {
        let mut writer = ColumnsWriter::new(path);
        for row in rows {
            writer.push(row);
        }
        FileEntry::from(writer.finish().unwrap())
    }

    fn open(path: &Path, entry: &FileEntry) -> Result<Columns> {
        Columns::open(IndexFile::open(path, FileKind::Columns, entry)?)
    }

    /// Every way of reading row `doc` gives `expected`.
    fn assert_reads(columns: &Columns, doc: usize, expected: &Row<'_>) {
        let doc32 = doc as u32;
        assert_eq!(&columns.row(doc32).unwrap(), expected, "row {doc}");
        assert_eq!(columns.feedback(doc32).unwrap(), expected.feedback);
        assert_eq!(columns.id(doc32).unwrap(), expected.id);
        assert_eq!(columns.id_bytes(doc32).unwrap(), expected.id.as_bytes());
    }

    /// A damaged block fails only its own rows: rows of other blocks still read, so a search
    /// verifies a few hundred bytes per block it touches, never the whole file.
    #[test]
    fn damage_in_one_block_fails_only_that_blocks_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.columns");
        let ids: Vec<String> = (0..4 * BLOCK_ROWS + 3).map(|i| format!("r{i}")).collect();
        let rows: Vec<Row<'_>> = ids.iter().map(|id| row(id)).collect();
        let entry = write(&path, &rows);
        let (block_rows, block_strings) = open(&path, &entry).unwrap().check_block(2).unwrap();
        assert!(!block_rows.is_empty());
        for damaged in [
            block_rows.start,
            block_rows.end - 1,
            block_strings.start + 3,
        ] {
            let mut bytes = std::fs::read(&path).unwrap();
            bytes[damaged] ^= 0x40;
            std::fs::write(&path, &bytes).unwrap();
            let columns = open(&path, &entry).unwrap();
            assert_eq!(columns.len(), ids.len());
            for doc in [0, BLOCK_ROWS - 1, BLOCK_ROWS, 3 * BLOCK_ROWS, ids.len() - 1] {
                assert_reads(&columns, doc, &rows[doc]);
            }
            for doc in [2 * BLOCK_ROWS, 2 * BLOCK_ROWS + 7, 3 * BLOCK_ROWS - 1] {
                let error = columns.row(doc as u32).unwrap_err().to_string();
                assert!(
                    error.contains("column block 2 fails its checksum"),
                    "{error}"
                );
                assert!(error.contains("c.columns"), "{error}");
                assert!(columns.feedback(doc as u32).is_err());
                assert!(columns.id_bytes(doc as u32).is_err());
            }
            bytes[damaged] ^= 0x40;
            std::fs::write(&path, &bytes).unwrap();
        }
    }

    /// Values that are the same in every row take no bits: rows alike but for their ids (all
    /// of one length) are 0 bits wide, and the file is the ids plus a constant.
    #[test]
    fn constant_columns_take_no_bits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.columns");
        let ids: Vec<String> = (0..1000).map(|i| format!("syn-{i:08}")).collect();
        let rows: Vec<Row<'_>> = ids.iter().map(|id| row(id)).collect();
        let entry = write(&path, &rows);
        let columns = open(&path, &entry).unwrap();
        assert_eq!(columns.row_bits, 0);
        for (doc, expected) in rows.iter().enumerate() {
            assert_reads(&columns, doc, expected);
        }
        let blocks = 1000usize.div_ceil(BLOCK_ROWS);
        assert!(
            entry.len as usize <= 12 * 1000 + blocks * BLOCK_LEN + 600,
            "{} bytes",
            entry.len
        );
    }

    /// Typical values (timestamps on the minute, a few salience values, small counts and
    /// lengths) take a few bytes per row besides the id.
    #[test]
    fn typical_rows_take_a_few_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.columns");
        let ids: Vec<String> = (0..10_000).map(|i| format!("syn-{i:08}")).collect();
        let rows: Vec<Row<'_>> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let i = i as u64;
                Row {
                    created_at: Some((1_700_000_000 + (i * 7919 % 1_000_000) as i64 * 60, 0)),
                    salience: (i % 100) as f64 / 100.0,
                    feedback: Feedback {
                        success: i % 4,
                        failure: i % 2,
                        ..Feedback::default()
                    },
                    group_lengths: std::array::from_fn(|g| {
                        let h = (i * 9 + g as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                        ((h >> 40) % 200) as u32
                    }),
                    ..row(id)
                }
            })
            .collect();
        let entry = write(&path, &rows);
        let columns = open(&path, &entry).unwrap();
        // 20 bits of minutes, 7 of salience, 3 of feedback, 8 per group length.
        assert_eq!(columns.row_bits, 20 + 7 + 3 + 9 * 8);
        assert!(matches!(
            columns.columns[SALIENCE].decode,
            Decode::Palette(_)
        ));
        assert!(matches!(
            columns.columns[SECS].decode,
            Decode::Linear { step: 60, .. }
        ));
        for (doc, expected) in rows.iter().enumerate() {
            assert_reads(&columns, doc, expected);
        }
    }

    /// Any byte flipped anywhere in the body: opening fails, or every read either fails or
    /// gives the value written; and every read of a row whose block holds the byte fails.
    #[test]
    fn every_flipped_byte_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.columns");
        let ids: Vec<String> = (0..2 * BLOCK_ROWS + 9)
            .map(|i| "x".repeat(i % 7 + 1))
            .collect();
        let types = ["episodic", "semantic", "procedural"];
        let rows: Vec<Row<'_>> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| Row {
                created_at: (i % 5 != 0).then_some((i as i64 * 1000 - 50_000, i as u32 * 3)),
                memory_type: types[i % 3],
                salience: [0.1, 0.7, -2.5][i % 3],
                decay_factor: i as f64 / 7.0,
                feedback: Feedback {
                    success: i as u64,
                    partial: u64::MAX - i as u64,
                    failure: i as u64 % 3,
                    not_applicable: 0,
                    outdated: 1,
                },
                pinned: i % 4 == 0,
                group_lengths: std::array::from_fn(|g| (i * g) as u32),
                id,
                supersedes: (i % 3 == 1).then_some(ids[i / 2].as_str()),
            })
            .collect();
        let entry = write(&path, &rows);
        let original = std::fs::read(&path).unwrap();
        let body_len = entry.len as usize;
        let regions: Vec<_> = {
            let columns = open(&path, &entry).unwrap();
            assert!(columns.row_bits > 100, "{}", columns.row_bits);
            (0..3).map(|b| columns.check_block(b).unwrap()).collect()
        };
        for at in 0..body_len {
            let mut bytes = original.clone();
            bytes[at] ^= 0x21;
            std::fs::write(&path, &bytes).unwrap();
            let Ok(columns) = open(&path, &entry) else {
                continue;
            };
            for (doc, expected) in rows.iter().enumerate() {
                let (block_rows, block_strings) = &regions[doc / BLOCK_ROWS];
                let reads = [
                    columns.row(doc as u32).map(|r| &r == expected),
                    columns.feedback(doc as u32).map(|f| f == expected.feedback),
                    columns.id(doc as u32).map(|id| id == expected.id),
                    columns
                        .id_bytes(doc as u32)
                        .map(|id| id == expected.id.as_bytes()),
                ];
                let in_block = block_rows.contains(&at) || block_strings.contains(&at);
                for read in reads {
                    match read {
                        Ok(right) => {
                            assert!(right, "byte {at} flipped: row {doc} reads a wrong value");
                            assert!(!in_block, "byte {at} flipped: row {doc} still reads");
                        }
                        Err(e) => assert!(e.to_string().contains("c.columns"), "{e}"),
                    }
                }
            }
        }
    }

    /// A body cut anywhere (behind an intact footer) fails at open.
    #[test]
    fn every_truncation_fails_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.columns");
        let ids: Vec<String> = (0..BLOCK_ROWS + 5).map(|i| format!("id-{i}")).collect();
        let rows: Vec<Row<'_>> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| Row {
                salience: i as f64,
                ..row(id)
            })
            .collect();
        let entry = write(&path, &rows);
        let bytes = std::fs::read(&path).unwrap();
        let cut_path = dir.path().join("cut.columns");
        for len in 0..entry.len as usize {
            let _ = std::fs::remove_file(&cut_path);
            let footer = write_file(&cut_path, FileKind::Columns, &bytes[..len]).unwrap();
            let Err(error) = open(&cut_path, &FileEntry::from(footer)) else {
                panic!("a body cut to {len} bytes opens");
            };
            assert!(error.to_string().contains("cut.columns"), "{error}");
        }
    }

    /// A row as generated, owning its strings.
    #[derive(Debug, Clone)]
    struct OwnedRow {
        created_at: Option<(i64, u32)>,
        memory_type: String,
        salience: f64,
        decay_factor: f64,
        feedback: [u64; 5],
        pinned: bool,
        group_lengths: [u32; GROUP_COUNT],
        id: String,
        supersedes: Option<String>,
    }

    impl OwnedRow {
        fn row(&self) -> Row<'_> {
            let [success, partial, failure, not_applicable, outdated] = self.feedback;
            Row {
                created_at: self.created_at,
                memory_type: &self.memory_type,
                salience: self.salience,
                decay_factor: self.decay_factor,
                feedback: Feedback {
                    success,
                    partial,
                    failure,
                    not_applicable,
                    outdated,
                },
                pinned: self.pinned,
                group_lengths: self.group_lengths,
                id: &self.id,
                supersedes: self.supersedes.as_deref(),
            }
        }
    }

    fn float() -> impl Strategy<Value = f64> {
        prop_oneof![
            3 => prop::sample::select(vec![0.0, -0.0, 0.5, 1.0, 0.01, -3.25, 1e300]),
            1 => any::<f64>().prop_filter("no NaN", |f| !f.is_nan()),
            1 => prop::sample::select(vec![f64::MIN, f64::MAX, f64::INFINITY, -f64::INFINITY,
                                           f64::MIN_POSITIVE, 5e-324]),
        ]
    }

    fn count() -> impl Strategy<Value = u64> {
        prop_oneof![4 => 0u64..4, 1 => Just(u64::MAX), 1 => any::<u64>()]
    }

    fn length() -> impl Strategy<Value = u32> {
        prop_oneof![4 => 0u32..300, 1 => Just(u32::MAX), 1 => any::<u32>()]
    }

    fn id() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "syn-[0-9]{8}",
            2 => "\\PC{0,12}",
            1 => Just(String::new()),
            1 => "[a-z]{256}",
            1 => "é{128}",
        ]
    }

    fn created_at() -> impl Strategy<Value = Option<(i64, u32)>> {
        prop_oneof![
            1 => Just(None),
            3 => (0i64..1_000_000).prop_map(|m| Some((1_700_000_000 + m * 60, 0))),
            1 => (any::<i64>(), 0u32..1_000_000_000).prop_map(Some),
            1 => prop::sample::select(vec![
                Some((i64::MIN, 0)),
                Some((i64::MAX, 999_999_999)),
                Some((-1, 1)),
            ]),
        ]
    }

    fn owned_row() -> impl Strategy<Value = OwnedRow> {
        (
            created_at(),
            prop_oneof![4 => "(episodic|semantic|procedural)", 1 => "\\PC{0,10}"],
            float(),
            float(),
            [count(), count(), count(), count(), count()],
            prop_oneof![3 => Just(false), 1 => Just(true)],
            [
                length(),
                length(),
                length(),
                length(),
                length(),
                length(),
                length(),
                length(),
                length(),
            ],
            id(),
            prop::option::of(id()),
        )
            .prop_map(
                |(
                    created_at,
                    memory_type,
                    salience,
                    decay_factor,
                    feedback,
                    pinned,
                    group_lengths,
                    id,
                    supersedes,
                )| OwnedRow {
                    created_at,
                    memory_type,
                    salience,
                    decay_factor,
                    feedback,
                    pinned,
                    group_lengths,
                    id,
                    supersedes,
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Whatever the rows, every one reads back exactly, by every accessor.
        #[test]
        fn every_row_reads_back(
            // Some files repeat one row, so that constant columns (0 bits) are common.
            rows in prop_oneof![
                3 => prop::collection::vec(owned_row(), 0..3 * BLOCK_ROWS + 5),
                1 => (owned_row(), 1..2 * BLOCK_ROWS).prop_map(|(r, n)| vec![r; n]),
            ],
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("c.columns");
            let rows: Vec<Row<'_>> = rows.iter().map(OwnedRow::row).collect();
            let entry = write(&path, &rows);
            let columns = open(&path, &entry).unwrap();
            prop_assert_eq!(columns.len(), rows.len());
            for (doc, expected) in rows.iter().enumerate() {
                assert_reads(&columns, doc, expected);
            }
            let error = columns.row(rows.len() as u32).unwrap_err().to_string();
            prop_assert!(error.contains("requested of"), "{}", error);
        }
    }
}
