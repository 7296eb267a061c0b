"""Real technical English for the real-text workload: every sentence of Debian's documentation
packages and of SciFact's abstracts, one per line, deduplicated.

    apt-get download python3.11-doc postgresql-doc-15 manpages-dev rust-doc
    for f in *.deb; do dpkg-deb -x "$f" docs; done
    python3 bench/realtext/sentences.py docs $CORPUS/scifact > sentences.txt

HTML pages give the text of their paragraphs, list items and definitions (code blocks, scripts
and navigation are skipped; inline code stays, as real questions quote identifiers); manual
pages give their running text with the roff requests removed; SciFact gives its abstracts.
A sentence is kept when it has 6 to 60 words, at least two thirds of them alphabetic, and was
not seen before (case-insensitively). Files are read in sorted path order, so the output is the
same on every machine for the same packages. Statistics go to stderr.
"""

import gzip
import html.parser
import json
import os
import re
import sys

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[\"'`])")
WORD = re.compile(r"\S+")
ALPHA = re.compile(r"^[A-Za-z][A-Za-z'-]*[.,;:!?)]*$")
# Elements whose text is prose; and elements whose text never is.
PROSE = {"p", "li", "dd", "td", "blockquote", "figcaption"}
SKIP = {"script", "style", "pre", "nav", "head", "title", "button", "select", "svg"}


class Prose(html.parser.HTMLParser):
    """Collects the text of prose elements, outside skipped ones."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blocks, self.current, self.prose, self.skip = [], [], 0, 0

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
        elif tag in PROSE:
            self.flush()
            self.prose += 1

    def handle_endtag(self, tag):
        if tag in SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in PROSE:
            self.flush()
            self.prose = max(0, self.prose - 1)

    def handle_data(self, data):
        if self.prose and not self.skip:
            self.current.append(data)

    def flush(self):
        text = " ".join("".join(self.current).split())
        if text:
            self.blocks.append(text)
        self.current = []


def html_blocks(path):
    parser = Prose()
    with open(path, encoding="utf-8", errors="replace") as f:
        parser.feed(f.read())
    parser.close()
    parser.flush()
    return parser.blocks


ROFF_ESCAPE = re.compile(r"\\f[BIRP]|\\f\(..|\\\(..|\\[&|^%e-]|\\s[+-]?\d|\\\*\(..|\\\*.")


def man_blocks(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    blocks, current = [], []
    for line in lines:
        if line.startswith((".", "'")):
            request = line[1:3]
            if request in ("PP", "P ", "LP", "SH", "SS", "TP", "IP", "RS", "RE", "EX", "nf") or line in (".P", ".PP"):
                if current:
                    blocks.append(" ".join(current))
                current = []
            # .B/.I/.BR … carry words; other requests do not.
            if request[:1] in ("B", "I") and len(line) > 3:
                current.append(line[3:].replace('"', ""))
            continue
        current.append(ROFF_ESCAPE.sub("", line))
    if current:
        blocks.append(" ".join(current))
    return [" ".join(b.split()) for b in blocks]


def keep(sentence):
    words = WORD.findall(sentence)
    if not 6 <= len(words) <= 60:
        return False
    alphabetic = sum(1 for w in words if ALPHA.match(w))
    return 3 * alphabetic >= 2 * len(words)


def main(docs, scifact):
    seen, counts = set(), {}
    out = sys.stdout

    def emit(source, block):
        for sentence in SENTENCE_END.split(block):
            sentence = sentence.strip()
            key = sentence.lower()
            if keep(sentence) and key not in seen:
                seen.add(key)
                counts[source] = counts.get(source, 0) + 1
                out.write(sentence + "\n")

    paths = []
    for root, _, files in os.walk(docs):
        paths.extend(os.path.join(root, f) for f in files)
    for path in sorted(paths):
        source = os.path.relpath(path, docs).split(os.sep)[3] if path.count(os.sep) > 3 else "other"
        if path.endswith((".html", ".htm")):
            blocks = html_blocks(path)
        elif re.search(r"/man\d?/[^/]+\.\d\w*(\.gz)?$", path):
            source = "manpages"
            blocks = man_blocks(path)
        else:
            continue
        for block in blocks:
            emit(source, block)
    with open(os.path.join(scifact, "corpus.jsonl"), encoding="utf-8") as corpus:
        for line in corpus:
            emit("scifact", json.loads(line).get("text", ""))
    words = set()
    for s in seen:
        words.update(re.findall(r"[a-z0-9]+", s))
    print(f"{len(seen)} distinct sentences, {len(words)} distinct words; by source: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
