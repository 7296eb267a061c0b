"""Wall time of one whole `reliora search` process per query: p50, p90, p99 and the slowest.

    python3 bench/process_latency.py RELIORA_BIN INDEX_DIR QUERIES.jsonl

QUERIES.jsonl is the harness's query file (one {"query": ...} per line). Each query runs as its
own process with `--format json`, so the figures include process start, index open and output.
A search that fails stops the run (its time would measure nothing); the summary comes first, so
`| head -1` keeps it.
"""

import json
import signal
import subprocess
import sys
import time

# A reader that stops early (`| head -1`) ends the script quietly, not with a traceback.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)

binary, index, queries_file = sys.argv[1:4]
queries = [json.loads(line)["query"] for line in open(queries_file) if line.strip()]
times = []
for query in queries:
    started = time.perf_counter()
    command = [binary, "--format", "json", "--index", index, "search", query,
               "--now", "2026-06-01T00:00:00Z"]
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append((time.perf_counter() - started) * 1000)
    if done.returncode != 0:
        # Once more, untimed, for what it said.
        again = subprocess.run(command, capture_output=True, text=True)
        sys.exit("search %r exited with %d: %s %s"
                 % (query, done.returncode, again.stdout.strip(), again.stderr.strip()))
ordered = sorted(times)
at = lambda q: ordered[min(len(ordered) - 1, int(len(ordered) * q))]
print("queries %d  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f ms"
      % (len(times), at(0.5), at(0.9), at(0.99), ordered[-1]))
for i in sorted(range(len(times)), key=lambda i: -times[i])[:5]:
    print("%8.1f ms  %s" % (times[i], queries[i][:80]))
