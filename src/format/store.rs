//! The record store: record number → the codec's bytes (codec.rs), each record compressed on its
//! own with zstd and a dictionary trained on the records of the build that wrote it.
//!
//! The store is a blob file (blobs.rs) of `n + 1` blobs for `n` records:
//!
//! ```text
//! blob 0       the zstd dictionary, trained on a spread of the records of the build's first
//!              segment (every segment of a build shares it, so merging them copies frames);
//!              empty when those are too few to train one (records are compressed without a
//!              dictionary)
//! blob 1 + i   record i: one zstd frame of the record's codec bytes (level 3, the dictionary of
//!              blob 0; the header states the decompressed size and carries neither a
//!              dictionary id nor a content checksum — the blob CRC covers the frame)
//! ```
//!
//! Records are compressed one by one, so reading one decompresses only its own few hundred bytes
//! (about 2–3 µs with the dictionary): search reads records at random, for phrase verification
//! and for the page. The dictionary lets such small frames share what records have in common
//! (field layout, frequent words), which per-record compression alone cannot see.
//!
//! Reading record `i` checks, in order: blob `i + 1` against its CRC (blobs.rs); that it is one
//! whole zstd frame stating a decompressed size of at most [`MAX_RECORD_LEN`], before anything is
//! allocated for it; that it decompresses to exactly that size. The dictionary is checked (its
//! blob CRC, then by zstd) when the first record is read, so opening stays O(1).

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::OnceLock;

use rayon::prelude::*;
use zstd::bulk::Compressor;
use zstd::dict::EncoderDictionary;
use zstd::zstd_safe::{self, CParameter, DCtx, DDict};

use crate::error::{Error, Result};
use crate::format::blobs::{BlobFile, BlobWriter};
use crate::format::codec;
use crate::format::file::IndexFile;
use crate::format::footer::{FileKind, Footer};

/// The most a stored record may decompress to: the codec's decode limit, twice the SPEC's 1 MiB
/// record (a record's codec bytes are about the size of its JSON, plus its locator).
pub const MAX_RECORD_LEN: usize = codec::DECODE_LIMIT;

/// The zstd level records are compressed at: past it, compression gets several times slower for
/// a few percent less.
const LEVEL: i32 = 3;
/// Below this many bytes of records no dictionary is trained: it would not pay for itself.
const MIN_TRAINING_BYTES: usize = 16 << 10;
/// The dictionary is about 1/32 of the records' bytes, within these bounds (zstd's own advice
/// is ~100 KiB; small stores do best with small dictionaries).
const MIN_DICTIONARY: usize = 2 << 10;
const MAX_DICTIONARY: usize = 112 << 10;
/// Training reads samples of about this many times the dictionary's size: on 100,000 records,
/// 100 times trains for 1.5 s, 32 times for 0.3 s, for a store 1 % larger.
const TRAINING_BUDGET: usize = 32;
/// Records compressed in parallel between two writes, which bounds the memory of a build.
const CHUNK: usize = 4096;

/// Writes the store at `path` holding `records` (each one's codec bytes, in record order),
/// compressed with `dictionary` (from [`train_dictionary`]; empty: none), and finishes the file.
pub fn write_store(
    path: impl Into<PathBuf>,
    records: &[Vec<u8>],
    dictionary: &[u8],
) -> Result<Footer> {
    let mut writer = StoreWriter::create(path, dictionary)?;
    writer.compress(records)?;
    writer.finish()
}

/// Writes the store at `path` holding the records of `stores` one after another, compressed
/// with the first store's dictionary. The frames of a store sharing that dictionary (the
/// segments of one build share theirs) are copied as they are, CRC-checked; the records of any
/// other store are decompressed and compressed again.
pub fn merge_stores(path: impl Into<PathBuf>, stores: &[&StoreFile]) -> Result<Footer> {
    let dictionary = match stores.first() {
        Some(store) => store.blobs.get(0)?,
        None => &[],
    };
    let mut writer = StoreWriter::create(path, dictionary)?;
    for store in stores {
        if store.blobs.get(0)? == dictionary {
            for frame in 1..store.blobs.len() {
                writer.blobs.push(store.blobs.get(frame)?)?;
                if frame % CHUNK == 0 {
                    // A pass over the whole store: keep what it read out of resident memory.
                    store.file().release_pages();
                }
            }
            store.file().release_pages();
            continue;
        }
        for first in (0..store.len()).step_by(CHUNK) {
            let records = (first..store.len().min(first + CHUNK))
                .into_par_iter()
                .map(|i| store.get(i))
                .collect::<Result<Vec<_>>>()?;
            writer.compress(&records)?;
            store.file().release_pages();
        }
    }
    writer.finish()
}

/// Writes a store: the dictionary blob, then record frames.
struct StoreWriter {
    path: PathBuf,
    blobs: BlobWriter,
    prepared: Option<EncoderDictionary<'static>>,
}

impl StoreWriter {
    fn create(path: impl Into<PathBuf>, dictionary: &[u8]) -> Result<StoreWriter> {
        let path = path.into();
        let mut blobs = BlobWriter::create(&path, FileKind::Store)?;
        blobs.push(dictionary)?;
        let prepared = (!dictionary.is_empty()).then(|| EncoderDictionary::copy(dictionary, LEVEL));
        Ok(StoreWriter {
            path,
            blobs,
            prepared,
        })
    }

    /// Compresses `records` (codec bytes), in parallel a chunk at a time, and appends them.
    fn compress(&mut self, records: &[Vec<u8>]) -> Result<()> {
        if let Some((i, record)) = records
            .iter()
            .enumerate()
            .find(|(_, r)| r.len() > MAX_RECORD_LEN)
        {
            return Err(Error::corrupt(
                &self.path,
                format!(
                    "record {i} is {} bytes encoded, more than the {MAX_RECORD_LEN} a store \
                     holds",
                    record.len()
                ),
            ));
        }
        let compressor = || {
            let mut compressor = match &self.prepared {
                Some(prepared) => Compressor::with_prepared_dictionary(prepared),
                None => Compressor::new(LEVEL),
            }
            .expect("zstd accepts its level and a dictionary it trained");
            compressor
                .set_parameter(CParameter::DictIdFlag(false))
                .expect("a valid zstd parameter");
            compressor
        };
        for chunk in records.chunks(CHUNK) {
            let frames: Vec<Vec<u8>> = chunk
                .par_iter()
                .map_init(compressor, |compressor, record| {
                    compressor
                        .compress(record)
                        .expect("a buffer of zstd's bound always holds the frame")
                })
                .collect();
            for frame in &frames {
                self.blobs.push(frame)?;
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Footer> {
        self.blobs.finish()
    }
}

/// A dictionary trained on a spread of `records`, or none (empty) when they are too few or
/// zstd finds nothing to train on. A build trains one on its first segment's records and
/// compresses every segment with it, so that merging its segments copies their frames.
pub fn train_dictionary(records: &[Vec<u8>]) -> Vec<u8> {
    let total: usize = records.iter().map(Vec::len).sum();
    if total < MIN_TRAINING_BYTES {
        return Vec::new();
    }
    let size = (total / 32).clamp(MIN_DICTIONARY, MAX_DICTIONARY);
    let step = total.div_ceil(size * TRAINING_BUDGET).max(1);
    let samples: Vec<&[u8]> = records.iter().step_by(step).map(Vec::as_slice).collect();
    zstd::dict::from_samples(&samples, size).unwrap_or_default()
}

thread_local! {
    /// One decompression context per thread, reused across records and stores: creating one
    /// costs several times the decompression of a record.
    static CONTEXT: RefCell<DCtx<'static>> = RefCell::new(DCtx::create());
}

/// A store opened for reading.
pub struct StoreFile {
    blobs: BlobFile,
    /// The prepared dictionary (`None`: the store has none), set when first needed.
    dictionary: OnceLock<Option<DDict<'static>>>,
}

impl StoreFile {
    /// Checks the blob directory (O(1)); the dictionary is read with the first record.
    pub fn open(file: IndexFile) -> Result<StoreFile> {
        let blobs = BlobFile::open(file)?;
        if blobs.is_empty() {
            return Err(blobs
                .file()
                .corrupt("the store has no dictionary blob (written by another format?)"));
        }
        Ok(StoreFile {
            blobs,
            dictionary: OnceLock::new(),
        })
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.blobs.len() - 1
    }

    /// Whether the store holds no records.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The underlying file.
    pub fn file(&self) -> &IndexFile {
        self.blobs.file()
    }

    /// The codec bytes of record `index`: CRC-checked, size-checked, decompressed.
    pub fn get(&self, index: usize) -> Result<Vec<u8>> {
        if index >= self.len() {
            return Err(self
                .file()
                .corrupt(format!("record {index} requested of {}", self.len())));
        }
        let frame = self.blobs.get(index + 1)?;
        let corrupt = |problem: String| self.file().corrupt(format!("record {index}: {problem}"));
        let size = match zstd_safe::get_frame_content_size(frame) {
            Ok(Some(size)) if size <= MAX_RECORD_LEN as u64 => size as usize,
            Ok(Some(size)) => {
                return Err(corrupt(format!(
                    "it would decompress to {size} bytes, more than the {MAX_RECORD_LEN}-byte \
                     limit"
                )))
            }
            Ok(None) => {
                return Err(corrupt(
                    "its compressed frame does not state its size".into(),
                ))
            }
            Err(_) => return Err(corrupt("it is not a zstd frame".into())),
        };
        match zstd_safe::find_frame_compressed_size(frame) {
            Ok(len) if len == frame.len() => {}
            Ok(len) => {
                return Err(corrupt(format!(
                    "its compressed frame ends at byte {len} of {}",
                    frame.len()
                )))
            }
            Err(code) => {
                return Err(corrupt(format!(
                    "its compressed frame is damaged ({})",
                    zstd_safe::get_error_name(code)
                )))
            }
        }
        let dictionary = self.dictionary()?;
        let mut out = Vec::with_capacity(size);
        let written = CONTEXT.with_borrow_mut(|context| match dictionary {
            Some(dictionary) => context.decompress_using_ddict(&mut out, frame, dictionary),
            None => context.decompress(&mut out, frame),
        });
        match written {
            Ok(n) if n == size => Ok(out),
            Ok(n) => Err(corrupt(format!(
                "it decompresses to {n} bytes, its frame states {size}"
            ))),
            Err(code) => Err(corrupt(format!(
                "it does not decompress ({})",
                zstd_safe::get_error_name(code)
            ))),
        }
    }

    /// The prepared dictionary, read and checked on first use.
    fn dictionary(&self) -> Result<Option<&DDict<'static>>> {
        if let Some(prepared) = self.dictionary.get() {
            return Ok(prepared.as_ref());
        }
        let bytes = self.blobs.get(0)?;
        let prepared = if bytes.is_empty() {
            None
        } else {
            Some(DDict::try_create(bytes).ok_or_else(|| {
                self.file()
                    .corrupt("the compression dictionary is damaged: zstd refuses it")
            })?)
        };
        Ok(self.dictionary.get_or_init(|| prepared).as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::footer::FOOTER_LEN;
    use crate::format::manifest::FileEntry;

    /// Records alike enough for a dictionary to help, with some unique text each.
    fn records(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                format!(
                    "{{\"id\": \"r-{i}\", \"title\": \"connection pool exhausted under load {i}\", \
                     \"solution\": \"raise max_connections and add a timeout of {} ms\"}}",
                    i * 37 % 1000
                )
                .into_bytes()
            })
            .collect()
    }

    fn open(path: &std::path::Path, footer: Footer) -> Result<StoreFile> {
        StoreFile::open(IndexFile::open(
            path,
            FileKind::Store,
            &FileEntry::from(footer),
        )?)
    }

    /// A store whose blobs are exactly `blobs` (dictionary first), each with a valid CRC.
    fn raw_store(path: &std::path::Path, blobs: &[Vec<u8>]) -> StoreFile {
        let mut writer = BlobWriter::create(path, FileKind::Store).unwrap();
        for blob in blobs {
            writer.push(blob).unwrap();
        }
        open(path, writer.finish().unwrap()).unwrap()
    }

    #[test]
    fn round_trip_with_and_without_a_dictionary() {
        let dir = tempfile::tempdir().unwrap();
        for n in [0, 1, 3, 2_000] {
            let path = dir.path().join(format!("{n}.store"));
            let records = records(n);
            let footer = write_store(&path, &records, &train_dictionary(&records)).unwrap();
            let store = open(&path, footer).unwrap();
            assert_eq!(store.len(), n);
            let dictionary = store.blobs.get(0).unwrap().len();
            assert_eq!(dictionary > 0, n == 2_000, "{n} records: {dictionary}");
            for (i, record) in records.iter().enumerate().rev() {
                assert_eq!(&store.get(i).unwrap(), record, "record {i} of {n}");
            }
            assert!(store.get(n).is_err());
            if n == 2_000 {
                let raw: usize = records.iter().map(Vec::len).sum();
                let body = std::fs::metadata(&path).unwrap().len() as usize - FOOTER_LEN;
                assert!(body < raw / 2, "{body} bytes store {raw} bytes of records");
            }
        }
    }

    #[test]
    fn a_damaged_frame_fails_its_checksum_before_decompression() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.store");
        let records = records(2_000);
        write_store(&path, &records, &train_dictionary(&records)).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        // Record 1's frame follows the dictionary and record 0's frame: flip its last byte.
        let store = {
            let footer = Footer::parse(&bytes, FileKind::Store, &path).unwrap();
            open(&path, footer).unwrap()
        };
        let dictionary = store.blobs.get(0).unwrap().len();
        let frames = store.blobs.get(1).unwrap().len() + store.blobs.get(2).unwrap().len();
        drop(store);
        bytes[dictionary + frames - 1] ^= 0x20;
        // Refresh the footer so only the blob's own CRC can catch the flip.
        let body = bytes[..bytes.len() - FOOTER_LEN].to_vec();
        let footer = crate::format::footer::write_file(&path, FileKind::Store, &body).unwrap();
        let store = open(&path, footer).unwrap();
        assert_eq!(store.get(0).unwrap(), records[0]);
        let error = store.get(1).unwrap_err();
        assert!(
            error.to_string().contains("blob 2 fails its checksum"),
            "{error}"
        );
        assert!(error.to_string().contains("s.store"), "{error}");
        assert_eq!(store.get(2).unwrap(), records[2]);
    }

    #[test]
    fn frames_that_pass_their_checksum_but_are_wrong_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.store");
        let frame = |bytes: &[u8]| zstd::bulk::compress(bytes, LEVEL).unwrap();
        let too_large = frame(&vec![0u8; MAX_RECORD_LEN + 1]);
        let mut no_size = Vec::new();
        {
            let mut encoder = zstd::stream::Encoder::new(&mut no_size, LEVEL).unwrap();
            std::io::Write::write_all(&mut encoder, b"a record of unstated size").unwrap();
            encoder.finish().unwrap();
        }
        // A frame whose header understates its size: magic, the frame header descriptor, then
        // (single segment, under 256 bytes) a one-byte size.
        let content = b"forty-two bytes of perfectly fine content";
        let mut understated = frame(content);
        assert_eq!(understated[5] as usize, content.len());
        understated[5] = 10;
        let mut trailing = frame(b"a record");
        trailing.extend_from_slice(b"junk");
        let blobs = vec![
            Vec::new(),
            frame(b"decompresses fine, is no record"),
            too_large,
            no_size,
            understated,
            trailing,
            b"not zstd at all".to_vec(),
            Vec::new(),
        ];
        let store = raw_store(&path, &blobs);
        assert_eq!(store.len(), 7);
        assert_eq!(store.get(0).unwrap(), b"decompresses fine, is no record");
        let cases = [
            (1, "more than the 2097152-byte limit"),
            (2, "does not state its size"),
            (3, "does not decompress"),
            (4, "ends at byte"),
            (5, "not a zstd frame"),
            (6, "not a zstd frame"),
        ];
        for (record, expected) in cases {
            let error = store.get(record).unwrap_err();
            let message = error.to_string();
            assert!(matches!(error, Error::Corrupt { .. }), "{message}");
            assert!(message.contains("bad.store"), "{message}");
            assert!(message.contains(&format!("record {record}: ")), "{message}");
            assert!(message.contains(expected), "record {record}: {message}");
        }
        // Garbage that decompresses is caught by the codec, as for the segment's store.
        assert!(codec::decode(&store.get(0).unwrap()).is_err());
    }

    #[test]
    fn a_damaged_dictionary_is_an_error_for_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dict.store");
        let records = records(2_000);
        let good = open(
            &path,
            write_store(&path, &records, &train_dictionary(&records)).unwrap(),
        )
        .unwrap();
        let mut blobs: Vec<Vec<u8>> = (0..=good.len())
            .map(|i| good.blobs.get(i).unwrap().to_vec())
            .collect();
        drop(good);
        // Keep the dictionary's magic and id, damage its entropy tables.
        for byte in &mut blobs[0][8..200] {
            *byte = 0xFF;
        }
        let path = dir.path().join("broken.store");
        let store = raw_store(&path, &blobs);
        for i in [0, 1, 1_999] {
            let error = store.get(i).unwrap_err();
            assert!(error.to_string().contains("broken.store"), "{error}");
            assert!(error.to_string().contains("dictionary"), "{error}");
        }
        // A flipped dictionary byte fails the dictionary blob's CRC, for every record too.
        let path = dir.path().join("flipped.store");
        std::fs::copy(dir.path().join("dict.store"), &path).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[100] ^= 0x04;
        let body = bytes[..bytes.len() - FOOTER_LEN].to_vec();
        let footer = crate::format::footer::write_file(&path, FileKind::Store, &body).unwrap();
        let store = open(&path, footer).unwrap();
        for i in [0, 1_999] {
            let error = store.get(i).unwrap_err();
            assert!(error.to_string().contains("flipped.store"), "{error}");
            assert!(
                error.to_string().contains("blob 0 fails its checksum"),
                "{error}"
            );
        }
        // A store with no blob at all has not even its dictionary.
        let path = dir.path().join("empty.store");
        let footer = BlobWriter::create(&path, FileKind::Store)
            .unwrap()
            .finish()
            .unwrap();
        let error = open(&path, footer).err().expect("refused");
        assert!(error.to_string().contains("no dictionary"), "{error}");
    }
}
