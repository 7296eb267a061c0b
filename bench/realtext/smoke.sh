#!/usr/bin/env bash
# CI's check of bench/realtext/goals.py: the whole pipeline (corpus, both engines, the goals
# table) at 1,000 records, one run, on sentences of the sample data in data/ and the
# agent-memory questions, with the debug binaries. The figures mean nothing at this size; the
# check is that every goal gets a value and a verdict.
#     bench/realtext/smoke.sh RELIORA_BIN BENCH_BIN
set -euo pipefail
cd "$(dirname "$0")/../.."
reliora=$1 bench=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - data/experiences > "$work/sentences.txt" <<'PY'
import json, os, re, sys
seen = set()
def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
folder = sys.argv[1]
for name in sorted(os.listdir(folder)):
    for line in open(os.path.join(folder, name), encoding="utf-8"):
        for text in strings(json.loads(line)):
            for sentence in re.split(r"(?<=[.!?])\s+", text.replace("\n", " ")):
                if len(sentence.split()) >= 6 and sentence.lower() not in seen:
                    seen.add(sentence.lower())
                    print(sentence)
PY
test "$(wc -l < "$work/sentences.txt")" -ge 100
python3 bench/realtext/goals.py --sentences "$work/sentences.txt" \
    --queries bench/agent-memory/queries.jsonl --work "$work/w" --sizes 1000 --runs 1 \
    --bench "$bench" --reliora "$reliora" --json "$work/goals.json" > "$work/table.md"
cat "$work/table.md"
python3 - "$work/table.md" "$work/goals.json" <<'PY'
import json, re, sys
rows = [l for l in open(sys.argv[1]) if re.match(r"\| .* \| ≤ [0-9.]+ \| [0-9.]+ (met|missed) \|$", l)]
assert len(rows) == 8, "expected 8 goal rows with a value and a verdict, got %d" % len(rows)
[size] = json.load(open(sys.argv[2]))
medians = size["medians"]
keys = {"standard_p50", "standard_p99", "bm25f_p50", "decay_p50", "recency_p50", "tantivy_p50",
        "tantivy_p99", "build_s", "tantivy_build_s", "index_to_input", "process_p50"}
assert keys <= medians.keys(), "missing medians: %s" % (keys - medians.keys())
assert all(medians[k] > 0 for k in keys), medians
assert size["records"] == 1000 and len(size["runs"]) == 1
print("goals.py: 8 goals judged at 1,000 records")
PY
