#!/usr/bin/env bash
# Whole `reliora search` processes over an index of data/ whose record log holds N live records
# written by `reliora record` (the log's records are indexed into a segment in memory at every
# open), against the same index with an empty log.
#
#   bench/log_tail.sh RELIORA_BIN [N]     # N defaults to 999, the most before auto-compaction
#
# Prints bench/process_latency.py's line (p50, p90, p99 over the 186 agent-memory queries) for
# the empty log, then for N log records.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "$1")
n=${2:-999}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" build --index "$work/idx" --input data >/dev/null
python3 - "$n" >"$work/records.jsonl" <<'PY'
import glob, json, sys
records = [json.loads(line) for path in sorted(glob.glob("data/experiences/*.jsonl"))
           for line in open(path) if line.strip()]
records = [r for r in records if "id" in r]
for i in range(int(sys.argv[1])):
    r = dict(records[i % len(records)])
    r["id"] = f"logged-{i}-{r['id']}"
    r.pop("supersedes", None)
    print(json.dumps(r))
PY
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.strip():
        print(json.dumps({"query": json.loads(line)["text"]}))
' bench/agent-memory/queries.jsonl >"$work/queries.jsonl"
echo -n "empty log:       "
python3 bench/process_latency.py "$bin" "$work/idx" "$work/queries.jsonl" >"$work/empty.txt"
head -1 "$work/empty.txt"
while IFS= read -r record; do
    printf '%s\n' "$record" | "$bin" record --index "$work/idx" - >/dev/null
done <"$work/records.jsonl"
echo -n "$n log records: "
python3 bench/process_latency.py "$bin" "$work/idx" "$work/queries.jsonl" >"$work/logged.txt"
head -1 "$work/logged.txt"
