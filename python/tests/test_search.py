"""Search: every keyword argument, answers equal to ``reliora search``'s JSON for the same
request on the same index (same ``now``), and the batch and threaded forms."""

from __future__ import annotations

import datetime
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import reliora
from conftest import DATA, NOW, REPO, Cli

# (query, Python keyword arguments, the same request as command-line flags)
CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("pip install externally managed", {}, []),
    ("docker build cache", {"limit": 3}, ["--limit", "3"]),
    ("flaky test timeout", {"profile": "bm25f", "limit": 20}, ["--profile", "bm25f", "--limit", "20"]),
    ("database migration lock", {"profile": "decay"}, ["--profile", "decay"]),
    ("memory leak", {"profile": "recency", "mmr": True}, ["--profile", "recency", "--mmr=true"]),
    ("connection refused", {"profile": "decay", "mmr": False, "candidates": 7},
     ["--profile", "decay", "--mmr=false", "--candidates", "7"]),
    ("python", {"tags": ["python"]}, ["--tag", "python"]),
    ("install", {"tags": "python", "project_context": "ubuntu"}, ["--tag", "python", "--project-context", "ubuntu"]),
    ("error", {"type": "episodic", "min_score": 0.5}, ["--type", "episodic", "--min-score", "0.5"]),
    ("error", {"min_score": 40}, ["--min-score", "40"]),
    ("pip install", {"explain": "py-001", "full": True}, ["--explain", "py-001", "--full"]),
    ("pip install", {"explain": "no-such-id"}, ["--explain", "no-such-id"]),
    ("rust compile slow", {"include_superseded": True, "profile": "decay"},
     ["--profile", "decay", "--include-superseded"]),
    ("kubernetes pod restart", {"token_budget": 200}, ["--token-budget", "200"]),
    ("Postgres Docker upgrade", {"profile": "decay"}, ["--profile", "decay"]),
    ("upgrade", {"entities": ["postgres", "docker"]}, ["--entity", "postgres", "--entity", "docker"]),
    ("ssl certificate", {"rerank": {"relevance": 1.0, "salience": 0.5, "temporal": 0.25}},
     ["--rerank", "relevance=1.0,salience=0.5,temporal=0.25"]),
    ("git merge conflict", {"backend": "scan"}, ["--backend", "scan"]),
    ("git merge conflict", {"backend": "index", "limit": 500}, ["--backend", "index", "--limit", "500"]),
    ("", {"tags": ["ci"]}, ["--tag", "ci"]),
    ("配置 错误 Müller", {}, []),
]


@pytest.mark.parametrize(("query", "kwargs", "flags"), CASES, ids=[f"{i}:{c[0][:20]}" for i, c in enumerate(CASES)])
def test_search_equals_cli(sample_index: Path, cli: Cli, query: str, kwargs: dict[str, Any], flags: list[str]) -> None:
    index = reliora.Index.open(sample_index)
    response = index.search(query, now=NOW, **kwargs)
    expected = cli.ok("search", query, "--now", NOW, *flags, index=sample_index)
    assert response.to_dict() == expected


def test_attributes(sample_index: Path) -> None:
    response = reliora.Index.open(sample_index).search("pip install externally managed", now=NOW, full=True)
    data = response.to_dict()
    assert response.query == data["query"]
    assert response.tokens == data["tokens"] and response.dropped_tokens == data["droppedTokens"]
    assert (response.analyzer, response.profile, response.now) == ("english", "standard", NOW)
    assert (response.backend, response.degraded, response.notices) == ("index", False, [])
    assert response.fingerprint == data["fingerprint"]
    assert response.counts.candidates == data["counts"]["candidates"]
    assert response.counts.to_dict() == data["counts"]
    assert response.counts.strong + response.counts.moderate + response.counts.weak == response.counts.candidates
    assert len(response) == len(response.results) > 0
    top = response.results[0]
    raw = data["results"][0]
    assert (top.id, top.locator, top.title) == (raw["id"], raw["locator"], raw["title"])
    assert (top.score, top.normalized_score, top.match_level) == (raw["score"], raw["normalizedScore"], raw["matchLevel"])
    assert (top.coverage, top.matched_tokens, top.superseded_by) == (raw["coverage"], raw["matchedTokens"], raw["supersededBy"])
    assert top.breakdown == raw["scoreBreakdown"]
    assert top.record is not None and top.record["id"] == top.id
    assert top.id == "py-001" and top.locator.startswith("data/experiences/")
    assert [r.id for r in response] == [r["id"] for r in data["results"]]
    # to_dict() is a copy: changing it changes nothing.
    data["results"].clear()
    assert response.to_dict()["results"]


def test_record_absent_without_full(sample_index: Path) -> None:
    response = reliora.Index.open(sample_index).search("pip install", now=NOW)
    assert all(r.record is None for r in response.results)
    assert response.explain is None


def test_now_as_datetime(sample_index: Path) -> None:
    index = reliora.Index.open(sample_index)
    as_text = index.search("docker cache", profile="decay", now=NOW)
    utc = datetime.datetime(2026, 6, 1, tzinfo=datetime.timezone.utc)
    assert index.search("docker cache", profile="decay", now=utc).to_dict() == as_text.to_dict()
    # The same instant at another offset ranks alike; `now` is reported as given.
    plus_two = utc.astimezone(datetime.timezone(datetime.timedelta(hours=2)))
    shifted = index.search("docker cache", profile="decay", now=plus_two)
    assert shifted.now == "2026-06-01T02:00:00+02:00"
    assert [r.id for r in shifted.results] == [r.id for r in as_text.results]
    with pytest.raises(reliora.InvalidOption):
        index.search("docker cache", now=datetime.datetime(2026, 6, 1))


def test_search_batch_equals_single_searches(sample_index: Path) -> None:
    index = reliora.Index.open(sample_index)
    queries = [case[0] or "ci" for case in CASES] * 3
    batch = index.search_batch(queries, now=NOW, profile="bm25f", limit=5)
    assert [r.to_dict() for r in batch] == [index.search(q, now=NOW, profile="bm25f", limit=5).to_dict() for q in queries]


def test_search_batch_error(sample_index: Path) -> None:
    index = reliora.Index.open(sample_index)
    with pytest.raises(reliora.EmptyQuery):
        index.search_batch(["docker", "   ", "git"])
    with pytest.raises(reliora.InvalidLimit):
        index.search_batch(["docker"], limit=0)
    assert index.search_batch([]) == []


def test_threads_share_one_index(sample_index: Path) -> None:
    index = reliora.Index.open(sample_index)
    queries = [case[0] or "ci" for case in CASES] * 4
    expected = [index.search(q, now=NOW).to_dict() for q in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda q: index.search(q, now=NOW).to_dict(), queries))
    assert got == expected


def test_get(sample_index: Path, cli: Cli) -> None:
    index = reliora.Index.open(sample_index)
    assert index.get("py-001") == cli.ok("show", "py-001", index=sample_index)
    locator = index.search("pip install", now=NOW).results[0].locator
    assert index.get(locator)["id"] == "py-001"
    with pytest.raises(reliora.NotFound) as caught:
        index.get("no-such-id")
    assert caught.value.code == "not_found"


def test_build_report_equals_cli(tmp_path: Path, cli: Cli) -> None:
    report = reliora.Index.build(tmp_path / "py", DATA)
    expected = cli.ok("build", "--input", str(DATA), index=tmp_path / "cli")
    got = report.to_dict()
    assert got.pop("index") == str(tmp_path / "py") and expected.pop("index") == str(tmp_path / "cli")
    assert got == expected
    assert report.records == expected["records"] > 0 and report.terms == expected["terms"]
    assert (report.generation, report.stem, report.dropped_recorded, report.skipped) == (1, False, 0, [])
    stemmed = reliora.Index.build(tmp_path / "stemmed", [DATA], stem=True)
    assert stemmed.stem


def test_build_options(tmp_path: Path, cli: Cli) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        '{"_id": "d1", "title": "cargo build fails", "text": "linker cc not found"}\n'
        '{"_id": "d2", "title": "", "text": ""}\n'
        '{"_id": "d3", "title": "npm ci slow", "text": "cache the store"}\n',
        encoding="utf-8",
    )
    with pytest.raises(reliora.InvalidRecord) as caught:
        reliora.Index.build(tmp_path / "a", corpus, field_map={"_id": "id", "text": "problems"})
    status, answer = cli.run("build", "--input", str(corpus), "--field-map", "_id=id", "--field-map", "text=problems",
                             index=tmp_path / "b")
    assert (status, answer["error"], answer["message"]) == (2, caught.value.code, caught.value.message)
    report = reliora.Index.build(tmp_path / "a", corpus, field_map=["_id=id", "text=problems"], skip_invalid=True)
    assert report.records == 2 and len(report.skipped) == 1 and report.skipped[0]["locator"].endswith(":2")
    assert reliora.Index.open(tmp_path / "a").search("linker").results[0].id == "d1"
    # Over recorded writes a build refuses unless replace=True.
    reliora.Writer(tmp_path / "a").record({"title": "a recorded experience about linkers"})
    with pytest.raises(reliora.Error):
        reliora.Index.build(tmp_path / "a", corpus, field_map=["_id=id", "text=problems"], skip_invalid=True)
    replaced = reliora.Index.build(tmp_path / "a", corpus, field_map=["_id=id", "text=problems"], skip_invalid=True,
                                   replace=True)
    assert replaced.dropped_recorded == 1


def test_path_and_repr(sample_index: Path) -> None:
    index = reliora.Index(sample_index)
    assert index.path == os.fspath(sample_index)
    assert repr(index) == f"Index({os.fspath(sample_index)!r})"
    assert REPO.is_dir()
