//! Per-record columns: the values profiles and filters need, readable without decoding records.
//!
//! ```text
//! rows      n × ROW_LEN bytes, one per record, in record order:
//!             0  created_secs   i64   (unix seconds; meaningless when nanos is ABSENT)
//!             8  created_nanos  u32   (u32::MAX when createdAt is absent)
//!            12  memory_type    u32   index into the type table
//!            16  salience       f64   (default applied)
//!            24  decay_factor   f64   (default applied)
//!            32  feedback       5 × u64  success, partial, failure, notApplicable, outdated
//!            72  flags          u8    bit 0: pinned
//!            73  (3 bytes zero)
//!            76  group_lengths  9 × u32  tokens per field group (stop words included)
//!           112  strings_at     u64   offset of this record's strings in the string area
//! strings   per record: id, supersedes and a reserved slot (written absent, not read:
//!           `supersededBy` is derived from the supersedes facets at search time, so segments
//!           written apart need no shared column), each as u16 length + UTF-8 bytes
//!           (length 0xFFFF: absent)
//! types     u32 count, then each memory type as u16 length + UTF-8 bytes
//! blocks    per block of BLOCK_ROWS rows: strings_start u64, strings_end u64,
//!           rows_crc u32, strings_crc u32
//! trailer   n u64, strings_offset u64, types_offset u64, blocks_offset u64, types_crc u32,
//!           zero u32
//! ```
//!
//! A block's CRCs are verified the first time one of its rows is read, so damage is reported
//! before any value of the block is used, without reading the whole file at open.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use crate::error::Result;
use crate::format::file::{read_u32, read_u64, IndexFile};
use crate::format::footer::{FileKind, FileWriter, Footer};
use crate::record::Feedback;
use crate::schema::GROUP_COUNT;

/// Bytes per row.
pub const ROW_LEN: usize = 120;
/// Rows per checksummed block: small, because the first read of a row verifies its whole block
/// and a search reads rows scattered over the file (7.5 KiB of rows verified per block read;
/// the block table costs 24 bytes per 64 rows).
pub const BLOCK_ROWS: usize = 64;
const BLOCK_LEN: usize = 24;
const TRAILER_LEN: usize = 40;
const ABSENT: u16 = u16::MAX;
/// Block states in [`Columns::checked`].
const UNCHECKED: u8 = 0;
const SOUND: u8 = 1;
const DAMAGED: u8 = 2;

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

/// Writes the columns file row by row.
pub struct ColumnsWriter {
    path: PathBuf,
    rows: Vec<u8>,
    strings: Vec<u8>,
    types: Vec<String>,
}

impl ColumnsWriter {
    /// Starts a columns file at `path`; rows are buffered and written by `finish`.
    pub fn new(path: impl Into<PathBuf>) -> ColumnsWriter {
        ColumnsWriter {
            path: path.into(),
            rows: Vec::new(),
            strings: Vec::new(),
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
        let (secs, nanos) = row.created_at.unwrap_or((0, u32::MAX));
        let r = &mut self.rows;
        r.extend_from_slice(&secs.to_le_bytes());
        r.extend_from_slice(&nanos.to_le_bytes());
        r.extend_from_slice(&(type_index as u32).to_le_bytes());
        r.extend_from_slice(&row.salience.to_le_bytes());
        r.extend_from_slice(&row.decay_factor.to_le_bytes());
        let f = row.feedback;
        for count in [
            f.success,
            f.partial,
            f.failure,
            f.not_applicable,
            f.outdated,
        ] {
            r.extend_from_slice(&count.to_le_bytes());
        }
        r.extend_from_slice(&[u8::from(row.pinned), 0, 0, 0]);
        for len in row.group_lengths {
            r.extend_from_slice(&len.to_le_bytes());
        }
        r.extend_from_slice(&(self.strings.len() as u64).to_le_bytes());
        for s in [Some(row.id), row.supersedes, None] {
            push_string(&mut self.strings, s);
        }
    }

    /// Writes the file with its block table, trailer and footer, and syncs it.
    pub fn finish(self) -> Result<Footer> {
        let n = self.rows.len() / ROW_LEN;
        let mut out = FileWriter::create(&self.path, FileKind::Columns)?;
        out.write_all(&self.rows)?;
        let strings_offset = out.position();
        out.write_all(&self.strings)?;
        let types_offset = out.position();
        let mut types = Vec::new();
        types.extend_from_slice(&(self.types.len() as u32).to_le_bytes());
        for t in &self.types {
            push_string(&mut types, Some(t));
        }
        out.write_all(&types)?;
        let blocks_offset = out.position();
        let mut blocks = Vec::new();
        for first in (0..n).step_by(BLOCK_ROWS) {
            let last = (first + BLOCK_ROWS).min(n);
            let rows = &self.rows[first * ROW_LEN..last * ROW_LEN];
            let start = strings_at(&self.rows, first);
            let end = if last < n {
                strings_at(&self.rows, last)
            } else {
                self.strings.len() as u64
            };
            let strings = &self.strings[start as usize..end as usize];
            blocks.extend_from_slice(&start.to_le_bytes());
            blocks.extend_from_slice(&end.to_le_bytes());
            blocks.extend_from_slice(&crc32fast::hash(rows).to_le_bytes());
            blocks.extend_from_slice(&crc32fast::hash(strings).to_le_bytes());
        }
        out.write_all(&blocks)?;
        for v in [n as u64, strings_offset, types_offset, blocks_offset] {
            out.write_all(&v.to_le_bytes())?;
        }
        out.write_all(&crc32fast::hash(&types).to_le_bytes())?;
        out.write_all(&[0; 4])?;
        out.finish()
    }
}

fn push_string(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => {
            let len = u16::try_from(s.len()).expect("ids and types are at most 256 bytes");
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        None => out.extend_from_slice(&ABSENT.to_le_bytes()),
    }
}

fn strings_at(rows: &[u8], row: usize) -> u64 {
    let at = row * ROW_LEN + 112;
    u64::from_le_bytes(rows[at..at + 8].try_into().expect("8 bytes"))
}

/// The columns file opened for reading.
pub struct Columns {
    file: IndexFile,
    len: usize,
    strings_offset: usize,
    types_offset: usize,
    blocks_offset: usize,
    types: Vec<String>,
    /// Per block: UNCHECKED, SOUND or DAMAGED. Allocated on first use; a block is hashed once.
    checked: OnceLock<Box<[AtomicU8]>>,
}

impl Columns {
    /// Checks the trailer, the geometry and the (small) type table.
    pub fn open(file: IndexFile) -> Result<Columns> {
        let body = file.body();
        if body.len() < TRAILER_LEN {
            return Err(file.corrupt("columns file too short for its trailer"));
        }
        let t = body.len() - TRAILER_LEN;
        let n = read_u64(&file, body, t)? as usize;
        let strings_offset = read_u64(&file, body, t + 8)? as usize;
        let types_offset = read_u64(&file, body, t + 16)? as usize;
        let blocks_offset = read_u64(&file, body, t + 24)? as usize;
        let types_crc = read_u32(&file, body, t + 32)?;
        let blocks = n.div_ceil(BLOCK_ROWS);
        let geometry_ok = n.checked_mul(ROW_LEN) == Some(strings_offset)
            && strings_offset <= types_offset
            && types_offset <= blocks_offset
            && blocks
                .checked_mul(BLOCK_LEN)
                .and_then(|b| b.checked_add(blocks_offset))
                == Some(t);
        if !geometry_ok {
            return Err(file.corrupt(format!(
                "columns geometry is inconsistent ({n} rows, sections at {strings_offset}, \
                 {types_offset}, {blocks_offset}, trailer at {t})"
            )));
        }
        let type_bytes = &body[types_offset..blocks_offset];
        if crc32fast::hash(type_bytes) != types_crc {
            return Err(file.corrupt("memory type table fails its checksum"));
        }
        let count = read_u32(&file, type_bytes, 0)? as usize;
        let mut types = Vec::with_capacity(count.min(1024));
        let mut at = 4;
        for _ in 0..count {
            let (s, next) = read_string(&file, type_bytes, at)?;
            types.push(
                s.ok_or_else(|| file.corrupt("absent memory type"))?
                    .to_string(),
            );
            at = next;
        }
        Ok(Columns {
            file,
            len: n,
            strings_offset,
            types_offset,
            blocks_offset,
            types,
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

    /// Verifies block `block` once (later calls answer from the cache) and returns the range of
    /// the string area its rows may point into.
    fn check_block(&self, block: usize) -> Result<std::ops::Range<usize>> {
        let states = self.checked.get_or_init(|| {
            (0..self.len.div_ceil(BLOCK_ROWS))
                .map(|_| AtomicU8::new(UNCHECKED))
                .collect()
        });
        let state = states.get(block).ok_or_else(|| {
            self.file
                .corrupt(format!("column block {block} does not exist"))
        })?;
        let body = self.file.body();
        let at = self.blocks_offset + block * BLOCK_LEN;
        let start = read_u64(&self.file, body, at)?;
        let end = read_u64(&self.file, body, at + 8)?;
        // The string area ends where the type table starts.
        let strings_len = (self.types_offset - self.strings_offset) as u64;
        let range = (start <= end && end <= strings_len).then_some(start as usize..end as usize);
        match state.load(Ordering::Acquire) {
            SOUND => {
                if let Some(range) = range {
                    return Ok(range);
                }
            }
            DAMAGED => {
                return Err(self
                    .file
                    .corrupt(format!("column block {block} fails its checksum")))
            }
            _ => {}
        }
        let rows_crc = read_u32(&self.file, body, at + 16)?;
        let strings_crc = read_u32(&self.file, body, at + 20)?;
        let first = block * BLOCK_ROWS;
        let last = (first + BLOCK_ROWS).min(self.len);
        let rows = &body[first * ROW_LEN..last * ROW_LEN];
        let sound = range.as_ref().is_some_and(|range| {
            crc32fast::hash(rows) == rows_crc
                && crc32fast::hash(
                    &body[self.strings_offset + range.start..self.strings_offset + range.end],
                ) == strings_crc
        });
        state.store(if sound { SOUND } else { DAMAGED }, Ordering::Release);
        match range {
            Some(range) if sound => Ok(range),
            _ => Err(self
                .file
                .corrupt(format!("column block {block} fails its checksum"))),
        }
    }

    /// The row of record `doc`, after its block passed its checksums.
    pub fn row(&self, doc: u32) -> Result<Row<'_>> {
        let (r, strings, block_start) = self.checked_row(doc)?;
        let u64_at = |at: usize| u64::from_le_bytes(r[at..at + 8].try_into().expect("8 bytes"));
        let u32_at = |at: usize| u32::from_le_bytes(r[at..at + 4].try_into().expect("4 bytes"));
        let nanos = u32_at(8);
        let type_index = u32_at(12) as usize;
        let memory_type = self.types.get(type_index).ok_or_else(|| {
            self.file
                .corrupt(format!("memory type {type_index} is unknown"))
        })?;
        let mut group_lengths = [0u32; GROUP_COUNT];
        for (g, len) in group_lengths.iter_mut().enumerate() {
            *len = u32_at(76 + 4 * g);
        }
        if nanos != u32::MAX && nanos >= 1_000_000_000 {
            return Err(self
                .file
                .corrupt(format!("row {doc} has {nanos} nanoseconds")));
        }
        let (id, at) = read_string(&self.file, strings, self.strings_at(doc, r, block_start)?)?;
        let (supersedes, _) = read_string(&self.file, strings, at)?;
        Ok(Row {
            created_at: (nanos != u32::MAX).then(|| (u64_at(0) as i64, nanos)),
            memory_type,
            salience: f64::from_bits(u64_at(16)),
            decay_factor: f64::from_bits(u64_at(24)),
            feedback: Feedback {
                success: u64_at(32),
                partial: u64_at(40),
                failure: u64_at(48),
                not_applicable: u64_at(56),
                outdated: u64_at(64),
            },
            pinned: r[72] & 1 != 0,
            group_lengths,
            id: id.ok_or_else(|| self.file.corrupt(format!("row {doc} has no id")))?,
            supersedes,
        })
    }

    /// The id of record `doc`.
    pub fn id(&self, doc: u32) -> Result<&str> {
        Ok(self.row(doc)?.id)
    }

    /// The feedback counts of record `doc`, read without the rest of its row.
    pub fn feedback(&self, doc: u32) -> Result<Feedback> {
        let r = self.checked_row(doc)?.0;
        let u64_at = |at: usize| u64::from_le_bytes(r[at..at + 8].try_into().expect("8 bytes"));
        Ok(Feedback {
            success: u64_at(32),
            partial: u64_at(40),
            failure: u64_at(48),
            not_applicable: u64_at(56),
            outdated: u64_at(64),
        })
    }

    /// The id of record `doc` as bytes, for ordering ties (its block passed its checksums).
    pub fn id_bytes(&self, doc: u32) -> Result<&[u8]> {
        let (r, strings, block_start) = self.checked_row(doc)?;
        let at = self.strings_at(doc, r, block_start)?;
        let out_of_bounds = || self.file.corrupt(format!("row {doc}: id is out of bounds"));
        let len = strings
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .ok_or_else(out_of_bounds)?;
        if len == ABSENT {
            return Err(self.file.corrupt(format!("row {doc} has no id")));
        }
        strings
            .get(at + 2..at + 2 + len as usize)
            .ok_or_else(out_of_bounds)
    }

    /// Where row `r` (of record `doc`) has its strings within its block's string range, which
    /// the block CRC covered.
    fn strings_at(&self, doc: u32, r: &[u8], block_start: usize) -> Result<usize> {
        u64::from_le_bytes(r[112..120].try_into().expect("8 bytes"))
            .checked_sub(block_start as u64)
            .and_then(|at| usize::try_from(at).ok())
            .ok_or_else(|| {
                self.file
                    .corrupt(format!("row {doc} points outside its block's strings"))
            })
    }

    /// The bytes of row `doc` and of its block's strings (with the block's offset in the string
    /// area), after the block passed its checksums.
    fn checked_row(&self, doc: u32) -> Result<(&[u8], &[u8], usize)> {
        let doc = doc as usize;
        if doc >= self.len {
            return Err(self
                .file
                .corrupt(format!("row {doc} requested of {}", self.len)));
        }
        let block_strings = self.check_block(doc / BLOCK_ROWS)?;
        let body = self.file.body();
        Ok((
            &body[doc * ROW_LEN..(doc + 1) * ROW_LEN],
            &body[self.strings_offset..][block_strings.clone()],
            block_strings.start,
        ))
    }
}

fn read_string<'a>(
    file: &IndexFile,
    bytes: &'a [u8],
    at: usize,
) -> Result<(Option<&'a str>, usize)> {
    let out_of_bounds = || file.corrupt(format!("string at {at} is out of bounds"));
    let start = at.checked_add(2).ok_or_else(out_of_bounds)?;
    let len = bytes
        .get(at..start)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .ok_or_else(out_of_bounds)?;
    if len == ABSENT {
        return Ok((None, start));
    }
    let end = start + len as usize;
    let raw = bytes.get(start..end).ok_or_else(out_of_bounds)?;
    let s = std::str::from_utf8(raw)
        .map_err(|_| file.corrupt(format!("string at {at} is not UTF-8")))?;
    Ok((Some(s), end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::manifest::FileEntry;

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

    /// A damaged block fails only its own rows: rows of other blocks still read, so a search
    /// verifies a few KiB per block it touches, never the whole file.
    #[test]
    fn damage_in_one_block_fails_only_that_blocks_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.columns");
        let ids: Vec<String> = (0..4 * BLOCK_ROWS + 3).map(|i| format!("r{i}")).collect();
        let mut writer = ColumnsWriter::new(&path);
        for id in &ids {
            writer.push(&row(id));
        }
        let entry = FileEntry::from(writer.finish().unwrap());
        let mut bytes = std::fs::read(&path).unwrap();
        let damaged_row = 2 * BLOCK_ROWS + 7;
        bytes[damaged_row * ROW_LEN + 20] ^= 0x40; // salience of that row
        std::fs::write(&path, &bytes).unwrap();

        let columns =
            Columns::open(IndexFile::open(&path, FileKind::Columns, &entry).unwrap()).unwrap();
        assert_eq!(columns.len(), ids.len());
        for doc in [0, BLOCK_ROWS - 1, BLOCK_ROWS, 3 * BLOCK_ROWS, ids.len() - 1] {
            let read = columns.row(doc as u32).unwrap();
            assert_eq!(read, row(&ids[doc]), "row {doc}");
            assert_eq!(columns.feedback(doc as u32).unwrap().success, 2);
            assert_eq!(columns.id_bytes(doc as u32).unwrap(), ids[doc].as_bytes());
        }
        for doc in [2 * BLOCK_ROWS, damaged_row, 3 * BLOCK_ROWS - 1] {
            let error = columns.row(doc as u32).unwrap_err().to_string();
            assert!(
                error.contains("column block 2 fails its checksum"),
                "{error}"
            );
            assert!(columns.feedback(doc as u32).is_err());
            assert!(columns.id_bytes(doc as u32).is_err());
        }
    }
}
