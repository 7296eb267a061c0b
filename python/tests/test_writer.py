"""Writing: record, feedback, delete and compact answer as the command line does; a reader
sees writes made by other processes."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import reliora
from conftest import NOW, Cli

RECORD = {
    "id": "py-new-1",
    "title": "pip install fails with externally-managed-environment in a container",
    "problems": ["error: externally-managed-environment"],
    "solution": "Create a venv first: python3 -m venv .venv",
    "tags": ["python", "pip"],
    "projectContext": "Debian 12 container",
}


def test_writes_equal_cli(scratch_index: Path, tmp_path: Path, cli: Cli) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(scratch_index, twin)
    writer = reliora.Writer(scratch_index)

    recorded = writer.record(RECORD)
    assert recorded.to_dict() == cli.ok("record", "-", index=twin, stdin=json.dumps(RECORD))
    assert (recorded.id, recorded.replaced) == ("py-new-1", False)
    assert recorded.locator and recorded.warnings, "a near-duplicate of py-001 is warned about"
    warning = recorded.warnings[0]
    assert (warning.code, warning.id) == ("SIMILAR_EXPERIENCE_FOUND", "py-001")
    assert warning.match_level in ("strong", "moderate") and warning.score > 0 and warning.title

    again = writer.record(json.dumps(RECORD))
    assert again.replaced and again.to_dict() == cli.ok("record", "-", index=twin, stdin=json.dumps(RECORD))

    fed = writer.feedback("py-001", "success")
    assert fed.to_dict() == cli.ok("feedback", "py-001", "--outcome", "success", index=twin)
    assert (fed.id, fed.outcome, fed.feedback["success"]) == ("py-001", "success", fed.feedback["success"])
    fed = writer.feedback("py-001", "not_applicable")
    assert fed.to_dict() == cli.ok("feedback", "py-001", "--outcome", "not-applicable", index=twin)

    deleted = writer.delete("py-new-1")
    assert deleted.to_dict() == cli.ok("delete", "py-new-1", index=twin)
    assert (deleted.id, deleted.deleted) == ("py-new-1", True)

    compacted = writer.compact()
    assert compacted.to_dict() == cli.ok("compact", index=twin)
    assert compacted.records > 0 and compacted.log_entries == 5 and compacted.generation >= 2

    # The same answers on both copies; only the fingerprint (it hashes the generation) differs.
    got = reliora.Index.open(scratch_index).search("pip install", now=NOW).to_dict()
    expected = cli.ok("search", "pip install", "--now", NOW, index=twin)
    got.pop("fingerprint"), expected.pop("fingerprint")
    assert got == expected


def test_writer_errors_equal_cli(scratch_index: Path, cli: Cli) -> None:
    writer = reliora.Writer(scratch_index)
    cases = [
        (lambda: writer.record({"title": "   "}), ["record", "-"], json.dumps({"title": "   "}), reliora.InvalidRecord),
        (lambda: writer.record({"title": "x", "salience": 3}), ["record", "-"], json.dumps({"title": "x", "salience": 3}),
         reliora.InvalidRecord),
        (lambda: writer.record('{"title": "x",'), ["record", "-"], '{"title": "x",', reliora.InvalidRecord),
        (lambda: writer.feedback("no-such-id", "success"), ["feedback", "no-such-id", "--outcome", "success"], None,
         reliora.NotFound),
        (lambda: writer.feedback("py-001", "great"), ["feedback", "py-001", "--outcome", "great"], None,
         reliora.InvalidOption),
        (lambda: writer.delete("no-such-id"), ["delete", "no-such-id"], None, reliora.NotFound),
    ]
    for call, argv, stdin, kind in cases:
        with pytest.raises(kind) as caught:
            call()
        status, answer = cli.run(*argv, index=scratch_index, stdin=stdin)
        assert status != 0 and answer["error"] == caught.value.code == kind.code, argv
        if argv[0] != "record":  # the command line names its input `<stdin>`
            assert answer["message"] == caught.value.message


def test_record_into_empty_directory(tmp_path: Path) -> None:
    writer = reliora.Writer(tmp_path / "fresh")
    assert writer.path == str(tmp_path / "fresh")
    result = writer.record({"title": "Tokio runtime panics inside async drop", "tags": ["rust"]})
    assert result.id.startswith("r-") and not result.replaced and result.warnings == []
    assert reliora.Index.open(tmp_path / "fresh").search("tokio").results[0].id == result.id


def _record_in_another_process(path: str, title: str) -> None:
    reliora.Writer(path).record({"id": title, "title": f"zebra {title} experience"})


def test_reader_sees_writes_of_other_processes(scratch_index: Path, cli: Cli) -> None:
    index = reliora.Index.open(scratch_index)
    assert index.search("zebra").results == []

    # The command line, another process.
    cli.ok("record", "-", index=scratch_index, stdin=json.dumps({"id": "z-cli", "title": "zebra crossing"}))
    assert [r.id for r in index.search("zebra").results] == ["z-cli"]

    # Python processes writing at once: nothing lost, everything seen.
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_record_in_another_process, args=(str(scratch_index), f"z-{n}")) for n in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert sorted(r.id for r in index.search("zebra").results) == ["z-0", "z-1", "z-2", "z-cli"]

    # A plain interpreter deleting one.
    code = f"import reliora; reliora.Writer({str(scratch_index)!r}).delete('z-1')"
    subprocess.run([sys.executable, "-c", code], check=True)
    assert sorted(r.id for r in index.search("zebra").results) == ["z-0", "z-2", "z-cli"]
    assert index.search("zebra").to_dict()["results"] == cli.ok("search", "zebra", index=scratch_index)["results"]
