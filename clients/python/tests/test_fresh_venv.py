"""The client as a runtime installs it: a fresh venv with the oldest grpcio and protobuf the
client declares, classifying against a real server, with nothing of the server installed.

The venv is made once per set of requirements (the pins below, the client's declared
dependencies, this Python) and kept beside the repository's venv, so `make test` pays
for the download only when they change; the client's wheel, built from the tree, is
reinstalled into it every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import outage_harness
import pytest

CLIENT = Path(__file__).resolve().parents[1]
OLDEST = {"grpcio": "1.49.1", "protobuf": "7.35.1"}
"""The oldest releases the client declares, installed exactly (PyPI); a test checks that
pyproject's lower bounds are these."""
HEAVY = ("pydantic", "yaml", "re2", "jinja2", "classifier")
"""What the server brings and a runtime must not need: none may be importable there."""
PIP_TIMEOUT = 900


def _declared() -> list[str]:
    data = tomllib.loads((CLIENT / "pyproject.toml").read_text(encoding="utf-8"))
    dependencies: list[str] = data["project"]["dependencies"]
    return dependencies


def test_the_pins_are_the_declared_lower_bounds() -> None:
    """grpcio and protobuf, nothing else, each pinned here at the bound pyproject declares."""
    bounds = {}
    for requirement in _declared():
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)(,<[0-9.]+)?", requirement)
        assert match, f"{requirement}: a lower bound (and an optional upper one) expected"
        bounds[match[1]] = match[2]
    assert bounds == OLDEST


def _run(*args: str | Path, timeout: float = PIP_TIMEOUT, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
    )
    assert done.returncode == 0, f"{args}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done.stdout


def _isolation() -> list[str]:
    """Build with the repository venv's setuptools when it can build the client (grpcio-tools
    brings one): an isolated build installs its own first, three times as long."""
    try:
        major = int(version("setuptools").split(".")[0])
    except PackageNotFoundError:
        return []
    return ["--no-build-isolation"] if major >= 77 else []


@dataclass(frozen=True)
class Fresh:
    python: Path
    made: bool
    """True when this run made the venv (and paid for the download)."""
    seconds: float


def _key() -> str:
    wanted = json.dumps([OLDEST, _declared(), sys.version], sort_keys=True)
    return hashlib.sha256(wanted.encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Fresh:
    started = time.monotonic()
    wheels = tmp_path_factory.mktemp("client-wheel")
    _run(
        sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *_isolation(), "-w", wheels, CLIENT
    )
    [wheel] = wheels.glob("errorclass_client-*.whl")
    venv = Path(sys.prefix) / "fresh-venvs" / _key()
    python = venv / "bin" / "python"
    made = not (venv / ".complete").exists()
    if made:
        shutil.rmtree(venv, ignore_errors=True)
        _run(sys.executable, "-m", "venv", venv)
        # The resolver checks the pins against what the wheel declares.
        pins = [f"{name}=={version}" for name, version in OLDEST.items()]
        _run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel, *pins)
        (venv / ".complete").write_text(json.dumps(OLDEST))
    else:
        _run(
            python,
            *("-m", "pip", "install", "-q", "--disable-pip-version-check"),
            *("--no-deps", "--force-reinstall", wheel),
        )
    _run(python, "-m", "pip", "check", "--disable-pip-version-check")
    return Fresh(python, made, time.monotonic() - started)


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    """The repository venv's `classifier serve` on a free loopback port."""
    address = outage_harness.stopped_address()
    classifier = Path(sys.executable).parent / "classifier"
    env = {**os.environ, "GRPC_ENABLE_FORK_SUPPORT": "false"}
    server = subprocess.Popen(
        [classifier, "serve", "--addr", address],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(
            [classifier, "health", "--addr", address], capture_output=True, check=False
        ).returncode:
            assert server.poll() is None, server.communicate()[1]
            assert time.monotonic() < deadline, "the server did not become healthy"
            time.sleep(0.2)
        yield address
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)


CALLS = """
import importlib.metadata as md, importlib.util, json, sys
import errorclass_client as ec
from errorclass_client.client import _error
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb

address, stopped, heavy = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
out = {
    "versions": {name: md.version(name) for name in ("grpcio", "protobuf", "errorclass-client")},
    "heavy": [name for name in heavy if importlib.util.find_spec(name) is not None],
}
with ec.Client(address, timeout=10) as client:
    a = client.classify(type="openai.RateLimitError", http_status=429, origin="provider")
    out["answer"] = [a.class_name, a.class_number, a.rule_id, a.ruleset_version]
    b = client.classify_batch([{"type": "TimeoutError", "origin": "tool", "attributes": {"time_limit": "tool"}}])
    out["batch"] = [b[0].class_name]
    try:
        client._methods.classify(pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="")), timeout=10)
    except Exception as err:
        out["refused"] = [v.field for v in _error(err, []).violations]
with ec.Client(stopped) as client:
    try:
        client.classify(type="openai.APIConnectionError", origin="provider")
    except ec.Unclassified as outage:
        out["outage"] = [outage.code.name, [d.type for d in outage.descriptors]]
print(json.dumps(out))
"""


def test_classify_from_a_fresh_venv_with_the_oldest_dependencies(
    fresh: Fresh, address: str, tmp_path: Path
) -> None:
    """grpcio and protobuf at their oldest, the client's wheel, and nothing else: classify
    answers, a refusal's fields decode, an outage keeps the descriptor."""
    started = time.monotonic()
    out = json.loads(
        _run(
            fresh.python,
            "-c",
            CALLS,
            address,
            outage_harness.stopped_address(),
            ",".join(HEAVY),
            timeout=120,
            cwd=tmp_path,  # not the repository: its classifier/ would be importable from there
        )
    )
    print(
        f"\nfresh venv: {'made' if fresh.made else 'reused'} in {fresh.seconds:.1f} s, "
        f"calls in {time.monotonic() - started:.1f} s"
    )
    assert out["versions"] == {**OLDEST, "errorclass-client": ec_version()}
    assert out["heavy"] == []
    assert out["answer"][:3] == ["RateLimited", 3, "python.openai.rate-limited"]
    assert out["batch"] == ["ToolTimeout"]
    assert out["refused"] == ["descriptor.type"]
    assert out["outage"] == ["UNAVAILABLE", ["openai.APIConnectionError"]]


def ec_version() -> str:
    data = tomllib.loads((CLIENT / "pyproject.toml").read_text(encoding="utf-8"))
    version: str = data["project"]["version"]
    return version
