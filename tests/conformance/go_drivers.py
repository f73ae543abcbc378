"""The Go drivers: real Go SDK calls, made by one long-lived Go worker binary.

`tests/conformance/go/` is its own Go module (pinned by its go.mod and go.sum; a
`replace` points the client module at clients/go, so the client depends on no SDK). Its
worker reads one JSON request per line as worker.mjs does, makes that one call with the
real Go SDK, describes what it returned with `errorclass.Describe` (a raw client's
failed response with `errorclass.DescribeResponse`) and answers with the descriptor on
one line. The drivers here hand that descriptor to the shared runner, so a Go pair is
judged exactly like a Python one: classified over gRPC by the real server, one attempt
checked.

The worker is built once per session with `go build` (GOFLAGS=-mod=readonly: every
module comes from the proxy as go.sum pins it; Go's build cache makes a rebuild quick).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests.conformance.drivers import Driver
from tests.conformance.line_worker import LineWorker, worker_environment

GO_DIR = Path(__file__).with_name("go")
GO_SDKS: dict[str, tuple[str, ...]] = {
    "go.openai": ("openai", "azure"),
    "go.anthropic": ("anthropic",),
    "go.bedrock": ("bedrock",),
    "go.genai": ("gemini",),
    "go.langchaingo-openai": ("openai", "azure"),
    "go.http": ("openai", "azure", "anthropic", "gemini"),
    "go.gobreaker": ("openai", "azure"),
}
"""Each Go driver and the APIs it can call (the worker's --list says the same; a test checks)."""
BUILD_LIMIT_S = 900.0


class GoUnavailableError(RuntimeError):
    """go is missing, or the worker does not build."""


def go_available() -> bool:
    return shutil.which("go") is not None


def go_environment() -> dict[str, str]:
    """`go` commands: modules only as go.sum pins them, from the proxy."""
    env = worker_environment()
    env["GOFLAGS"] = "-mod=readonly"
    return env


def build_worker(out: Path, package: str = ".", name: str = "conformance-worker") -> Path:
    """`go build` of a worker package of GO_DIR into out/name; GoUnavailableError with go's
    output on failure."""
    binary = out / name
    done = subprocess.run(
        ["go", "build", "-o", str(binary), package],
        cwd=GO_DIR,
        capture_output=True,
        text=True,
        timeout=BUILD_LIMIT_S,
        check=False,
        env=go_environment(),
    )
    if done.returncode != 0:
        raise GoUnavailableError(
            f"go build {package} failed in {GO_DIR}:\n{done.stdout}\n{done.stderr}"
        )
    return binary


@contextlib.contextmanager
def built_worker() -> Iterator[Path]:
    """The worker binary, built into a temporary folder that is removed after the block."""
    if not go_available():
        raise GoUnavailableError("go is not on PATH (the Go drivers need Go >= 1.26)")
    with tempfile.TemporaryDirectory(prefix="errorclass-go-") as folder:
        yield build_worker(Path(folder))


@contextlib.contextmanager
def running(binary: Path | None = None) -> Iterator[dict[str, Driver]]:
    """The Go drivers for the block: the worker built (unless given) and started, ended after."""
    with contextlib.nullcontext(binary) if binary is not None else built_worker() as path:
        worker = LineWorker([str(path)], GO_DIR, worker_environment(), "Go")
        try:
            yield worker.drivers(GO_SDKS)
        finally:
            worker.close()
