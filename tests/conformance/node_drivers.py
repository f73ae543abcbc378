"""The Node drivers: real Node SDK calls, made by one long-lived `node` worker process.

`tests/conformance/node/worker.mjs` reads one JSON request per line (the SDK, the
scenario's base URL, the scenario's api, stream and fault), makes that one call with the
real Node SDK, describes what it raised with examples/node's `descriptorFromError` (a
call that returned, with `descriptorFromResponse` / `descriptorFromHttpResponse`), and
answers with the descriptor on one line. The drivers here hand that descriptor to the
shared runner as `Outcome(descriptor=...)`, so a Node pair is judged exactly like a Python
one: classified over gRPC by the real server on the bundled rules, one attempt checked.

One worker serves every pair (Node and the SDKs load once), calls run one at a time (so
the fake provider's request count belongs to one call), and `NodeWorker.close()` ends it.
Its dependencies come from committed lockfiles with `npm ci`, skipped again while the
lockfile is unchanged (a stamp in node_modules), as for examples/node.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from tests.conformance.drivers import Driver, Outcome
from tests.conformance.loader import Scenario
from tests.support import ROOT

NODE_DIR = Path(__file__).with_name("node")
EXAMPLE_DIR = ROOT / "examples" / "node"
NODE_SDKS: dict[str, tuple[str, ...]] = {
    "node.openai": ("openai", "azure"),
    "node.anthropic": ("anthropic",),
    "node.bedrock": ("bedrock",),
    "node.ai-openai": ("openai", "azure"),
    "node.ai-anthropic": ("anthropic",),
    "node.fetch": ("openai", "azure", "anthropic", "gemini"),
}
"""Each Node driver and the APIs it can call (worker.mjs --list says the same; a test checks)."""
ANSWER_LIMIT_S = 30.0
"""The longest one pair may take before the worker is declared stuck (it bounds each call at 15 s)."""
NPM_LIMIT_S = 600.0


class NodeUnavailableError(RuntimeError):
    """node or npm is missing, or `npm ci` failed."""


class NodeWorkerError(RuntimeError):
    """The worker died, hung, or could not run the driver."""


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


def worker_environment() -> dict[str, str]:
    """The worker's environment: no proxies (everything is 127.0.0.1), no AWS config or
    credential lookups beyond the static dummy keys, no SDK telemetry or update nags."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.lower().endswith("_proxy") and not k.startswith(("AWS_", "OPENAI_", "ANTHROPIC_"))
    }
    env.update(
        {
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "NO_UPDATE_NOTIFIER": "1",
            "NODE_NO_WARNINGS": "1",
        }
    )
    return env


class NodeWorker:
    """`node worker.mjs`, started once; `call` sends one request and waits for its answer."""

    def __init__(
        self,
        helper: Path | None = None,
        *,
        command: list[str] | None = None,
        cwd: Path = NODE_DIR,
    ) -> None:
        """`command` runs another worker speaking the same lines (the Java one)."""
        env = worker_environment()
        # SDK warnings and crashes go to a file, shown when the worker fails; closed in close().
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        if helper is not None:
            env["CONFORMANCE_NODE_HELPER"] = str(helper)
        self.proc = subprocess.Popen(
            command or ["node", str(NODE_DIR / "worker.mjs")],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
        )
        self._selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)

    def call(self, sdk: str, scenario: Scenario, base: str) -> dict[str, Any]:
        request = {
            "sdk": sdk,
            "base": base,
            "scenario": {
                "id": scenario.id,
                "api": scenario.api,
                "stream": scenario.stream is not None,
                "fault": scenario.fault,
                "request": dict(scenario.request),
            },
        }
        stdin: IO[str] | None = self.proc.stdin
        if stdin is None or self.proc.poll() is not None:
            raise NodeWorkerError(f"the Node worker is not running: {self.stderr_tail()}")
        stdin.write(json.dumps(request) + "\n")
        stdin.flush()
        line = self._readline(ANSWER_LIMIT_S)
        answer: dict[str, Any] = json.loads(line)
        if answer.get("outcome") == "driver_error":
            raise NodeWorkerError(f"{sdk} on {scenario.id}: {answer.get('chain')}")
        return answer

    def _readline(self, limit: float) -> str:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                tail = self.stderr_tail()
                self.close()
                raise NodeWorkerError(f"no answer within {limit} s: {tail}")
            if self._selector.select(timeout=left):
                line = self.proc.stdout.readline()
                if not line:
                    self.proc.wait(timeout=5)
                    raise NodeWorkerError(f"the Node worker exited: {self.stderr_tail()}")
                return line

    def stderr_tail(self, chars: int = 2000) -> str:
        """What the worker wrote to stderr lately (a crash's stack, SDK warnings)."""
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read()[-chars:]

    def close(self) -> None:
        """Close stdin (the worker ends its loop), then wait; kill it if it does not go."""
        if self.proc.poll() is None:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._selector.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._stderr.close()


def node_drivers(worker: NodeWorker) -> dict[str, Driver]:
    """A driver per Node SDK, each one request to the worker; the runner judges the descriptor."""

    def driver_for(sdk: str) -> Driver:
        def drive(scenario: Scenario, base: str) -> Outcome:
            answer = worker.call(sdk, scenario, base)
            # A call that returned and is no failure has no descriptor: the runner's "no failure".
            return Outcome(descriptor=answer["descriptor"])

        return drive

    return {sdk: driver_for(sdk) for sdk in NODE_SDKS}


@contextmanager
def running(helper: Path | None = None) -> Iterator[dict[str, Driver]]:
    """The Node drivers for the block: dependencies installed, a worker started, ended after."""
    if not node_available():
        raise NodeUnavailableError(
            "node and npm are not on PATH (the Node drivers need Node >= 20)"
        )
    npm_ci(EXAMPLE_DIR)
    npm_ci(NODE_DIR)
    worker = NodeWorker(helper)
    try:
        yield node_drivers(worker)
    finally:
        worker.close()
