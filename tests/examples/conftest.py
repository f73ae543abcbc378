"""Fixtures for the examples: the Node example installed once per session, a real server."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.node_drivers import NodeUnavailableError, npm_ci
from tests.support import ROOT

NODE_EXAMPLE = ROOT / "examples" / "node"


@pytest.fixture(scope="session")
def node_example() -> Path:
    """examples/node with its dependencies installed by `npm ci` (skipped again while the lock is unchanged)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not on PATH: the Node client test needs Node >= 18 with npm")
    try:
        npm_ci(NODE_EXAMPLE)
    except NodeUnavailableError as exc:
        pytest.fail(str(exc))
    return NODE_EXAMPLE


@pytest.fixture(scope="session")
def served_address() -> Iterator[str]:
    """A real `classifier serve` process on the bundled library, on a free loopback port."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "classifier", "serve", "--addr", "127.0.0.1:0"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        start = json.loads(proc.stderr.readline())
        assert start["event"] == "start", start
        # read the rest of its log as it comes, so a full pipe never stalls the server
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        yield str(start["address"])
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()
