//! One immutable segment opened for reading: its dictionaries, postings, store and columns.

use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use roaring::RoaringBitmap;

use crate::error::{Error, Result};
use crate::format::blobs::BlobFile;
use crate::format::codec::{self, RecordText, StoredHead, StoredRecord};
use crate::format::columns::Columns;
use crate::format::dictionary::Dictionary;
use crate::format::directory::Directory;
use crate::format::file::IndexFile;
use crate::format::footer::FileKind;
use crate::format::manifest::{Manifest, SegmentEntry};
use crate::format::pairs::{PairHeader, PairList, PairRecords, Partners};
use crate::format::postings::{decode_bitmap, TermPostings};
use crate::format::prefixes::Prefixes;
use crate::format::store::StoreFile;
use crate::format::{FACET_IRREGULAR, FACET_SUPERSEDES, STOP_MARKER};
use crate::schema::GROUP_COUNT;
use crate::text::MAX_TOKEN_CHARS;

/// The bytes of a record's encoding decoded for its head beyond those of its content: its
/// locator, id and title fit in them but for a long title (then the whole record is decoded).
const HEAD_BYTES: usize = 256;

/// A segment's record store, which the degraded scan needs even when the rest is damaged.
pub struct Store {
    records: StoreFile,
}

impl Store {
    /// Opens `segment`'s store (O(1) checks).
    pub fn open(dir: &Path, entry: &SegmentEntry) -> Result<Store> {
        Store::open_in(&Directory::Disk(dir.to_path_buf()), entry)
    }

    /// [`Store::open`] in `dir` (on disk or in memory).
    pub fn open_in(dir: &Directory, entry: &SegmentEntry) -> Result<Store> {
        let records = StoreFile::open(open_file(dir, entry, "store", FileKind::Store)?)?;
        if records.len() as u64 != entry.records {
            return Err(records.file().corrupt(format!(
                "store holds {} records, the manifest says {}",
                records.len(),
                entry.records
            )));
        }
        Ok(Store { records })
    }

    /// Opens the store at `path` trusting its own footer, with no manifest to compare it with
    /// (`reliora salvage` of a directory whose manifest is lost).
    pub fn open_unlisted(path: &Path) -> Result<Store> {
        let mapped = crate::format::mmap::MappedFile::open(path)?;
        let footer = crate::format::footer::Footer::parse(&mapped, FileKind::Store, path)?;
        drop(mapped);
        let records = StoreFile::open(IndexFile::open(path, FileKind::Store, &footer.into())?)?;
        Ok(Store { records })
    }

    /// The number of records.
    pub fn len(&self) -> u32 {
        self.records.len() as u32
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The head of record `doc` with at least `content_bytes` bytes of its content (or all of
    /// it), decoding as little of it as that takes.
    pub fn head(&self, doc: u32, content_bytes: usize) -> Result<StoredHead> {
        let want = HEAD_BYTES.saturating_add(content_bytes);
        let (bytes, whole) = self.records.get_prefix(doc as usize, want)?;
        let head = if whole {
            None
        } else {
            codec::decode_head(&bytes).map_err(|problem| {
                self.records
                    .file()
                    .corrupt(format!("record {doc}: {problem}"))
            })?
        };
        match head {
            Some(head) => {
                crate::work::head_decoded();
                Ok(head)
            }
            // All of it, or a title longer than the bytes decoded.
            None => self.get(doc).map(|stored| StoredHead::of(&stored)),
        }
    }

    /// Decodes record `doc`.
    pub fn get(&self, doc: u32) -> Result<StoredRecord> {
        crate::work::record_decoded();
        let bytes = self.records.get(doc as usize)?;
        codec::decode(&bytes).map_err(|problem| {
            self.records
                .file()
                .corrupt(format!("record {doc}: {problem}"))
        })
    }

    /// Whether `test` holds for the searchable text of record `doc` ([`RecordText`]), read
    /// from its decoded bytes in place: one buffer per thread, no record built.
    pub fn test_text(&self, doc: u32, test: &dyn Fn(&RecordText<'_>) -> bool) -> Result<bool> {
        thread_local! {
            static BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
        }
        /// A buffer grown past this by a long record is not kept for the next one.
        const KEPT_BYTES: usize = 64 << 10;
        crate::work::record_decoded();
        let mut bytes = BUFFER.take();
        let read = self
            .records
            .get_into(doc as usize, &mut bytes)
            .and_then(|()| {
                let text = codec::decode_text(&bytes).map_err(|problem| {
                    self.records
                        .file()
                        .corrupt(format!("record {doc}: {problem}"))
                })?;
                Ok(test(&text))
            });
        if bytes.capacity() <= KEPT_BYTES {
            BUFFER.set(bytes);
        }
        read
    }

    /// The underlying file.
    pub fn file(&self) -> &IndexFile {
        self.records.file()
    }

    /// The compressed records.
    pub(crate) fn frames(&self) -> &StoreFile {
        &self.records
    }
}

/// A whole segment.
pub struct Segment {
    /// The segment's name (the prefix of its files).
    pub name: String,
    pub(crate) terms: Dictionary,
    pub(crate) postings: BlobFile,
    pub(crate) facets: Dictionary,
    pub(crate) facet_postings: BlobFile,
    pub(crate) ids: Dictionary,
    pub(crate) store: Store,
    pub(crate) columns: Columns,
    /// Lowercased entity names of the records (SPEC §5.4).
    pub(crate) entities: Dictionary,
    /// Per field group, the sum of the records' group lengths (from the manifest).
    pub(crate) group_length_sums: [u64; GROUP_COUNT],
    /// Whether the facets hold the records naming each entity (the manifest's `entityFacets`).
    pub(crate) entity_facets: bool,
    /// The fingerprints of the records' MMR content prefixes, where the manifest lists them.
    pub(crate) prefixes: Option<Prefixes>,
    /// The records that name a record they supersede (read on first use).
    superseding: OnceLock<RoaringBitmap>,
    /// The pinned records (read from the columns on first use).
    pinned: OnceLock<RoaringBitmap>,
    /// Frequent words and the records holding each adjacent pair of them (format/pairs.rs).
    pub(crate) pairs: BlobFile,
    /// The pair file's header (read on first use).
    pair_header: OnceLock<std::result::Result<PairHeader, String>>,
    /// The records holding a term that is not plain ASCII or may have been cut, as a bit per
    /// record (read when asked a second time).
    irregular: OnceLock<Vec<u64>>,
    /// How many times `irregular` was asked for before it was read.
    irregular_asked: AtomicU32,
}

fn open_file(
    dir: &Directory,
    entry: &SegmentEntry,
    suffix: &str,
    kind: FileKind,
) -> Result<IndexFile> {
    let path = Manifest::file_path(dir.root(), &entry.name, suffix);
    let expected = entry.files.get(suffix).ok_or_else(|| {
        Error::corrupt(
            &path,
            format!("the manifest does not list {suffix} for {}", entry.name),
        )
    })?;
    if !dir.exists(&path) {
        return Err(Error::corrupt(&path, "file is missing"));
    }
    IndexFile::open_in(dir, &path, kind, expected)
}

impl Segment {
    /// Opens every file of `entry`, checking footers and geometry in O(1) each.
    pub fn open(dir: &Path, entry: &SegmentEntry, store: Store) -> Result<Segment> {
        Segment::open_in(&Directory::Disk(dir.to_path_buf()), entry, store)
    }

    /// [`Segment::open`] in `dir` (on disk or in memory).
    pub fn open_in(dir: &Directory, entry: &SegmentEntry, store: Store) -> Result<Segment> {
        let columns = Columns::open(open_file(dir, entry, "columns", FileKind::Columns)?)?;
        if columns.len() as u64 != entry.records {
            return Err(columns.file().corrupt(format!(
                "columns hold {} rows, the manifest says {} records",
                columns.len(),
                entry.records
            )));
        }
        let group_length_sums = entry.group_length_sums.ok_or_else(|| {
            Error::corrupt(
                dir.root().join(crate::format::manifest::MANIFEST_NAME),
                format!(
                    "segment {} has no group length sums (written by an older build: rebuild \
                     the index)",
                    entry.name
                ),
            )
        })?;
        Ok(Segment {
            entities: Dictionary::new(open_file(dir, entry, "entities.fst", FileKind::Fst)?),
            group_length_sums,
            entity_facets: entry.entity_facets,
            prefixes: match entry.files.contains_key("prefixes") {
                true => Some(Prefixes::open(
                    open_file(dir, entry, "prefixes", FileKind::Prefixes)?,
                    entry.records,
                )?),
                false => None,
            },
            name: entry.name.clone(),
            terms: Dictionary::new(open_file(dir, entry, "terms.fst", FileKind::Fst)?),
            postings: BlobFile::open(open_file(dir, entry, "terms.post", FileKind::Postings)?)?,
            facets: Dictionary::new(open_file(dir, entry, "facets.fst", FileKind::Fst)?),
            facet_postings: BlobFile::open(open_file(
                dir,
                entry,
                "facets.post",
                FileKind::Postings,
            )?)?,
            ids: Dictionary::new(open_file(dir, entry, "ids.fst", FileKind::Fst)?),
            store,
            columns,
            superseding: OnceLock::new(),
            pinned: OnceLock::new(),
            pairs: BlobFile::open(open_file(dir, entry, "pairs", FileKind::Postings)?)?,
            pair_header: OnceLock::new(),
            irregular: OnceLock::new(),
            irregular_asked: AtomicU32::new(0),
        })
    }

    /// The segment's frequent words and where their pairs are.
    pub fn pair_header(&self) -> Result<&PairHeader> {
        let file = self.pairs.file();
        self.pair_header
            .get_or_init(|| {
                let blobs = self.pairs.len();
                if blobs == 0 {
                    return Err(format!("{}: no pair header", file.path().display()));
                }
                let blob = self.pairs.get(blobs - 1).map_err(|e| e.to_string())?;
                PairHeader::parse(blob, blobs, file).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|problem| Error::corrupt(file.path(), problem.clone()))
    }

    /// The pairs frequent word `first` (its number) starts.
    pub fn partners(&self, first: usize) -> Result<Partners<'_>> {
        let header = self.pair_header()?;
        let blob = self.pairs.get(header.partners_blob(first))?;
        header.partners(first, blob, self.pairs.file())
    }

    /// The records of pair `j` of `partners` (read from this segment).
    pub fn pair_records<'s>(
        &'s self,
        partners: &Partners<'s>,
        j: usize,
    ) -> Result<PairRecords<'s>> {
        self.list_records(partners.list(j, self.pairs.file())?)
    }

    /// The records of a pair `list` of this segment: read from its blob where it has one.
    pub fn list_records<'s>(&'s self, list: PairList<'s>) -> Result<PairRecords<'s>> {
        match list {
            PairList::Inline { records, .. } => Ok(records),
            PairList::Own(blob) => PairRecords::new(self.pairs.get(blob)?, self.pairs.file()),
        }
    }

    /// The records holding the words `first second` next to each other in some value; `None`
    /// when this segment does not index that pair (a word is not frequent).
    pub fn pair(&self, first: &str, second: &str) -> Result<Option<PairRecords<'_>>> {
        let header = self.pair_header()?;
        let id = |word: &str| header.words.binary_search_by(|w| w.as_str().cmp(word)).ok();
        let (Some(a), Some(b)) = (id(first), id(second)) else {
            return Ok(None);
        };
        let partners = self.partners(a)?;
        match partners.find(b as u16) {
            Some(j) => self.pair_records(&partners, j).map(Some),
            None => Ok(Some(PairRecords::NONE)),
        }
    }

    /// The records that supersede another record: the union of the supersedes facets.
    pub fn superseding(&self) -> Result<&RoaringBitmap> {
        if let Some(set) = self.superseding.get() {
            return Ok(set);
        }
        let mut set = RoaringBitmap::new();
        for (_, docs) in self.supersedes_facets()? {
            set |= docs;
        }
        Ok(self.superseding.get_or_init(|| set))
    }

    /// The pinned records: one pass over the pinned column on first use (the recency profile's
    /// bounds tell pinned candidates apart).
    pub fn pinned(&self) -> Result<&RoaringBitmap> {
        if let Some(set) = self.pinned.get() {
            return Ok(set);
        }
        let mut set = RoaringBitmap::new();
        for doc in 0..self.len() {
            if self.columns.pinned(doc)? {
                set.insert(doc);
            }
        }
        Ok(self.pinned.get_or_init(|| set))
    }

    /// The records holding a term with a character outside ASCII, or of [`MAX_TOKEN_CHARS`]
    /// characters (a run the tokenizer may have cut), as a bit per record. Every other
    /// record's text, tokenized, gives back each of its ASCII words that non-alphanumeric
    /// characters surround, so its terms tell that an entity does not occur in it (see
    /// `plain_words` in search/entities.rs).
    ///
    /// A segment with entity facets holds them as one facet, read at the first ask. Without
    /// them, reading them is a pass over the whole term dictionary, which costs more than the
    /// records one search would otherwise decode: `None` the first time, so that a process
    /// answering one search never pays for it; read the next time and kept.
    pub fn irregular(&self) -> Result<Option<&[u64]>> {
        if let Some(bits) = self.irregular.get() {
            return Ok(Some(bits));
        }
        if self.entity_facets {
            let mut bits = vec![0u64; (self.len() as usize).div_ceil(64)];
            for doc in self.facet(FACET_IRREGULAR)? {
                bits[doc as usize / 64] |= 1 << (doc % 64);
            }
            return Ok(Some(self.irregular.get_or_init(|| bits)));
        }
        if self.irregular_asked.fetch_add(1, Ordering::Relaxed) == 0 {
            return Ok(None);
        }
        let mut terms = Vec::new();
        self.terms.for_each(|key, t| {
            let word = key.strip_suffix(&[STOP_MARKER]).unwrap_or(key);
            if !word.is_ascii() || word.len() >= MAX_TOKEN_CHARS {
                terms.push(t);
            }
        })?;
        let file = self.postings.file();
        let mut bits = vec![0u64; (self.len() as usize).div_ceil(64)];
        for t in terms {
            TermPostings::read(&self.postings, t)?.for_each(self.len(), file, |doc, _| {
                bits[doc as usize / 64] |= 1 << (doc % 64)
            })?;
        }
        Ok(Some(self.irregular.get_or_init(|| bits)))
    }

    /// Each id some record of this segment supersedes, with the records naming it.
    pub fn supersedes_facets(&self) -> Result<Vec<(String, RoaringBitmap)>> {
        let mut keys = Vec::new();
        self.facets
            .for_each_with_prefix(FACET_SUPERSEDES, |key, n| keys.push((key.to_vec(), n)))?;
        let file = self.facet_postings.file();
        keys.into_iter()
            .map(|(key, n)| {
                let target = String::from_utf8(key[FACET_SUPERSEDES.len()..].to_vec())
                    .map_err(|_| self.facets.file().corrupt("a supersedes key is not UTF-8"))?;
                let docs = decode_bitmap(self.facet_postings.get(n as usize)?)
                    .map_err(|problem| file.corrupt(format!("facet bitmap {n}: {problem}")))?;
                self.check_records(&docs, file)?;
                Ok((target, docs))
            })
            .collect()
    }

    /// The number of records.
    pub fn len(&self) -> u32 {
        self.store.len()
    }

    /// Whether the segment holds no records.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// Reads and checks the store's model now (a damaged one is reported by the reads).
    pub fn warm_store(&self) {
        self.store.records.warm();
    }

    /// Whether the store's model was read (for tests of who reads it).
    #[cfg(test)]
    pub fn store_is_warm(&self) -> bool {
        self.store.records.model_is_read()
    }

    /// Decodes record `doc`.
    pub fn stored(&self, doc: u32) -> Result<StoredRecord> {
        self.store.get(doc)
    }

    /// Whether `test` holds for the searchable text of record `doc` (see [`Store::test_text`]).
    pub fn test_text(&self, doc: u32, test: &dyn Fn(&RecordText<'_>) -> bool) -> Result<bool> {
        self.store.test_text(doc, test)
    }

    /// The head of record `doc` (see [`Store::head`]).
    pub fn stored_head(&self, doc: u32, content_bytes: usize) -> Result<StoredHead> {
        self.store.head(doc, content_bytes)
    }

    /// The record number of `id`.
    pub fn doc_of_id(&self, id: &str) -> Result<Option<u32>> {
        self.checked_doc(self.ids.get(id.as_bytes())?)
    }

    /// The record number of a locator.
    pub fn doc_of_locator(&self, locator: &str) -> Result<Option<u32>> {
        let key = [&[STOP_MARKER], locator.as_bytes()].concat();
        self.checked_doc(self.ids.get(&key)?)
    }

    fn checked_doc(&self, doc: Option<u64>) -> Result<Option<u32>> {
        match doc {
            Some(d) if d < u64::from(self.len()) => Ok(Some(d as u32)),
            Some(d) => Err(self
                .ids
                .file()
                .corrupt(format!("id maps to record {d} of {}", self.len()))),
            None => Ok(None),
        }
    }

    /// The records of a facet key (a tag phrase or memory type), empty when absent.
    pub fn facet(&self, key: &[u8]) -> Result<RoaringBitmap> {
        match self.facets.get(key)? {
            None => Ok(RoaringBitmap::new()),
            Some(n) => self.facet_records(n),
        }
    }

    /// The records of facet number `n` (its value in the facet dictionary), checked.
    pub fn facet_records(&self, n: u64) -> Result<RoaringBitmap> {
        let file = self.facet_postings.file();
        let blob = usize::try_from(n).map_or_else(
            |_| Err(file.corrupt(format!("facet bitmap {n} does not exist"))),
            |n| self.facet_postings.get(n),
        )?;
        let bitmap = decode_bitmap(blob)
            .map_err(|problem| file.corrupt(format!("facet bitmap {n}: {problem}")))?;
        self.check_records(&bitmap, file)?;
        Ok(bitmap)
    }

    /// Fails unless every record number of `bitmap` (read from `file`) is one of this segment's.
    pub fn check_records(&self, bitmap: &RoaringBitmap, file: &IndexFile) -> Result<()> {
        match bitmap.max() {
            Some(max) if max >= self.len() => Err(file.corrupt(format!(
                "postings name record {max}, the segment holds {}",
                self.len()
            ))),
            _ => Ok(()),
        }
    }

    /// The number of distinct terms.
    pub fn term_count(&self) -> Result<usize> {
        self.terms.len()
    }
}
