"""Wall time of one whole `reliora search` process per query: p50, p90, p99 and the slowest.

    python3 bench/process_latency.py RELIORA_BIN INDEX_DIR QUERIES.jsonl

QUERIES.jsonl is the harness's query file (one {"query": ...} per line). Each query runs as its
own process with `--format json`, so the figures include process start, index open and output.
"""

import json
import subprocess
import sys
import time

binary, index, queries_file = sys.argv[1:4]
queries = [json.loads(line)["query"] for line in open(queries_file) if line.strip()]
times = []
for query in queries:
    started = time.perf_counter()
    subprocess.run(
        [binary, "--format", "json", "--index", index, "search", query,
         "--now", "2026-06-01T00:00:00Z"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    times.append((time.perf_counter() - started) * 1000)
ordered = sorted(times)
at = lambda q: ordered[min(len(ordered) - 1, int(len(ordered) * q))]
print("queries %d  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms"
      % (len(times), at(0.5), at(0.9), at(0.99), ordered[-1]))
for i in sorted(range(len(times)), key=lambda i: -times[i])[:5]:
    print("%8.1f ms  %s" % (times[i], queries[i][:80]))
