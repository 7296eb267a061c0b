"""Fixtures: the sample data (``data/``), an index built from it by the Python API, and the
``reliora`` command line (``$RELIORA_BIN``, else the debug binary ``cargo test`` builds) whose
JSON the Python answers must equal."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import reliora

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data" / "experiences"

# A fixed reference time, so that answers (and fingerprints) are reproducible.
NOW = "2026-06-01T00:00:00Z"


def cli_binary() -> Path:
    """The command line the answers are compared with."""
    path = Path(os.environ.get("RELIORA_BIN", REPO / "target" / "debug" / "reliora"))
    if not path.is_file():
        pytest.fail(f"the reliora binary {path} is missing: run `cargo build` or set RELIORA_BIN")
    return path


class Cli:
    """Runs ``reliora --format json …`` and parses its answer."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def run(self, *args: str, index: Path | None = None, stdin: str | None = None) -> tuple[int, Any]:
        """Exit status and the parsed JSON of stdout (``None`` when it is empty)."""
        argv = [str(self.binary), "--format", "json"]
        if index is not None:
            argv += ["--index", str(index)]
        done = subprocess.run(argv + list(args), input=stdin, capture_output=True, text=True, check=False)
        out = done.stdout.strip()
        return done.returncode, (json.loads(out) if out else None)

    def ok(self, *args: str, index: Path | None = None, stdin: str | None = None) -> Any:
        """The JSON answer of a command that must succeed."""
        status, answer = self.run(*args, index=index, stdin=stdin)
        assert status == 0, (args, answer)
        return answer


@pytest.fixture(scope="session")
def cli() -> Cli:
    """The command line."""
    return Cli(cli_binary())


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of the sample data, built once by the Python API; tests only read it."""
    path = tmp_path_factory.mktemp("sample") / "index"
    # Relative inputs, so locators read `data/experiences/…` as in the README.
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        reliora.Index.build(path, [Path("data") / "experiences"])
    finally:
        os.chdir(cwd)
    return path


@pytest.fixture()
def scratch_index(sample_index: Path, tmp_path: Path) -> Path:
    """A private copy of the sample index, for tests that write."""
    path = tmp_path / "index"
    shutil.copytree(sample_index, path)
    return path
