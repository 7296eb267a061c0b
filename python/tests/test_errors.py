"""Errors: each an exception class carrying SPEC §9's code, with the command line's code and
message for the same request."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import reliora
from conftest import NOW, Cli

# (query, keyword arguments, the same flags, the exception class)
CASES: list[tuple[str, dict[str, Any], list[str], type[reliora.Error]]] = [
    ("", {}, [], reliora.EmptyQuery),
    ("the of and", {}, [], reliora.EmptyQuery),
    ("docker", {"limit": 0}, ["--limit", "0"], reliora.InvalidLimit),
    ("docker", {"limit": -3}, ["--limit", "-3"], reliora.InvalidLimit),
    ("docker", {"min_score": 101}, ["--min-score", "101"], reliora.InvalidMinScore),
    ("docker", {"min_score": float("nan")}, ["--min-score", "nan"], reliora.InvalidMinScore),
    ("docker", {"min_score": -0.5}, ["--min-score", "-0.5"], reliora.InvalidMinScore),
    ("docker", {"candidates": 0}, ["--candidates", "0"], reliora.InvalidCandidates),
    ("docker", {"token_budget": 0}, ["--token-budget", "0"], reliora.InvalidTokenBudget),
    ("docker", {"project_context": " !! "}, ["--project-context", " !! "], reliora.InvalidProjectContext),
    ("docker", {"tags": ["ci", "--"]}, ["--tag", "ci", "--tag=--"], reliora.InvalidTag),
    ("docker", {"profile": "fastest"}, ["--profile", "fastest"], reliora.UnknownProfile),
    ("docker", {"type": "  "}, ["--type", "  "], reliora.InvalidOption),
    ("docker", {"now": "yesterday"}, ["--now", "yesterday"], reliora.InvalidOption),
    ("docker", {"backend": "gpu"}, ["--backend", "gpu"], reliora.InvalidOption),
    ("docker", {"rerank": {"relevance": float("inf")}}, ["--rerank", "relevance=inf"], reliora.InvalidOption),
    ("docker", {"entities": [" "]}, ["--entity", " "], reliora.InvalidOption),
    # Validated in signature order, as the command line validates in its order: the first wins.
    ("docker", {"limit": 0, "min_score": 500}, ["--limit", "0", "--min-score", "500"], reliora.InvalidLimit),
]


@pytest.mark.parametrize(("query", "kwargs", "flags", "kind"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_search_errors_equal_cli(
    sample_index: Path, cli: Cli, query: str, kwargs: dict[str, Any], flags: list[str], kind: type[reliora.Error]
) -> None:
    index = reliora.Index.open(sample_index)
    with pytest.raises(kind) as caught:
        index.search(query, **kwargs)
    status, answer = cli.run("search", query, *flags, index=sample_index)
    assert status == 2
    assert caught.value.code == answer["error"] == kind.code
    assert caught.value.message == answer["message"] == str(caught.value)
    assert isinstance(caught.value, reliora.InvalidInput) and isinstance(caught.value, ValueError)


def test_hierarchy() -> None:
    for kind in (reliora.InvalidRecord, reliora.InvalidOption, reliora.NotFound, reliora.IndexDamaged, reliora.IoError):
        assert issubclass(kind, reliora.Error)
    assert issubclass(reliora.NotFound, LookupError)
    assert not issubclass(reliora.IndexDamaged, ValueError)


def test_no_index_here(tmp_path: Path, cli: Cli) -> None:
    with pytest.raises(reliora.IndexDamaged) as caught:
        reliora.Index.open(tmp_path)
    status, answer = cli.run("search", "docker", index=tmp_path)
    assert (status, answer["error"], answer["message"]) == (1, "index_damaged", caught.value.message)


def test_damaged_index(scratch_index: Path, tmp_path: Path, cli: Cli) -> None:
    # A truncated postings file beside an intact store: searches fall back to a scan (SPEC §9),
    # backend="index" refuses with index_damaged, and a write answers as the command line's.
    (victim,) = scratch_index.glob("*.terms.post")
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    response = reliora.Index.open(scratch_index).search("docker cache", now=NOW)
    assert (response.backend, response.degraded) == ("scan", True) and response.notices
    assert response.to_dict() == cli.ok("search", "docker cache", "--now", NOW, index=scratch_index)
    with pytest.raises(reliora.IndexDamaged) as caught:
        reliora.Index.open(scratch_index).search("docker", backend="index")
    status, answer = cli.run("search", "docker", "--backend", "index", index=scratch_index)
    assert (status, answer["error"], answer["message"]) == (1, caught.value.code, caught.value.message)
    twin = tmp_path / "twin"
    shutil.copytree(scratch_index, twin)
    fed = reliora.Writer(scratch_index).feedback("py-001", "success")
    assert fed.to_dict() == cli.ok("feedback", "py-001", "--outcome", "success", index=twin)


def test_error_fields() -> None:
    error = reliora.InvalidLimit("--limit 0: must be at least 1")
    assert (error.code, error.message) == ("invalid_limit", "--limit 0: must be at least 1")
    assert reliora.Error("x", "custom").code == "custom"
