#!/usr/bin/env python3
"""Writes the agent-memory benchmark corpus (BEIR layout) from data/experiences/*.jsonl.

Every record of data/experiences/*.jsonl (files in name order, lines in file order) becomes one
line of corpus.jsonl: `id` is renamed `_id` in place, every other field is kept as it is (camelCase
or snake_case spelling, value, key order). A record without an `id` stays without `_id`, so both
`reliora build --input data` and `reliora eval --beir bench/agent-memory` give it the same derived
id. Python 3 standard library only; the output is deterministic, CI regenerates and diffs it.

Usage: make_corpus.py [OUT]   (default: corpus.jsonl next to this script; "-" for stdout)
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SOURCES = sorted((ROOT / "data" / "experiences").glob("*.jsonl"))


def convert(record: dict) -> dict:
    if "_id" in record:
        raise ValueError("a data record already has an `_id`")
    return {("_id" if key == "id" else key): value for key, value in record.items()}


def main() -> int:
    if len(sys.argv) > 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    lines = []
    for source in SOURCES:
        with source.open(encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    lines.append(json.dumps(convert(record), ensure_ascii=False, separators=(",", ":")))
                except ValueError as e:
                    print(f"{source.relative_to(ROOT)}:{number}: {e}", file=sys.stderr)
                    return 1
    if not SOURCES or not lines:
        print("no records found under data/experiences/", file=sys.stderr)
        return 1
    text = "\n".join(lines) + "\n"
    out = sys.argv[1] if len(sys.argv) == 2 else str(HERE / "corpus.jsonl")
    if out == "-":
        sys.stdout.write(text)
    else:
        with open(out, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
