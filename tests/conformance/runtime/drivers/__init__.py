"""The runtime suite's drivers: one module per language, found by `load_drivers`.

A driver module defines

    LANGUAGE = "node"                       # the pair ids' first word
    def unavailable() -> str | None: ...    # why it cannot run here (no node), or None
    def list_pairs() -> list[str]: ...      # cheap, at pytest collection (`worker_list`)
    def open_driver() -> ContextManager[RuntimeDriver]: ...

A `RuntimeDriver` lists its pairs and, asked for one, raises the real failure, describes
it with that language's helper and hands back the descriptor. A language whose runtime
lives in another process speaks JSON lines to a worker (`JsonLinesWorker`): `--list`
prints the pair ids as a JSON array; then one request per stdin line,

    {"pair": "node.abort-signal-timeout::tool-timeout.wrapper-limit",
     "env": {"tool_api": "http://127.0.0.1:PORT", "closed_port": PORT, "tmp": "/tmp/..."},
     "contract": true}

one answer per stdout line,

    {"pair": ..., "descriptor": {...descriptor-file shape...} | null, "chain": [...], "error": null | "..."}

where `contract: false` asks for the descriptor a runtime built before the contract
(origin only, no `time_limit`/`veto`/`stage`/`provider_calls`: the baseline), and `error`
is a driver bug (the pair could not raise its failure), never the failure itself.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from classifier import descriptor_from_data
from errorclass_client import Descriptor
from errorclass_client.descriptor import as_descriptor
from tests.conformance.line_worker import ANSWER_LIMIT_S, LineWorker, WorkerError


@dataclass(frozen=True)
class ToolEnv:
    """What the pairs may reach: a fake tool API on loopback, a closed loopback port, a folder."""

    tool_api: str
    closed_port: int
    tmp: str

    def as_json(self) -> dict[str, Any]:
        return {"tool_api": self.tool_api, "closed_port": self.closed_port, "tmp": self.tmp}


@dataclass(frozen=True)
class Described:
    pair: str
    descriptor: Descriptor | None
    chain: Sequence[Mapping[str, Any]] = field(default_factory=tuple)
    """What the real failure was, level by level (type, message), for reports."""


class DriverError(RuntimeError):
    """A driver could not run a pair (a bug in the pair, a dead worker), not a failure to judge."""


class RuntimeDriver(Protocol):
    language: str

    def pairs(self) -> list[str]: ...

    def describe(self, pair: str, env: ToolEnv, *, contract: bool = True) -> Described: ...


class DriverModule(Protocol):
    LANGUAGE: str

    def unavailable(self) -> str | None: ...

    def list_pairs(self) -> list[str]: ...

    def open_driver(self) -> AbstractContextManager[RuntimeDriver]: ...


def driver_modules() -> dict[str, ModuleType]:
    """Every module in this package that defines LANGUAGE, by language."""
    out: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        language = getattr(module, "LANGUAGE", None)
        if isinstance(language, str):
            out[language] = module
    return out


def worker_list(
    command: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None
) -> list[str]:
    """`<command> --list`: the worker's pair ids (it must answer without its dependencies)."""
    done = subprocess.run(
        [*command, "--list"],
        cwd=cwd,
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=ANSWER_LIMIT_S,
        check=False,
    )
    if done.returncode != 0:
        raise DriverError(f"{' '.join(command)} --list failed: {done.stderr[-2000:]}")
    listed = json.loads(done.stdout)
    if not isinstance(listed, list) or not all(isinstance(p, str) for p in listed):
        raise DriverError(f"{' '.join(command)} --list: expected a JSON array of pair ids")
    return listed


class JsonLinesWorker(LineWorker):
    """A long-lived worker process speaking the protocol above; `close()` ends it."""

    def __init__(
        self, language: str, command: Sequence[str], *, cwd: Path, env: Mapping[str, str]
    ) -> None:
        super().__init__(list(command), cwd, dict(env), language)
        self.language = language
        self._command = list(command)
        self._cwd = cwd
        self._env = dict(env)
        self._pairs: list[str] | None = None

    def pairs(self) -> list[str]:
        if self._pairs is None:
            self._pairs = worker_list(self._command, cwd=self._cwd, env=self._env)
        return list(self._pairs)

    def describe(self, pair: str, env: ToolEnv, *, contract: bool = True) -> Described:
        try:
            answer = self.request({"pair": pair, "env": env.as_json(), "contract": contract})
        except WorkerError as exc:
            raise DriverError(str(exc)) from exc
        if answer.get("error"):
            raise DriverError(f"{pair}: {answer['error']}")
        raw = answer.get("descriptor")
        return Described(
            pair=pair,
            descriptor=None if raw is None else as_descriptor(descriptor_from_data(raw)),
            chain=tuple(answer.get("chain") or ()),
        )


def worker_session(worker: JsonLinesWorker) -> Iterator[RuntimeDriver]:
    """For a driver module's `open_driver`: the worker for the block, ended after it."""
    try:
        yield worker
    finally:
        worker.close()
