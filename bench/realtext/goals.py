"""The real-text goals in one command: corpora from a file of sentences and files of questions,
Reliora and tantivy measured in alternation, a table of each goal met or missed.

    python3 bench/realtext/goals.py --sentences sentences.txt \\
        --queries ../shared/data/scifact/queries.jsonl,bench/agent-memory/queries.jsonl \\
        --work $WORK [--sizes 100000,1000000] [--runs 3] [--json goals.json]

`sentences.txt` is any real text, one sentence a line (`bench/realtext/sentences.py` makes it
from Debian's documentation and SciFact); the question files are JSON Lines with a `query` (or
`text`) field, as `reliora-bench realtext --queries` reads them. For each size the records are
generated with seed 42 (`reliora-bench realtext`), then each run measures Reliora — its build
with the CLI (`reliora build`, the product's build command, wall time), every profile's
latency in process on one thread (`reliora-bench query`), 30 whole `reliora search` processes
(`bench/process_latency.py`) — and right after it tantivy (`reliora-bench engine tantivy`: its
build and latency), so both engines see the same hour. A goal is judged on the medians of
the runs, as BENCHMARKS.md reports them. The binaries are the release builds of this checkout
unless `--bench` and `--reliora` name others (build them first: `cargo build --release` here
and in bench/).

The exit status is 0 when every step ran, whatever the goals say (the table says that), and 1
when a step failed (its command and output are printed).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFILES = ["standard", "bm25f", "decay", "recency"]

# (name, the value computed from a size's medians, the bound it must not exceed)
GOALS = [
    ("standard p50 ÷ tantivy p50", lambda m: m["standard_p50"] / m["tantivy_p50"], 0.5),
    ("standard p99 ÷ tantivy p99", lambda m: m["standard_p99"] / m["tantivy_p99"], 1.0),
    ("bm25f p50 ÷ tantivy p50", lambda m: m["bm25f_p50"] / m["tantivy_p50"], 0.5),
    ("decay p50 ÷ standard p50", lambda m: m["decay_p50"] / m["standard_p50"], 2.0),
    ("recency p50 ÷ standard p50", lambda m: m["recency_p50"] / m["standard_p50"], 2.0),
    ("build ÷ tantivy build", lambda m: m["build_s"] / m["tantivy_build_s"], 1.0),
    ("index ÷ input", lambda m: m["index_to_input"], 0.6),
    ("process p50 (ms)", lambda m: m["process_p50"], 10.0),
]


def run(command, env=None):
    """Runs `command`, returns its stdout; on failure prints what it said and exits 1."""
    done = subprocess.run(command, capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})))
    if done.returncode != 0:
        sys.exit("failed (exit %d): %s\n%s%s" % (done.returncode, " ".join(command),
                                                 done.stdout[-2000:], done.stderr[-2000:]))
    return done.stdout


def last_json(text, command):
    """The JSON object on the last non-empty line of a command's output."""
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        sys.exit("no JSON result from %s:\n%s" % (command, text[-2000:]))


def measure_size(args, records):
    corpus = os.path.join(args.work, "rt%d" % records)
    run([args.bench, "realtext", "--sentences", args.sentences, "--records", str(records),
         "--seed", "42", "--queries", args.queries, "--out", corpus])
    runs = []
    records_file = os.path.join(corpus, "records.jsonl")
    thirty = os.path.join(args.work, "q30-%d.jsonl" % records)
    with open(os.path.join(corpus, "queries.jsonl")) as queries, open(thirty, "w") as out:
        out.writelines(queries.readlines()[:30])
    for r in range(1, args.runs + 1):
        index = os.path.join(args.work, "reliora-%d" % records)
        shutil.rmtree(index, ignore_errors=True)
        started = time.perf_counter()
        run([args.reliora, "--format", "json", "--index", index, "build", "--input", records_file])
        build_seconds = time.perf_counter() - started
        query_cmd = [args.bench, "query", "--index", index, "--corpus", corpus]
        reliora = last_json(run(query_cmd, {"RELIORA_BENCH_PROFILES": ",".join(PROFILES[1:])}),
                            query_cmd)
        reliora["build_seconds"] = build_seconds
        reliora["index_bytes"] = sum(os.path.getsize(os.path.join(index, f))
                                     for f in os.listdir(index))
        reliora["index_to_input"] = reliora["index_bytes"] / os.path.getsize(records_file)
        process = run([sys.executable, os.path.join(ROOT, "bench/process_latency.py"),
                       args.reliora, index, thirty])
        reliora["process_ms_p50"] = float(process.split()[3])
        tantivy_cmd = [args.bench, "engine", "tantivy", "--corpus", corpus,
                       "--work", os.path.join(args.work, "tantivy-%d" % records)]
        tantivy = last_json(run(tantivy_cmd), tantivy_cmd)
        runs.append({"reliora": reliora, "tantivy": tantivy})
        print("  %d records, run %d: standard p50 %.3f ms, tantivy %.3f ms"
              % (records, r, reliora["latency_ms"]["p50"], tantivy["latency_ms"]["p50"]),
              file=sys.stderr)
    med = lambda values: statistics.median(values)
    medians = {
        "standard_p50": med([x["reliora"]["latency_ms"]["p50"] for x in runs]),
        "standard_p99": med([x["reliora"]["latency_ms"]["p99"] for x in runs]),
        "tantivy_p50": med([x["tantivy"]["latency_ms"]["p50"] for x in runs]),
        "tantivy_p99": med([x["tantivy"]["latency_ms"]["p99"] for x in runs]),
        "build_s": med([x["reliora"]["build_seconds"] for x in runs]),
        "tantivy_build_s": med([x["tantivy"]["build_seconds"] for x in runs]),
        "index_to_input": med([x["reliora"]["index_to_input"] for x in runs]),
        "process_p50": med([x["reliora"]["process_ms_p50"] for x in runs]),
    }
    for profile in PROFILES[1:]:
        medians[profile + "_p50"] = med([x["reliora"][profile]["latency_ms"]["p50"] for x in runs])
    return {"records": records, "runs": runs, "medians": medians}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", required=True)
    parser.add_argument("--queries", required=True, help="question files, comma-separated")
    parser.add_argument("--work", required=True, help="a directory for corpora and indexes")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bench", default=os.path.join(ROOT, "bench/target/release/reliora-bench"))
    parser.add_argument("--reliora", default=os.path.join(ROOT, "target/release/reliora"))
    parser.add_argument("--json", help="also write every run's figures here")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        parser.error("--sizes must be record counts, comma-separated: %r" % args.sizes)
    for path, what in [(args.sentences, "--sentences"), (args.bench, "--bench"),
                       (args.reliora, "--reliora")]:
        if not os.path.isfile(path):
            parser.error("%s %s: no such file" % (what, path))
    os.makedirs(args.work, exist_ok=True)
    started = time.time()
    results = [measure_size(args, records) for records in sizes]
    print("| goal | bound | " + " | ".join("%d records" % r["records"] for r in results) + " |")
    print("|---|---|" + "---|" * len(results))
    for name, value, bound in GOALS:
        cells = []
        for r in results:
            v = value(r["medians"])
            cells.append("%.3f %s" % (v, "met" if v <= bound else "missed"))
        print("| %s | ≤ %g | %s |" % (name, bound, " | ".join(cells)))
    print("\nmedians of %d run(s) a size, %.0f s in all" % (args.runs, time.time() - started))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)


if __name__ == "__main__":
    main()
