//! Postings of one term: per field group, the records containing it (a roaring bitmap) and how
//! often (term frequencies, for `bm25f`).
//!
//! One blob of `terms.post` per term, addressed by the term's value in `terms.fst`:
//!
//! ```text
//! group_mask u16 LE              bit g set ⇔ the term occurs in field group g
//! for each set bit g, ascending:
//!   bitmap_len u32 LE, bitmap    roaring portable serialization of the record numbers
//!   tf_len     u32 LE, tfs       one LEB128 varint per record, in ascending record order
//! ```
//!
//! Bitmaps are decoded with validation ([`decode_bitmap`]: `RoaringBitmap::deserialize_from`,
//! which checks every container, plus a check that container keys ascend, which it does not
//! make), never unchecked. Callers also check that no record number reaches past the segment.

use roaring::RoaringBitmap;

use crate::error::Result;
use crate::format::file::IndexFile;
use crate::schema::{FieldGroup, GROUP_COUNT};

/// Appends the postings blob of one term to `out`. `groups[g]` holds the record numbers (in
/// ascending order) and term frequencies of group `g`; empty groups are left out.
pub fn encode_term(groups: &[Vec<(u32, u32)>; GROUP_COUNT], out: &mut Vec<u8>) {
    let mask = groups
        .iter()
        .enumerate()
        .filter(|(_, g)| !g.is_empty())
        .fold(0u16, |m, (g, _)| m | (1 << g));
    out.extend_from_slice(&mask.to_le_bytes());
    for postings in groups.iter().filter(|g| !g.is_empty()) {
        let bitmap: RoaringBitmap = postings.iter().map(|&(doc, _)| doc).collect();
        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        bitmap
            .serialize_into(&mut *out)
            .expect("writing to a Vec cannot fail");
        let len = (out.len() - len_at - 4) as u32;
        out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());

        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        for &(_, tf) in postings {
            write_varint(tf, out);
        }
        let len = (out.len() - len_at - 4) as u32;
        out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
    }
}

fn write_varint(mut value: u32, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A parsed postings blob: where each group's bitmap and term frequencies are.
pub struct TermPostings<'a> {
    mask: u16,
    bitmaps: [&'a [u8]; GROUP_COUNT],
    tfs: [&'a [u8]; GROUP_COUNT],
}

impl<'a> TermPostings<'a> {
    /// Splits a blob into its groups, checking every length against the blob.
    pub fn parse(blob: &'a [u8], file: &IndexFile) -> Result<TermPostings<'a>> {
        let mut reader = SliceReader { bytes: blob, file };
        let mask = u16::from_le_bytes(reader.take(2)?.try_into().expect("2 bytes"));
        if mask >> GROUP_COUNT != 0 || mask == 0 {
            return Err(file.corrupt(format!("postings group mask {mask:#x} is invalid")));
        }
        let mut bitmaps: [&[u8]; GROUP_COUNT] = [&[]; GROUP_COUNT];
        let mut tfs: [&[u8]; GROUP_COUNT] = [&[]; GROUP_COUNT];
        for g in 0..GROUP_COUNT {
            if mask & (1 << g) != 0 {
                let len = reader.u32()? as usize;
                bitmaps[g] = reader.take(len)?;
                let len = reader.u32()? as usize;
                tfs[g] = reader.take(len)?;
            }
        }
        if !reader.bytes.is_empty() {
            return Err(file.corrupt("postings blob has trailing bytes"));
        }
        Ok(TermPostings { mask, bitmaps, tfs })
    }

    /// The groups the term occurs in, as a bit mask.
    pub fn group_mask(&self) -> u16 {
        self.mask
    }

    /// The records containing the term in `group` (empty when it does not occur there).
    pub fn records(&self, group: FieldGroup, file: &IndexFile) -> Result<RoaringBitmap> {
        let bytes = self.bitmaps[group as usize];
        if bytes.is_empty() {
            return Ok(RoaringBitmap::new());
        }
        decode_bitmap(bytes).map_err(|problem| file.corrupt(format!("postings bitmap: {problem}")))
    }

    /// The term frequencies of `group`, one per record of [`TermPostings::records`], in order.
    pub fn term_frequencies(&self, group: FieldGroup, file: &IndexFile) -> Result<Vec<u32>> {
        let mut bytes = self.tfs[group as usize];
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let mut value = 0u32;
            let mut shift = 0;
            loop {
                let (&byte, rest) = bytes
                    .split_first()
                    .ok_or_else(|| file.corrupt("term frequency varint is cut short"))?;
                bytes = rest;
                if shift > 28 {
                    return Err(file.corrupt("term frequency varint is too long"));
                }
                value |= u32::from(byte & 0x7f) << shift;
                shift += 7;
                if byte & 0x80 == 0 {
                    break;
                }
            }
            out.push(value);
        }
        Ok(out)
    }
}

/// Decodes a roaring bitmap in the portable format, validating it: the containers are checked
/// by `deserialize_from`, their keys here (a bitmap whose keys do not ascend would answer
/// membership and set operations wrongly), and every byte must be used.
pub fn decode_bitmap(bytes: &[u8]) -> std::result::Result<RoaringBitmap, String> {
    let mut reader = bytes;
    let bitmap = RoaringBitmap::deserialize_from(&mut reader).map_err(|e| e.to_string())?;
    if !reader.is_empty() {
        return Err(format!("{} trailing bytes", reader.len()));
    }
    // The header is sound now (deserialize_from read it): cookie, then the container keys.
    const NO_RUN_COOKIE: u32 = 12346;
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let cookie = word(0).ok_or("header cut short")?;
    let (size, descriptions_at) = if cookie == NO_RUN_COOKIE {
        (word(4).ok_or("header cut short")? as usize, 8)
    } else {
        let size = (cookie >> 16) as usize + 1;
        (size, 4 + size.div_ceil(8))
    };
    let mut previous: Option<u16> = None;
    for i in 0..size {
        let at = descriptions_at + 4 * i;
        let key = bytes
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .ok_or("container descriptions cut short")?;
        if previous.is_some_and(|p| p >= key) {
            return Err(format!(
                "container keys out of order ({key} after {})",
                previous.unwrap_or(0)
            ));
        }
        previous = Some(key);
    }
    Ok(bitmap)
}

struct SliceReader<'a, 'f> {
    bytes: &'a [u8],
    file: &'f IndexFile,
}

impl<'a> SliceReader<'a, '_> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() < n {
            return Err(self.file.corrupt("postings blob is cut short"));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
}
