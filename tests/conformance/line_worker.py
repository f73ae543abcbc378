"""A long-lived worker process in another language, spoken to in JSON lines.

The Node and Go drivers run in their own language: one worker process serves every pair
(the runtime and the SDKs load once). `call` writes one request per line (the SDK, the
scenario's base URL, the scenario's api, stream, fault and request options) and waits for
the one-line answer, whose `descriptor` that language's helper built from the real error.
Calls run one at a time, so the fake provider's request count belongs to one call;
`close()` ends the process.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from tests.conformance.drivers import Driver, Outcome
from tests.conformance.loader import Scenario

ANSWER_LIMIT_S = 30.0
"""The longest one pair may take before the worker is declared stuck (it bounds each call at 15 s)."""


class WorkerError(RuntimeError):
    """The worker died, hung, or could not run the driver."""


def worker_environment() -> dict[str, str]:
    """The worker's environment: no proxies (everything is 127.0.0.1), no AWS config or
    credential lookups beyond the static dummy keys, no SDK telemetry or update nags."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.lower().endswith("_proxy")
        and not k.startswith(("AWS_", "OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_"))
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


class LineWorker:
    """The process, started once; `call` sends one request and waits for its answer."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str], name: str) -> None:
        self.name = name
        # SDK warnings and crashes go to a file, shown when the worker fails; closed in close().
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        self.proc = subprocess.Popen(
            command,
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
        answer = self.request(request)
        if answer.get("outcome") == "driver_error":
            raise WorkerError(f"{sdk} on {scenario.id}: {answer.get('chain')}")
        return answer

    def drivers(self, sdks: Iterable[str]) -> dict[str, Driver]:
        """A driver per SDK, each one `call`; the runner judges the descriptor (none: a call
        that returned and is no failure, the runner's "no failure")."""

        def driver_for(sdk: str) -> Driver:
            def drive(scenario: Scenario, base: str) -> Outcome:
                return Outcome(descriptor=self.call(sdk, scenario, base)["descriptor"])

            return drive

        return {sdk: driver_for(sdk) for sdk in sdks}

    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One JSON line out, one JSON line back (WorkerError when the process is gone or
        does not answer within ANSWER_LIMIT_S)."""
        stdin: IO[str] | None = self.proc.stdin
        if stdin is None or self.proc.poll() is not None:
            raise WorkerError(f"the {self.name} worker is not running: {self.stderr_tail()}")
        stdin.write(json.dumps(payload) + "\n")
        stdin.flush()
        answer: dict[str, Any] = json.loads(self._readline(ANSWER_LIMIT_S))
        return answer

    def _readline(self, limit: float) -> str:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                tail = self.stderr_tail()
                self.close()
                raise WorkerError(f"the {self.name} worker gave no answer within {limit} s: {tail}")
            if self._selector.select(timeout=left):
                line = self.proc.stdout.readline()
                if not line:
                    self.proc.wait(timeout=5)
                    raise WorkerError(f"the {self.name} worker exited: {self.stderr_tail()}")
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
