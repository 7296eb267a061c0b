//! Writing the columns file: rows are buffered, compactly, until [`ColumnsWriter::finish`]
//! knows every value, chooses each column's encoding (layout.rs) and writes the rows, the
//! strings, the header, the block table and the trailer (module docs).

use crate::format::directory::FileTarget;

use super::layout::{block_rows, choose_columns, write_header, Column};
use super::{
    Row, BLOCK_LEN, BLOCK_ROWS, COLUMNS, DECAY, FEEDBACK, GROUPS, ID_LEN, NANOS, PINNED, SALIENCE,
    SECS, SIGN, STRINGS_AT, SUPERSEDES_LEN, TYPE,
};
use crate::error::Result;
use crate::format::bitpack::{bits_at, width_of_u64, BitWriter};
use crate::format::bytes::u64_at;
use crate::format::footer::{FileKind, FileWriter, Footer};

/// Writes the columns file row by row.
pub struct ColumnsWriter {
    path: FileTarget,
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
    pub fn new(path: impl Into<FileTarget>) -> ColumnsWriter {
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
        let written = Written::of(&self);
        let columns = choose_columns(|c| written.column(c));
        let row_bits: usize = columns.iter().map(|c| c.width as usize).sum();
        let header = write_header(&self.types, written.row_strings_min, &columns);
        let rows = pack_rows(self.rows, &columns, (0..COLUMNS).map(|c| written.column(c)));
        debug_assert_eq!(rows.len(), (self.rows * row_bits).div_ceil(8));
        let blocks = self.block_table(&rows, row_bits);

        let mut out = FileWriter::create(&self.path, FileKind::Columns)?;
        out.write_all(&rows)?;
        let strings_offset = out.position();
        out.write_all(&self.strings)?;
        let header_offset = out.position();
        out.write_all(&header)?;
        let blocks_offset = out.position();
        out.write_all(&blocks)?;
        for v in [
            self.rows as u64,
            strings_offset,
            header_offset,
            blocks_offset,
        ] {
            out.write_all(&v.to_le_bytes())?;
        }
        out.write_all(&crc32fast::hash(&header).to_le_bytes())?;
        out.write_all(&[0; 4])?;
        out.finish()
    }

    /// The block table: per block, where its strings start and the CRC of its row bytes (of
    /// `rows`, rows of `row_bits` bits) followed by its strings.
    fn block_table(&self, rows: &[u8], row_bits: usize) -> Vec<u8> {
        let mut blocks = Vec::with_capacity(self.rows.div_ceil(BLOCK_ROWS) * BLOCK_LEN);
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
        blocks
    }
}

/// The columns of a writer's rows as written: a row without createdAt takes the seconds of one
/// with it (no extra width), and a row's strings offset is less what the rows before it in its
/// block take at least.
struct Written<'w> {
    values: &'w [ColumnBuffer],
    /// The seconds of some row with createdAt.
    present: Option<u64>,
    /// The fewest string bytes of any row.
    row_strings_min: u64,
}

impl<'w> Written<'w> {
    fn of(writer: &'w ColumnsWriter) -> Written<'w> {
        let values = &writer.values[..];
        let present = values[SECS]
            .values()
            .zip(values[NANOS].values())
            .find_map(|(secs, nanos)| (nanos != 0).then_some(secs));
        let row_strings_min = values[ID_LEN]
            .values()
            .zip(values[SUPERSEDES_LEN].values())
            .map(|(id, supersedes)| id + supersedes.saturating_sub(1))
            .min()
            .unwrap_or(0);
        Written {
            values,
            present,
            row_strings_min,
        }
    }

    /// Column `c` as written.
    fn column(&self, c: usize) -> Box<dyn Iterator<Item = u64> + 'w> {
        let values = self.values;
        let (present, row_strings_min) = (self.present, self.row_strings_min);
        match c {
            SECS => Box::new(values[SECS].values().zip(values[NANOS].values()).map(
                move |(secs, nanos)| match present {
                    Some(present) if nanos == 0 => present,
                    _ => secs,
                },
            )),
            STRINGS_AT => Box::new(
                values[STRINGS_AT]
                    .values()
                    .enumerate()
                    .map(move |(r, at)| at - (r % BLOCK_ROWS) as u64 * row_strings_min),
            ),
            c => Box::new(values[c].values()),
        }
    }
}

/// The `n` rows packed: each row's fields, in column order, at their columns' widths, the
/// values of column `c` from the `c`th iterator of `values`.
fn pack_rows<'v>(
    n: usize,
    columns: &[Column],
    values: impl Iterator<Item = Box<dyn Iterator<Item = u64> + 'v>>,
) -> Vec<u8> {
    let mut rows = BitWriter::new();
    let mut values: Vec<_> = values.collect();
    for _ in 0..n {
        for (column, values) in columns.iter().zip(&mut values) {
            let value = values.next().expect("a value per row and column");
            rows.push(column.encode(value), column.width);
        }
    }
    rows.finish()
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
            let min = u64_at(header, 0);
            let width = u32::from(header[8]);
            let len = (BLOCK_ROWS * width as usize).div_ceil(8);
            let packed = &self.blocks[at + 9..at + 9 + len];
            at += 9 + len;
            Some((0..BLOCK_ROWS).map(move |i| min + bits_at(packed, i * width as usize, width)))
        });
        blocks.flatten().chain(self.open.iter().copied())
    }
}
