"""A real local Ray cluster for ``reliora.distributed``: a head node and one more node
process, started with the ``ray`` command line on the loopback interface only, torn down
after the session. Every step is bounded in time.

Ray's own servers listen on every interface of their network namespace, so CI runs this
suite in a namespace that has only the loopback interface (``unshare -rn``, see
``python/tests_ray/run.sh``); ``test_ray_talks_only_over_loopback`` checks that."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data" / "experiences"
NOW = "2026-06-01T00:00:00Z"

# Ray is told exactly this, everywhere: the loopback address, no usage reporting, no
# dashboard.
LOOPBACK = "127.0.0.1"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
# Token authentication with a token of this session's own, given to every Ray process by the
# environment: nothing read from (or written to) ~/.ray, whatever an earlier Ray left there.
os.environ["RAY_AUTH_MODE"] = "token"
os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
# No Ray process may wait on the network for long.
START_TIMEOUT = 120


def _free_port() -> int:
    # Outside Ray's default worker port range (10002-19999).
    for port in range(29300, 29400):
        with socket.socket() as probe:
            try:
                probe.bind((LOOPBACK, port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 29300-29399 for the Ray head")


def _ray(*args: str) -> subprocess.CompletedProcess[str]:
    binary = Path(sys.executable).parent / "ray"
    done = subprocess.run(
        [str(binary), *args], capture_output=True, text=True, timeout=START_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"ray {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """The address of a two-node local cluster; the driver is connected to it."""
    import ray

    port = _free_port()
    # Ray's socket paths must stay short: a short temporary directory.
    temp = tempfile.mkdtemp(prefix="rr", dir="/tmp")
    address = f"{LOOPBACK}:{port}"
    common = ["--node-ip-address", LOOPBACK, "--num-cpus", "2", "--disable-usage-stats"]
    try:
        _ray("start", "--head", "--port", str(port), "--include-dashboard=false", "--temp-dir", temp, *common)
        _ray("start", "--address", address, *common)
        ray.init(address=address, _node_ip_address=LOOPBACK, log_to_driver=False)
        yield address
    finally:
        if ray.is_initialized():
            ray.shutdown()
        subprocess.run(
            [str(Path(sys.executable).parent / "ray"), "stop", "--force"],
            capture_output=True, timeout=START_TIMEOUT, check=False,
        )
        shutil.rmtree(temp, ignore_errors=True)
