//! Writing a segment: analysis in parallel, inversion, and the files of `format`.

use std::collections::BTreeMap;
use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::progress::ProgressCounter;
use rayon::prelude::*;
use roaring::RoaringBitmap;

use crate::error::Result;
use crate::format::blobs::BlobWriter;
use crate::format::codec;
use crate::format::columns::{ColumnsWriter, Row};
use crate::format::dictionary::write_dictionary;
use crate::format::directory::{Directory, FileTarget};
use crate::format::footer::FileKind;
use crate::format::manifest::{FileEntry, SegmentEntry};
use crate::format::pairs as format_pairs;
use crate::format::postings::{encode_term, Posting};
use crate::format::prefixes::{fingerprint, write_prefixes};
use crate::format::store::{train_model, write_store};
use crate::format::{
    FACET_ENTITY, FACET_IRREGULAR, FACET_SUPERSEDES, FACET_TAG, FACET_TYPE, STOP_MARKER,
};
use crate::index::pairs::{self, FrequentWords};
use crate::record::input::SourcedRecord;
use crate::record::Record;
use crate::schema::{FieldGroup, GROUP_COUNT};
use crate::settings::Settings;
use crate::text::{self, TextAnalyzer, MAX_TOKEN_CHARS};

/// Records analyzed (or encoded) in parallel at a time.
const BATCH_RECORDS: usize = 8192;

/// Shards of the inversion.
const SHARDS: usize = 16;

/// One term occurrence on its way to a shard: (key, its [`term_hash`], group, term frequency,
/// record).
type Routed<'a> = (&'a [u8], u64, u8, u32, u32);

/// The terms of one shard: term → number, and per number the postings as (record, group, tf).
/// Found by the hash each term's key was routed with, computed once per term of a record; the
/// keys are sorted afterwards, so the output does not depend on the hash.
#[derive(Default)]
struct Shard {
    numbers: HashTable<u32>,
    /// Per number, the term's key and hash.
    keys: Vec<(Vec<u8>, u64)>,
    postings: Vec<Vec<Posting>>,
}

impl Shard {
    /// Adds `(key, hash, group, tf, record)` entries, records ascending. A key is copied only
    /// the first time the shard sees it.
    fn add(&mut self, terms: &[Routed<'_>]) {
        let Shard {
            numbers,
            keys,
            postings,
        } = self;
        for &(key, hash, group, tf, doc) in terms {
            let found = numbers.find(hash, |&n| {
                let (known, known_hash) = &keys[n as usize];
                *known_hash == hash && known.as_slice() == key
            });
            let number = match found {
                Some(&number) => number,
                None => {
                    let number = postings.len() as u32;
                    numbers.insert_unique(hash, number, |&n| keys[n as usize].1);
                    keys.push((key.to_vec(), hash));
                    postings.push(Vec::new());
                    number
                }
            };
            postings[number as usize].push((doc, group, tf));
        }
    }
}

/// The hash a term's key (or a token's text) is routed and found by: foldhash with a fixed
/// seed, so that a build's routing does not vary from run to run (nothing written depends on
/// it).
fn term_hash(bytes: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0x5eed).hash_one(bytes)
}

/// The shard of a term by its [`term_hash`]: bits the shard's table does not use to place it
/// (its low bits) or to tell keys apart (its top seven).
fn shard_of(hash: u64) -> usize {
    (hash >> 32) as usize % SHARDS
}

/// One index token of a record: where its text is in [`RecordTokens::text`], and its kind.
#[derive(Debug, Clone, Copy)]
struct TokenSpan {
    start: u32,
    end: u32,
    group: u8,
    cjk: bool,
    stop: bool,
}

/// Every index token of a record's searchable values, group by group, without a string per
/// token: their texts are concatenated in one buffer.
#[derive(Debug, Default)]
pub(crate) struct RecordTokens {
    text: String,
    spans: Vec<TokenSpan>,
    /// Where each value's tokens end in `spans`.
    value_ends: Vec<usize>,
    group_lengths: [u32; GROUP_COUNT],
}

impl RecordTokens {
    pub(crate) fn of(record: &Record, analyzer: &TextAnalyzer) -> RecordTokens {
        let mut tokens = RecordTokens::default();
        for g in FieldGroup::ALL {
            let before = tokens.spans.len();
            for value in record.group_values(g) {
                analyzer.for_each_index_token(value, |text, cjk, stop| {
                    let start = tokens.text.len() as u32;
                    tokens.text.push_str(text);
                    tokens.spans.push(TokenSpan {
                        start,
                        end: tokens.text.len() as u32,
                        group: g as u8,
                        cjk,
                        stop,
                    });
                });
                tokens.value_ends.push(tokens.spans.len());
            }
            tokens.group_lengths[g as usize] = (tokens.spans.len() - before) as u32;
        }
        tokens
    }

    fn text_of(&self, span: &TokenSpan) -> &str {
        &self.text[span.start as usize..span.end as usize]
    }

    /// Whether the record is *irregular*: one of its terms has a character outside ASCII or
    /// [`MAX_TOKEN_CHARS`] bytes (a run the tokenizer may have cut), so that its terms cannot
    /// tell that an entity is absent from its text (`Segment::irregular`). The buffer holds
    /// the tokens' texts and nothing else, so it is ASCII exactly when each of them is.
    pub(crate) fn irregular(&self) -> bool {
        !self.text.is_ascii()
            || (self.spans.iter()).any(|span| (span.end - span.start) as usize >= MAX_TOKEN_CHARS)
    }

    /// The words of the record for pairs.rs: each token that is not CJK, and `None` for a CJK
    /// token and at the end of each value.
    pub(crate) fn words(&self) -> impl Iterator<Item = Option<&str>> + '_ {
        self.by_value(|_, span| (!span.cjk).then(|| self.text_of(span)))
    }

    /// `of` of each token (by its place in `spans`), value by value, with `None` after each
    /// value.
    fn by_value<'s, T: 's>(
        &'s self,
        of: impl Fn(usize, &TokenSpan) -> Option<T> + Copy + 's,
    ) -> impl Iterator<Item = Option<T>> + 's {
        let mut begin = 0;
        self.value_ends.iter().flat_map(move |&end| {
            let value = begin..end;
            begin = end;
            value
                .map(move |i| of(i, &self.spans[i]))
                .chain(std::iter::once(None))
        })
    }
}

/// The terms of one record, and its tokens per group.
struct RecordTerms {
    /// The term keys, concatenated.
    keys: Vec<u8>,
    /// (key start, key end, group, term frequency, the key's [`term_hash`]) per distinct term
    /// and group.
    terms: Vec<(u32, u32, u8, u32, u64)>,
    group_lengths: [u32; GROUP_COUNT],
    /// Ids of the frequent-word pairs the record holds (pairs.rs), ascending.
    pairs: Vec<u32>,
    /// [`RecordTokens::irregular`].
    irregular: bool,
}

impl RecordTerms {
    fn key(&self, term: &(u32, u32, u8, u32, u64)) -> &[u8] {
        &self.keys[term.0 as usize..term.1 as usize]
    }
}

/// The terms of a record, keyed and ordered by `hash` ([`term_hash`]; any other function gives
/// the same terms, as tests show).
fn analyze(tokens: &RecordTokens, frequent: &FrequentWords, hash: fn(&[u8]) -> u64) -> RecordTerms {
    let (order, collided) = term_order(tokens, hash);
    let text = |at: u32| tokens.text_of(&tokens.spans[at as usize]);
    // Each token's frequent-word id, looked up once per term, for its pairs (none without
    // frequent words: a stemmed build's).
    let paired = !frequent.words().is_empty();
    let mut ids: Vec<Option<u32>> = vec![None; if paired { tokens.spans.len() } else { 0 }];
    let mut keys = Vec::new();
    let mut terms: Vec<(u32, u32, u8, u32, u64)> = Vec::new();
    let mut id = None;
    for (i, &(key, at)) in order.iter().enumerate() {
        let span = &tokens.spans[at as usize];
        let same = i > 0 && {
            let (previous, before) = order[i - 1];
            previous == key && (!collided || text(before) == text(at))
        };
        if same {
            if let Some(last) = terms.last_mut() {
                last.3 += 1;
            }
        } else {
            let start = keys.len();
            keys.extend_from_slice(text(at).as_bytes());
            if span.stop {
                keys.push(STOP_MARKER);
            }
            let hash = hash(&keys[start..]);
            terms.push((start as u32, keys.len() as u32, span.group, 1, hash));
            if paired {
                id = frequent.id(text(at));
            }
        }
        if paired && !span.cjk {
            ids[at as usize] = id;
        }
    }
    let mut pairs = Vec::new();
    if paired {
        FrequentWords::pairs_of_ids(tokens.by_value(|i, _| ids[i]), &mut pairs);
    }
    RecordTerms {
        keys,
        terms,
        group_lengths: tokens.group_lengths,
        pairs,
        irregular: tokens.irregular(),
    }
}

/// The tokens of a record (their places in its spans) in an order where those of one term —
/// text, stop marker and group — are adjacent: by a key of the text's `hash` above the stop
/// marker and the group, so that sorting compares integers. Where two texts share a key (a
/// hash collision) the text decides between them, and `true` says so: then a term ends where
/// the key or the text changes, else where the key does.
fn term_order(tokens: &RecordTokens, hash: impl Fn(&[u8]) -> u64) -> (Vec<(u64, u32)>, bool) {
    const { assert!(GROUP_COUNT <= 16) };
    let text = |at: u32| tokens.text_of(&tokens.spans[at as usize]);
    let mut order: Vec<(u64, u32)> = (tokens.spans.iter().enumerate())
        .map(|(i, span)| {
            let hash = hash(tokens.text_of(span).as_bytes());
            (
                hash << 5 | u64::from(span.stop) << 4 | u64::from(span.group),
                i as u32,
            )
        })
        .collect();
    order.sort_unstable();
    let collided = (order.windows(2)).any(|w| w[0].0 == w[1].0 && text(w[0].1) != text(w[1].1));
    if collided {
        order.sort_unstable_by(|a, b| {
            (a.0.cmp(&b.0))
                .then_with(|| text(a.1).cmp(text(b.1)))
                .then(a.1.cmp(&b.1))
        });
    }
    (order, collided)
}

/// What writing a segment produced.
pub(crate) struct WrittenSegment {
    pub entry: SegmentEntry,
    pub terms: usize,
}

/// What the segments of one build share, fixed by its first segment: the store's compression
/// model and the frequent words of the word pairs. Sharing them lets the build merge its
/// segments by copying frames and concatenating pair postings (merge.rs).
#[derive(Default)]
pub(crate) struct BuildShared {
    model: Option<Vec<u8>>,
    frequent: Option<FrequentWords>,
}

impl BuildShared {
    /// Segments stored without compression (no model is trained) and without word-pair
    /// postings (phrases are checked on the text): the log's segment, built in memory at every
    /// open.
    pub(crate) fn uncompressed() -> BuildShared {
        BuildShared {
            model: Some(Vec::new()),
            frequent: Some(FrequentWords::default()),
        }
    }
}

/// Writes the segment `name` holding `records` (in order) into `dir`.
pub(crate) fn write_segment(
    dir: &Directory,
    name: &str,
    records: &[SourcedRecord],
    analyzer: &TextAnalyzer,
    shared: &mut BuildShared,
    progress: Option<&ProgressCounter>,
) -> Result<WrittenSegment> {
    let path = |suffix: &str| dir.file(name, suffix);
    let inverted = invert(records, analyzer, &mut shared.frequent, progress);
    let BuildShared { model, frequent } = shared;
    let words = frequent.as_ref().map_or(&[][..], FrequentWords::words);
    let mut group_length_sums = [0u64; GROUP_COUNT];
    for lengths in &inverted.group_lengths {
        for (sum, &len) in group_length_sums.iter_mut().zip(lengths) {
            *sum += u64::from(len);
        }
    }
    // The files are independent: they are written at once, so that the serial parts of one
    // (writing its blobs, building an FST) overlap the parallel parts of another.
    let Inverted {
        shards,
        group_lengths,
        pair_records,
        irregular,
    } = inverted;
    let ((terms, store), (small, columns)) = rayon::join(
        || {
            rayon::join(
                || write_terms(&path, shards),
                || write_records(&path, records, model),
            )
        },
        || {
            rayon::join(
                || write_small_files(&path, records, words, pair_records, irregular),
                || {
                    let mut files = write_columns(&path, records, &group_lengths)?;
                    files.extend(write_prefix_file(&path, records)?);
                    Ok::<_, crate::Error>(files)
                },
            )
        },
    );
    let (term_count, mut files) = terms?;
    files.extend(store?);
    files.extend(small?);
    files.extend(columns?);
    Ok(WrittenSegment {
        entry: SegmentEntry {
            name: name.to_string(),
            records: records.len() as u64,
            files: files
                .into_iter()
                .map(|(suffix, entry)| (suffix.to_string(), entry))
                .collect(),
            group_length_sums: Some(group_length_sums),
            entity_facets: true,
        },
        terms: term_count,
    })
}

/// A segment's files as they are written: suffix and manifest entry.
type Files = Vec<(&'static str, FileEntry)>;

/// What inverting a segment's records produced.
struct Inverted {
    /// The term shards: term → number, and per number its postings.
    shards: Vec<Shard>,
    /// Per record, its tokens per field group.
    group_lengths: Vec<[u32; GROUP_COUNT]>,
    /// (pair id, record) of every pair a record holds, as `pair << 32 | record`.
    pair_records: Vec<u64>,
    /// The irregular records ([`RecordTokens::irregular`]).
    irregular: RoaringBitmap,
}

/// Records routed to the shards at a time, in parallel.
const ROUTE_RECORDS: usize = 512;

/// Analyzes `records` a batch at a time in parallel and inverts them: term → its postings as
/// (record, group, tf), records ascending. The inversion is sharded by the key's hash: each
/// shard owns its terms and is filled in parallel, in record order, so every term's postings
/// ascend. `frequent` (the build's frequent words, pairs.rs) is chosen from the first batch
/// when not yet chosen; none when the analyzer stems, as its tokens are not words then.
fn invert(
    records: &[SourcedRecord],
    analyzer: &TextAnalyzer,
    frequent: &mut Option<FrequentWords>,
    progress: Option<&ProgressCounter>,
) -> Inverted {
    let mut shards: Vec<Shard> = (0..SHARDS).map(|_| Shard::default()).collect();
    let mut group_lengths = Vec::with_capacity(records.len());
    let mut pair_records: Vec<u64> = Vec::new();
    let mut irregular = RoaringBitmap::new();
    for (b, batch) in records.chunks(BATCH_RECORDS).enumerate() {
        let tokens: Vec<RecordTokens> = batch
            .par_iter()
            .map(|r| RecordTokens::of(&r.record, analyzer))
            .collect();
        let frequent = frequent.get_or_insert_with(|| {
            if analyzer.stems() {
                FrequentWords::default()
            } else {
                FrequentWords::choose(tokens.par_iter().map(RecordTokens::words))
            }
        });
        let analyzed: Vec<RecordTerms> = tokens
            .par_iter()
            .map(|tokens| analyze(tokens, frequent, term_hash))
            .collect();
        drop(tokens);
        let first = b * BATCH_RECORDS;
        for (i, record_terms) in analyzed.iter().enumerate() {
            let doc = (first + i) as u32;
            group_lengths.push(record_terms.group_lengths);
            if record_terms.irregular {
                irregular.push(doc);
            }
            pair_records.extend(
                record_terms
                    .pairs
                    .iter()
                    .map(|&pair| u64::from(pair) << 32 | u64::from(doc)),
            );
        }
        // Runs of records routed in parallel, each run's terms per shard; then each shard
        // takes its part of every run, in record order.
        let runs: Vec<Vec<Vec<Routed>>> = analyzed
            .par_chunks(ROUTE_RECORDS)
            .enumerate()
            .map(|(r, run)| {
                // Room for a shard's share of the run's terms and a little more (the hash
                // spreads them evenly), rather than growing each vector from empty.
                let share = run.iter().map(|t| t.terms.len()).sum::<usize>() / SHARDS;
                let mut routed: Vec<Vec<Routed>> = (0..SHARDS)
                    .map(|_| Vec::with_capacity(share + share / 4 + 16))
                    .collect();
                for (i, record_terms) in run.iter().enumerate() {
                    let doc = (first + r * ROUTE_RECORDS + i) as u32;
                    for term in &record_terms.terms {
                        let &(_, _, group, tf, hash) = term;
                        let key = record_terms.key(term);
                        routed[shard_of(hash)].push((key, hash, group, tf, doc));
                    }
                }
                routed
            })
            .collect();
        shards.par_iter_mut().enumerate().for_each(|(s, shard)| {
            for run in &runs {
                shard.add(&run[s]);
            }
        });
        if let Some(bar) = progress {
            bar.inc(batch.len() as u64);
        }
    }
    Inverted {
        shards,
        group_lengths,
        pair_records,
        irregular,
    }
}

/// The term postings and the term dictionary, keys in order. Returns the number of terms.
fn write_terms(
    path: &impl Fn(&str) -> FileTarget,
    mut shards: Vec<Shard>,
) -> Result<(usize, Files)> {
    let mut keys: Vec<(Vec<u8>, u32, u32)> = Vec::new();
    for (s, shard) in shards.iter_mut().enumerate() {
        keys.extend(
            (std::mem::take(&mut shard.keys).into_iter().enumerate())
                .map(|(number, (key, _))| (key, s as u32, number as u32)),
        );
    }
    keys.par_sort_unstable();
    let blobs: Vec<Vec<u8>> = keys
        .par_iter()
        .map(|(_, s, number)| {
            let mut blob = Vec::new();
            encode_term(&shards[*s as usize].postings[*number as usize], &mut blob);
            blob
        })
        .collect();
    drop(shards);
    let mut writer = BlobWriter::create(path("terms.post"), FileKind::Postings)?;
    for blob in &blobs {
        writer.push(blob)?;
    }
    drop(blobs);
    let mut files = vec![("terms.post", FileEntry::from(writer.finish()?))];
    let footer = write_dictionary(
        path("terms.fst"),
        keys.iter().enumerate().map(|(i, (k, _, _))| (k, i as u64)),
    )?;
    files.push(("terms.fst", footer.into()));
    Ok((keys.len(), files))
}

/// The record store, compressed with the build's model (trained on this segment's records when
/// it is the build's first).
fn write_records(
    path: &impl Fn(&str) -> FileTarget,
    records: &[SourcedRecord],
    model: &mut Option<Vec<u8>>,
) -> Result<Files> {
    let encoded: Vec<Vec<u8>> = records
        .par_iter()
        .map(|r| codec::encode(&r.record, &r.locator))
        .collect();
    let model = model.get_or_insert_with(|| train_model(&encoded));
    Ok(vec![(
        "store",
        write_store(path("store"), &encoded, model)?.into(),
    )])
}

/// The entity names `record` gives, as the entity dictionary and facets key them: lowercased,
/// not empty, each once, in order.
pub(crate) fn entity_names(record: &Record) -> Vec<String> {
    let mut names: Vec<String> = (record.entities.iter())
        .map(|e| e.to_lowercase())
        .filter(|e| !e.is_empty())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Facets, word pairs, entities, ids: the smaller files.
fn write_small_files(
    path: &impl Fn(&str) -> FileTarget,
    records: &[SourcedRecord],
    words: &[String],
    mut pair_records: Vec<u64>,
    irregular: RoaringBitmap,
) -> Result<Files> {
    let mut files = Files::new();
    // Facets: tag phrases, memory types, supersedes targets, entity names, irregular records.
    let mut facets: BTreeMap<Vec<u8>, RoaringBitmap> = BTreeMap::new();
    if !irregular.is_empty() {
        facets.insert(FACET_IRREGULAR.to_vec(), irregular);
    }
    for (doc, r) in records.iter().enumerate() {
        for name in entity_names(&r.record) {
            let key = [FACET_ENTITY, name.as_bytes()].concat();
            facets.entry(key).or_default().insert(doc as u32);
        }
        for tag in &r.record.tags {
            let phrase = text::phrase(tag);
            if !phrase.is_empty() {
                let key = [FACET_TAG, phrase.as_bytes()].concat();
                facets.entry(key).or_default().insert(doc as u32);
            }
        }
        let key = [FACET_TYPE, r.record.memory_type_normalized().as_bytes()].concat();
        facets.entry(key).or_default().insert(doc as u32);
        if let Some(target) = &r.record.supersedes {
            let key = [FACET_SUPERSEDES, target.as_bytes()].concat();
            facets.entry(key).or_default().insert(doc as u32);
        }
    }
    let mut writer = BlobWriter::create(path("facets.post"), FileKind::Postings)?;
    let mut bytes = Vec::new();
    let mut keys = Vec::new();
    for (key, bitmap) in facets {
        bytes.clear();
        bitmap
            .serialize_into(&mut bytes)
            .expect("writing to a Vec cannot fail");
        writer.push(&bytes)?;
        keys.push(key);
    }
    files.push(("facets.post", writer.finish()?.into()));
    let footer = write_dictionary(
        path("facets.fst"),
        keys.iter().enumerate().map(|(i, k)| (k, i as u64)),
    )?;
    files.push(("facets.fst", footer.into()));

    // Word pairs, word by word: each pair's second word and records; then the words.
    pair_records.par_sort_unstable();
    let mut writer = format_pairs::PairsWriter::create(path("pairs"))?;
    let mut runs = pair_records.chunk_by(|a, b| a >> 32 == b >> 32).peekable();
    let mut records_of_pair = Vec::new();
    for first in 0..words.len() {
        let mut theirs = Vec::new();
        while let Some(run) =
            runs.next_if(|run| (run[0] >> 32) as usize / pairs::MAX_WORDS == first)
        {
            let second = ((run[0] >> 32) as usize % pairs::MAX_WORDS) as u16;
            records_of_pair.clear();
            records_of_pair.extend(run.iter().map(|&entry| entry as u32));
            theirs.push((second, format_pairs::EncodedList::new(&records_of_pair)));
        }
        writer.push_word(&theirs)?;
    }
    debug_assert!(
        runs.next().is_none(),
        "a pair of a word that is not frequent"
    );
    let pairs_footer = writer.finish(words)?;
    drop(pair_records);
    files.push(("pairs", pairs_footer.into()));

    // Entities: lowercased name → the number of records naming it.
    let mut entities: BTreeMap<String, u64> = BTreeMap::new();
    for r in records {
        for name in entity_names(&r.record) {
            *entities.entry(name).or_default() += 1;
        }
    }
    let footer = write_dictionary(path("entities.fst"), entities.iter().map(|(k, &v)| (k, v)))?;
    files.push(("entities.fst", footer.into()));
    drop(entities);

    // Ids and locators → record number.
    let mut ids: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    for (doc, r) in records.iter().enumerate() {
        ids.entry(r.record.id.as_bytes().to_vec())
            .or_insert(doc as u64);
        ids.entry([&[STOP_MARKER], r.locator.as_bytes()].concat())
            .or_insert(doc as u64);
    }
    let footer = write_dictionary(path("ids.fst"), ids.iter().map(|(k, &v)| (k, v)))?;
    files.push(("ids.fst", footer.into()));
    drop(ids);

    Ok(files)
}

/// The fingerprints of the records' MMR content prefixes, of the default length.
fn write_prefix_file(
    path: &impl Fn(&str) -> FileTarget,
    records: &[SourcedRecord],
) -> Result<Files> {
    let chars = Settings::default().mmr.prefix_chars;
    let fingerprints: Vec<u32> = records
        .par_iter()
        .map(|r| fingerprint(&r.record.content_prefix(chars)))
        .collect();
    let footer = write_prefixes(path("prefixes"), chars as u32, &fingerprints)?;
    Ok(vec![("prefixes", footer.into())])
}

/// The per-record columns.
fn write_columns(
    path: &impl Fn(&str) -> FileTarget,
    records: &[SourcedRecord],
    group_lengths: &[[u32; GROUP_COUNT]],
) -> Result<Files> {
    let mut columns = ColumnsWriter::new(path("columns"));
    for (r, lengths) in records.iter().zip(group_lengths) {
        let record = &r.record;
        let memory_type = record.memory_type_normalized();
        columns.push(&Row {
            created_at: record
                .created_at
                .as_ref()
                .map(|t| (t.unix_seconds(), t.subsec_nanos())),
            memory_type: &memory_type,
            salience: record.salience_or_default(),
            decay_factor: record.decay_factor_or_default(),
            feedback: record.feedback,
            pinned: record.pinned_or_default(),
            group_lengths: *lengths,
            id: &record.id,
            supersedes: record.supersedes.as_deref(),
        });
    }
    Ok(vec![("columns", columns.finish()?.into())])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens of `values` (one field group), as a record's.
    fn tokens_of(values: &[&str]) -> RecordTokens {
        let analyzer = TextAnalyzer::new(false);
        let mut tokens = RecordTokens::default();
        for value in values {
            analyzer.for_each_index_token(value, |text, cjk, stop| {
                let start = tokens.text.len() as u32;
                tokens.text.push_str(text);
                let end = tokens.text.len() as u32;
                let group = (start % 2) as u8;
                tokens.spans.push(TokenSpan {
                    start,
                    end,
                    group,
                    cjk,
                    stop,
                });
            });
            tokens.value_ends.push(tokens.spans.len());
        }
        tokens
    }

    #[test]
    fn colliding_hashes_give_the_same_terms() {
        let tokens = tokens_of(&[
            "the cache of the CI cache",
            "a cache key, the key of a cache",
            "über 编程 cache",
        ]);
        let frequent = FrequentWords::from_words(vec!["cache".into(), "the".into(), "key".into()]);
        let terms = |hash: fn(&[u8]) -> u64| {
            let analyzed = analyze(&tokens, &frequent, hash);
            let mut terms: Vec<(Vec<u8>, u8, u32)> = (analyzed.terms.iter())
                .map(|term| (analyzed.key(term).to_vec(), term.2, term.3))
                .collect();
            terms.sort();
            (terms, analyzed.pairs, analyzed.irregular)
        };
        let (real, pairs, irregular) = terms(term_hash);
        assert!(!term_order(&tokens, term_hash).1);
        // Every text hashed alike: the texts still part the terms, and say that they had to.
        assert!(term_order(&tokens, |_| 7).1);
        assert_eq!(terms(|_| 7), (real.clone(), pairs.clone(), irregular));
        let cache: u32 = (real.iter().filter(|t| t.0 == b"cache")).map(|t| t.2).sum();
        assert_eq!(cache, 5);
        assert!(real.iter().any(|t| t.0 == b"the\xff"), "{real:?}");
        // The pairs are those of the words, looked up once per term.
        let mut expected = Vec::new();
        frequent.pairs(tokens.words(), &mut expected);
        assert_eq!((pairs.len(), pairs), (4, expected));
        assert!(irregular);
    }
}
