//! Merging the segments of one build into one segment.
//!
//! A build holds one segment's postings in memory at a time, so a large corpus is written as
//! several segments (spills); merging them afterwards leaves one segment, so that opening the
//! index and searching it cost the same whatever the number of spills. The merged segment holds
//! the records of the inputs one after another: input `s`'s record `d` becomes record
//! `base[s] + d`, `base[s]` being the number of records of the inputs before it.
//!
//! Every file is merged in a stream, holding one term (or facet, or word's pairs) at a time, a
//! batch of them being encoded in parallel; two groups of files (terms, facets and pairs; ids,
//! entities, store and columns) are merged at once. The inputs are spills written without an
//! fsync (`Directory::Unsynced`), read back from the page cache; the merged files are synced as
//! each is finished:
//!
//! - terms: the union of the term dictionaries; a term's postings are those of each input,
//!   renumbered, encoded again;
//! - facets, ids, entities: the union of the dictionaries (record sets renumbered, ids and
//!   locators renumbered, entity counts summed); the entity facets (names, irregular records)
//!   only when every input has them (the manifest's `entityFacets`), else none;
//! - word pairs: the inputs share their frequent words (`BuildShared`), so a pair's records are
//!   the inputs' records of that pair, renumbered; inputs whose words differ get no pairs in
//!   the merged segment (pairs only speed phrases up);
//! - the store: frames copied when the inputs share the first one's compression model
//!   (which one build's segments do), otherwise decompressed and compressed again;
//! - columns: row by row;
//! - prefix fingerprints: one input's after another, when every input has them (else none).
//!
//! Every byte read from an input is checked as a search would check it (CRCs, bounds).

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;
use roaring::RoaringBitmap;

use crate::error::{Error, Result};
use crate::format::blobs::BlobWriter;
use crate::format::dictionary::{for_each_union, Dictionary, DictionaryWriter};
use crate::format::file::IndexFile;
use crate::format::footer::FileKind;
use crate::format::manifest::{FileEntry, Manifest, SegmentEntry};
use crate::format::pairs as format_pairs;
use crate::format::postings::{merge_terms, MergePart, TermPostings};
use crate::format::prefixes::write_prefixes;
use crate::format::store::merge_stores;
use crate::format::{FACET_ENTITY, FACET_IRREGULAR};
use crate::index::build::WrittenSegment;
use crate::index::segment::{Segment, Store};
use crate::schema::GROUP_COUNT;

/// Terms (or words of pairs) encoded in parallel between two writes.
const BATCH: usize = 4096;

/// Writes the segment `name` into `dir`, holding the records of the segments `inputs` in
/// order, then deletes the inputs' files. The disk holds both meanwhile.
pub(crate) fn merge_segments(
    dir: &Path,
    name: &str,
    inputs: &[SegmentEntry],
) -> Result<WrittenSegment> {
    let path = |suffix: &str| Manifest::file_path(dir, name, suffix);
    let mut bases = Vec::with_capacity(inputs.len());
    let mut records = 0u32;
    let mut group_length_sums = [0u64; GROUP_COUNT];
    for entry in inputs {
        bases.push(records);
        records = u32::try_from(u64::from(records) + entry.records)
            .ok()
            .filter(|&r| r < u32::MAX)
            .ok_or_else(|| {
                Error::corrupt(
                    path("store"),
                    "a merged segment would hold more than 2^32 - 1 records",
                )
            })?;
        for (sum, add) in group_length_sums
            .iter_mut()
            .zip(entry.group_length_sums.unwrap_or_default())
        {
            *sum += add;
        }
    }
    let segments = inputs
        .iter()
        .map(|entry| Segment::open(dir, entry, Store::open(dir, entry)?))
        .collect::<Result<Vec<_>>>()?;
    let entity_facets = inputs.iter().all(|entry| entry.entity_facets);
    let merger = Merger {
        inputs: &segments,
        bases: &bases,
        entity_facets,
    };
    // The files are independent: two groups of them are merged at once, so that the serial
    // parts of one (writing, building a dictionary, copying frames) overlap the other's.
    let terms_and_pairs = || -> Result<_> {
        let (post, fst, terms) = merger.terms(&path("terms.post"), &path("terms.fst"))?;
        let (facets_post, facets_fst) = merger.facets(&path("facets.post"), &path("facets.fst"))?;
        let pairs = merger.pairs(&path("pairs"))?;
        let files = [
            ("terms.post", post),
            ("terms.fst", fst),
            ("facets.post", facets_post),
            ("facets.fst", facets_fst),
            ("pairs", pairs),
        ];
        Ok((files, terms))
    };
    let the_rest = || -> Result<_> {
        let ids = merger.ids(&path("ids.fst"))?;
        let entities = merger.entities(&path("entities.fst"))?;
        let stores: Vec<_> = segments.iter().map(|s| s.store.frames()).collect();
        let store = merge_stores(path("store"), &stores)?.into();
        let columns = merger.columns(&path("columns"))?;
        let prefixes = merger.prefixes(&path("prefixes"))?;
        let files = [
            ("ids.fst", Some(ids)),
            ("entities.fst", Some(entities)),
            ("store", Some(store)),
            ("columns", Some(columns)),
            ("prefixes", prefixes),
        ];
        Ok(files
            .into_iter()
            .filter_map(|(suffix, entry)| Some((suffix, entry?))))
    };
    let (first, second) = rayon::join(terms_and_pairs, the_rest);
    let (first, terms) = first?;
    let files: BTreeMap<String, FileEntry> = first
        .into_iter()
        .chain(second?)
        .map(|(suffix, entry)| (suffix.to_string(), entry))
        .collect();
    drop(segments);
    for entry in inputs {
        for suffix in entry.files.keys() {
            let _ = std::fs::remove_file(Manifest::file_path(dir, &entry.name, suffix));
        }
    }
    Ok(WrittenSegment {
        entry: SegmentEntry {
            name: name.to_string(),
            records: u64::from(records),
            files,
            group_length_sums: Some(group_length_sums),
            entity_facets,
        },
        terms,
    })
}

struct Merger<'a> {
    inputs: &'a [Segment],
    /// Whether every input has entity facets, which the merged segment then keeps.
    entity_facets: bool,
    /// Per input, the number of its first record in the merged segment.
    bases: &'a [u32],
}

/// A key and the inputs holding it, as (input, value there).
type Entries = (Vec<u8>, Vec<(usize, u64)>);

impl Merger<'_> {
    /// Walks the union of one dictionary per input, calling `flush` with batches of keys; the
    /// pages of the dictionary and of the `read` file (what `flush` reads, if anything) are
    /// released after each batch.
    fn union(
        &self,
        dictionary: impl Fn(&Segment) -> &Dictionary,
        read: impl Fn(&Segment) -> Option<&IndexFile>,
        mut flush: impl FnMut(&[Entries]) -> Result<()>,
    ) -> Result<()> {
        let dictionaries: Vec<&Dictionary> = self.inputs.iter().map(&dictionary).collect();
        let mut batch: Vec<Entries> = Vec::with_capacity(BATCH);
        for_each_union(&dictionaries, |key, entries| {
            batch.push((key.to_vec(), entries.to_vec()));
            if batch.len() == BATCH {
                flush(&batch)?;
                batch.clear();
                self.release_pages(|s| [Some(dictionary(s).file()), read(s)]);
            }
            Ok(())
        })?;
        flush(&batch)?;
        self.release_pages(|s| [Some(dictionary(s).file()), read(s)]);
        Ok(())
    }

    /// Unmaps the pages of the inputs' `files` read so far, so that a pass over them does not
    /// hold them all in resident memory. Only the files of one pass: another may be reading
    /// the others at the same time.
    fn release_pages<const N: usize>(&self, files: impl Fn(&Segment) -> [Option<&IndexFile>; N]) {
        for segment in self.inputs {
            for file in files(segment).into_iter().flatten() {
                file.release_pages();
            }
        }
    }

    /// The term dictionary and postings; returns their footers and the number of terms.
    fn terms(&self, post: &Path, fst: &Path) -> Result<(FileEntry, FileEntry, usize)> {
        let mut blobs = BlobWriter::create(post, FileKind::Postings)?;
        let mut keys = DictionaryWriter::new(fst);
        let mut terms = 0u64;
        self.union(
            |s| &s.terms,
            |s| Some(s.postings.file()),
            |batch| {
                let encoded = batch
                    .par_iter()
                    .map(|(_, entries)| self.term_postings(entries))
                    .collect::<Result<Vec<_>>>()?;
                for ((key, _), blob) in batch.iter().zip(encoded) {
                    blobs.push(&blob)?;
                    keys.insert(key, terms)?;
                    terms += 1;
                }
                Ok(())
            },
        )?;
        Ok((
            blobs.finish()?.into(),
            keys.finish()?.into(),
            terms as usize,
        ))
    }

    /// One term's postings blob: its postings in every input holding it, renumbered.
    fn term_postings(&self, entries: &[(usize, u64)]) -> Result<Vec<u8>> {
        let parts = entries
            .iter()
            .map(|&(s, number)| {
                let segment = &self.inputs[s];
                let file = segment.postings.file();
                let blob = usize::try_from(number).map_or_else(
                    |_| Err(file.corrupt(format!("term postings {number} do not exist"))),
                    |n| segment.postings.get(n),
                )?;
                Ok(MergePart {
                    postings: TermPostings::parse(blob, file)?,
                    file,
                    records: segment.len(),
                    base: self.bases[s],
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut blob = Vec::new();
        merge_terms(&parts, &mut blob)?;
        Ok(blob)
    }

    /// The prefix fingerprints, one input's after another: `None` (no file) unless every input
    /// has them, of one prefix length.
    fn prefixes(&self, path: &Path) -> Result<Option<FileEntry>> {
        let Some(first) = self.inputs.first().and_then(|s| s.prefixes.as_ref()) else {
            return Ok(None);
        };
        let mut fingerprints = Vec::new();
        for segment in self.inputs {
            match &segment.prefixes {
                Some(p) if p.chars() == first.chars() => fingerprints.extend(p.all()?),
                _ => return Ok(None),
            }
        }
        let footer = write_prefixes(path.into(), first.chars() as u32, &fingerprints)?;
        Ok(Some(footer.into()))
    }

    /// The facet dictionary and record sets.
    fn facets(&self, post: &Path, fst: &Path) -> Result<(FileEntry, FileEntry)> {
        let mut blobs = BlobWriter::create(post, FileKind::Postings)?;
        let mut keys = DictionaryWriter::new(fst);
        let mut facets = 0u64;
        let mut bytes = Vec::new();
        self.union(
            |s| &s.facets,
            |s| Some(s.facet_postings.file()),
            |batch| {
                for (key, entries) in batch {
                    // An input without entity facets would leave its records out of them.
                    let entity = key.starts_with(FACET_ENTITY) || key == FACET_IRREGULAR;
                    if entity && !self.entity_facets {
                        continue;
                    }
                    let mut merged = RoaringBitmap::new();
                    for &(s, number) in entries {
                        let base = self.bases[s];
                        for doc in self.inputs[s].facet_records(number)? {
                            merged.push(base + doc);
                        }
                    }
                    bytes.clear();
                    merged
                        .serialize_into(&mut bytes)
                        .expect("writing to a Vec cannot fail");
                    blobs.push(&bytes)?;
                    keys.insert(key, facets)?;
                    facets += 1;
                }
                Ok(())
            },
        )?;
        Ok((blobs.finish()?.into(), keys.finish()?.into()))
    }

    /// Ids and locators → record number; the first input naming a key keeps it.
    fn ids(&self, fst: &Path) -> Result<FileEntry> {
        let mut keys = DictionaryWriter::new(fst);
        self.union(
            |s| &s.ids,
            |_| None,
            |batch| {
                for (key, entries) in batch {
                    let (s, doc) = entries[0];
                    let segment = &self.inputs[s];
                    if doc >= u64::from(segment.len()) {
                        return Err(segment.ids.file().corrupt(format!(
                            "an id names record {doc}, the segment holds {}",
                            segment.len()
                        )));
                    }
                    keys.insert(key, u64::from(self.bases[s]) + doc)?;
                }
                Ok(())
            },
        )?;
        Ok(keys.finish()?.into())
    }

    /// Entity name → the number of records naming it, summed.
    fn entities(&self, fst: &Path) -> Result<FileEntry> {
        let mut keys = DictionaryWriter::new(fst);
        self.union(
            |s| &s.entities,
            |_| None,
            |batch| {
                for (key, entries) in batch {
                    keys.insert(key, entries.iter().map(|&(_, count)| count).sum())?;
                }
                Ok(())
            },
        )?;
        Ok(keys.finish()?.into())
    }

    /// The word pairs, word by word: each word's partners (the union of the inputs'), each
    /// with its records, renumbered.
    fn pairs(&self, path: &Path) -> Result<FileEntry> {
        let headers = self
            .inputs
            .iter()
            .map(Segment::pair_header)
            .collect::<Result<Vec<_>>>()?;
        let mut writer = format_pairs::PairsWriter::create(path)?;
        let words: &[String] = match headers.split_first() {
            Some((first, rest)) if rest.iter().all(|h| h.words == first.words) => &first.words,
            _ => &[],
        };
        let word_numbers: Vec<usize> = (0..words.len()).collect();
        for chunk in word_numbers.chunks(BATCH / 64) {
            let encoded = chunk
                .par_iter()
                .map(|&word| self.word_pairs(word, words.len()))
                .collect::<Result<Vec<_>>>()?;
            for pairs in &encoded {
                writer.push_word(pairs)?;
            }
            self.release_pages(|s| [Some(s.pairs.file())]);
        }
        Ok(writer.finish(words)?.into())
    }

    /// The pairs word `word` (of `words` frequent words) starts in any input: per pair, its
    /// second word and its records' list, the inputs' records renumbered.
    fn word_pairs(
        &self,
        word: usize,
        words: usize,
    ) -> Result<Vec<(u16, format_pairs::EncodedList)>> {
        let inputs = self
            .inputs
            .iter()
            .map(|segment| {
                let partners = segment.partners(word)?;
                let seconds = partners.seconds(words, segment.pairs.file())?;
                Ok((partners, seconds))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut seconds: Vec<u16> = inputs
            .iter()
            .flat_map(|(_, seconds)| seconds.iter().copied())
            .collect();
        seconds.sort_unstable();
        seconds.dedup();
        let mut next = vec![0usize; inputs.len()];
        let mut records: Vec<u32> = Vec::new();
        let mut pairs = Vec::with_capacity(seconds.len());
        for second in seconds {
            records.clear();
            for (s, (partners, theirs)) in inputs.iter().enumerate() {
                if theirs.get(next[s]) != Some(&second) {
                    continue;
                }
                let (segment, base) = (&self.inputs[s], self.bases[s]);
                segment.pair_records(partners, next[s])?.for_each(
                    segment.len(),
                    segment.pairs.file(),
                    |r| records.push(base + r),
                )?;
                next[s] += 1;
            }
            pairs.push((second, format_pairs::EncodedList::new(&records)));
        }
        Ok(pairs)
    }

    /// The columns, row by row.
    fn columns(&self, path: &Path) -> Result<FileEntry> {
        let mut columns = crate::format::columns::ColumnsWriter::new(path);
        for segment in self.inputs {
            for doc in 0..segment.len() {
                columns.push(&segment.columns.row(doc)?);
            }
            segment.columns.file().release_pages();
        }
        Ok(columns.finish()?.into())
    }
}
