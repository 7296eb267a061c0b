"""Type stubs of ``reliora`` (hand-written; checked against the module by ``stubtest`` in CI)."""

import datetime
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Union

from ._errors import EmptyQuery as EmptyQuery
from ._errors import Error as Error
from ._errors import IndexDamaged as IndexDamaged
from ._errors import InvalidCandidates as InvalidCandidates
from ._errors import InvalidInput as InvalidInput
from ._errors import InvalidLimit as InvalidLimit
from ._errors import InvalidMinScore as InvalidMinScore
from ._errors import InvalidOption as InvalidOption
from ._errors import InvalidProjectContext as InvalidProjectContext
from ._errors import InvalidRecord as InvalidRecord
from ._errors import InvalidTag as InvalidTag
from ._errors import InvalidTokenBudget as InvalidTokenBudget
from ._errors import IoError as IoError
from ._errors import NotFound as NotFound
from ._errors import UnknownProfile as UnknownProfile

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
    "Error",
    "InvalidInput",
    "EmptyQuery",
    "InvalidMinScore",
    "InvalidLimit",
    "InvalidCandidates",
    "InvalidTokenBudget",
    "InvalidProjectContext",
    "InvalidTag",
    "UnknownProfile",
    "InvalidRecord",
    "InvalidOption",
    "NotFound",
    "IndexDamaged",
    "IoError",
]

__version__: str

StrPath = Union[str, os.PathLike[str]]

def _field_map_specs(field_map: Mapping[str, str] | Iterable[str] | None) -> list[str]:
    """Field-map renames as ``SRC=DST`` specs (used by ``reliora.distributed``)."""

def _search_options(
    limit: int,
    profile: str,
    tags: str | Iterable[str],
    project_context: str | None,
    type: str | None,
    now: datetime.datetime | str | None,
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
    """Search keyword arguments as command-line options (used by ``reliora.distributed``)."""

class _Report:
    """A library answer with :meth:`to_dict`, the command line's JSON."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    def __init__(self, data: dict[str, Any]) -> None: ...
    def to_dict(self) -> dict[str, Any]:
        """The answer as the command line's JSON (``--format json``), a fresh copy."""
    def __eq__(self, other: object) -> bool: ...

class Counts(_Report):
    """How many records matched (SPEC §7)."""

    candidates: int
    strong: int
    moderate: int
    weak: int
    filtered: int

class SearchResult(_Report):
    """One result of a search."""

    id: str
    locator: str
    title: str | None
    score: float
    normalized_score: float
    match_level: str
    coverage: float
    matched_tokens: list[str]
    superseded_by: str | None
    breakdown: dict[str, Any]
    record: dict[str, Any] | None

class SearchResponse(_Report):
    """The answer to one search (SPEC §7)."""

    query: str
    tokens: list[str]
    dropped_tokens: list[str]
    analyzer: str
    profile: str
    now: str
    backend: str
    degraded: bool
    notices: list[str]
    counts: Counts
    fingerprint: str
    results: list[SearchResult]
    explain: dict[str, Any] | None
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[SearchResult]: ...

class BuildReport(_Report):
    """What a build did."""

    index: str
    records: int
    skipped: list[dict[str, str]]
    terms: int
    generation: int
    stem: bool
    bytes: int
    dropped_recorded: int

class SimilarExperience(_Report):
    """A warning of :meth:`Writer.record`: a similar record already there."""

    code: str
    id: str
    locator: str
    match_level: str
    score: float
    title: str | None

class RecordResult(_Report):
    """What :meth:`Writer.record` did."""

    id: str
    locator: str
    replaced: bool
    warnings: list[SimilarExperience]

class FeedbackResult(_Report):
    """What :meth:`Writer.feedback` did."""

    id: str
    outcome: str
    feedback: dict[str, int]

class DeleteResult(_Report):
    """What :meth:`Writer.delete` did."""

    id: str
    deleted: bool

class CompactResult(_Report):
    """What :meth:`Writer.compact` did."""

    generation: int
    records: int
    log_entries: int

class EvalReport(_Report):
    """The metrics of :func:`eval_beir`."""

    dataset: str
    split: str
    profile: str
    stem: bool
    documents: int
    skipped: int
    queries: int
    ndcg_at_10: float
    recall_at_10: float
    recall_at_100: float
    mrr_at_10: float
    queries_per_second: float
    build_seconds: float

class Index:
    """An index directory opened for searching; sees every later write, from any process."""

    def __init__(self, path: StrPath) -> None: ...
    @classmethod
    def open(cls, path: StrPath) -> Index:
        """Opens the index in ``path``."""
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
        """Builds a new index generation in ``path``, as ``reliora build``."""
    @property
    def path(self) -> str:
        """The index directory."""
    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        profile: str = "standard",
        tags: str | Iterable[str] = (),
        project_context: str | None = None,
        type: str | None = None,
        now: datetime.datetime | str | None = None,
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
        """Searches the index, as ``reliora search QUERY``."""
    def search_batch(
        self,
        queries: Sequence[str],
        *,
        limit: int = 10,
        profile: str = "standard",
        tags: str | Iterable[str] = (),
        project_context: str | None = None,
        type: str | None = None,
        now: datetime.datetime | str | None = None,
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
        """Searches every query in parallel; the responses in query order."""
    def get(self, id_or_locator: str) -> dict[str, Any]:
        """The live record with this id or locator."""

class Writer:
    """Writes to an index directory (SPEC §8)."""

    def __init__(self, path: StrPath) -> None: ...
    @property
    def path(self) -> str:
        """The index directory."""
    def record(self, record: Mapping[str, Any] | str) -> RecordResult:
        """Adds or replaces a record, as ``reliora record``."""
    def feedback(self, id: str, outcome: str) -> FeedbackResult:
        """Adds one to the record's count of ``outcome``."""
    def delete(self, id: str) -> DeleteResult:
        """Removes the record."""
    def compact(self) -> CompactResult:
        """Merges segments and the record log."""

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
    now: datetime.datetime | str | None = None,
) -> EvalReport:
    """Measures relevance on a BEIR folder, as ``reliora eval --beir DIR``."""
