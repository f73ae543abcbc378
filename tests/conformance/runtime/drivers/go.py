"""Go's runtime pairs: tests/conformance/go/runtime, a JSON-lines worker binary.

The worker raises each failure with real Go code (context deadlines and cancels around real
loopback HTTP calls, errgroup, errors.Join, os, encoding/json, strconv, a net.Resolver
pointed at a closed loopback port, net.Dial refused, os/exec, x/time/rate, gobreaker,
text/template) and describes it with the Go client module's errorclass.Describe, the
contract's attributes set through its options. It is built once per process with
`go build` (modules as tests/conformance/go's go.sum pins them), into a temporary folder
removed at exit.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conformance.go_drivers import (
    GO_DIR,
    GoUnavailableError,
    build_worker,
    go_available,
)
from tests.conformance.line_worker import worker_environment
from tests.conformance.runtime.drivers import (
    DriverError,
    JsonLinesWorker,
    RuntimeDriver,
    worker_list,
    worker_session,
)

LANGUAGE = "go"


def unavailable() -> str | None:
    return None if go_available() else "go is not on PATH (Go >= 1.26)"


@functools.cache
def binary() -> Path:
    """The runtime worker, built once for this process."""
    folder = Path(tempfile.mkdtemp(prefix="errorclass-go-runtime-"))
    atexit.register(shutil.rmtree, folder, True)
    try:
        return build_worker(folder, "./runtime", "runtime-worker")
    except GoUnavailableError as exc:
        raise DriverError(str(exc)) from exc


def list_pairs() -> list[str]:
    return worker_list([str(binary())], cwd=GO_DIR, env=worker_environment())


@contextmanager
def open_driver() -> Iterator[RuntimeDriver]:
    worker = JsonLinesWorker(LANGUAGE, [str(binary())], cwd=GO_DIR, env=worker_environment())
    yield from worker_session(worker)
