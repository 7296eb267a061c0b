"""Reliora for Python: an embedded search engine for the experience memory of AI coding agents.

Build an index from JSON exports, search it in-process, record what an agent learned, and
report how advice worked — the library the ``reliora`` command line runs, with the same
answers (``SearchResponse.to_dict()`` equals ``reliora search --format json``) and the same
error codes (each an exception class under :class:`Error`)::

    import reliora

    reliora.Index.build("memory", ["experiences.jsonl"])
    index = reliora.Index.open("memory")
    for hit in index.search("address already in use", tags=["ci"], limit=5).results:
        print(hit.id, hit.score, hit.match_level, hit.title)

    writer = reliora.Writer("memory")
    writer.feedback("ci-1", "success")

The GIL is released while an index is built, searched or written, so threads search in
parallel; an :class:`Index` may be shared between threads.
"""

from __future__ import annotations

import copy
import datetime as _datetime
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from . import _reliora
from . import _errors
from ._errors import (
    EmptyQuery,
    Error,
    IndexDamaged,
    InvalidCandidates,
    InvalidInput,
    InvalidLimit,
    InvalidMinScore,
    InvalidOption,
    InvalidProjectContext,
    InvalidRecord,
    InvalidTag,
    InvalidTokenBudget,
    IoError,
    NotFound,
    UnknownProfile,
)

__all__ = [
    "Index",
    "Writer",
    "SearchResponse",
    "SearchResult",
    "Counts",
    "BuildReport",
    "RecordResult",
    "SimilarExperience",
    "FeedbackResult",
    "DeleteResult",
    "CompactResult",
    "EvalReport",
    "eval_beir",
    # The exceptions, as _errors lists them.
    *(name for name in _errors.__all__ if name != "from_code"),
]

__version__: str = _reliora.__version__

StrPath = Union[str, "os.PathLike[str]"]


class _Report:
    """A library answer: attributes in snake_case, and :meth:`to_dict` giving the JSON the
    command line prints for it (camelCase keys)."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def to_dict(self) -> dict[str, Any]:
        """The answer as the command line's JSON (``--format json``), a fresh copy."""
        return copy.deepcopy(self._data)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._data == self._data  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"


class Counts(_Report):
    """How many records matched (SPEC §7): ``candidates`` split into ``strong``, ``moderate``
    and ``weak``, and ``filtered``, the live records a filter removed."""

    __slots__ = ("candidates", "strong", "moderate", "weak", "filtered")

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.candidates: int = data["candidates"]
        self.strong: int = data["strong"]
        self.moderate: int = data["moderate"]
        self.weak: int = data["weak"]
        self.filtered: int = data["filtered"]


class SearchResult(_Report):
    """One result: ``id``, ``locator``, ``title`` (``None`` when the record has none),
    ``score``, ``normalized_score`` (0–1), ``match_level`` (``strong``, ``moderate`` or
    ``weak``), ``coverage``, ``matched_tokens`` (in query order), ``superseded_by``,
    ``breakdown`` (the profile's score breakdown, camelCase keys as in the JSON) and
    ``record`` (the whole record with ``full=True``, else ``None``)."""

    __slots__ = (
        "id",
        "locator",
        "title",
        "score",
        "normalized_score",
        "match_level",
        "coverage",
        "matched_tokens",
        "superseded_by",
        "breakdown",
        "record",
    )

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.id: str = data["id"]
        self.locator: str = data["locator"]
        self.title: str | None = data["title"]
        self.score: float = data["score"]
        self.normalized_score: float = data["normalizedScore"]
        self.match_level: str = data["matchLevel"]
        self.coverage: float = data["coverage"]
        self.matched_tokens: list[str] = data["matchedTokens"]
        self.superseded_by: str | None = data["supersededBy"]
        self.breakdown: dict[str, Any] = data["scoreBreakdown"]
        self.record: dict[str, Any] | None = data.get("record")


class SearchResponse(_Report):
    """The answer to one search (SPEC §7): the ``results`` in rank order, ``counts``,
    ``notices`` (clamped options, a degraded index, non-default settings), the
    ``fingerprint`` (equal fingerprints promise equal results), the ``query``, its ``tokens``
    and ``dropped_tokens``, the ``analyzer``, ``profile``, reference time ``now``, the
    ``backend`` (``index`` or ``scan``) and whether it was ``degraded``, and ``explain`` (a
    dict, with ``explain=ID``). :meth:`to_dict` is ``reliora search``'s JSON."""

    __slots__ = (
        "query",
        "tokens",
        "dropped_tokens",
        "analyzer",
        "profile",
        "now",
        "backend",
        "degraded",
        "notices",
        "counts",
        "fingerprint",
        "results",
        "explain",
    )

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.query: str = data["query"]
        self.tokens: list[str] = data["tokens"]
        self.dropped_tokens: list[str] = data["droppedTokens"]
        self.analyzer: str = data["analyzer"]
        self.profile: str = data["profile"]
        self.now: str = data["now"]
        self.backend: str = data["backend"]
        self.degraded: bool = data["degraded"]
        self.notices: list[str] = data["notices"]
        self.counts: Counts = Counts(data["counts"])
        self.fingerprint: str = data["fingerprint"]
        self.results: list[SearchResult] = [SearchResult(r) for r in data["results"]]
        self.explain: dict[str, Any] | None = data.get("explain")

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Any:
        return iter(self.results)


class BuildReport(_Report):
    """What a build did: the ``index`` directory, ``records`` indexed, ``skipped`` (each a
    dict with ``locator`` and ``message``, with ``skip_invalid=True``), distinct ``terms``,
    the new ``generation``, whether tokens were stemmed (``stem``), ``bytes`` written and
    ``dropped_recorded`` (records written by ``record`` that ``replace=True`` dropped)."""

    __slots__ = ("index", "records", "skipped", "terms", "generation", "stem", "bytes", "dropped_recorded")

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.index: str = data["index"]
        self.records: int = data["records"]
        self.skipped: list[dict[str, str]] = data["skipped"]
        self.terms: int = data["terms"]
        self.generation: int = data["generation"]
        self.stem: bool = data["stem"]
        self.bytes: int = data["bytes"]
        self.dropped_recorded: int = data["droppedRecorded"]


class SimilarExperience(_Report):
    """A warning of :meth:`Writer.record`: a similar record already there (``code`` is
    ``SIMILAR_EXPERIENCE_FOUND``) with its ``id``, ``locator``, ``match_level``, ``score`` and
    ``title``. Warnings never block the save."""

    __slots__ = ("code", "id", "locator", "match_level", "score", "title")

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.code: str = data["code"]
        self.id: str = data["id"]
        self.locator: str = data["locator"]
        self.match_level: str = data["matchLevel"]
        self.score: float = data["score"]
        self.title: str | None = data["title"]


class RecordResult(_Report):
    """What :meth:`Writer.record` did: the record's ``id`` (given or derived), its
    ``locator``, whether it ``replaced`` a live record with the same id, and up to three
    ``warnings`` about similar records."""

    __slots__ = ("id", "locator", "replaced", "warnings")

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.id: str = data["id"]
        self.locator: str = data["locator"]
        self.replaced: bool = data["replaced"]
        self.warnings: list[SimilarExperience] = [SimilarExperience(w) for w in data["warnings"]]


class FeedbackResult(_Report):
    """What :meth:`Writer.feedback` did: the ``id``, the ``outcome`` added and the
    ``feedback`` counts after adding it (camelCase keys as in the JSON)."""

    __slots__ = ("id", "outcome", "feedback")

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.id: str = data["id"]
        self.outcome: str = data["outcome"]
        self.feedback: dict[str, int] = data["feedback"]


class DeleteResult(_Report):
    """What :meth:`Writer.delete` did: the ``id`` removed (``deleted`` is always true)."""

    __slots__ = ("id", "deleted")

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.id: str = data["id"]
        self.deleted: bool = data["deleted"]


class CompactResult(_Report):
    """What :meth:`Writer.compact` did: the new ``generation``, the live ``records`` in it and
    the ``log_entries`` folded in."""

    __slots__ = ("generation", "records", "log_entries")

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.generation: int = data["generation"]
        self.records: int = data["records"]
        self.log_entries: int = data["logEntries"]


class EvalReport(_Report):
    """The metrics of :func:`eval_beir`, averaged over the judged queries: ``ndcg_at_10``,
    ``recall_at_10``, ``recall_at_100``, ``mrr_at_10``, ``queries_per_second``, with the
    ``documents`` indexed, ``skipped`` documents, judged ``queries``, the ``profile``,
    ``stem`` and ``build_seconds``. :meth:`to_dict` is ``reliora eval``'s JSON."""

    __slots__ = (
        "dataset",
        "split",
        "profile",
        "stem",
        "documents",
        "skipped",
        "queries",
        "ndcg_at_10",
        "recall_at_10",
        "recall_at_100",
        "mrr_at_10",
        "queries_per_second",
        "build_seconds",
    )

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.dataset: str = data["dataset"]
        self.split: str = data["split"]
        self.profile: str = data["profile"]
        self.stem: bool = data["stem"]
        self.documents: int = data["documents"]
        self.skipped: int = data["skipped"]
        self.queries: int = data["queries"]
        self.ndcg_at_10: float = data["nDCG@10"]
        self.recall_at_10: float = data["Recall@10"]
        self.recall_at_100: float = data["Recall@100"]
        self.mrr_at_10: float = data["MRR@10"]
        self.queries_per_second: float = data["queriesPerSecond"]
        self.build_seconds: float = data["buildSeconds"]


def _strings(value: str | Iterable[str]) -> list[str]:
    """A single string as a one-item list (``tags="ci"`` means one tag), else the items."""
    return [value] if isinstance(value, str) else list(value)


def _number(value: Any) -> str:
    """A number as the command line would be given it (``repr`` keeps every digit)."""
    return repr(value) if isinstance(value, float) else str(value)


def _rfc3339(now: _datetime.datetime | str) -> str:
    """``now`` as RFC 3339 text: a string as given, an aware ``datetime`` with ``Z`` for UTC."""
    if isinstance(now, str):
        return now
    if not isinstance(now, _datetime.datetime):
        raise InvalidOption(f"now {now!r}: expected a datetime or an RFC 3339 string")
    offset = now.utcoffset()
    if offset is None:
        raise InvalidOption(f"now {now.isoformat()!r}: a datetime without a timezone is ambiguous")
    text = now.isoformat()
    if offset == _datetime.timedelta(0):
        text = text[: -len("+00:00")] + "Z"
    return text


def _search_options(
    limit: int,
    profile: str,
    tags: str | Iterable[str],
    project_context: str | None,
    type: str | None,
    now: _datetime.datetime | str | None,
    min_score: float | None,
    explain: str | None,
    full: bool,
    include_superseded: bool,
    candidates: int | None,
    mmr: bool | None,
    token_budget: int | None,
    entities: str | Iterable[str],
    rerank: Mapping[str, float] | None,
    backend: str,
    config: StrPath | None,
) -> list[tuple[str, str | None]]:
    """The keyword arguments as command-line options, in signature order (the order they are
    validated in; the first invalid one raises)."""
    options: list[tuple[str, str | None]] = [("limit", _number(limit)), ("profile", str(profile))]
    options += [("tag", tag) for tag in _strings(tags)]
    if project_context is not None:
        options.append(("project-context", project_context))
    if type is not None:
        options.append(("type", type))
    if now is not None:
        options.append(("now", _rfc3339(now)))
    if min_score is not None:
        options.append(("min-score", _number(min_score)))
    if explain is not None:
        options.append(("explain", explain))
    if full:
        options.append(("full", None))
    if include_superseded:
        options.append(("include-superseded", None))
    if candidates is not None:
        options.append(("candidates", _number(candidates)))
    if mmr is not None:
        options.append(("mmr", "true" if mmr else "false"))
    if token_budget is not None:
        options.append(("token-budget", _number(token_budget)))
    options += [("entity", entity) for entity in _strings(entities)]
    if rerank is not None:
        options.append(("rerank", ",".join(f"{name}={_number(w)}" for name, w in rerank.items())))
    options.append(("backend", str(backend)))
    if config is not None:
        options.append(("config", os.fspath(config)))
    return options


class Index:
    """An index directory opened for searching. It sees every later write — by a
    :class:`Writer` in this process or by any other process (``reliora record``, another
    agent): each search first checks whether the index changed and reopens it if so. Safe to
    share between threads; searches release the GIL and run in parallel."""

    __slots__ = ("_reader",)

    def __init__(self, path: StrPath) -> None:
        """Opens the index in ``path``; the same as :meth:`Index.open`."""
        self._reader = _reliora.Reader.open(os.fspath(path))

    @classmethod
    def open(cls, path: StrPath) -> Index:
        """Opens the index in ``path`` (memory-mapped; O(1) work). Raises :class:`IndexDamaged`
        when the directory holds no index."""
        return cls(path)

    @staticmethod
    def build(
        path: StrPath,
        inputs: StrPath | Iterable[StrPath],
        *,
        field_map: Mapping[str, str] | Iterable[str] | None = None,
        stem: bool = False,
        skip_invalid: bool = False,
        replace: bool = False,
    ) -> BuildReport:
        """Builds a new index generation in ``path`` from JSON array files, JSON Lines files or
        directories of ``.json`` files, as ``reliora build`` does. ``field_map`` renames input
        keys (``{"_id": "id", "text": "problems"}`` or ``["_id=id", …]``); ``stem`` stems
        tokens; ``skip_invalid`` skips (and reports) invalid records instead of failing;
        ``replace`` builds over an index holding recorded writes (dropping them)."""
        if isinstance(inputs, (str, os.PathLike)):
            inputs = [inputs]
        paths = [os.fspath(p) for p in inputs]
        specs = _field_map_specs(field_map)
        return BuildReport(json.loads(_reliora.build(os.fspath(path), paths, specs, stem, skip_invalid, replace, None)))

    @property
    def path(self) -> str:
        """The index directory."""
        return str(self._reader.path)

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        profile: str = "standard",
        tags: str | Iterable[str] = (),
        project_context: str | None = None,
        type: str | None = None,
        now: _datetime.datetime | str | None = None,
        min_score: float | None = None,
        explain: str | None = None,
        full: bool = False,
        include_superseded: bool = False,
        candidates: int | None = None,
        mmr: bool | None = None,
        token_budget: int | None = None,
        entities: str | Iterable[str] = (),
        rerank: Mapping[str, float] | None = None,
        backend: str = "auto",
        config: StrPath | None = None,
    ) -> SearchResponse:
        """Searches the index, as ``reliora search QUERY`` with each keyword argument as the
        flag of the same name (``tags`` → ``--tag`` each, ``entities`` → ``--entity`` each,
        ``rerank={"relevance": 1, "salience": 0.5}`` → ``--rerank relevance=1,salience=0.5``,
        ``now`` a timezone-aware ``datetime`` or an RFC 3339 string). Options are validated in
        the order of this signature with the command line's rules; a bad one raises the
        :class:`Error` subclass of its SPEC code (:class:`InvalidLimit`, :class:`InvalidOption`,
        …), as does an empty query without a filter (:class:`EmptyQuery`)."""
        options = _search_options(
            limit, profile, tags, project_context, type, now, min_score, explain, full,
            include_superseded, candidates, mmr, token_budget, entities, rerank, backend, config,
        )
        return SearchResponse(json.loads(self._reader.search(query, options)))

    def search_batch(
        self,
        queries: Sequence[str],
        *,
        limit: int = 10,
        profile: str = "standard",
        tags: str | Iterable[str] = (),
        project_context: str | None = None,
        type: str | None = None,
        now: _datetime.datetime | str | None = None,
        min_score: float | None = None,
        explain: str | None = None,
        full: bool = False,
        include_superseded: bool = False,
        candidates: int | None = None,
        mmr: bool | None = None,
        token_budget: int | None = None,
        entities: str | Iterable[str] = (),
        rerank: Mapping[str, float] | None = None,
        backend: str = "auto",
        config: StrPath | None = None,
    ) -> list[SearchResponse]:
        """Searches every query with the same options (those of :meth:`search`), in parallel on
        all cores and on one snapshot of the index; the responses in query order. The first
        query (in query order) that fails raises its error."""
        options = _search_options(
            limit, profile, tags, project_context, type, now, min_score, explain, full,
            include_superseded, candidates, mmr, token_budget, entities, rerank, backend, config,
        )
        if isinstance(queries, str):
            queries = [queries]
        texts = self._reader.search_batch(list(queries), options)
        return [SearchResponse(json.loads(text)) for text in texts]

    def get(self, id_or_locator: str) -> dict[str, Any]:
        """The live record with this id or locator, as ``reliora show`` prints it. Raises
        :class:`NotFound`."""
        record, _locator = self._reader.get(id_or_locator)
        result: dict[str, Any] = json.loads(record)
        return result

    def __repr__(self) -> str:
        return f"Index({self.path!r})"


def _field_map_specs(field_map: Mapping[str, str] | Iterable[str] | None) -> list[str]:
    """``SRC=DST`` specs from a mapping or a list of specs."""
    if field_map is None:
        return []
    if isinstance(field_map, Mapping):
        return [f"{source}={target}" for source, target in field_map.items()]
    return _strings(field_map)


class Writer:
    """Writes to an index directory (SPEC §8) — ``record``, ``feedback``, ``delete`` and
    ``compact``, answering as the command line does. Each change is durable and visible to
    every later search, from any process, when the call returns. A directory without an index
    gets an empty one on the first ``record``. Several writers (threads, processes) may write
    one index at once: they take turns on its lock."""

    __slots__ = ("_path",)

    def __init__(self, path: StrPath) -> None:
        """A writer for the index directory ``path``."""
        self._path = os.fspath(path)

    @property
    def path(self) -> str:
        """The index directory."""
        return self._path

    def record(self, record: Mapping[str, Any] | str) -> RecordResult:
        """Adds a record (a mapping, or its JSON text) — or replaces the live record with its
        id — as ``reliora record``. Similar records already there come back as ``warnings``.
        Raises :class:`InvalidRecord` for a record SPEC §1 rejects."""
        text = record if isinstance(record, str) else json.dumps(record, ensure_ascii=False, allow_nan=False)
        return RecordResult(json.loads(_reliora.record(self._path, text)))

    def feedback(self, id: str, outcome: str) -> FeedbackResult:
        """Adds one to the record's count of ``outcome``: ``success``, ``partial``,
        ``failure``, ``not-applicable`` or ``outdated`` (``not_applicable`` is accepted too).
        Raises :class:`NotFound` for an unknown id, :class:`InvalidOption` for another
        outcome."""
        if outcome == "not_applicable":
            outcome = "not-applicable"
        return FeedbackResult(json.loads(_reliora.feedback(self._path, id, outcome)))

    def delete(self, id: str) -> DeleteResult:
        """Removes the record from every later search and export. Raises :class:`NotFound`
        for an unknown id."""
        return DeleteResult(json.loads(_reliora.delete(self._path, id)))

    def compact(self) -> CompactResult:
        """Merges segments and the record log into a new generation; results are unchanged."""
        return CompactResult(json.loads(_reliora.compact(self._path)))

    def __repr__(self) -> str:
        return f"Writer({self._path!r})"


def eval_beir(
    dir: StrPath,
    *,
    split: str = "test",
    profile: str = "standard",
    field_map: Mapping[str, str] | Iterable[str] | None = None,
    stem: bool = False,
    skip_invalid: bool = False,
    config: StrPath | None = None,
    rerank: Mapping[str, float] | None = None,
    candidates: int | None = None,
    mmr: bool | None = None,
    now: _datetime.datetime | str | None = None,
) -> EvalReport:
    """Measures relevance on a BEIR folder (``corpus.jsonl``, ``queries.jsonl``,
    ``qrels/SPLIT.tsv``), as ``reliora eval --beir DIR``: a temporary index, every judged query,
    nDCG@10, Recall@10, Recall@100, MRR@10 and queries per second."""
    options: list[tuple[str, str | None]] = [("profile", str(profile))]
    if config is not None:
        options.append(("config", os.fspath(config)))
    if rerank is not None:
        options.append(("rerank", ",".join(f"{name}={_number(w)}" for name, w in rerank.items())))
    if candidates is not None:
        options.append(("candidates", _number(candidates)))
    if mmr is not None:
        options.append(("mmr", "true" if mmr else "false"))
    if now is not None:
        options.append(("now", _rfc3339(now)))
    text = _reliora.eval_beir(os.fspath(dir), split, _field_map_specs(field_map), stem, skip_invalid, options)
    return EvalReport(json.loads(text))
