"""A usage example type-checked with ``mypy --strict`` against the stubs (CI, suite python):
every public call with its documented argument and result types. Not run."""

from __future__ import annotations

import datetime
from pathlib import Path

import reliora


def agent_loop(memory: Path, inputs: list[Path]) -> list[str]:
    report: reliora.BuildReport = reliora.Index.build(memory, inputs, field_map={"_id": "id"}, stem=False)
    records: int = report.records + report.terms + report.generation + report.bytes + report.dropped_recorded
    skipped: list[dict[str, str]] = report.skipped

    index = reliora.Index.open(memory)
    response: reliora.SearchResponse = index.search(
        "address already in use",
        limit=5,
        profile="decay",
        tags=("ci",),
        project_context="github actions",
        type="episodic",
        now=datetime.datetime.now(datetime.timezone.utc),
        min_score=0.2,
        explain="ci-1",
        full=True,
        include_superseded=False,
        candidates=50,
        mmr=True,
        token_budget=2000,
        entities=["docker"],
        rerank={"relevance": 1.0, "salience": 0.5},
        backend="auto",
    )
    counts: reliora.Counts = response.counts
    total: int = counts.candidates + counts.strong + counts.moderate + counts.weak + counts.filtered
    ids: list[str] = []
    for hit in response.results:
        score: float = hit.score + hit.normalized_score + hit.coverage
        title: str | None = hit.title
        level: str = hit.match_level
        tokens: list[str] = hit.matched_tokens
        ids.append(hit.id)
        _ = (score, title, level, tokens, hit.breakdown, hit.record, hit.superseded_by, hit.locator)
    notices: list[str] = response.notices
    fingerprint: str = response.fingerprint
    as_json: dict[str, object] = response.to_dict()
    batch: list[reliora.SearchResponse] = index.search_batch(["a", "b"], now="2026-01-01T00:00:00Z")
    record: dict[str, object] = index.get(ids[0])

    writer = reliora.Writer(memory)
    recorded: reliora.RecordResult = writer.record({"title": "Flaky port", "tags": ["ci"]})
    warnings: list[reliora.SimilarExperience] = recorded.warnings
    replaced: bool = recorded.replaced
    fed: reliora.FeedbackResult = writer.feedback(recorded.id, "success")
    gone: reliora.DeleteResult = writer.delete(recorded.id)
    compacted: reliora.CompactResult = writer.compact()
    metrics: reliora.EvalReport = reliora.eval_beir(memory, profile="bm25f", stem=True)
    ndcg: float = metrics.ndcg_at_10

    try:
        index.search("", limit=0)
    except reliora.InvalidLimit as error:
        code: str = error.code
        message: str = error.message
        _ = (code, message)
    except reliora.Error:
        pass
    _ = (records, skipped, total, notices, fingerprint, as_json, batch, record, warnings, replaced, fed, gone,
         compacted, ndcg, recorded.locator)
    return ids
