"""Python's runtime pairs, run in this process (tests/conformance/runtime/python/).

Each pair's real code raises; the exception is described with
`classifier.client.descriptor_from_exception`, with the origin the runtime gives it and,
under the contract, what only the runtime knows (`time_limit=`, `veto=`, `stage=`,
`refused_by=`, `provider_calls=`). The baseline (`contract=False`) is the descriptor a runtime could
build before the contract: the origin only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from errorclass_client import descriptor_from_exception
from tests.conformance.runtime.drivers import Described, DriverError, RuntimeDriver, ToolEnv
from tests.conformance.runtime.python import Failure, PairFunction, load_pairs

LANGUAGE = "python"


def unavailable() -> str | None:
    return None


def chain_of(exc: BaseException) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen and len(out) < 8:
        seen.add(id(e))
        out.append(
            {"type": f"{type(e).__module__}.{type(e).__qualname__}", "message": str(e)[:200]}
        )
        e = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
    return out


class PythonDriver:
    language = LANGUAGE

    def __init__(self, functions: dict[str, PairFunction]) -> None:
        self._functions = functions

    def pairs(self) -> list[str]:
        return list(self._functions)

    def failure(self, pair: str, env: ToolEnv) -> Failure:
        try:
            return self._functions[pair](env)
        except AssertionError as exc:
            raise DriverError(f"{pair}: {exc}") from exc

    def describe(self, pair: str, env: ToolEnv, *, contract: bool = True) -> Described:
        failure = self.failure(pair, env)
        if failure.descriptor is not None:
            return Described(pair, failure.descriptor)
        if failure.exc is None:
            raise DriverError(f"{pair}: the pair gave neither an exception nor a descriptor")
        knows = dict(failure.knows) if contract else {}
        d = descriptor_from_exception(
            failure.exc,
            origin=failure.origin,
            time_limit=knows.get("time_limit"),
            veto=knows.get("veto"),
            stage=knows.get("stage"),
            refused_by=knows.get("refused_by"),
            provider_calls=knows.get("provider_calls"),
        )
        return Described(pair, d, chain_of(failure.exc))


def list_pairs() -> list[str]:
    return list(load_pairs())


@contextmanager
def open_driver() -> Iterator[RuntimeDriver]:
    yield PythonDriver(load_pairs())
