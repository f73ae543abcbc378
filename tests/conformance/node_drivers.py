"""The Node drivers: real Node SDK calls, made by one long-lived `node` worker process.

`tests/conformance/node/worker.mjs` reads one JSON request per line (the SDK, the
scenario's base URL, the scenario's api, stream and fault), makes that one call with the
real Node SDK, describes what it raised with clients/node's `descriptorFromError` (a
call that returned, with `descriptorFromResponse` / `descriptorFromHttpResponse`), and
answers with the descriptor on one line. The drivers here hand that descriptor to the
shared runner as `Outcome(descriptor=...)`, so a Node pair is judged exactly like a Python
one: classified over gRPC by the real server on the bundled rules, one attempt checked.

One worker serves every pair (Node and the SDKs load once), calls run one at a time (so
the fake provider's request count belongs to one call), and `NodeWorker.close()` ends it.
Its dependencies come from committed lockfiles with `npm ci`, skipped again while the
lockfile is unchanged (a stamp in node_modules), as for clients/node.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conformance.drivers import Driver
from tests.conformance.line_worker import LineWorker, WorkerError, worker_environment
from tests.support import ROOT

NODE_DIR = Path(__file__).with_name("node")
NODE_CLIENT = ROOT / "clients" / "node"
NODE_SDKS: dict[str, tuple[str, ...]] = {
    "node.openai": ("openai", "azure"),
    "node.anthropic": ("anthropic",),
    "node.bedrock": ("bedrock",),
    "node.ai-openai": ("openai", "azure"),
    "node.ai-anthropic": ("anthropic",),
    "node.fetch": ("openai", "azure", "anthropic", "gemini"),
}
"""Each Node driver and the APIs it can call (worker.mjs --list says the same; a test checks)."""
NPM_LIMIT_S = 600.0


NodeWorkerError = WorkerError
"""The Node worker died, hung, or could not run the driver."""
# Re-exported: the Node tests and the drift check import them from here.
__all__ = ["NodeWorkerError", "worker_environment"]


class NodeUnavailableError(RuntimeError):
    """node or npm is missing, or `npm ci` failed."""


def node_available() -> bool:
    return shutil.which("node") is not None and shutil.which("npm") is not None


def npm_ci(folder: Path) -> None:
    """`npm ci` from the folder's committed lockfile, unless node_modules already matches it.

    Under a file lock: two pytest-xdist workers asking at once would otherwise remove
    node_modules under each other."""
    stamp = folder / "node_modules" / ".errorclass-lock.sha256"
    digest = hashlib.sha256((folder / "package-lock.json").read_bytes()).hexdigest()
    lock = (
        Path(tempfile.gettempdir())
        / f"errorclass-npm-{hashlib.sha256(bytes(folder)).hexdigest()[:16]}.lock"
    )
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if stamp.exists() and stamp.read_text() == digest:
            return
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=NPM_LIMIT_S,
            check=False,
        )
        if done.returncode != 0:
            raise NodeUnavailableError(f"npm ci failed in {folder}:\n{done.stdout}\n{done.stderr}")
        stamp.write_text(digest)


class NodeWorker(LineWorker):
    """`node worker.mjs`, started once; `call` sends one request and waits for its answer."""

    def __init__(self, helper: Path | None = None) -> None:
        env = worker_environment()
        if helper is not None:
            env["CONFORMANCE_NODE_HELPER"] = str(helper)
        super().__init__(["node", str(NODE_DIR / "worker.mjs")], NODE_DIR, env, "Node")


@contextmanager
def running(helper: Path | None = None) -> Iterator[dict[str, Driver]]:
    """The Node drivers for the block: dependencies installed, a worker started, ended after."""
    if not node_available():
        raise NodeUnavailableError(
            "node and npm are not on PATH (the Node drivers need Node >= 20)"
        )
    npm_ci(NODE_CLIENT)
    npm_ci(NODE_DIR)
    worker = NodeWorker(helper)
    try:
        yield worker.drivers(NODE_SDKS)
    finally:
        worker.close()
