"""``reliora.distributed`` on a real local Ray cluster: a sharded build and search answer as
one index over the same records, writes go to the shard that owns the id, a dead shard is
named, and Ray talks only over loopback."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import ray

import reliora
from reliora import _reliora
from reliora.distributed import ShardedIndex, ShardUnavailable, build_sharded, shard_of

from conftest import DATA, LOOPBACK, NOW

PROFILES = ("standard", "decay", "recency", "bm25f")

# Options rotated over the queries: every profile meets each of them.
VARIANTS: list[dict[str, Any]] = [
    {},
    {"limit": 3},
    {"limit": 1, "min_score": 0.5},
    {"limit": 5, "mmr": True},
    {"rerank": {"relevance": 1, "temporal": 0.5}},
    {"candidates": 5},
    {"tags": ["docker"]},
    {"full": True, "token_budget": 300},
    {"include_superseded": True, "limit": 20},
    {"explain": "py-002"},
    {"entities": ["Redis"]},
    {"limit": 2, "project_context": "python"},
]


def records() -> list[dict[str, Any]]:
    out = []
    for path in sorted(DATA.glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


def queries() -> list[str]:
    """Three questions from each of the first records: its title, its tags, its first problem."""
    out = []
    for r in records()[:60]:
        out.append(" ".join(str(r.get("title", "")).split()[:6]))
        out.append(" ".join(r.get("tags", [])))
        out.append(" ".join(str((r.get("problems") or [""])[0]).split()[:8]))
    return [q for q in out if q.strip()]


def answer(response: reliora.SearchResponse) -> dict[str, Any]:
    """The response without its fingerprint, which names the generations (they differ)."""
    data = response.to_dict()
    data.pop("fingerprint")
    return data


@pytest.fixture(scope="module")
def built(cluster: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sample records as one index and as three shards."""
    root = tmp_path_factory.mktemp("built")
    inputs = sorted(DATA.glob("*.jsonl"))
    reliora.Index.build(root / "one", inputs)
    report = build_sharded(inputs, root / "sharded", shards=3)
    assert report.records == len(records())
    assert [s["records"] for s in report.shards] == [
        sum(1 for r in records() if shard_of(_reliora.record_id(json.dumps(r)), 3) == s) for s in range(3)
    ]
    return root / "one", root / "sharded"


def test_ray_talks_only_over_loopback(cluster: str) -> None:
    """Every node is on 127.0.0.1, and no socket of this network namespace is bound to or
    connected with anything but loopback (Ray's servers bind every interface of the
    namespace: the suite runs where loopback is the only one)."""
    nodes = [n for n in ray.nodes() if n["Alive"]]
    assert len(nodes) >= 2, nodes
    assert {n["NodeManagerAddress"] for n in nodes} == {LOOPBACK}
    interfaces = [line.split(":")[0].strip() for line in Path("/proc/net/dev").read_text().splitlines()[2:]]
    assert interfaces == ["lo"], f"run this suite in a network namespace with only loopback, not {interfaces}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, remote = line.split()[1:3]
            for endpoint in (local, remote):
                address = endpoint.split(":")[0]
                assert _loopback_or_any(address), f"{table}: {line.strip()}"


def _loopback_or_any(hex_address: str) -> bool:
    """127.0.0.0/8, ::1, an IPv4-mapped loopback, or the unspecified address (a listener)."""
    if len(hex_address) == 8:
        first_octet = int(hex_address[6:8], 16)  # little-endian
        return first_octet == 127 or hex_address == "00000000"
    raw = bytes.fromhex(hex_address)
    words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
    ip6 = b"".join(words)
    if ip6 == bytes(16) or ip6 == bytes(15) + b"\x01":
        return True
    return ip6[:12] == bytes(10) + b"\xff\xff" and ip6[12] == 127


@pytest.mark.parametrize("profile", PROFILES)
def test_sharded_search_answers_as_one_index(built: tuple[Path, Path], profile: str) -> None:
    one_dir, sharded_dir = built
    one = reliora.Index(one_dir)
    sharded = ShardedIndex(sharded_dir)
    asked = 0
    for i, query in enumerate(queries()):
        options = {"profile": profile, "now": NOW, **VARIANTS[i % len(VARIANTS)]}
        try:
            expected = answer(one.search(query, **options))
        except reliora.Error as error:
            with pytest.raises(type(error)):
                sharded.search(query, **options)
            continue
        assert answer(sharded.search(query, **options)) == expected, (query, options)
        asked += 1
    assert asked >= 150


def test_writes_go_to_the_owning_shard_and_are_seen(built: tuple[Path, Path], tmp_path: Path) -> None:
    one_dir, sharded_dir = built
    # Copies: this test writes.
    import shutil

    one_dir = Path(shutil.copytree(one_dir, tmp_path / "one"))
    sharded_dir = Path(shutil.copytree(sharded_dir, tmp_path / "sharded"))
    one, writer = reliora.Index(one_dir), reliora.Writer(one_dir)
    sharded = ShardedIndex(sharded_dir)
    new = {
        "id": "ray-write-1",
        "title": "Docker layer cache misses on every CI run",
        "solution": "Copy the lockfile and fetch dependencies before copying the sources.",
        "tags": ["docker", "ci"],
    }
    report = sharded.record(new)
    expected = writer.record(new)
    assert report.id == "ray-write-1"
    assert [w.id for w in report.warnings] == [w.id for w in expected.warnings]
    owner = shard_of("ray-write-1", 3)
    for s, path in enumerate(sharded.shards):
        holds = reliora.Index(path).search("docker layer cache lockfile", limit=200, now=NOW)
        assert ("ray-write-1" in [r.id for r in holds]) == (s == owner)
    assert sharded.get("ray-write-1")["title"] == new["title"]
    assert sharded.feedback("ray-write-1", "success").feedback["success"] == 1
    writer.feedback("ray-write-1", "success")
    for profile in PROFILES:
        a = one.search("docker cache lockfile", profile=profile, now=NOW)
        b = sharded.search("docker cache lockfile", profile=profile, now=NOW)
        assert [(r.id, r.score) for r in a] == [(r.id, r.score) for r in b], profile
        assert a.counts == b.counts
    assert sharded.delete("ray-write-1").deleted
    assert "ray-write-1" not in [r.id for r in sharded.search("docker cache lockfile", now=NOW)]
    with pytest.raises(reliora.NotFound):
        sharded.delete("ray-write-1")


def test_a_dead_shard_is_named_never_left_out(built: tuple[Path, Path]) -> None:
    _one_dir, sharded_dir = built
    sharded = ShardedIndex(sharded_dir)
    assert len(sharded.search("docker cache", now=NOW).results) > 0
    ray.kill(sharded.actors()[1], no_restart=True)
    with pytest.raises(ShardUnavailable) as raised:
        sharded.search("docker cache", now=NOW)
    assert raised.value.shard == 1
    assert "shard 1" in str(raised.value) and raised.value.code == "shard_unavailable"


def test_a_sharded_build_reports_bad_input_as_build_does(cluster: str, tmp_path: Path) -> None:
    good = json.dumps({"id": "a", "title": "one"})
    cases = {
        "malformed": [good, "{not json"],
        "duplicate": [good, json.dumps({"id": "b", "title": "b"}), json.dumps({"id": "a", "title": "two"})],
    }
    for name, lines in cases.items():
        source = tmp_path / f"{name}.jsonl"
        source.write_text("\n".join(lines) + "\n")
        with pytest.raises(reliora.Error) as single:
            reliora.Index.build(tmp_path / f"one-{name}", source)
        with pytest.raises(type(single.value)) as sharded:
            build_sharded(source, tmp_path / f"sharded-{name}", shards=2)
        assert str(sharded.value) == str(single.value), name
    source = tmp_path / "malformed.jsonl"
    expected = reliora.Index.build(tmp_path / "one-skip", source, skip_invalid=True)
    report = build_sharded(source, tmp_path / "sharded-skip", shards=2, skip_invalid=True)
    assert report.skipped == expected.skipped and report.records == expected.records == 1
    with pytest.raises(reliora.InvalidOption):
        build_sharded(source, tmp_path / "zero", shards=0)
