"""A short-record relevance set made from SciFact: every abstract split into its sentences.

Each sentence is a document of its own (`<doc>-<n>`, no title), the claims are the queries, and
every sentence of an abstract judged relevant to a claim is judged relevant (grade 1) to it.
The records are ~25 words, like conversation turns or short notes; the judgments are coarser
than sentence-level rationales, so the set measures whether a ranking keeps short records that
share a relevant abstract's vocabulary near the top, not absolute quality.

    python3 bench/scifact_sentences.py ../shared/data/scifact /tmp/scifact-sentences
    reliora eval --beir /tmp/scifact-sentences --profile bm25f
"""

import json
import os
import re
import sys

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


def main(source: str, target: str) -> None:
    os.makedirs(os.path.join(target, "qrels"), exist_ok=True)
    sentences = {}
    with open(os.path.join(source, "corpus.jsonl"), encoding="utf-8") as corpus, open(
        os.path.join(target, "corpus.jsonl"), "w", encoding="utf-8"
    ) as out:
        for line in corpus:
            doc = json.loads(line)
            parts = [s.strip() for s in SENTENCE_END.split(doc.get("text", "")) if s.strip()]
            sentences[doc["_id"]] = [f"{doc['_id']}-{n}" for n in range(len(parts))]
            for n, text in enumerate(parts):
                out.write(json.dumps({"_id": f"{doc['_id']}-{n}", "title": "", "text": text}) + "\n")
    with open(os.path.join(source, "queries.jsonl"), encoding="utf-8") as queries, open(
        os.path.join(target, "queries.jsonl"), "w", encoding="utf-8"
    ) as out:
        out.writelines(queries)
    with open(os.path.join(source, "qrels", "test.tsv"), encoding="utf-8") as qrels, open(
        os.path.join(target, "qrels", "test.tsv"), "w", encoding="utf-8"
    ) as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for n, line in enumerate(qrels):
            fields = line.strip().split("\t")
            if n == 0 or len(fields) < 3 or not fields[2].isdigit() or int(fields[2]) <= 0:
                continue
            for sentence in sentences.get(fields[1], []):
                out.write(f"{fields[0]}\t{sentence}\t1\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
