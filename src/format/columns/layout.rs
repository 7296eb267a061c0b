//! The layout of the rows: each column's encoding (linear or palette) and width, chosen by the
//! writer for the values it holds, and the header that states them (module docs, *header*):
//!
//! ```text
//! u32 count, then each memory type as u32 length + UTF-8 bytes
//! row_strings_min u64
//! per column in row order: width u8, palette count u16, then
//!   count 0 (linear):  base u64, step u64   value = base + code × step (wrapping)
//!   count k (palette): k × u64              value = palette[code]
//! ```

use std::collections::BTreeSet;
use std::ops::Range;

use super::{BLOCK_ROWS, COLUMNS, MAX_PALETTE};
use crate::format::bitpack::width_of_u64;
use crate::format::bytes::ByteCursor;
use crate::format::FormatError;

/// How a column turns a packed code into its value.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Decode {
    /// `base + code × step`, wrapping.
    Linear { base: u64, step: u64 },
    /// `palette[code]`.
    Palette(Box<[u64]>),
}

/// One column: its encoding, width and bit offset within a row.
#[derive(Debug, Clone)]
pub(super) struct Column {
    pub(super) decode: Decode,
    pub(super) width: u32,
    pub(super) offset: usize,
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
    pub(super) fn encode(&self, value: u64) -> u64 {
        match &self.decode {
            Decode::Linear { base, step } => (value - base) / step,
            Decode::Palette(palette) => palette
                .binary_search(&value)
                .expect("the palette holds every value")
                as u64,
        }
    }

    /// The least and the greatest value a code of the column's width can decode to: what a
    /// row of the file may hold, without reading a row. A linear encoding whose greatest code
    /// would wrap bounds nothing: `(0, u64::MAX)`.
    pub(super) fn value_range(&self) -> (u64, u64) {
        match &self.decode {
            Decode::Linear { base, step } => {
                let most_code = u64::MAX.checked_shr(64 - self.width).unwrap_or(0);
                most_code
                    .checked_mul(*step)
                    .and_then(|span| base.checked_add(span))
                    .map_or((0, u64::MAX), |most| (*base, most))
            }
            Decode::Palette(palette) => (
                palette.iter().copied().min().unwrap_or(0),
                palette.iter().copied().max().unwrap_or(u64::MAX),
            ),
        }
    }

    /// The value of `code`; `None` for a code past the palette.
    #[inline]
    pub(super) fn value(&self, code: u64) -> Option<u64> {
        match &self.decode {
            Decode::Linear { base, step } => Some(base.wrapping_add(code.wrapping_mul(*step))),
            Decode::Palette(palette) => palette.get(code as usize).copied(),
        }
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The columns, in row order, each at the encoding and width that take the fewest bits for the
/// values `column(c)` iterates (once per try) for column `c`.
pub(super) fn choose_columns<'v>(
    column: impl Fn(usize) -> Box<dyn Iterator<Item = u64> + 'v>,
) -> Vec<Column> {
    let mut columns = Vec::with_capacity(COLUMNS);
    let mut offset = 0;
    for c in 0..COLUMNS {
        let (decode, width) = Column::choose(|| column(c));
        columns.push(Column {
            decode,
            width,
            offset,
        });
        offset += width as usize;
    }
    columns
}

/// The header: the memory types, `row_strings_min` and the columns' encodings.
pub(super) fn write_header(types: &[String], row_strings_min: u64, columns: &[Column]) -> Vec<u8> {
    let mut header = Vec::new();
    header.extend_from_slice(&(types.len() as u32).to_le_bytes());
    for t in types {
        let len = u32::try_from(t.len()).expect("a memory type under 4 GiB");
        header.extend_from_slice(&len.to_le_bytes());
        header.extend_from_slice(t.as_bytes());
    }
    header.extend_from_slice(&row_strings_min.to_le_bytes());
    for column in columns {
        header.push(column.width as u8);
        match &column.decode {
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
    }
    header
}

/// A parsed header.
pub(super) struct Header {
    /// The distinct memory types, by index.
    pub(super) types: Vec<String>,
    /// The fewest string bytes of any row.
    pub(super) row_strings_min: u64,
    /// The columns, in row order.
    pub(super) columns: Box<[Column]>,
}

/// Parses the header: the memory types, `row_strings_min` and the columns' encodings.
pub(super) fn read_header(header: &[u8]) -> Result<Header, FormatError> {
    let within = |problem: FormatError| problem.within("columns header");
    let mut cursor = ByteCursor::new(header);
    let count = cursor.u32().map_err(within)? as usize;
    let mut types = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let at = cursor.position();
        let len = cursor.u32().map_err(within)? as usize;
        let bytes = cursor
            .take(len)
            .map_err(|problem| problem.within(format!("memory type at {at}")))?;
        let t = std::str::from_utf8(bytes)
            .map_err(|_| FormatError::Invalid(format!("memory type at {at} is not UTF-8")))?;
        types.push(t.to_string());
    }
    let row_strings_min = cursor.u64().map_err(within)?;
    let mut columns = Vec::with_capacity(COLUMNS);
    let mut offset = 0;
    for c in 0..COLUMNS {
        let column = read_column(&mut cursor, offset)
            .map_err(|problem| problem.within(format!("column {c}'s encoding")))?;
        offset += column.width as usize;
        columns.push(column);
    }
    if !cursor.is_empty() {
        return Err(FormatError::Invalid(format!(
            "columns header is {} bytes, its contents {}",
            header.len(),
            cursor.position()
        )));
    }
    Ok(Header {
        types,
        row_strings_min,
        columns: columns.into(),
    })
}

/// Reads one column's encoding, the column starting at bit `offset` of a row.
fn read_column(cursor: &mut ByteCursor<'_>, offset: usize) -> Result<Column, FormatError> {
    let width = u32::from(cursor.u8()?);
    let count = usize::from(cursor.u16()?);
    if width > 64 || count > MAX_PALETTE {
        return Err(FormatError::Invalid(format!(
            "width {width} and a palette of {count} are out of range"
        )));
    }
    let decode = if count == 0 {
        let base = cursor.u64()?;
        let step = cursor.u64()?;
        Decode::Linear { base, step }
    } else {
        let mut palette = Vec::with_capacity(count);
        for _ in 0..count {
            palette.push(cursor.u64()?);
        }
        Decode::Palette(palette.into())
    };
    Ok(Column {
        decode,
        width,
        offset,
    })
}

/// The bytes of block `block`'s rows, rows of `row_bits` bits taking `rows_len` bytes.
pub(super) fn block_rows(block: usize, row_bits: usize, rows_len: usize) -> Range<usize> {
    // BLOCK_ROWS × row_bits is a whole number of bytes. The caller's geometry keeps this from
    // overflowing; saturating keeps a bad block number harmless.
    let block_len = BLOCK_ROWS / 8 * row_bits;
    let start = block.saturating_mul(block_len).min(rows_len);
    start..start.saturating_add(block_len).min(rows_len)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_reads, open, row, write};
    use super::super::{Row, BLOCK_LEN, SALIENCE, SECS};
    use super::*;
    use crate::record::Feedback;

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
        // Two bits of successes, one of failures: the bounds are the counts written.
        let (least, most) = columns.feedback_bounds();
        assert_eq!(least, Feedback::default());
        assert_eq!(
            most,
            Feedback {
                success: 3,
                failure: 1,
                ..Feedback::default()
            }
        );
    }

    /// Every code a column's width allows decodes inside the column's value range, whichever
    /// encoding it chose; a linear encoding whose greatest code wraps bounds nothing.
    #[test]
    fn a_column_bounds_every_value_it_can_decode() {
        let sets: [&[u64]; 7] = [
            &[],
            &[7],
            &[0, 1],
            &[3, 5, 9, 11],
            &[100, 160, 220, 1000],
            &[1, 1 << 40, 1 << 50, u64::MAX],
            &[u64::MAX - 6, u64::MAX],
        ];
        for values in sets {
            let (decode, width) = Column::choose(|| values.iter().copied());
            let column = Column {
                decode,
                width,
                offset: 0,
            };
            let (least, most) = column.value_range();
            for &v in values {
                assert!(least <= v && v <= most, "{v} outside {least}..={most}");
            }
            for code in 0..(1u64 << width.min(12)) {
                if let Some(v) = column.value(code) {
                    assert!(
                        least <= v && v <= most,
                        "code {code}: {v} outside {least}..={most}"
                    );
                }
            }
        }
        let wraps = Column {
            decode: Decode::Linear {
                base: u64::MAX - 1,
                step: 3,
            },
            width: 2,
            offset: 0,
        };
        assert_eq!(
            wraps.value(3),
            Some(u64::MAX - 1).map(|b| b.wrapping_add(9))
        );
        assert_eq!(wraps.value_range(), (0, u64::MAX));
        let whole = Column {
            decode: Decode::Linear { base: 0, step: 1 },
            width: 64,
            offset: 0,
        };
        assert_eq!(whole.value_range(), (0, u64::MAX));
    }
}
