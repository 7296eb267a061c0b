"""Sharded builds and searches through Ray against one index, on the same machine.

For each shard count it builds the records with ``reliora.distributed.build_sharded`` (one
Ray task per shard) and times it, then runs every query through ``ShardedIndex.search`` for
each profile, timing each call, and checks that every answer equals the one index's (ids,
scores and counts). The one index is built with ``reliora.Index.build`` and searched in
process. Ray runs as a local cluster in this process, on loopback only.

    python bench_sharded.py --records records.jsonl --queries queries.jsonl --out DIR \\
        --shards 1,2,4,8 --queries-limit 200

Prints a Markdown table and writes every figure as JSON Lines to ``DIR/results.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import statistics
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# A token of this run's own: nothing written to ~/.ray.
os.environ.setdefault("RAY_AUTH_MODE", "token")
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))

import ray  # noqa: E402

import reliora  # noqa: E402
from reliora.distributed import ShardedIndex, build_sharded  # noqa: E402

NOW = "2026-06-01T00:00:00Z"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def key(response: reliora.SearchResponse) -> Any:
    return ([(r.id, r.score) for r in response], response.counts.to_dict())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--shards", default="1,2,4,8")
    parser.add_argument("--queries-limit", type=int, default=200)
    parser.add_argument("--profiles", default="standard,recency,decay,bm25f")
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    queries = [json.loads(line)["query"] for line in Path(args.queries).read_text().splitlines() if line.strip()]
    queries = queries[: args.queries_limit]
    profiles = args.profiles.split(",")
    results = out / "results.jsonl"
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"

    ray.init(_node_ip_address="127.0.0.1", include_dashboard=False, num_cpus=args.cpus, log_to_driver=False)

    def emit(row: dict[str, Any]) -> None:
        row = {"machine": machine, "records": Path(args.records).name, "queries": len(queries), **row}
        with results.open("a") as file:
            file.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)

    started = time.perf_counter()
    reliora.Index.build(out / "one", args.records)
    emit({"layout": "one index", "shards": 0, "build_s": time.perf_counter() - started})
    one = reliora.Index(out / "one")
    expected: dict[tuple[str, str], Any] = {}
    for profile in profiles:
        times = []
        for query in queries:
            t = time.perf_counter()
            response = one.search(query, profile=profile, now=NOW)
            times.append(time.perf_counter() - t)
            expected[(profile, query)] = key(response)
        emit({"layout": "one index", "shards": 0, "profile": profile,
              "p50_ms": 1000 * statistics.median(times), "p99_ms": 1000 * percentile(times, 0.99)})

    for count in [int(n) for n in args.shards.split(",")]:
        target = out / f"sharded-{count}"
        started = time.perf_counter()
        build_sharded(args.records, target, shards=count)
        emit({"layout": "sharded", "shards": count, "build_s": time.perf_counter() - started})
        index = ShardedIndex(target, actor_options={"num_cpus": 0})
        for query in queries[:5]:
            index.search(query, now=NOW)
        for profile in profiles:
            times, differing = [], 0
            for query in queries:
                t = time.perf_counter()
                response = index.search(query, profile=profile, now=NOW)
                times.append(time.perf_counter() - t)
                differing += key(response) != expected[(profile, query)]
            emit({"layout": "sharded", "shards": count, "profile": profile,
                  "p50_ms": 1000 * statistics.median(times), "p99_ms": 1000 * percentile(times, 0.99),
                  "answers_differing": differing})
        for actor in index.actors():
            ray.kill(actor)
    ray.shutdown()


if __name__ == "__main__":
    main()
