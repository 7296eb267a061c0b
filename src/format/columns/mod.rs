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
//!
//! # Files
//!
//! - `layout.rs`: the columns' encodings, and the header that states them.
//! - `write.rs`: [`ColumnsWriter`], which buffers the rows and writes the file.
//! - `read.rs`: [`Columns`], the file opened for reading, a block verified at its first use.

mod layout;
mod read;
mod write;

pub use read::Columns;
pub use write::ColumnsWriter;

use crate::record::Feedback;
use crate::schema::GROUP_COUNT;

/// Rows per checksummed block: small, because the first read of a row verifies its whole block
/// and a search reads rows scattered over the file; a multiple of 8, so blocks start on a byte.
pub const BLOCK_ROWS: usize = 64;
/// The most distinct values a palette column holds (the header is verified at open).
pub const MAX_PALETTE: usize = 256;
/// Bytes of a block's entry in the block table: strings_start u64, crc u32.
const BLOCK_LEN: usize = 12;
/// Bytes of the trailer.
const TRAILER_LEN: usize = 40;

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

/// What the profiles weigh of a record, read without the rest of its row
/// ([`Columns::weighed`](read::Columns::weighed)).
#[derive(Debug, Clone, PartialEq)]
pub struct Weighed<'a> {
    /// Normalized memory type.
    pub memory_type: &'a str,
    /// Salience, default applied.
    pub salience: f64,
    /// Decay factor per day, default applied.
    pub decay_factor: f64,
    /// Whether the record is pinned.
    pub pinned: bool,
    /// Tokens per field group.
    pub group_lengths: [u32; GROUP_COUNT],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Result;
    use crate::format::file::IndexFile;
    use crate::format::footer::FileKind;
    use crate::format::manifest::FileEntry;
    use proptest::prelude::*;
    use std::path::Path;

    pub(super) fn row(id: &str) -> Row<'_> {
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

    pub(super) fn write(path: &Path, rows: &[Row<'_>]) -> FileEntry {
        let mut writer = ColumnsWriter::new(path);
        for row in rows {
            writer.push(row);
        }
        FileEntry::from(writer.finish().unwrap())
    }

    pub(super) fn open(path: &Path, entry: &FileEntry) -> Result<Columns> {
        Columns::open(IndexFile::open(path, FileKind::Columns, entry)?)
    }

    /// Every way of reading row `doc` gives `expected`.
    pub(super) fn assert_reads(columns: &Columns, doc: usize, expected: &Row<'_>) {
        let doc32 = doc as u32;
        assert_eq!(&columns.row(doc32).unwrap(), expected, "row {doc}");
        assert_eq!(columns.feedback(doc32).unwrap(), expected.feedback);
        assert_eq!(
            columns.group_lengths(doc32).unwrap(),
            expected.group_lengths
        );
        assert_eq!(columns.id(doc32).unwrap(), expected.id);
        assert_eq!(columns.id_bytes(doc32).unwrap(), expected.id.as_bytes());
        let weighed = columns.weighed(doc32).unwrap();
        assert_eq!(
            (weighed.memory_type, weighed.pinned, weighed.group_lengths),
            (
                expected.memory_type,
                expected.pinned,
                expected.group_lengths
            )
        );
        assert_eq!(weighed.salience.to_bits(), expected.salience.to_bits());
        assert_eq!(
            weighed.decay_factor.to_bits(),
            expected.decay_factor.to_bits()
        );
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
        prop_oneof![24 => 0u32..300, 1 => Just(u32::MAX), 1 => any::<u32>()]
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
            // Group lengths are read with one load when their columns are narrow, else one
            // column at a time: both ways are drawn.
            let narrow = rows.iter().all(|r| r.group_lengths.iter().all(|&l| l < 1 << 13));
            if narrow {
                prop_assert!(columns.groups_at_once);
            }
            for (doc, expected) in rows.iter().enumerate() {
                assert_reads(&columns, doc, expected);
            }
            let error = columns.row(rows.len() as u32).unwrap_err().to_string();
            prop_assert!(error.contains("requested of"), "{}", error);
        }
    }
}
