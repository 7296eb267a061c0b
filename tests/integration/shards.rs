//! A sharded collection answers as one index over the same records: the same results, order,
//! scores, breakdowns, counts and explanations, for every profile and option (`shards.rs` of
//! the library: two phases and a merge), with records routed by `shard_of`.

use std::path::Path;

use proptest::prelude::*;
use reliora::{shards, BuildOptions, Index, SearchRequest, SearchResponse, Shard};

use crate::properties::{filters, profile_options, records, text};

/// The records as one index and as `count` shards built from the same input.
fn build(dir: &Path, records: &[serde_json::Value], count: u32) -> (Index, Vec<Index>) {
    let input = dir.join("input.jsonl");
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    let open = |name: String, shard: Option<Shard>| {
        let options = BuildOptions {
            inputs: vec![input.clone()],
            shard,
            ..BuildOptions::default()
        };
        Index::build(&dir.join(&name), &options).unwrap();
        Index::open(&dir.join(&name)).unwrap()
    };
    let one = open("one".into(), None);
    let shards = (0..count)
        .map(|index| open(format!("shard{index}"), Some(Shard { index, count })))
        .collect();
    (one, shards)
}

/// The response as JSON without the fingerprint (it names the generations, which differ).
fn answer(response: &SearchResponse) -> serde_json::Value {
    let mut json = serde_json::to_value(response).unwrap();
    json.as_object_mut().unwrap().remove("fingerprint");
    json
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn shards_answer_as_one_index(
        records in records(),
        count in 1u32..5,
        queries in prop::collection::vec(text(5), 1..4),
        filters in filters(),
        profile in prop::sample::select(&["standard", "decay", "recency", "bm25f"][..]),
        extras in profile_options(),
        limit in prop::sample::select(&["1", "2", "3", "10"][..]),
        min_score in prop::option::of(prop::sample::select(&["0", "0.3", "0.8"][..])),
        explain in prop::option::of(0usize..12),
        // Without supersession the shards rank under bounds (only their page's worth).
        no_supersession in any::<bool>(),
    ) {
        let mut records = records;
        if no_supersession {
            for r in &mut records {
                r.as_object_mut().unwrap().remove("supersedes");
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let (one, shards) = build(dir.path(), &records, count);
        for query in &queries {
            let mut request = SearchRequest::new(query.as_str());
            let mut set = |name: &str, value: &str| request.set_option(name, Some(value)).unwrap();
            set("now", "2026-01-01T00:00:00Z");
            set("profile", profile);
            set("limit", limit);
            for (name, value) in filters.iter().chain(&extras) {
                set(name, value);
            }
            if let Some(m) = min_score {
                set("min-score", m);
            }
            if let Some(i) = explain {
                set("explain", &format!("r{i:02}"));
            }
            match (one.search(&request), shards::search(&shards, &request)) {
                (Ok(a), Ok(b)) => prop_assert_eq!(answer(&a), answer(&b), "query {:?}", query),
                (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
                (a, b) => prop_assert!(false, "one index {:?} vs shards {:?}", a, b),
            }
        }
    }
}

/// An id of the form `{prefix}{n}` that `shard_of` routes to `shard` of `count`.
fn id_in(prefix: &str, shard: u32, count: u32) -> String {
    (0..)
        .map(|n| format!("{prefix}{n}"))
        .find(|id| shards::shard_of(id, count) == shard)
        .unwrap()
}

/// A record on one shard's page is demoted below its superseder on another shard, even when
/// that superseder ranks beyond what its shard sends for the page (SPEC §6.1).
#[test]
fn a_superseder_beyond_its_shards_page_still_demotes() {
    let (x, f, y) = (id_in("x", 0, 2), id_in("f", 1, 2), id_in("y", 1, 2));
    let single = superseded_best_answers_alike(&x, &f, &y);
    assert_eq!(
        single.results[0].id, f,
        "the superseded record falls below its superseder"
    );
}

/// Records `x` (the query's best), `f` (the second) and `y` (a weak match superseding `x`),
/// as one index and as two shards: the top result of each agrees (asserted); one index's answer.
fn superseded_best_answers_alike(x: &str, f: &str, y: &str) -> SearchResponse {
    let records = [
        serde_json::json!({"id": x, "title": "docker cache layers rebuild"}),
        serde_json::json!({"id": f, "title": "docker cache layers"}),
        serde_json::json!({"id": y, "title": "docker", "supersedes": x}),
    ];
    let dir = tempfile::tempdir().unwrap();
    let (one, shards) = build(dir.path(), &records, 2);
    let mut request = SearchRequest::new("docker cache layers rebuild");
    request.set_option("limit", Some("1")).unwrap();
    request
        .set_option("now", Some("2026-01-01T00:00:00Z"))
        .unwrap();
    let single = one.search(&request).unwrap();
    assert_eq!(
        answer(&single),
        answer(&shards::search(&shards, &request).unwrap())
    );
    single
}

/// `bm25f` ranks each shard's records by the collection's document frequencies, not the
/// shard's: a word common on one shard but rare overall still lifts its record to the top.
#[test]
fn bm25f_ranks_each_shard_by_the_collections_frequencies() {
    let mut records = vec![
        serde_json::json!({"id": id_in("a", 0, 2), "title": "kestrel"}),
        serde_json::json!({"id": id_in("b", 0, 2), "title": "zephyr"}),
    ];
    for n in 0..3 {
        let id = id_in(&format!("f{n}-"), 0, 2);
        records.push(serde_json::json!({"id": id, "title": "kestrel nests on ledges"}));
    }
    for n in 0..10 {
        let id = id_in(&format!("g{n}-"), 1, 2);
        records.push(serde_json::json!({"id": id, "title": "zephyr winds over ridges"}));
    }
    let dir = tempfile::tempdir().unwrap();
    let (one, shards) = build(dir.path(), &records, 2);
    let mut request = SearchRequest::new("kestrel zephyr");
    for (name, value) in [
        ("limit", "1"),
        ("profile", "bm25f"),
        ("now", "2026-01-01T00:00:00Z"),
    ] {
        request.set_option(name, Some(value)).unwrap();
    }
    let single = one.search(&request).unwrap();
    assert!(
        single.results[0].id.starts_with('a'),
        "{:?}",
        single.results[0].id
    );
    assert_eq!(
        answer(&single),
        answer(&shards::search(&shards, &request).unwrap())
    );
}

/// `reliora build --shard I/N` builds one shard: the shards split the records with none lost
/// or doubled, each where `shard_of` routes it; a shard outside `0..N` is refused (exit 2).
#[test]
fn the_command_line_builds_one_shard_at_a_time() {
    use crate::support::{arg, reliora};
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/experiences");
    let ids: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .flat_map(|f| {
            std::fs::read_to_string(f.unwrap().path())
                .unwrap()
                .lines()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .filter_map(|line| {
            serde_json::from_str::<serde_json::Value>(&line).ok()?["id"]
                .as_str()
                .map(String::from)
        })
        .collect();
    assert!(ids.len() > 250);
    let mut total = 0;
    for s in 0..3u32 {
        let shard = dir.path().join(format!("s{s}"));
        let spec = format!("{s}/3");
        let built = reliora(
            &shard,
            &["build", "--input", arg(&data), "--shard", &spec],
            None,
        )
        .ok();
        total += built["records"].as_u64().unwrap();
        let index = Index::open(&shard).unwrap();
        for id in &ids {
            let here = index.live_record(id).unwrap().is_some();
            assert_eq!(here, shards::shard_of(id, 3) == s, "{id} in shard {s}");
        }
    }
    let one = dir.path().join("one");
    let built = reliora(&one, &["build", "--input", arg(&data)], None).ok();
    assert_eq!(total, built["records"].as_u64().unwrap());
    let refused = reliora(
        &dir.path().join("x"),
        &["build", "--input", arg(&data), "--shard", "3/3"],
        None,
    );
    refused.assert_error(
        "invalid_option",
        &["3/3".to_string()],
        "a shard outside 0..N",
    );
}

/// A shard asked for the page's worth is asked again, deeper, when a post-step lowers what it
/// sent below what it kept: here the superseded best record of shard 0 falls below its
/// superseder on shard 1, and shard 0's second record takes the page.
#[test]
fn a_shard_is_asked_deeper_when_its_page_is_demoted() {
    let (x, f, y) = (id_in("x", 0, 2), id_in("f", 0, 2), id_in("y", 1, 2));
    let single = superseded_best_answers_alike(&x, &f, &y);
    assert_eq!(single.results[0].id, f);
}
