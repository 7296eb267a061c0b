//! The record store: record number → the codec's bytes (codec.rs), each record compressed on its
//! own with a word-based Huffman model trained on the records of the build that wrote it
//! (wordcode/).
//!
//! The store is a blob file (blobs.rs) of `n + 1` blobs for `n` records:
//!
//! ```text
//! blob 0       the model (wordcode/): the words and separators of a spread of the records
//!              of the build's first segment with their Huffman code lengths, and byte-level
//!              codes spelling the others; every segment of a build shares it, so merging them
//!              copies frames. Empty when those records are too few to train one (frames then
//!              hold records as they are)
//! blob 1 + i   record i's frame: varint length of the record (at most MAX_RECORD_LEN), then
//!              the bit stream of the Huffman codes of its tokens (the blob CRC covers it)
//! ```
//!
//! Records are compressed one by one, so reading one decodes only its own few hundred bytes
//! (about 3 µs): search reads records at random, for phrase verification and for the page. The
//! model holds what records have in common (field layout, frequent words), which per-record
//! compression alone cannot see; its words, coded by their frequency, take a record's text to
//! about a fifth of its size.
//!
//! Reading record `i` checks, in order: blob `i + 1` against its CRC (blobs.rs); that the length
//! it states is at most [`MAX_RECORD_LEN`], before anything is allocated for it; that its bit
//! stream decodes to exactly that length, with no bits left over. The model is checked (its
//! blob CRC, then its structure and code lengths) when the first record is read, so opening
//! stays O(1).

use std::path::PathBuf;

use crate::format::directory::FileTarget;
use std::sync::{Mutex, OnceLock, PoisonError};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::format::blobs::{BlobFile, BlobWriter};
use crate::format::codec;
use crate::format::file::IndexFile;
use crate::format::footer::{FileKind, Footer};
use crate::format::wordcode::{self, Encoder, Model};
use crate::format::FormatError;

/// The most a stored record may decode to: the codec's decode limit, twice the SPEC's 1 MiB
/// record (a record's codec bytes are about the size of its JSON, plus its locator).
pub const MAX_RECORD_LEN: usize = codec::DECODE_LIMIT;

/// Records compressed in parallel between two writes, which bounds the memory of a build.
const CHUNK: usize = 4096;

/// Writes the store at `path` holding `records` (each one's codec bytes, in record order),
/// compressed with `model` (from [`train_model`]; empty: none), and finishes the file.
pub fn write_store(
    path: impl Into<FileTarget>,
    records: &[Vec<u8>],
    model: &[u8],
) -> Result<Footer> {
    let path = path.into();
    let parsed =
        Model::parse(model.to_vec()).map_err(|problem| model_damage(path.path(), problem))?;
    let mut writer = StoreWriter::create(path, model, &parsed)?;
    writer.compress(records)?;
    writer.finish()
}

/// Writes the store at `path` holding the records of `stores` one after another, compressed
/// with the first store's model. The frames of a store sharing that model (the segments of one
/// build share theirs) are copied as they are, CRC-checked; the records of any other store are
/// decoded and encoded again.
pub fn merge_stores(path: impl Into<FileTarget>, stores: &[&StoreFile]) -> Result<Footer> {
    let (model, parsed) = match stores.first() {
        Some(store) => (store.blobs.get(0)?, store.model()?),
        None => (&[][..], &Model::parse(Vec::new()).expect("no model")),
    };
    let mut writer = StoreWriter::create(path, model, parsed)?;
    for store in stores {
        if store.blobs.get(0)? == model {
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

/// A damaged model blob, as an error about `file`.
fn model_damage(file: impl Into<PathBuf>, problem: FormatError) -> Error {
    Error::corrupt(file, problem.within("the record model (blob 0) is damaged"))
}

/// Writes a store: the model blob, then record frames.
struct StoreWriter {
    path: PathBuf,
    blobs: BlobWriter,
    encoder: Encoder,
}

impl StoreWriter {
    /// A store at `path` of the model `bytes`, parsed as `model`.
    fn create(path: impl Into<FileTarget>, bytes: &[u8], model: &Model) -> Result<StoreWriter> {
        let target = path.into();
        let path = target.path().to_path_buf();
        let mut blobs = BlobWriter::create(target, FileKind::Store)?;
        blobs.push(bytes)?;
        Ok(StoreWriter {
            path,
            blobs,
            encoder: model.encoder(),
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
        for chunk in records.chunks(CHUNK) {
            let frames: Vec<Vec<u8>> = chunk
                .par_iter()
                .map(|record| {
                    let mut frame = Vec::with_capacity(record.len() / 2 + 8);
                    self.encoder.encode(record, &mut frame);
                    frame
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

/// A model trained on a spread of `records` (serialized: the store's blob 0), or none (empty)
/// when they are too few for one to pay. A build trains one on its first segment's records and
/// compresses every segment with it, so that merging its segments copies their frames.
pub fn train_model(records: &[Vec<u8>]) -> Vec<u8> {
    wordcode::train(records)
}

/// A store opened for reading.
pub struct StoreFile {
    blobs: BlobFile,
    /// The parsed model, set when first needed.
    model: OnceLock<Model>,
    /// Held while the model is parsed, so that threads reading their first records at once
    /// parse it once.
    parsing: Mutex<()>,
}

impl StoreFile {
    /// Checks the blob directory (O(1)); the model is read with the first record.
    pub fn open(file: IndexFile) -> Result<StoreFile> {
        let blobs = BlobFile::open(file)?;
        if blobs.is_empty() {
            return Err(blobs
                .file()
                .corrupt("the store has no model blob (written by another format?)"));
        }
        Ok(StoreFile {
            blobs,
            model: OnceLock::new(),
            parsing: Mutex::new(()),
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

    /// The codec bytes of record `index`: CRC-checked, size-checked, decoded.
    pub fn get(&self, index: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.get_into(index, &mut out)?;
        Ok(out)
    }

    /// The codec bytes of record `index` into `out` (cleared first): [`StoreFile::get`] for a
    /// caller that reads many records into one buffer.
    pub fn get_into(&self, index: usize, out: &mut Vec<u8>) -> Result<()> {
        self.decode_into(index, usize::MAX, out).map(|_| ())
    }

    /// At least the first `want` codec bytes of record `index` (all of them when fewer), and
    /// whether they are all: CRC-checked, size-checked, decoded as far as that.
    pub fn get_prefix(&self, index: usize, want: usize) -> Result<(Vec<u8>, bool)> {
        let mut out = Vec::new();
        let whole = self.decode_into(index, want, &mut out)?;
        Ok((out, whole))
    }

    /// At least the first `want` codec bytes of record `index` into `out`, and whether they
    /// are all.
    fn decode_into(&self, index: usize, want: usize, out: &mut Vec<u8>) -> Result<bool> {
        if index >= self.len() {
            return Err(self
                .file()
                .corrupt(format!("record {index} requested of {}", self.len())));
        }
        let frame = self.blobs.get(index + 1)?;
        let model = self.model()?;
        model
            .decode_prefix_into(frame, MAX_RECORD_LEN, want, out)
            .map_err(|problem| {
                self.file()
                    .corrupt(problem.within(format!("record {index}")))
            })
    }

    /// Reads and checks the model now rather than at the first record read. A damaged model
    /// is left for that read to report.
    pub fn warm(&self) {
        let _ = self.model();
    }

    /// Whether the model was read (for tests of who reads it).
    #[cfg(test)]
    pub fn model_is_read(&self) -> bool {
        self.model.get().is_some()
    }

    /// The parsed model, read and checked on first use.
    fn model(&self) -> Result<&Model> {
        if let Some(model) = self.model.get() {
            return Ok(model);
        }
        let _parsing = self.parsing.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(model) = self.model.get() {
            return Ok(model);
        }
        let model = Model::parse(self.blobs.get_shared(0)?)
            .map_err(|problem| model_damage(self.file().path(), problem))?;
        Ok(self.model.get_or_init(|| model))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::footer::FOOTER_LEN;
    use crate::format::manifest::FileEntry;
    use proptest::prelude::*;

    /// Records alike enough for a model to help, with some unique text each.
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

    /// A store whose blobs are exactly `blobs` (model first), each with a valid CRC.
    fn raw_store(path: &std::path::Path, blobs: &[Vec<u8>]) -> StoreFile {
        let mut writer = BlobWriter::create(path, FileKind::Store).unwrap();
        for blob in blobs {
            writer.push(blob).unwrap();
        }
        open(path, writer.finish().unwrap()).unwrap()
    }

    /// The blobs of a store.
    fn blobs_of(store: &StoreFile) -> Vec<Vec<u8>> {
        (0..=store.len())
            .map(|i| store.blobs.get(i).unwrap().to_vec())
            .collect()
    }

    #[test]
    fn round_trip_with_and_without_a_model() {
        let dir = tempfile::tempdir().unwrap();
        for n in [0, 1, 3, 2_000] {
            let path = dir.path().join(format!("{n}.store"));
            let records = records(n);
            let footer = write_store(&path, &records, &train_model(&records)).unwrap();
            let store = open(&path, footer).unwrap();
            assert_eq!(store.len(), n);
            let model = store.blobs.get(0).unwrap().len();
            assert_eq!(model > 0, n == 2_000, "{n} records: {model}");
            for (i, record) in records.iter().enumerate().rev() {
                assert_eq!(&store.get(i).unwrap(), record, "record {i} of {n}");
            }
            assert!(store.get(n).is_err());
            if n == 2_000 {
                let raw: usize = records.iter().map(Vec::len).sum();
                let body = std::fs::metadata(&path).unwrap().len() as usize - FOOTER_LEN;
                assert!(body < raw / 3, "{body} bytes store {raw} bytes of records");
            }
        }
    }

    #[test]
    fn a_damaged_frame_fails_its_checksum_before_decoding() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.store");
        let records = records(2_000);
        write_store(&path, &records, &train_model(&records)).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        // Record 1's frame follows the model and record 0's frame: flip its last byte.
        let store = {
            let footer = Footer::parse(&bytes, FileKind::Store, &path).unwrap();
            open(&path, footer).unwrap()
        };
        let model = store.blobs.get(0).unwrap().len();
        let frames = store.blobs.get(1).unwrap().len() + store.blobs.get(2).unwrap().len();
        drop(store);
        bytes[model + frames - 1] ^= 0x20;
        // Refresh the footer so only the blob's own CRC can catch the flip.
        let body = bytes[..bytes.len() - FOOTER_LEN].to_vec();
        std::fs::remove_file(&path).unwrap();
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
        let records = records(2_000);
        let model = train_model(&records);
        let encoder = Model::parse(model.clone()).unwrap().encoder();
        let frame = |record: &[u8]| {
            let mut frame = Vec::new();
            encoder.encode(record, &mut frame);
            frame
        };
        let good = frame(&records[7]);
        assert_eq!(
            good[0] as usize | (good[1] as usize & 0x7F) << 7,
            records[7].len()
        );
        let header = |len: u64| {
            let mut header = Vec::new();
            let mut len = len;
            while len >= 0x80 {
                header.push(len as u8 | 0x80);
                len >>= 7;
            }
            header.push(len as u8);
            header
        };
        let with_header = |len: u64| [header(len), good[2..].to_vec()].concat();
        let mut trailing = good.clone();
        trailing.extend_from_slice(b"junk");
        let blobs = vec![
            model.clone(),
            good.clone(),
            with_header(MAX_RECORD_LEN as u64 + 1),
            with_header(10),
            with_header(records[7].len() as u64 + 40),
            good[..good.len() / 2].to_vec(),
            trailing,
            Vec::new(),
            vec![0xFF; 11],
            frame(b""),
            [frame(b""), vec![0]].concat(),
        ];
        let store = raw_store(&dir.path().join("bad.store"), &blobs);
        assert_eq!(store.get(0).unwrap(), records[7]);
        assert_eq!(store.get(8).unwrap(), b"");
        // An understated length ends within a token, or before the bit stream does.
        let cases = [
            (1, &["more than the 2097152-byte limit"][..]),
            (
                2,
                &[
                    "its tokens pass its stated length of 10 bytes",
                    "bytes follow the end",
                ],
            ),
            (3, &["its bit stream ends in the middle of a code"]),
            (4, &["its bit stream ends in the middle of a code"]),
            (5, &["4 bytes follow the end of its bit stream"]),
            (6, &["it ends before byte 1"]),
            (7, &["overflows"]),
            (9, &["1 bytes follow"]),
        ];
        for (record, expected) in cases {
            let error = store.get(record).unwrap_err();
            let message = error.to_string();
            assert!(matches!(error, Error::Corrupt { .. }), "{message}");
            assert!(message.contains("bad.store"), "{message}");
            assert!(message.contains(&format!("record {record}: ")), "{message}");
            assert!(
                expected.iter().any(|expected| message.contains(expected)),
                "record {record}: {message}"
            );
        }
        // Frames without a model hold their record as it is, checked against the header.
        let blobs = vec![
            Vec::new(),
            [header(3), b"abc".to_vec()].concat(),
            [header(4), b"abc".to_vec()].concat(),
            [header(2), b"abc".to_vec()].concat(),
        ];
        let store = raw_store(&dir.path().join("raw.store"), &blobs);
        assert_eq!(store.get(0).unwrap(), b"abc");
        for record in [1, 2] {
            let message = store.get(record).unwrap_err().to_string();
            assert!(
                message.contains("holds 3 bytes, its header states"),
                "{message}"
            );
        }
        // Garbage that decodes is caught by the codec, as for the segment's store.
        let store = raw_store(
            &dir.path().join("garbage.store"),
            &[model, frame(b"decodes fine, is no record")],
        );
        assert!(codec::decode(&store.get(0).unwrap()).is_err());
    }

    #[test]
    fn a_damaged_model_is_an_error_for_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.store");
        let records = records(2_000);
        let good = open(
            &path,
            write_store(&path, &records, &train_model(&records)).unwrap(),
        )
        .unwrap();
        let blobs = blobs_of(&good);
        drop(good);
        // The header: format, escapes, 24 varints (the tokens of each code length); then the
        // spelling lengths, then the spans, a u32 per symbol.
        let (mut at, mut symbols, mut value, mut shift) = (3, 2, 0, 0);
        for _ in 0..24 {
            loop {
                let byte = blobs[0][at];
                at += 1;
                value |= usize::from(byte & 0x7F) << shift;
                shift += 7;
                if byte < 0x80 {
                    break;
                }
            }
            symbols += value;
            (value, shift) = (0, 0);
        }
        let (spelling, spans) = (at, at + 2 * 257);
        let ends_in_spans = format!("it ends before byte {}", spans + 4 * symbols);
        let mut damaged = Vec::new();
        let mut model = blobs[0].clone();
        model[0] = 9;
        damaged.push((model, "it has format 9"));
        let mut model = blobs[0].clone();
        model[1] = 0;
        damaged.push((model, "its escapes have codes of [0, "));
        // Escapes of one bit each, and a token of one bit too many.
        let mut model = vec![2, 1, 1, 1];
        model.extend_from_slice(&[0; 23]);
        model.extend_from_slice(&[9; 2 * 257]);
        damaged.push((model, "its code lengths fit no prefix code"));
        let mut model = blobs[0].clone();
        model.truncate(spelling + 100);
        damaged.push((model, "it states more tokens than it holds"));
        let mut model = blobs[0].clone();
        model.truncate(spans + 4 * symbols - 2);
        damaged.push((model, &ends_in_spans));
        let mut model = blobs[0].clone();
        model[spelling + 7] = 0;
        damaged.push((model, "its spelling code lengths fit no prefix code"));
        // A span past the text, and text too short for the tokens' spans.
        let mut model = blobs[0].clone();
        model[spans + 4..spans + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        damaged.push((model, "the span of symbol 1 (0xffffffff) is out of bounds"));
        let mut model = blobs[0].clone();
        model.truncate(model.len() - 40);
        damaged.push((model, "is out of bounds"));
        for (i, (model, expected)) in damaged.into_iter().enumerate() {
            let path = dir.path().join(format!("broken{i}.store"));
            let store = raw_store(&path, &[&[model][..], &blobs[1..]].concat());
            // Warming up reads the model and leaves its damage for every read to report.
            store.warm();
            for record in [0, 1, 1_999] {
                let message = store.get(record).unwrap_err().to_string();
                assert!(message.contains(&format!("broken{i}.store")), "{message}");
                assert!(
                    message.contains("the record model (blob 0) is damaged: "),
                    "{message}"
                );
                assert!(message.contains(expected), "{message}");
            }
        }
        // A flipped model byte fails the model blob's CRC, for every record too.
        let path = dir.path().join("flipped.store");
        std::fs::copy(dir.path().join("model.store"), &path).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[100] ^= 0x04;
        let body = bytes[..bytes.len() - FOOTER_LEN].to_vec();
        std::fs::remove_file(&path).unwrap();
        let footer = crate::format::footer::write_file(&path, FileKind::Store, &body).unwrap();
        let store = open(&path, footer).unwrap();
        store.warm();
        for i in [0, 1_999] {
            let error = store.get(i).unwrap_err();
            assert!(error.to_string().contains("flipped.store"), "{error}");
            assert!(
                error.to_string().contains("blob 0 fails its checksum"),
                "{error}"
            );
        }
        // A store with no blob at all has not even its model.
        let path = dir.path().join("empty.store");
        let footer = BlobWriter::create(&path, FileKind::Store)
            .unwrap()
            .finish()
            .unwrap();
        let error = open(&path, footer).err().expect("refused");
        assert!(error.to_string().contains("no model"), "{error}");
    }

    #[test]
    fn merging_copies_frames_of_the_same_model_and_encodes_the_others_again() {
        let dir = tempfile::tempdir().unwrap();
        let all = records(3_000);
        let (a, b) = all.split_at(2_000);
        let model = train_model(a);
        let other = train_model(&all[500..2_500]);
        assert_ne!(model, other);
        let mut stores = Vec::new();
        for (name, records, model) in [
            ("a", a, &model),
            ("b", b, &model),
            ("c", a, &other),
            ("d", b, &Vec::new()),
        ] {
            let path = dir.path().join(format!("{name}.store"));
            stores.push(open(&path, write_store(&path, records, model).unwrap()).unwrap());
        }
        let [a_store, b_store, c_store, d_store] = &stores[..] else {
            unreachable!()
        };
        let path = dir.path().join("merged.store");
        let merged = open(
            &path,
            merge_stores(&path, &[a_store, b_store, c_store, d_store]).unwrap(),
        )
        .unwrap();
        assert_eq!(merged.blobs.get(0).unwrap(), &model[..]);
        let expected: Vec<&Vec<u8>> = a.iter().chain(b).chain(a).chain(b).collect();
        assert_eq!(merged.len(), expected.len());
        for (i, record) in expected.iter().enumerate() {
            assert_eq!(&&merged.get(i).unwrap(), record, "record {i}");
        }
        // The frames of the stores of the same model are copied; the others', encoded again
        // with it, are those that it writes.
        for i in 0..2_000 {
            assert_eq!(
                merged.blobs.get(i + 1).unwrap(),
                a_store.blobs.get(i + 1).unwrap()
            );
            assert_eq!(
                merged.blobs.get(3_000 + i + 1).unwrap(),
                a_store.blobs.get(i + 1).unwrap()
            );
        }
        // No store: an empty one, without a model.
        let path = dir.path().join("none.store");
        let none = open(&path, merge_stores(&path, &[]).unwrap()).unwrap();
        assert!(none.is_empty());
        assert!(none.blobs.get(0).unwrap().is_empty());
    }

    /// Records of words in and out of a vocabulary, numbers, punctuation, non-ASCII text and
    /// arbitrary bytes; some empty, some long.
    fn record_strategy() -> impl Strategy<Value = Vec<u8>> {
        let word = prop_oneof![
            4 => prop::sample::select(vec![
                "pool", "connection", "timeout", "the", "a", "raise", "max", "Ms", "ERROR",
                "x1", "2024", "id", "q",
            ])
            .prop_map(|w| w.as_bytes().to_vec()),
            2 => "[a-zA-Z0-9]{1,40}".prop_map(String::into_bytes),
            1 => "\\PC{1,12}".prop_map(String::into_bytes),
            1 => prop::collection::vec(any::<u8>(), 1..24),
        ];
        let separator = prop_oneof![
            6 => Just(b" ".to_vec()),
            1 => prop::sample::select(vec![", ", ". ", "\"", "", "  ", "\n", "\u{0}\u{0}\u{1}"])
                .prop_map(|s| s.as_bytes().to_vec()),
            1 => prop::collection::vec(any::<u8>(), 0..6),
        ];
        prop_oneof![
            8 => prop::collection::vec((word, separator), 0..300)
                .prop_map(|parts| parts.into_iter().flat_map(|(w, s)| [w, s]).flatten().collect()),
            1 => prop::collection::vec(any::<u8>(), 0..2_000),
            1 => Just(Vec::new()),
            1 => (any::<u8>(), 0..70_000usize).prop_map(|(b, n)| vec![b; n]),
        ]
    }

    /// Training text: the records of [`records`], those of the strategy's vocabulary.
    fn training_records() -> Vec<Vec<u8>> {
        let mut out = records(400);
        out.push(b"the pool of connection q timeout raise max x1 2024 ERROR a id".repeat(50));
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn any_records_read_back(
            records in prop::collection::vec(record_strategy(), 0..12),
            trained in any::<bool>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("p.store");
            let model = if trained { train_model(&training_records()) } else { Vec::new() };
            prop_assert_eq!(model.is_empty(), !trained);
            let store = open(&path, write_store(&path, &records, &model).unwrap()).unwrap();
            for (i, record) in records.iter().enumerate() {
                prop_assert_eq!(&store.get(i).unwrap(), record);
            }
        }

        #[test]
        fn records_read_back_with_a_model_trained_on_themselves(
            records in prop::collection::vec(record_strategy(), 20..60),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("p.store");
            let store = open(
                &path,
                write_store(&path, &records, &train_model(&records)).unwrap(),
            )
            .unwrap();
            for (i, record) in records.iter().enumerate() {
                prop_assert_eq!(&store.get(i).unwrap(), record);
            }
        }

        #[test]
        fn garbage_frames_and_models_fail_cleanly(
            frames in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 1..8),
            damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            cut in any::<prop::sample::Index>(),
            garbage_model in prop::collection::vec(any::<u8>(), 0..600),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let model = train_model(&training_records());
            let records = records(20);
            let encoder = Model::parse(model.clone()).unwrap().encoder();
            let mut damaged_frames = frames.clone();
            for record in &records {
                let mut frame = Vec::new();
                encoder.encode(record, &mut frame);
                for &(at, xor) in &damage {
                    let at = at.index(frame.len());
                    frame[at] ^= xor;
                }
                damaged_frames.push(frame);
            }
            let mut damaged_model = model.clone();
            for &(at, xor) in &damage {
                let at = at.index(damaged_model.len());
                damaged_model[at] ^= xor;
            }
            damaged_model.truncate(damaged_model.len() - cut.index(1 + damaged_model.len() / 8));
            for (name, model) in [
                ("model", &model),
                ("none", &Vec::new()),
                ("damaged", &damaged_model),
                ("garbage", &garbage_model),
            ] {
                let path = dir.path().join(format!("{name}.store"));
                let store = raw_store(&path, &[&[model.clone()][..], &damaged_frames].concat());
                for i in 0..store.len() {
                    if let Ok(record) = store.get(i) {
                        // A frame that decodes states its length.
                        prop_assert!(record.len() <= MAX_RECORD_LEN);
                    }
                }
            }
        }
    }
}
