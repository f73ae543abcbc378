"""Fixtures for the examples: the Node example installed once per session."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT

NODE_EXAMPLE = ROOT / "examples" / "node"
STAMP = NODE_EXAMPLE / "node_modules" / ".errorclass-lock.sha256"


@pytest.fixture(scope="session")
def node_example() -> Path:
    """examples/node with its dependencies installed by `npm ci` (skipped again while the lock is unchanged)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not on PATH: the Node client test needs Node >= 18 with npm")
    digest = hashlib.sha256((NODE_EXAMPLE / "package-lock.json").read_bytes()).hexdigest()
    if not STAMP.exists() or STAMP.read_text() != digest:
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=NODE_EXAMPLE,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci failed in {NODE_EXAMPLE}:\n{done.stdout}\n{done.stderr}")
        STAMP.write_text(digest)
    return NODE_EXAMPLE
