"""Type stubs of the native module: paths, strings and JSON text (see ``reliora``)."""

import os
from typing import Union, final

_Path = Union[str, "os.PathLike[str]"]
_Options = list[tuple[str, Union[str, None]]]

__all__ = [
    "Reader",
    "build",
    "record",
    "feedback",
    "delete",
    "compact",
    "eval_beir",
    "record_id",
    "similar",
    "record_with_warnings",
    "shard_of",
    "combine_statistics",
    "combine_superseded_by",
    "merge",
    "__version__",
]

__version__: str

@final
class Reader:
    """An opened index directory that sees every later write."""

    @staticmethod
    def open(path: _Path) -> Reader:
        """Opens the index in ``path``."""
    @property
    def path(self) -> str:
        """The index directory."""
    def search(self, query: str, options: _Options) -> str:
        """One search: the response as JSON text."""
    def search_batch(self, queries: list[str], options: _Options) -> list[str]:
        """Several queries in parallel: the responses as JSON texts."""
    def get(self, id_or_locator: str) -> tuple[str, str]:
        """(record JSON, locator) of a live record."""
    def superseded_by(self) -> str:
        """This index's supersededBy map as a JSON object."""
    def collection_statistics(self, query: str, options: _Options) -> str:
        """Phase one of a sharded search on this shard: JSON."""
    def shard_candidates(self, query: str, options: _Options, shard_query: str) -> str:
        """Phase two of a sharded search on this shard: JSON."""

def build(
    path: _Path,
    inputs: list[str],
    field_map: list[str],
    stem: bool,
    skip_invalid: bool,
    replace: bool,
    shard: Union[tuple[int, int], None],
) -> str:
    """Builds an index generation (one shard of ``(index, count)`` when given): the report."""

def record_id(text: str) -> str:
    """The id of a record given as JSON text."""

def similar(path: _Path, text: str) -> str:
    """The similar records a record would be warned of in one index: JSON."""

def record_with_warnings(path: _Path, text: str, warnings: str) -> str:
    """Records one record reporting the warnings given (JSON): the report as JSON text."""

def shard_of(id: str, count: int) -> int:
    """The shard of ``count`` that owns ``id``."""

def combine_statistics(parts: list[str]) -> str:
    """Every shard's collection statistics (JSON), added up."""

def combine_superseded_by(parts: list[str]) -> str:
    """Every shard's supersededBy map (JSON), combined."""

def merge(query: str, options: _Options, shard_query: str, parts: list[str]) -> tuple[Union[str, None], list[int]]:
    """Merges the shards' candidates: (response JSON or None, shards to ask again deeper)."""

def record(path: _Path, text: str) -> str:
    """Records one record (JSON text): the report as JSON text."""

def feedback(path: _Path, id: str, outcome: str) -> str:
    """Adds one feedback outcome: the report as JSON text."""

def delete(path: _Path, id: str) -> str:
    """Deletes a record: the report as JSON text."""

def compact(path: _Path) -> str:
    """Compacts the index: the report as JSON text."""

def eval_beir(
    path: _Path, split: str, field_map: list[str], stem: bool, skip_invalid: bool, options: _Options
) -> str:
    """Evaluates a BEIR folder: the metrics as JSON text."""
