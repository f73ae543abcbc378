"""Node's runtime pairs: `node tests/conformance/node/runtime.mjs`, a JSON-lines worker.

The worker raises each failure with real Node code (AbortSignal.timeout, AbortController,
timers/promises, fs, dns through a resolver on a closed loopback port, opossum,
bottleneck, ...) and describes it with clients/node's helper. Its dependencies come from
tests/conformance/node's committed lockfile (`npm ci`, as for the provider suite).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from tests.conformance.node_drivers import (
    NODE_CLIENT,
    NODE_DIR,
    node_available,
    npm_ci,
    worker_environment,
)
from tests.conformance.runtime.drivers import (
    JsonLinesWorker,
    RuntimeDriver,
    worker_list,
    worker_session,
)

LANGUAGE = "node"
HELPER_VARIABLE = "CONFORMANCE_NODE_HELPER"
"""Another copy of clients/node/classifier.js for the worker (the baseline's helper)."""


def unavailable() -> str | None:
    return None if node_available() else "node and npm are not on PATH (Node >= 20)"


COMMAND = ["node", str(NODE_DIR / "runtime.mjs")]


def list_pairs() -> list[str]:
    return worker_list(COMMAND, cwd=NODE_DIR, env=worker_environment())


@contextmanager
def open_driver() -> Iterator[RuntimeDriver]:
    npm_ci(NODE_CLIENT)
    npm_ci(NODE_DIR)
    env = worker_environment()
    helper = os.environ.get(HELPER_VARIABLE)
    if helper:
        env[HELPER_VARIABLE] = helper
    worker = JsonLinesWorker(LANGUAGE, COMMAND, cwd=NODE_DIR, env=env)
    yield from worker_session(worker)
