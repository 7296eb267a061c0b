//! Reading the columns file: [`Columns::open`] checks the trailer, the geometry and the header
//! (module docs) in O(1) of the rows; a block's CRC is verified the first time one of its rows
//! is read, and the block's state kept, so damage is reported before any value of the block is
//! used.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use super::layout::{block_rows, read_header, Column, Header};
use super::{
    Row, Weighed, BLOCK_LEN, BLOCK_ROWS, DECAY, FEEDBACK, GROUPS, ID_LEN, NANOS, PINNED, SALIENCE,
    SECS, SIGN, STRINGS_AT, SUPERSEDES_LEN, TRAILER_LEN, TYPE,
};
use crate::error::{Error, Result};
use crate::format::bitpack::{bits_at, bits_from, low_bits};
use crate::format::bytes::{u32_at, u64_at};
use crate::format::file::IndexFile;
use crate::format::FormatError;
use crate::record::Feedback;
use crate::schema::GROUP_COUNT;

/// The columns file opened for reading.
pub struct Columns {
    file: IndexFile,
    len: usize,
    strings_offset: usize,
    header_offset: usize,
    blocks_offset: usize,
    types: Vec<String>,
    row_strings_min: u64,
    pub(super) columns: Box<[Column]>,
    pub(super) row_bits: usize,
    /// Whether the group-length columns lie side by side in fewer bits than one wide read
    /// holds ([`bits_from`]): then a row's group lengths are read at once.
    pub(super) groups_at_once: bool,
    /// Per block, whether it passed its checksum. Allocated on first use; a sound block is
    /// hashed once.
    sound: OnceLock<Box<[AtomicBool]>>,
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
        let n = u64_at(body, t);
        let strings_offset = u64_at(body, t + 8);
        let header_offset = u64_at(body, t + 16);
        let blocks_offset = u64_at(body, t + 24);
        let header_crc = u32_at(body, t + 32);
        if u32_at(body, t + 36) != 0 {
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
        let Header {
            types,
            row_strings_min,
            columns,
        } = FormatError::check_crc(
            || "columns header".into(),
            header_crc,
            crc32fast::hash(header),
        )
        .and_then(|()| read_header(header))
        .map_err(|problem| file.corrupt(problem))?;
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
        let groups = &columns[GROUPS..ID_LEN];
        let groups_at_once = groups
            .iter()
            .try_fold(groups[0].offset, |at, c| {
                (c.offset == at).then_some(at + c.width as usize)
            })
            .is_some_and(|end| end - groups[0].offset <= 121);
        Ok(Columns {
            file,
            len: n,
            groups_at_once,
            strings_offset,
            header_offset,
            blocks_offset,
            types,
            row_strings_min,
            columns,
            row_bits,
            sound: OnceLock::new(),
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
    /// of its row bytes and of its strings in the body. A damaged block is verified again at
    /// every read, to report its checksums: damage is rare, and a block small.
    fn check_block(&self, block: usize) -> Result<(Range<usize>, Range<usize>)> {
        let blocks = self.len.div_ceil(BLOCK_ROWS);
        let sound = self
            .sound
            .get_or_init(|| (0..blocks).map(|_| AtomicBool::new(false)).collect());
        let sound = sound.get(block).ok_or_else(|| {
            self.file
                .corrupt(format!("column block {block} does not exist"))
        })?;
        let body = self.file.body();
        // Open checked that the block table fills the bytes before the trailer.
        let at = self.blocks_offset + block * BLOCK_LEN;
        let start = u64_at(body, at);
        // The string area ends where the header starts.
        let strings_len = (self.header_offset - self.strings_offset) as u64;
        let end = if block + 1 < blocks {
            u64_at(body, at + BLOCK_LEN)
        } else {
            strings_len
        };
        if !(start <= end && end <= strings_len) {
            return Err(self.file.corrupt(format!(
                "column block {block} has its strings at {start} to {end}, outside the \
                 {strings_len} bytes of strings"
            )));
        }
        let rows = block_rows(block, self.row_bits, self.strings_offset);
        let strings = self.strings_offset + start as usize..self.strings_offset + end as usize;
        if !sound.load(Ordering::Acquire) {
            let mut hasher = crc32fast::Hasher::new();
            hasher.update(&body[rows.clone()]);
            hasher.update(&body[strings.clone()]);
            FormatError::check_crc(
                || format!("column block {block}"),
                u32_at(body, at + 8),
                hasher.finalize(),
            )
            .map_err(|problem| self.file.corrupt(problem))?;
            sound.store(true, Ordering::Release);
        }
        Ok((rows, strings))
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
        column.value(code).ok_or_else(|| {
            self.file.corrupt(format!(
                "row {}: code {code} is past the palette of column {c}",
                r.doc
            ))
        })
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

    /// The creation time of row `r` as (unix seconds, nanoseconds), `None` when unknown.
    fn created_at_of(&self, r: &CheckedRow<'_>) -> Result<Option<(i64, u32)>> {
        match self.value(r, NANOS)? {
            0 => Ok(None),
            nanos @ 1..=1_000_000_000 => Ok(Some((
                (self.value(r, SECS)? ^ SIGN) as i64,
                nanos as u32 - 1,
            ))),
            nanos => Err(self
                .file
                .corrupt(format!("row {} has {} nanoseconds", r.doc, nanos - 1))),
        }
    }

    /// Whether row `r` is pinned.
    fn pinned_of(&self, r: &CheckedRow<'_>) -> Result<bool> {
        match self.value(r, PINNED)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(self
                .file
                .corrupt(format!("row {} has pinned flag {other}", r.doc))),
        }
    }

    /// The creation time and pinned flag of record `doc` (what the recency profile reads of a
    /// candidate), without the rest of its row.
    pub fn recency(&self, doc: u32) -> Result<(Option<(i64, u32)>, bool)> {
        let r = self.checked_row(doc)?;
        Ok((self.created_at_of(&r)?, self.pinned_of(&r)?))
    }

    /// The token count of each field group of row `r`.
    fn group_lengths_of(&self, r: &CheckedRow<'_>) -> Result<[u32; GROUP_COUNT]> {
        let mut group_lengths = [0u32; GROUP_COUNT];
        let first = self.columns[GROUPS].offset;
        let wide = self
            .groups_at_once
            .then(|| bits_from(r.rows, r.bit + first));
        for (g, len) in group_lengths.iter_mut().enumerate() {
            let value = match wide {
                Some(wide) => {
                    let column = &self.columns[GROUPS + g];
                    let code = low_bits((wide >> (column.offset - first)) as u64, column.width);
                    column.value(code).ok_or_else(|| {
                        self.file.corrupt(format!(
                            "row {}: code {code} is past the palette of column {}",
                            r.doc,
                            GROUPS + g
                        ))
                    })?
                }
                None => self.value(r, GROUPS + g)?,
            };
            *len = u32::try_from(value).map_err(|_| {
                self.file
                    .corrupt(format!("row {} has group length {value}", r.doc))
            })?;
        }
        Ok(group_lengths)
    }

    /// The token count of each field group of record `doc` (what `bm25f` normalizes by).
    pub fn group_lengths(&self, doc: u32) -> Result<[u32; GROUP_COUNT]> {
        self.group_lengths_of(&self.checked_row(doc)?)
    }

    /// Whether record `doc` is pinned.
    pub fn pinned(&self, doc: u32) -> Result<bool> {
        self.pinned_of(&self.checked_row(doc)?)
    }

    /// The normalized memory type of row `r`.
    fn memory_type_of(&self, r: &CheckedRow<'_>) -> Result<&str> {
        let type_index = self.value(r, TYPE)?;
        usize::try_from(type_index)
            .ok()
            .and_then(|i| self.types.get(i))
            .map(String::as_str)
            .ok_or_else(|| {
                self.file.corrupt(format!(
                    "row {} has memory type {type_index}, which is unknown",
                    r.doc
                ))
            })
    }

    /// What the profiles weigh of record `doc` (salience, decay factor, memory type, pinned
    /// flag, group lengths), without the rest of its row: no creation time, feedback or ids.
    pub fn weighed(&self, doc: u32) -> Result<Weighed<'_>> {
        self.weighed_of(&self.checked_row(doc)?)
    }

    /// [`Columns::weighed`] of row `r`.
    fn weighed_of(&self, r: &CheckedRow<'_>) -> Result<Weighed<'_>> {
        Ok(Weighed {
            memory_type: self.memory_type_of(r)?,
            salience: f64::from_bits(self.value(r, SALIENCE)?),
            decay_factor: f64::from_bits(self.value(r, DECAY)?),
            pinned: self.pinned_of(r)?,
            group_lengths: self.group_lengths_of(r)?,
        })
    }

    /// The row of record `doc`, after its block passed its checksums.
    pub fn row(&self, doc: u32) -> Result<Row<'_>> {
        let r = self.checked_row(doc)?;
        let corrupt = |what: String| self.file.corrupt(format!("row {doc} {what}"));
        let created_at = self.created_at_of(&r)?;
        let Weighed {
            memory_type,
            salience,
            decay_factor,
            pinned,
            group_lengths,
        } = self.weighed_of(&r)?;
        let (id, supersedes) = self.strings_of(&r)?;
        fn utf8(bytes: &[u8], error: impl FnOnce() -> Error) -> Result<&str> {
            std::str::from_utf8(bytes).map_err(|_| error())
        }
        Ok(Row {
            created_at,
            memory_type,
            salience,
            decay_factor,
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

    /// The least and the most each feedback count of a row can be, from the columns'
    /// encodings alone (what the widths allow, so the most may exceed every row's count).
    pub fn feedback_bounds(&self) -> (Feedback, Feedback) {
        let ranges: [(u64, u64); 5] =
            std::array::from_fn(|i| self.columns[FEEDBACK + i].value_range());
        (
            Feedback::from_counts(ranges.map(|r| r.0)),
            Feedback::from_counts(ranges.map(|r| r.1)),
        )
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

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_reads, open, row, write};
    use super::*;
    use crate::format::footer::{write_file, FileKind};
    use crate::format::manifest::FileEntry;

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
}
