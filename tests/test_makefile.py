"""The Makefile as a newcomer meets it: `make run` on a fresh clone installs only what serving
needs (the package and its runtime dependencies, no extras) and serves."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.support import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUP_TIMEOUT = 300
"""Bound on the clone's venv and install (about 20 s with pip's cache warm) and its start."""
HEAVY = {"pyspark", "playwright", "litellm", "pyarrow", "pytest", "mypy", "ruff", "openai"}
"""What the extras bring and serving does not need."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _name(requirement: str) -> str:
    """A requirement's project name, normalised as pip lists it (PEP 503)."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name is not None, requirement
    return re.sub(r"[-_.]+", "-", name.group()).lower()


def _extras_only() -> set[str]:
    """Every project an extra names that the runtime dependencies do not."""
    extras = PYPROJECT["project"]["optional-dependencies"].values()
    named = {_name(r) for group in extras for r in group}
    return (
        named
        - {_name(r) for r in PYPROJECT["project"]["dependencies"]}
        - {_name(PYPROJECT["project"]["name"])}
    )


def _serving(address: str) -> bool:
    with grpc.insecure_channel(address) as channel:
        health: Any = health_pb2_grpc.HealthStub(channel)  # the typeshed stub lacks Check
        try:
            reply = health.Check(health_pb2.HealthCheckRequest(), timeout=1)
        except grpc.RpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def test_make_run_on_a_fresh_clone_serves_with_the_runtime_dependencies_only(
    tmp_path: Path,
) -> None:
    """A clone of the committed tree (what a newcomer gets), `make run` as a real process:
    the gRPC health check says SERVING, the admin port answers, and the venv it made holds
    the package and no project that only an extra names (pyspark, playwright, litellm ...)."""
    clone, venv, log = tmp_path / "clone", tmp_path / "venv", tmp_path / "make.log"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "VIRTUAL_ENV", "MAKE", "MFLAGS", "PIP_"))
    }
    address, admin = f"127.0.0.1:{_free_port()}", f"127.0.0.1:{_free_port()}"
    command = ["make", "run", f"VENV={venv}", f"ADDR={address}", f"ADMIN={admin}"]
    started = time.monotonic()
    with log.open("w") as out:
        make = subprocess.Popen(
            command,
            cwd=clone,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = started + SETUP_TIMEOUT
        while not _serving(address):
            assert make.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        took = time.monotonic() - started
        with urllib.request.urlopen(f"http://{admin}/metrics", timeout=10) as metrics:
            assert metrics.status == 200
        listed = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
    finally:
        os.killpg(make.pid, signal.SIGTERM)  # make and the server it started, one group
        make.wait(timeout=60)
    installed = {_name(p["name"]) for p in json.loads(listed)}
    assert _name(PYPROJECT["project"]["name"]) in installed
    extras_only = _extras_only()
    assert extras_only >= HEAVY  # what the extras bring, serving does not need ...
    assert not installed & extras_only, sorted(installed & extras_only)  # ... and is not here
    served = log.read_text()
    assert '"event": "start"' in served
    assert '"event": "stopped"' in served, served[-3000:]  # SIGTERM stopped it cleanly
    assert took < SETUP_TIMEOUT, took
