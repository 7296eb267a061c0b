"""Type stubs of the native module: paths, strings and JSON text (see ``reliora``)."""

import os
from typing import Union, final

_Path = Union[str, "os.PathLike[str]"]
_Options = list[tuple[str, Union[str, None]]]

__all__ = ["Reader", "build", "record", "feedback", "delete", "compact", "eval_beir", "__version__"]

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

def build(
    path: _Path, inputs: list[str], field_map: list[str], stem: bool, skip_invalid: bool, replace: bool
) -> str:
    """Builds an index generation: the report as JSON text."""

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
