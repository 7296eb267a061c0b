//! Criterion benches of the hot paths: tokenization, FST lookup and prefix expansion, candidate
//! scoring, top-k selection, record decoding, the store's compression (training, encoding,
//! decoding), record reads from the store and index open, on a generated corpus.
//!
//! `cargo bench --bench hot_paths`. The corpus generator is the comparative harness's
//! (`bench/src/corpus.rs`), so both measure the same kind of text.

#[path = "../bench/src/corpus.rs"]
#[allow(dead_code)] // the harness also writes files; the benches only generate
mod corpus;

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use reliora::internals::format::codec;
use reliora::internals::format::dictionary::{write_dictionary, Dictionary};
use reliora::internals::format::file::IndexFile;
use reliora::internals::format::footer::FileKind;
use reliora::internals::format::manifest::Manifest;
use reliora::internals::format::store::{train_model, MAX_RECORD_LEN};
use reliora::internals::format::wordcode::Model;
use reliora::internals::index::segment::Store;
use reliora::internals::search::standard;
use reliora::record::{Feedback, LocatedRecord};
use reliora::text::{Analyzer, TextAnalyzer};
use reliora::{Index, Record, SearchRequest};

const RECORDS: usize = 20_000;

fn records(n: usize) -> Vec<Record> {
    let mut generator = corpus::Generator::new(7);
    (0..n)
        .map(|i| Record::from_json(&generator.record(i)).expect("generated records are valid"))
        .collect()
}

fn tokenization(c: &mut Criterion) {
    let records = records(200);
    let texts: Vec<String> = records.iter().map(Record::content).collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut group = c.benchmark_group("tokenization");
    group.throughput(criterion::Throughput::Bytes(bytes as u64));
    for stem in [false, true] {
        let analyzer = TextAnalyzer::new(stem);
        group.bench_function(
            if stem {
                "index_tokens/stem"
            } else {
                "index_tokens"
            },
            |b| {
                let mut out = Vec::new();
                b.iter(|| {
                    for text in &texts {
                        out.clear();
                        analyzer.index_tokens(text, &mut out);
                    }
                    black_box(out.len())
                })
            },
        );
    }
    let analyzer = TextAnalyzer::new(false);
    group.bench_function("query_tokens", |b| {
        b.iter(|| {
            for text in texts.iter().take(20) {
                black_box(analyzer.tokens(&text[..text.len().min(200)], Analyzer::English));
            }
        })
    });
    group.finish();
}

fn fst_lookup(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut generator = corpus::Generator::new(3);
    let mut words: Vec<String> = (0..2_000)
        .flat_map(|i| {
            generator.record(i)["solution"]
                .as_str()
                .unwrap()
                .split(' ')
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    words.sort();
    words.dedup();
    let path = dir.path().join("terms.fst");
    let footer =
        write_dictionary(&path, words.iter().enumerate().map(|(i, w)| (w, i as u64))).unwrap();
    let file = IndexFile::open(&path, FileKind::Fst, &footer.into()).unwrap();
    let dictionary = Dictionary::new(file);
    let probes: Vec<&String> = words.iter().step_by(97).collect();
    c.bench_function("fst/exact", |b| {
        b.iter(|| {
            for w in &probes {
                black_box(dictionary.get(w.as_bytes()).unwrap());
            }
        })
    });
    c.bench_function("fst/prefix_expansion", |b| {
        b.iter(|| {
            let mut n = 0;
            for w in &probes {
                let prefix = &w.as_bytes()[..w.len().min(5)];
                dictionary
                    .for_each_with_prefix(prefix, |_, _| n += 1)
                    .unwrap();
            }
            black_box(n)
        })
    });
}

fn scoring(c: &mut Criterion) {
    // Plain values in, score out: the per-candidate work of the standard profile.
    let inputs: Vec<(u32, bool, u32, Feedback)> = (0..10_000u32)
        .map(|i| {
            let feedback = Feedback {
                success: u64::from(i % 4),
                failure: u64::from(i % 3),
                ..Feedback::default()
            };
            (i % 97, i % 13 == 0, i % 5, feedback)
        })
        .collect();
    c.bench_function("scoring/standard_10k_candidates", |b| {
        b.iter(|| {
            let mut best = 0.0f64;
            for (sum, phrase, matched, feedback) in &inputs {
                let r = standard::relevance(*sum, *phrase, *matched, 4);
                let score = r.relevance + standard::feedback_score(feedback);
                black_box(standard::match_level(r.coverage, r.relevance));
                best = best.max(score);
            }
            best
        })
    });
    let scores: Vec<(f64, String)> = (0..50_000)
        .map(|i| (((i * 7919) % 10_007) as f64 / 3.0, format!("id-{i:06}")))
        .collect();
    c.bench_function("top_k/10_of_50k", |b| {
        b.iter_batched(
            || scores.clone(),
            |mut s| {
                let cmp = |a: &(f64, String), b: &(f64, String)| {
                    b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1))
                };
                s.select_nth_unstable_by(10, cmp);
                s[..10].sort_by(cmp);
                s.truncate(10);
                black_box(s)
            },
            BatchSize::LargeInput,
        )
    });
}

fn store_and_index(c: &mut Criterion) {
    let records = records(RECORDS);
    let encoded: Vec<Vec<u8>> = records
        .iter()
        .map(|r| codec::encode(r, "bench:1"))
        .collect();
    c.bench_function("store/decode_record", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % encoded.len();
            black_box(codec::decode(&encoded[i]).unwrap())
        })
    });
    // The store's compression alone: the word model trained on the records (as a build trains
    // it on its first spill), a record's frame encoded and decoded.
    let mut group = c.benchmark_group("store");
    group.sample_size(10);
    group.bench_function("train_model", |b| {
        b.iter(|| black_box(train_model(&encoded)))
    });
    group.finish();
    // Reading a model (once a process, with its first record): header and spans checked, the
    // tokens read in place.
    let model_bytes: std::sync::Arc<[u8]> = train_model(&encoded).into();
    c.bench_function("store/parse_model", |b| {
        b.iter(|| black_box(Model::parse(model_bytes.clone()).unwrap()))
    });
    let model = Model::parse(model_bytes).unwrap();
    let encoder = model.encoder();
    let frames: Vec<Vec<u8>> = encoded
        .iter()
        .map(|record| {
            let mut frame = Vec::new();
            encoder.encode(record, &mut frame);
            frame
        })
        .collect();
    c.bench_function("store/encode_frame", |b| {
        let mut i = 0;
        let mut frame = Vec::new();
        b.iter(|| {
            i = (i + 1) % encoded.len();
            frame.clear();
            encoder.encode(&encoded[i], &mut frame);
            black_box(frame.len())
        })
    });
    c.bench_function("store/decode_frame", |b| {
        // Frames at random, as search reads them.
        let mut i: usize = 0;
        b.iter(|| {
            i = i.wrapping_mul(2_654_435_761).wrapping_add(12_345) % frames.len();
            black_box(model.decode(&frames[i], MAX_RECORD_LEN).unwrap())
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let index_dir = dir.path().join("index");
    let sourced: Vec<LocatedRecord> = records
        .into_iter()
        .enumerate()
        .map(|(i, record)| LocatedRecord {
            record,
            locator: format!("bench:{i}"),
        })
        .collect();
    Index::build_from_records(&index_dir, sourced, &reliora::BuildOptions::default()).unwrap();
    let manifest = Manifest::load(&index_dir).unwrap();
    let store = Store::open(&index_dir, &manifest.segments[0]).unwrap();
    c.bench_function("store/get_record", |b| {
        // Records at random, as search reads them: CRC, decompression, decoding.
        let mut doc: u32 = 0;
        b.iter(|| {
            doc = doc.wrapping_mul(2_654_435_761).wrapping_add(12_345) % store.len();
            black_box(store.get(doc).unwrap())
        })
    });
    c.bench_function("index/open", |b| {
        b.iter(|| black_box(Index::open(Path::new(&index_dir)).unwrap()))
    });
    let index = Index::open(&index_dir).unwrap();
    let mut generator = corpus::Generator::new(7);
    let queries: Vec<SearchRequest> = (0..50)
        .map(|i| {
            let mut r = SearchRequest::new(generator.query(i)["query"].as_str().unwrap());
            r.set_option("now", Some("2026-01-01T00:00:00Z")).unwrap();
            r
        })
        .collect();
    c.bench_function("search/standard_50_queries_20k_records", |b| {
        b.iter(|| {
            for q in &queries {
                let _ = black_box(index.search(q));
            }
        })
    });
}

criterion_group!(benches, tokenization, fst_lookup, scoring, store_and_index);
criterion_main!(benches);
