"""Queries per second from Python: reliora against tantivy-py and bm25s on one BEIR corpus.

    python bench/bench_qps.py $CORPUS [--threads 2] [--repeat 3]

$CORPUS is a BEIR folder (SciFact: corpus.jsonl, queries.jsonl); the queries are all of its
queries (SciFact's claims), each answered with its top 10. Every engine indexes the same
documents (title and text) and answers the same query strings:

- reliora: ``Index.search(q, profile=P, limit=10)`` with P = bm25f (term statistics, the
  profile compared with BM25 elsewhere) and standard; the corpus built with BEIR's field map
  (title → title, text → problems), unstemmed; the english analyzer drops SPEC §2.2's stop
  words; standard also matches prefixes of 5+ characters.
- tantivy-py: fields title and text with the default tokenizer (lowercase, split on
  non-alphanumerics, no stop words, no stemming); each query reduced to its words (tantivy's
  query syntax would reject `:`, `(`, quotes…) and OR-ed over both fields; top 10 doc ids read
  back from the store, as reliora's results carry ids and titles.
- bm25s: ``bm25s.tokenize(…, stopwords="en")`` (lowercase, its own stop list, no stemming),
  title and text joined, BM25 (Lucene variant); ``retrieve(…, k=10)`` one query per call.

"1 thread" runs the queries in a loop; "N threads" splits the same loop over a thread pool
(each engine's own call, so the GIL decides how far threads help); "batch" is each engine's
own many-queries call where it has one (reliora ``search_batch``, bm25s ``retrieve`` with
``n_threads``). Each figure is the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
from importlib import metadata
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def best_qps(run: Callable[[], None], n_queries: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return n_queries / best


def looped(search: Callable[[str], Any], queries: Sequence[str], threads: int) -> Callable[[], None]:
    if threads == 1:
        return lambda: [search(q) for q in queries] and None
    pool = ThreadPoolExecutor(max_workers=threads)
    return lambda: list(pool.map(search, queries, chunksize=16)) and None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path, help="a BEIR folder (corpus.jsonl, queries.jsonl)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engines", default="reliora,tantivy,bm25s")
    args = parser.parse_args()
    engines = args.engines.split(",")

    docs = read_jsonl(args.corpus / "corpus.jsonl")
    queries = [q["text"] for q in read_jsonl(args.corpus / "queries.jsonl")]
    print(f"# {len(docs)} documents, {len(queries)} queries, top 10; python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs; best of {args.repeat}", file=sys.stderr)
    rows: list[tuple[str, float, float, float | None]] = []
    scratch = tempfile.mkdtemp(prefix="bench-qps-")

    if "reliora" in engines:
        import reliora

        path = os.path.join(scratch, "reliora")
        reliora.Index.build(path, args.corpus / "corpus.jsonl", field_map={"_id": "id", "text": "problems"})
        index = reliora.Index.open(path)
        for profile in ("bm25f", "standard"):
            def search(q: str, profile: str = profile) -> Any:
                return index.search(q, profile=profile, limit=10).results
            one = best_qps(looped(search, queries, 1), len(queries), args.repeat)
            many = best_qps(looped(search, queries, args.threads), len(queries), args.repeat)
            batch = best_qps(lambda profile=profile: index.search_batch(queries, profile=profile, limit=10) and None,
                             len(queries), args.repeat)
            rows.append((f"reliora {reliora.__version__} ({profile})", one, many, batch))

    if "tantivy" in engines:
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("id", stored=True, tokenizer_name="raw")
        builder.add_text_field("title", stored=False)
        builder.add_text_field("text", stored=False)
        schema = builder.build()
        tindex = tantivy.Index(schema, path=None)
        writer = tindex.writer(heap_size=200_000_000, num_threads=1)
        for d in docs:
            writer.add_document(tantivy.Document(id=d["_id"], title=d.get("title") or "", text=d.get("text") or ""))
        writer.commit()
        writer.wait_merging_threads()
        tindex.reload()
        searcher = tindex.searcher()

        def tsearch(q: str) -> Any:
            words = " ".join(re.findall(r"\w+", q.lower()))
            if not words:
                return []
            query = tindex.parse_query(words, ["title", "text"])
            hits = searcher.search(query, 10).hits
            return [searcher.doc(address)["id"][0] for _score, address in hits]

        one = best_qps(looped(tsearch, queries, 1), len(queries), args.repeat)
        many = best_qps(looped(tsearch, queries, args.threads), len(queries), args.repeat)
        rows.append((f"tantivy-py {metadata.version('tantivy')}", one, many, None))

    if "bm25s" in engines:
        import bm25s

        ids = [d["_id"] for d in docs]
        corpus_tokens = bm25s.tokenize([f"{d.get('title') or ''} {d.get('text') or ''}" for d in docs],
                                       stopwords="en", show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(corpus_tokens, show_progress=False)

        def bsearch(q: str) -> Any:
            tokens = bm25s.tokenize([q], stopwords="en", show_progress=False)
            found, _scores = retriever.retrieve(tokens, k=10, show_progress=False, n_threads=1)
            return [ids[i] for i in found[0]]

        def bbatch() -> None:
            tokens = bm25s.tokenize(queries, stopwords="en", show_progress=False)
            retriever.retrieve(tokens, k=10, show_progress=False, n_threads=args.threads)

        one = best_qps(looped(bsearch, queries, 1), len(queries), args.repeat)
        many = best_qps(looped(bsearch, queries, args.threads), len(queries), args.repeat)
        batch = best_qps(bbatch, len(queries), args.repeat)
        rows.append((f"bm25s {metadata.version('bm25s')}", one, many, batch))

    print(f"| engine | 1 thread (q/s) | {args.threads} threads (q/s) | speed-up | batch call (q/s) |")
    print("|---|---:|---:|---:|---:|")
    for name, one, many, batch in rows:
        batch_text = f"{batch:,.0f}" if batch is not None else "—"
        print(f"| {name} | {one:,.0f} | {many:,.0f} | {many / one:.2f}× | {batch_text} |")


if __name__ == "__main__":
    main()
