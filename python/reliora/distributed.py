"""Sharded builds and exact distributed search on `Ray <https://www.ray.io>`_.

One collection is split into shards by a stable hash of each record's id
(:func:`shard_of`); each shard is an ordinary index directory. :func:`build_sharded`
builds the shards as Ray tasks in parallel and writes a small shard map;
:class:`ShardedIndex` holds each shard in a Ray actor and answers every search exactly as
one index over the same records would — same ids, order, scores and counts, for every
profile and option — in two phases:

1. each shard reports what the profile needs of the whole collection (``bm25f``'s
   document frequencies and field lengths, the entities some record names, ``recency``'s
   best relevance) and who supersedes whom; the driver adds them up;
2. each shard scores its records with those values and sends its candidates before the
   post-steps — for a page-bounded search only its best ones, with a bound on the rest;
   the driver runs the post-steps (supersession, MMR), ``min_score``, ``limit`` and the
   token budget over the union, asking a shard again deeper when its unsent candidates
   could still reach the page.

Writes go to the shard that owns the id; ``record``'s duplicate warnings are gathered
from every shard. Needs Ray: ``pip install 'reliora[ray]'``.

.. code-block:: python

    import ray
    from reliora.distributed import ShardedIndex, build_sharded

    ray.init()
    build_sharded("records.jsonl", "memory", shards=4)
    index = ShardedIndex("memory")
    print(index.search("docker cache", profile="bm25f").results[0].id)
"""

from __future__ import annotations

import datetime as _datetime
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any

try:
    # Typed when the extra is installed; without it this module only raises the error below.
    import ray  # type: ignore[import-not-found, unused-ignore]
    import ray.exceptions  # type: ignore[import-not-found, unused-ignore]
except ImportError:
    raise ImportError("reliora.distributed needs Ray: pip install 'reliora[ray]'") from None

from . import (
    DeleteResult,
    Error,
    FeedbackResult,
    InvalidOption,
    RecordResult,
    SearchResponse,
    StrPath,
    _field_map_specs,
    _reliora,
    _search_options,
)

__all__ = [
    "SHARD_MAP",
    "ShardUnavailable",
    "ShardedBuildReport",
    "ShardedIndex",
    "build_sharded",
    "shard_of",
]

#: The shard map's file name inside a sharded collection's directory.
SHARD_MAP = "reliora-shards.json"

#: How many times deeper a shard is asked again when its unsent candidates could reach the page.
_DEEPER = 4


class ShardUnavailable(Error):
    """A shard could not answer (its actor or node died): the search names it rather than
    answer from the other shards alone (``shard_unavailable``)."""

    code = "shard_unavailable"

    def __init__(self, shard: int, path: str, cause: BaseException) -> None:
        super().__init__(f"shard {shard} ({path}) is unavailable: {type(cause).__name__}: {cause}")
        self.shard = shard
        self.path = path


def shard_of(id: str, shards: int) -> int:
    """The shard of ``shards`` that owns the record ``id``: the first eight bytes of the id's
    SHA-256, big-endian, modulo ``shards`` — the routing of :func:`build_sharded` and of
    :class:`ShardedIndex`'s writes."""
    return int(_reliora.shard_of(id, shards))


def _unwrapped(error: BaseException) -> BaseException:
    """The library's own exception when a Ray task or actor call raised one."""
    cause = getattr(error, "cause", None)
    return cause if isinstance(cause, Error) else error


@ray.remote
def _build_shard(
    out: str,
    inputs: list[str],
    field_map: list[str],
    stem: bool,
    skip_invalid: bool,
    replace: bool,
    shard: int,
    count: int,
) -> str:
    return str(_reliora.build(out, inputs, field_map, stem, skip_invalid, replace, (shard, count)))


class ShardedBuildReport:
    """What :func:`build_sharded` did: ``to_dict()`` has ``index`` (the directory),
    ``shards`` (each shard's build report, in shard order), ``records`` (in all), and
    ``skipped`` (the records ``skip_invalid`` left out, once each)."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    @property
    def index(self) -> str:
        return str(self._data["index"])

    @property
    def records(self) -> int:
        return int(self._data["records"])

    @property
    def skipped(self) -> list[dict[str, str]]:
        return list(self._data["skipped"])

    @property
    def shards(self) -> list[dict[str, Any]]:
        return list(self._data["shards"])

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(self._data))

    def __repr__(self) -> str:
        return f"ShardedBuildReport(index={self.index!r}, records={self.records}, shards={len(self.shards)})"


def _input_paths(inputs: StrPath | Iterable[StrPath]) -> list[str]:
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    return [os.path.abspath(os.fspath(p)) for p in inputs]


def build_sharded(
    inputs: StrPath | Iterable[StrPath],
    out_dir: StrPath,
    shards: int,
    *,
    field_map: Mapping[str, str] | Iterable[str] | None = None,
    stem: bool = False,
    skip_invalid: bool = False,
    replace: bool = False,
) -> ShardedBuildReport:
    """Builds ``inputs`` (JSON Lines or JSON array files, or directories of them) into
    ``shards`` index directories under ``out_dir`` (``shard-0000``, …), one Ray task each, in
    parallel, and writes the shard map ``out_dir/reliora-shards.json``. Each record goes to
    :func:`shard_of` its id. Every task reads all the inputs, so a duplicate id or an invalid
    record raises (or, with ``skip_invalid``, is reported) exactly as ``Index.build`` does,
    located in the original file. ``out_dir`` and the inputs must be reachable at the same
    paths from every Ray node (a shared file system on a multi-machine cluster)."""
    if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
        raise InvalidOption(f"shards {shards!r}: a sharded build needs a whole number of shards, at least 1")
    out = os.path.abspath(os.fspath(out_dir))
    os.makedirs(out, exist_ok=True)
    paths = _input_paths(inputs)
    specs = _field_map_specs(field_map)
    names = [f"shard-{i:04}" for i in range(shards)]
    tasks = [
        _build_shard.remote(os.path.join(out, name), paths, specs, stem, skip_invalid, replace, i, shards)
        for i, name in enumerate(names)
    ]
    try:
        reports = [json.loads(text) for text in ray.get(tasks)]
    except ray.exceptions.RayTaskError as error:
        raise _unwrapped(error) from None
    shard_map = {"format": 1, "routing": "sha256-u64-mod", "stem": stem, "shards": names}
    _write_atomically(os.path.join(out, SHARD_MAP), json.dumps(shard_map, indent=2) + "\n")
    return ShardedBuildReport(
        {
            "index": out,
            "records": sum(int(r["records"]) for r in reports),
            "skipped": reports[0]["skipped"],
            "shards": reports,
        }
    )


def _write_atomically(path: str, text: str) -> None:
    directory = os.path.dirname(path)
    handle, temporary = tempfile.mkstemp(prefix=".reliora-shards.", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


class _Shard:
    """One shard's index, opened once, held by a Ray actor (:data:`_ShardActor`); every call
    releases the GIL in the library."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._reader = _reliora.Reader.open(path)

    def pid(self) -> int:
        return os.getpid()

    def node_ip(self) -> str:
        return str(ray.util.get_node_ip_address())

    def statistics(self, query: str, options: list[tuple[str, str | None]]) -> tuple[str, str]:
        return (self._reader.collection_statistics(query, options), self._reader.superseded_by())

    def candidates(self, query: str, options: list[tuple[str, str | None]], shard_query: str) -> str:
        return str(self._reader.shard_candidates(query, options, shard_query))

    def get(self, id_or_locator: str) -> tuple[str, str]:
        return self._reader.get(id_or_locator)

    def similar(self, text: str) -> str:
        return str(_reliora.similar(self._path, text))

    def record(self, text: str, warnings: str) -> str:
        return str(_reliora.record_with_warnings(self._path, text, warnings))

    def feedback(self, id: str, outcome: str) -> str:
        return str(_reliora.feedback(self._path, id, outcome))

    def delete(self, id: str) -> str:
        return str(_reliora.delete(self._path, id))


_ShardActor = ray.remote(_Shard)


class ShardedIndex:
    """A sharded collection (a directory :func:`build_sharded` wrote, or its shard map file)
    held by one Ray actor per shard. :meth:`search` takes the keyword arguments of
    ``reliora.Index.search`` and answers as one index over every shard's records;
    :meth:`record`, :meth:`feedback` and :meth:`delete` go to the shard that owns the id.
    A shard that cannot answer raises :class:`ShardUnavailable` naming it — never an
    answer from the other shards alone. ``actor_options`` are passed to Ray for each actor
    (``num_cpus``, ``max_concurrency``, a scheduling strategy, …)."""

    def __init__(self, shard_map: StrPath, *, actor_options: Mapping[str, Any] | None = None) -> None:
        path = os.path.abspath(os.fspath(shard_map))
        if os.path.isdir(path):
            path = os.path.join(path, SHARD_MAP)
        try:
            with open(path, encoding="utf-8") as file:
                data = json.load(file)
            names = data["shards"]
            if data.get("format") != 1 or not isinstance(names, list) or not names:
                raise ValueError("expected format 1 and a non-empty list of shards")
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise InvalidOption(f"{path}: not a reliora shard map: {error}") from None
        root = os.path.dirname(path)
        self._paths = [os.path.join(root, str(name)) for name in names]
        options = {"max_concurrency": 4, "scheduling_strategy": "SPREAD", **dict(actor_options or {})}
        self._actors: list[Any] = [_ShardActor.options(**options).remote(p) for p in self._paths]

    @property
    def shards(self) -> list[str]:
        """The shard directories, in shard order."""
        return list(self._paths)

    def shard_of(self, id: str) -> int:
        """The shard that owns ``id``."""
        return shard_of(id, len(self._paths))

    def _gather(self, calls: Mapping[int, Any]) -> dict[int, Any]:
        """The answers of remote calls by shard; a library error re-raised as itself, a dead
        actor or node as :class:`ShardUnavailable` naming the first such shard."""
        out: dict[int, Any] = {}
        for shard, ref in calls.items():
            try:
                out[shard] = ray.get(ref)
            except ray.exceptions.RayTaskError as error:
                cause = _unwrapped(error)
                if isinstance(cause, Error):
                    raise cause from None
                raise ShardUnavailable(shard, self._paths[shard], error) from None
            except ray.exceptions.RayError as error:
                raise ShardUnavailable(shard, self._paths[shard], error) from None
        return out

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
        """Searches every shard and merges, as ``reliora.Index.search`` over one index of
        all their records. ``now`` defaults to the driver's clock, read once, so that every
        shard ages records from the same instant. The fingerprint names every shard's
        generation. ``config`` must be readable at the same path on the driver and every node."""
        if now is None:
            now = _datetime.datetime.now(_datetime.timezone.utc)
        options = _search_options(
            limit, profile, tags, project_context, type, now, min_score, explain, full,
            include_superseded, candidates, mmr, token_budget, entities, rerank, backend, config,
        )
        every = range(len(self._actors))
        first = self._gather({s: self._actors[s].statistics.remote(query, options) for s in every})
        statistics = json.loads(_reliora.combine_statistics([first[s][0] for s in every]))
        superseded_by = json.loads(_reliora.combine_superseded_by([first[s][1] for s in every]))
        depth = max(1, min(int(limit), 200)) if isinstance(limit, int) else 1
        depths = {s: depth for s in every}

        def ask(shards: Iterable[int]) -> dict[int, str]:
            calls = {}
            for s in shards:
                shard_query = json.dumps(
                    {"statistics": statistics, "supersededBy": superseded_by, "depth": depths[s]}
                )
                calls[s] = self._actors[s].candidates.remote(query, options, shard_query)
            return self._gather(calls)

        parts = ask(every)
        merge_query = json.dumps({"statistics": statistics, "supersededBy": superseded_by, "depth": None})
        while True:
            response, deeper = _reliora.merge(query, options, merge_query, [parts[s] for s in every])
            if response is not None:
                return SearchResponse(json.loads(response))
            for s in deeper:
                depths[s] *= _DEEPER
            parts.update(ask(deeper))

    def get(self, id: str) -> dict[str, Any]:
        """The live record with this id, from the shard that owns it."""
        shard = self.shard_of(id)
        text, _locator = self._gather({shard: self._actors[shard].get.remote(id)})[shard]
        return dict(json.loads(text))

    def record(self, record: Mapping[str, Any] | str) -> RecordResult:
        """Adds (or replaces) a record on the shard that owns its id. ``warnings`` are the
        first three similar records over every shard (SPEC §8), by score then id."""
        text = record if isinstance(record, str) else json.dumps(record, ensure_ascii=False, allow_nan=False)
        shard = self.shard_of(_reliora.record_id(text))
        every = range(len(self._actors))
        found = self._gather({s: self._actors[s].similar.remote(text) for s in every})
        warnings = [w for s in every for w in json.loads(found[s])]
        warnings.sort(key=lambda w: (-float(w["score"]), w["id"].encode("utf-8")))
        chosen = json.dumps(warnings[:3])
        report = self._gather({shard: self._actors[shard].record.remote(text, chosen)})[shard]
        return RecordResult(json.loads(report))

    def feedback(self, id: str, outcome: str) -> FeedbackResult:
        """Adds one to the record's count of ``outcome``, on the shard that owns ``id``."""
        if outcome == "not_applicable":
            outcome = "not-applicable"
        shard = self.shard_of(id)
        return FeedbackResult(json.loads(self._gather({shard: self._actors[shard].feedback.remote(id, outcome)})[shard]))

    def delete(self, id: str) -> DeleteResult:
        """Removes the record from the shard that owns ``id``."""
        shard = self.shard_of(id)
        return DeleteResult(json.loads(self._gather({shard: self._actors[shard].delete.remote(id)})[shard]))

    def actors(self) -> list[Any]:
        """The shard actors, in shard order (to place, monitor or kill them)."""
        return list(self._actors)

    def __repr__(self) -> str:
        return f"ShardedIndex(shards={len(self._paths)})"
