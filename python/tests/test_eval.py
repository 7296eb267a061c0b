"""``eval_beir``: the metrics of ``reliora eval --beir`` on a small BEIR folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import reliora
from conftest import Cli


@pytest.fixture()
def beir(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    docs = [
        ("d1", "Vitamin D", "vitamin d deficiency is linked to bone fractures in older adults"),
        ("d2", "Sleep", "short sleep duration raises the risk of obesity in children"),
        ("d3", "Coffee", "coffee consumption lowers the risk of type 2 diabetes"),
        ("d4", "", "exercise improves insulin sensitivity and glucose control"),
    ]
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as out:
        for _id, title, text in docs:
            out.write(json.dumps({"_id": _id, "title": title, "text": text}) + "\n")
    queries = [("q1", "vitamin d and fractures"), ("q2", "sleep and obesity"), ("q3", "diabetes risk")]
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as out:
        for _id, text in queries:
            out.write(json.dumps({"_id": _id, "text": text}) + "\n")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\nq3\td4\t1\n", encoding="utf-8"
    )
    return folder


@pytest.mark.parametrize(("kwargs", "flags"), [({}, []), ({"profile": "bm25f", "stem": True}, ["--profile", "bm25f", "--stem"])])
def test_eval_equals_cli(beir: Path, cli: Cli, kwargs: dict[str, object], flags: list[str]) -> None:
    report = reliora.eval_beir(beir, **kwargs)  # type: ignore[arg-type]
    expected = cli.ok("eval", "--beir", str(beir), *flags)
    got = report.to_dict()
    for timing in ("queriesPerSecond", "buildSeconds"):
        assert got.pop(timing) > 0 and expected.pop(timing) > 0
    assert got == expected
    assert (report.documents, report.queries, report.skipped) == (4, 3, 0)
    assert 0 < report.ndcg_at_10 <= 1 and 0 < report.recall_at_100 <= 1
    assert 0 < report.mrr_at_10 <= 1 and 0 < report.recall_at_10 <= 1
    assert report.profile == kwargs.get("profile", "standard")


def test_eval_errors(beir: Path, tmp_path: Path) -> None:
    with pytest.raises(reliora.UnknownProfile):
        reliora.eval_beir(beir, profile="nope")
    with pytest.raises(reliora.Error):
        reliora.eval_beir(tmp_path / "missing")
