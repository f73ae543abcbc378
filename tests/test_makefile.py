"""The Makefile as a newcomer meets it: `make run` on a fresh clone installs only what serving
needs (the package and its runtime dependencies, no extras) and serves; without apt-get or
root, the browser step says what to install and the browser tests skip saying it too."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
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
    the gRPC health check says SERVING, the admin port answers, the venv it made holds
    the package and no project that only an extra names (pyspark, playwright, litellm ...),
    and no setuptools banner came before the server's log."""
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
        with urllib.request.urlopen(f"http://{admin}/console", timeout=30) as console:
            assert console.status == 200  # its templates and Jinja2 came with the serving install
            assert "<section id=rules>" in console.read().decode()
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
    # setuptools' editable-install banner is not shown (make silences that one warning):
    # what make run prints before serving is pip's errors, if any, and the server's log.
    for banner in (
        "BuildBackendWarning",
        "Editable installation.",
        "Please be careful with folders",
    ):
        assert banner not in served, served[:3000]
    assert '"event": "start"' in served
    assert '"event": "stopped"' in served, served[-3000:]  # SIGTERM stopped it cleanly
    assert took < SETUP_TIMEOUT, took


def test_without_apt_get_or_root_make_browser_says_what_to_install(tmp_path: Path) -> None:
    """No Chromium and no apt-get on the PATH: the step prints what to install and succeeds,
    so `make setup` goes on (the browser tests then skip, the next test shows)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("sh", "make", "id"):
        found = shutil.which(tool)
        assert found is not None, tool
        (tools / tool).symlink_to(found)
    done = subprocess.run(
        ["make", "--no-print-directory", "browser", f"CHROMIUM={tmp_path / 'no-chromium'}"],
        cwd=ROOT,
        env={"PATH": str(tools), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "install Debian's chromium package (apt-get install chromium)" in done.stdout
    assert "the console's browser tests skip until then" in done.stdout


def test_without_chromium_the_browser_tests_skip_saying_what_to_install(tmp_path: Path) -> None:
    missing = tmp_path / "no-chromium"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "tests/server/test_console.py",
            "-k",
            "test_the_page_shows_the_version_the_layers_and_the_candidate",
        ],
        cwd=ROOT,
        env={**os.environ, "CHROMIUM": str(missing)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 skipped" in done.stdout, done.stdout[-3000:]
    assert f"no Chromium at {missing}: install Debian's chromium package" in done.stdout


def _dry_run(target: str, venv: Path) -> str:
    """What make would run for target with this venv (`make -n`: decided, not done)."""
    return subprocess.run(
        ["make", "-n", "--no-print-directory", target, f"VENV={venv}", "CHROMIUM=/bin/sh"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def test_setup_upgrades_a_run_only_venv_and_run_reuses_a_full_one(tmp_path: Path) -> None:
    """After `make run`, `make setup` installs the extras into the same venv; after `make
    setup`, `make run` installs nothing (stamps newer than pyproject.toml and constraints)."""
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".installed-run").touch()
    setup = _dry_run("setup", venv)
    assert "-e '.[dev,conformance,arrow,spark]'" in setup
    assert "pip install -q -c constraints.txt -e .\n" not in setup
    assert f"touch {venv}/.installed {venv}/.installed-run" in setup  # both stamps, so:
    assert "-e '.[" not in _dry_run("run", venv)
    (venv / ".installed").touch()
    run = _dry_run("run", venv)
    assert "pip install" not in run
    assert f"{venv}/bin/classifier serve" in run
