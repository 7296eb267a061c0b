#!/usr/bin/env bash
# Regression check of the agent-memory benchmark (bench/agent-memory/README.md):
#   1. corpus.jsonl must be exactly what make_corpus.py writes from data/experiences/;
#   2. `reliora eval` of every profile, unstemmed and stemmed, must build all documents, judge
#      every query, and reach the nDCG@10 floor of floors.tsv.
# Usage: bench/agent-memory/check.sh PATH/TO/reliora    (exit 1 on any failure)
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 PATH/TO/reliora" >&2
    exit 2
fi
bin=$1
here="$(cd "$(dirname "$0")" && pwd)"
# A fixed reference time: `decay` and `recency` weigh ages, so the clock would make them drift.
# 2026-11-04 is the day after the newest createdAt in data/experiences/.
now=2026-11-04T00:00:00Z

fail() {
    echo "agent-memory: FAIL: $*" >&2
    exit 1
}

command -v python3 >/dev/null 2>&1 || fail "python3 is required (make_corpus.py, JSON parsing)"
[[ -x $bin ]] || fail "$bin is not an executable reliora binary"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# 1. The committed corpus is the generated one.
python3 "$here/make_corpus.py" "$tmp/corpus.jsonl"
if ! diff -q "$here/corpus.jsonl" "$tmp/corpus.jsonl" >/dev/null; then
    echo "agent-memory: corpus.jsonl lines that differ (diff ranges):" >&2
    diff "$here/corpus.jsonl" "$tmp/corpus.jsonl" | grep -E '^[0-9]' | head -n 5 >&2 || true
    fail "bench/agent-memory/corpus.jsonl differs from data/experiences/: run python3 bench/agent-memory/make_corpus.py and commit the result"
fi
documents=$(wc -l <"$here/corpus.jsonl")
queries=$(tail -n +2 "$here/qrels/test.tsv" | cut -f1 | sort -u | wc -l)

# 2. Every profile against its floor.
checked=0
while IFS=$'\t' read -r profile stem floor; do
    [[ -z $profile || $profile == \#* || $profile == profile ]] && continue
    case $stem in
        yes) flags=(--stem) ;;
        no) flags=() ;;
        *) fail "floors.tsv: stem must be yes or no, not '$stem' (profile $profile)" ;;
    esac
    if ! "$bin" eval --beir "$here" --profile "$profile" ${flags[@]+"${flags[@]}"} --now "$now" \
        --format json >"$tmp/report.json" 2>"$tmp/stderr"; then
        cat "$tmp/stderr" >&2
        fail "reliora eval failed for profile $profile, stem $stem"
    fi
    values=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["nDCG@10"], d["Recall@10"], d["Recall@100"], d["MRR@10"], d["documents"], d["skipped"],
      d["queries"], d["queriesWithoutRelevant"])' "$tmp/report.json") ||
        fail "profile $profile, stem $stem: unreadable eval report"
    read -r ndcg r10 r100 mrr docs skipped judged empty <<<"$values"
    printf 'agent-memory: %-8s stem=%-3s nDCG@10 %.4f  Recall@10 %.4f  Recall@100 %.4f  MRR@10 %.4f  (floor %s)\n' \
        "$profile" "$stem" "$ndcg" "$r10" "$r100" "$mrr" "$floor"
    [[ $docs -eq $documents && $skipped -eq 0 ]] ||
        fail "profile $profile, stem $stem: built $docs documents ($skipped skipped), expected all $documents"
    [[ $judged -eq $queries && $empty -eq 0 ]] ||
        fail "profile $profile, stem $stem: averaged $judged queries ($empty without a relevant document), expected $queries"
    if awk -v v="$ndcg" -v f="$floor" 'BEGIN { exit !(v + 0 < f + 0) }'; then
        fail "profile $profile, stem $stem: nDCG@10 $ndcg is below its floor $floor (bench/agent-memory/floors.tsv)"
    fi
    checked=$((checked + 1))
done <"$here/floors.tsv"
[[ $checked -gt 0 ]] || fail "floors.tsv lists no profile"
echo "agent-memory: $checked runs at or above their nDCG@10 floors ($documents documents, $queries queries)"
