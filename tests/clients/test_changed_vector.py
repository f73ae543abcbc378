"""One changed expectation in a copy of the spec fails every client's own unit tests.

The shared vectors hold the four clients to one specification only if each runner really
compares what it computes with what a vector wants. Here the first `error_body` vector of
a copy of clients/spec wants another code, the copy is named by ERRORCLASS_SPEC_DIR, and
the Python, Go and Java runners each fail naming that vector (the Node runner is shown to
fail the same way in test_node_package.py, with the package it packs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.go_drivers import go_available, go_environment
from tests.conformance.java_drivers import maven_lock
from tests.support import ROOT

SPEC = ROOT / "clients" / "spec"
RUN_LIMIT_S = 600.0


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A copy of the spec whose first error_body vector wants the code "changed"."""
    spec = tmp_path_factory.mktemp("changed") / "spec"
    shutil.copytree(SPEC, spec)
    path = spec / "vectors" / "error_body.json"
    data = json.loads(path.read_text("utf-8"))
    vector = data["vectors"][0]
    assert vector["want"].get("code") != "changed"
    vector["want"]["code"] = "changed"
    path.write_text(json.dumps(data), "utf-8")
    return spec, str(vector["name"])


def _run(argv: list[str], cwd: Path, spec: Path | None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ}
    env.pop("ERRORCLASS_SPEC_DIR", None)
    if cwd.name == "go":
        env.update(go_environment())
    if spec is not None:
        env["ERRORCLASS_SPEC_DIR"] = str(spec)
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_LIMIT_S, check=False
    )


def _python(spec: Path | None) -> subprocess.CompletedProcess[str]:
    return _run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "error_body",
            "clients/python/tests/test_vectors.py",
        ],
        ROOT,
        spec,
    )


def _go(spec: Path | None) -> subprocess.CompletedProcess[str]:
    if not go_available():
        pytest.fail("go is not on PATH: the Go client's vectors need Go")
    return _run(["go", "test", "-count=1", "-run", "^TestVectors$", "."], ROOT / "clients/go", spec)


def _java(spec: Path | None, reports: Path) -> subprocess.CompletedProcess[str]:
    """Surefire on the test classes `make java-client` compiled (offline: nothing to fetch)."""
    if shutil.which("mvn") is None or not (ROOT / "clients/java/target/test-classes").is_dir():
        pytest.fail("the Java client is not built: run `make java-client` (java and mvn)")
    with maven_lock():
        return _run(
            [
                "mvn",
                "-B",
                "-o",
                "-ntp",
                "-Dstyle.color=never",
                "surefire:test",
                "-Dtest=VectorsTest",
                "-Dsurefire.failIfNoSpecifiedTests=false",
                f"-DreportsDirectory={reports}",
            ],
            ROOT / "clients/java",
            spec,
        )


@pytest.mark.parametrize("language", ["python", "go", "java"])
def test_a_changed_expectation_fails_the_clients_own_tests_naming_it(
    language: str, changed: tuple[Path, str], tmp_path: Path
) -> None:
    spec, name = changed

    def run(given: Path | None) -> subprocess.CompletedProcess[str]:
        if language == "python":
            return _python(given)
        if language == "go":
            return _go(given)
        return _java(given, tmp_path / ("changed" if given else "committed"))

    failed = run(spec)
    out = failed.stdout + failed.stderr
    assert failed.returncode != 0, out[-4000:]
    assert name in out, out[-4000:]
    assert "changed" in out, out[-4000:]
    if language == "java":
        return  # the committed spec passes in `make java-client`, under the same Surefire
    passed = run(None)
    assert passed.returncode == 0, (passed.stdout + passed.stderr)[-4000:]
