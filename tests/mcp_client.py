"""`reliora mcp` driven by the official Python MCP client SDK (the `mcp` package) over stdio.

Run by .ci/run inside a virtual environment holding the pinned `mcp`
(tests/mcp_client_requirements.txt):

    python tests/mcp_client.py target/debug/reliora

It builds an index of the sample data with the CLI, then, once per connection mode of the client
(`auto`: the client picks the newest protocol the server speaks; `legacy`: the initialize
handshake), starts `reliora mcp`, lists the tools, and calls search, record, feedback and show,
including invalid arguments. The client validates each successful tool result against the
tool's declared output schema, so a result that does not match its schema fails here too; tool
errors carry their `{"error", "message"}` JSON as text content only.
Prints one line per check and a closing `N passed, N failed` line; exits 1 on any failure.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
NOW = "2026-01-01T00:00:00Z"


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, condition: bool, detail: Any = "") -> None:
        if condition:
            self.passed += 1
            print(f"ok: {name}")
        else:
            self.failed += 1
            print(f"FAILED: {name} {detail}")


def cli(binary: Path, index: Path, *args: str) -> Any:
    output = subprocess.run(
        [str(binary), "--format", "json", "--index", str(index), *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(output.stdout)


def error_code(result: Any) -> str | None:
    """The SPEC code of a tool error: its only content is a text block holding
    `{"error": CODE, "message": ...}` (no structured content, which would have to match the
    tool's output schema)."""
    if len(result.content) != 1 or result.content[0].type != "text":
        return None
    try:
        error = json.loads(result.content[0].text)
    except ValueError:
        return None
    if not isinstance(error, dict) or not error.get("message"):
        return None
    return error.get("error")


async def session(binary: Path, index: Path, mode: str, checks: Checks) -> None:
    params = StdioServerParameters(command=str(binary), args=["--index", str(index), "mcp"])
    tag = f"[{mode}]"
    async with Client(params, mode=mode, read_timeout_seconds=60) as client:
        checks.check(f"{tag} connected", True, client.protocol_version)
        print(f"{tag} protocol version {client.protocol_version}")
        instructions = client.instructions or ""
        checks.check(
            f"{tag} instructions say when to search and when to record",
            "Before starting a task" in instructions and "after you verified a fix" in instructions,
            instructions[:200],
        )

        listed = await client.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        checks.check(f"{tag} four tools", sorted(tools) == ["feedback", "record", "search", "show"], sorted(tools))
        search_properties = set(tools["search"].input_schema.get("properties", {}))
        checks.check(
            f"{tag} search takes the CLI's options",
            {"query", "limit", "minScore", "projectContext", "tags", "type", "profile", "now", "explain", "full"}
            <= search_properties,
            search_properties,
        )
        checks.check(
            f"{tag} every tool declares an output schema",
            all(tool.output_schema is not None for tool in tools.values()),
        )

        # search: ranked results in the CLI's JSON, identical to the CLI's own answer.
        query = "connection pool timed out under load"
        result = await client.call_tool("search", {"query": query, "limit": 3, "now": NOW})
        response = result.structured_content
        checks.check(f"{tag} search succeeds", not result.is_error, result.content)
        checks.check(f"{tag} search finds results", len(response["results"]) == 3, response)
        checks.check(
            f"{tag} search answers what the CLI answers",
            response == cli(binary, index, "search", query, "--limit", "3", "--now", NOW),
        )
        checks.check(
            f"{tag} text content is the same JSON",
            json.loads(result.content[0].text) == response,
        )

        # record: a verified fix, then found by search.
        experience = {
            "id": f"py-{mode}",
            "title": "uvicorn reload loop: WatchFiles detects changes in the .venv directory",
            "problems": ["WatchFiles detected changes in '.venv/lib/python3.11/site-packages'. Reloading..."],
            "solution": "Run uvicorn with --reload-dir app so only the sources are watched.",
            "whyItWorked": "The virtual environment inside the project was watched too.",
            "tags": ["python", "uvicorn", "watchfiles"],
            "projectContext": f"api-gateway ({mode} session)",
            "verification": "edited a file in .venv: no reload; edited app/main.py: one reload",
        }
        result = await client.call_tool("record", {"record": experience})
        report = result.structured_content
        checks.check(f"{tag} record succeeds", not result.is_error, result.content)
        checks.check(
            f"{tag} record reports id, locator, replaced, warnings",
            report["id"] == experience["id"] and report["replaced"] is False and isinstance(report["warnings"], list),
            report,
        )
        result = await client.call_tool("search", {"query": "uvicorn reload loop .venv", "limit": 5})
        ids = [r["id"] for r in result.structured_content["results"]]
        checks.check(f"{tag} the recorded experience is found", experience["id"] in ids, ids)

        # An untitled record (SPEC §1): recorded, then found with "title": null, which the SDK
        # checks against the output schema.
        untitled = {"id": f"py-untitled-{mode}", "problems": [f"pip resolver loops forever on {mode} pins"]}
        result = await client.call_tool("record", {"record": untitled})
        checks.check(f"{tag} an untitled record is recorded", not result.is_error, result.content)
        result = await client.call_tool("search", {"query": f"pip resolver loops {mode}", "limit": 3})
        hits = [r for r in result.structured_content["results"] if r["id"] == untitled["id"]]
        checks.check(f"{tag} an untitled result has a null title", hits and hits[0]["title"] is None, hits)

        # feedback, then show by id and by locator.
        result = await client.call_tool("feedback", {"id": experience["id"], "outcome": "success"})
        checks.check(
            f"{tag} feedback counts",
            not result.is_error and result.structured_content["feedback"]["success"] == 1,
            result.content,
        )
        result = await client.call_tool("show", {"id": experience["id"]})
        shown = result.structured_content
        checks.check(
            f"{tag} show returns the stored record with its feedback",
            not result.is_error and shown["title"] == experience["title"] and shown["feedback"]["success"] == 1,
            shown,
        )
        result = await client.call_tool("show", {"id": report["locator"]})
        checks.check(
            f"{tag} show by locator", not result.is_error and result.structured_content == shown, result.content
        )

        # Invalid arguments: tool errors carrying the SPEC code, and the server carries on.
        for tool, arguments, code in [
            ("search", {"query": "q", "limit": 0}, "invalid_limit"),
            ("search", {"query": "q", "minScore": 250}, "invalid_min_score"),
            ("search", {"query": "q", "tags": ["?"]}, "invalid_tag"),
            ("search", {"query": "the of"}, "empty_query"),
            ("record", {"record": {"title": " ", "verification": "no searchable text"}}, "invalid_record"),
            ("feedback", {"id": experience["id"], "outcome": "worked"}, "invalid_option"),
            ("feedback", {"id": "no-such-record", "outcome": "success"}, "not_found"),
            ("show", {"id": "no-such-record"}, "not_found"),
        ]:
            result = await client.call_tool(tool, arguments)
            checks.check(
                f"{tag} {tool} {json.dumps(arguments)} is a tool error {code}",
                result.is_error and error_code(result) == code,
                result.content,
            )
            checks.check(
                f"{tag} {tool} {json.dumps(arguments)} has no structured content",
                result.structured_content is None,
                result.structured_content,
            )


async def main(binary: Path) -> int:
    checks = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "index"
        built = cli(binary, index, "build", "--input", str(ROOT / "data"))
        checks.check("built the sample index", built["records"] == 315, built)
        for mode in ["auto", "legacy"]:
            try:
                await session(binary, index, mode, checks)
            except Exception:  # noqa: BLE001 - report and count, then fail the run
                traceback.print_exc()
                checks.check(f"[{mode}] session ran to the end", False)
    print(f"mcp_client: {checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    binary = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "target" / "debug" / "reliora").resolve()
    sys.exit(anyio.run(main, binary))
