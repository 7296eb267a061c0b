//! The work counters (`reliora::internals::work`) count exactly what one search did: the terms
//! each token expanded to, the phrases checked in stored text, the records decoded whole and
//! the heads decoded for the page. A binary of its own with one test, so that no other search
//! runs in the process while it counts.

use reliora::internals::work::{snapshot, Work};
use reliora::{BuildOptions, Index, SearchRequest};

#[test]
fn a_search_counts_the_terms_phrases_and_records_it_read() {
    let dir = tempfile::tempdir().unwrap();
    // Long enough that a head is less than the whole record.
    let long = "the rest of the story goes on for a while ".repeat(20);
    let mut lines = vec![
        // The phrase "queue timeout error", and its words in another order.
        format!(r#"{{"id":"p1","title":"Queue timeout error under load","task":"{long}"}}"#),
        format!(r#"{{"id":"p2","title":"Error: timeout of the queue","task":"queues {long}"}}"#),
        format!(r#"{{"id":"p3","title":"Timeout error queue","solution":"queueing {long}"}}"#),
    ];
    // Records that make every word frequent, so that no exact pair postings answer for the
    // phrase and its candidates' text is checked.
    for i in 0..40 {
        lines.push(format!(
            r#"{{"id":"f{i}","title":"queue {i}","task":"timeout {i} error {i}"}}"#
        ));
    }
    // Three records holding rare words next to each other, and one holding them apart: their
    // word pairs are checked in the text.
    for i in 0..3 {
        lines.push(format!(
            r#"{{"id":"w{i}","title":"walrus tusk ivory {i}","task":"{long}"}}"#
        ));
    }
    lines.push(format!(
        r#"{{"id":"w3","title":"ivory and a tusk of a walrus","task":"{long}"}}"#
    ));
    let index = built(dir.path(), &lines);

    let mut request = SearchRequest::new("queue timeout error");
    request.set_option("limit", Some("3")).unwrap();
    let before = snapshot();
    let response = index.search(&request).unwrap();
    let done = snapshot() - before;

    // One segment: each of the three tokens looked up once; `queue` expands to `queue`,
    // `queueing` and `queues`, `timeout` and `error` to themselves.
    assert_eq!(done.tokens, 3, "{done:?}");
    assert_eq!(done.terms, 5, "{done:?}");
    // The page's three records are read as heads; the only records decoded whole are those
    // whose phrase was checked in their text, and the phrase's place on the page needed some.
    assert_eq!(response.results.len(), 3);
    assert_eq!(response.results[0].id, "p1");
    assert_eq!(done.heads, 3, "{done:?}");
    assert!(done.phrase_checks > 0, "{done:?}");
    assert_eq!(done.records, done.phrase_checks, "{done:?}");

    // `bm25f` asks each record holding both words of a pair whether it holds the pair: four
    // records, two pairs, and the page asked again when the pipeline scores it. Each record is
    // decoded once.
    let mut request = SearchRequest::new("walrus tusk ivory");
    request.set_option("profile", Some("bm25f")).unwrap();
    let before = snapshot();
    let response = index.search(&request).unwrap();
    let done = snapshot() - before;
    assert_eq!(response.results.len(), 4);
    assert_eq!(done.heads, 4, "{done:?}");
    assert!(done.phrase_checks >= 2 * 4, "{done:?}");
    assert_eq!(done.records, 4, "{done:?}");

    // `decay` ranks its whole candidate list (the 43 records holding a word of the query), but
    // looks up which tokens a record matched for the page's three alone.
    let mut request = SearchRequest::new("queue timeout error");
    request.set_option("profile", Some("decay")).unwrap();
    request.set_option("limit", Some("3")).unwrap();
    let before = snapshot();
    let response = index.search(&request).unwrap();
    let done = snapshot() - before;
    assert_eq!(response.results.len(), 3);
    assert_eq!(response.counts.candidates, 43);
    assert!(response.results.iter().all(|r| r.matched_tokens.len() == 3));
    assert_eq!(done.coverages, 3, "{done:?}");

    // `decay`'s entity check (SPEC §5.4): a record naming the entity in `entities` holds it
    // whatever its text says, and the entity facets tell which records do, so no record is
    // decoded to decide it: not those holding the word (the postings tell), nor those naming
    // it without the word, nor those doing neither.
    let dir = tempfile::tempdir().unwrap();
    let mut lines = vec![
        format!(
            r#"{{"id":"k1","title":"kubernetes pod restarts","task":"{long}","entities":["Kubernetes"]}}"#
        ),
        format!(
            r#"{{"id":"k2","title":"pod restarts after a deploy","task":"{long}","entities":["KUBERNETES"]}}"#
        ),
    ];
    for i in 0..10 {
        lines.push(format!(
            r#"{{"id":"n{i}","title":"pod restarts {i}","task":"{long}","entities":["Docker"]}}"#
        ));
    }
    let index = built(dir.path(), &lines);
    let mut request = SearchRequest::new("pod");
    request.set_option("profile", Some("decay")).unwrap();
    request.set_option("entity", Some("Kubernetes")).unwrap();
    request.set_option("limit", Some("3")).unwrap();
    let before = snapshot();
    let response = index.search(&request).unwrap();
    let done = snapshot() - before;
    assert_eq!(response.counts.candidates, 12);
    let ids: Vec<&str> = response.results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids[..2],
        ["k1", "k2"],
        "the entity's ×1.3 lifts both: {ids:?}"
    );
    assert_eq!(done.records, 0, "{done:?}");

    // Nothing counts while no search runs.
    assert_eq!(snapshot() - snapshot(), Work::default());
}

/// The index of the JSON Lines `lines`, built in `dir` and opened.
fn built(dir: &std::path::Path, lines: &[String]) -> Index {
    let input = dir.join("records.jsonl");
    std::fs::write(&input, lines.join("\n")).unwrap();
    let path = dir.join("index");
    let options = BuildOptions {
        inputs: vec![input],
        ..BuildOptions::default()
    };
    Index::build(&path, &options).unwrap();
    Index::open(&path).unwrap()
}
