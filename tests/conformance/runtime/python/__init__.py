"""Python's runtime pairs: real code raising each failure, with what the runtime knows.

A pair function takes the ToolEnv and returns a `Failure`: the exception the real code
raised, the origin a runtime gives it, and `knows`, what only the runtime knows (the
contract's keyword arguments of `descriptor_from_exception`: `time_limit`, `veto`,
`stage`, `refused_by`, `provider_calls`). The driver describes it with the helper (in the baseline,
with the origin only). A pair that exercises a helper that builds the descriptor itself
(`describe_tool_failure`) returns that descriptor in `descriptor`.

Pairs register with `@pair("mechanism", "situation-id", ...)`, one per situation named;
the modules below are imported by `load_pairs`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from errorclass_client import Descriptor
from tests.conformance.runtime.drivers import ToolEnv

LANGUAGE = "python"


@dataclass(frozen=True)
class Failure:
    exc: BaseException | None
    origin: str
    knows: Mapping[str, str] = field(default_factory=dict)
    descriptor: Descriptor | None = None
    """Set by a pair whose helper builds the descriptor itself (the contract's own helpers)."""


PairFunction = Callable[[ToolEnv], Failure]
PAIRS: dict[str, PairFunction] = {}


def pair(mechanism: str, *situations: str) -> Callable[[PairFunction], PairFunction]:
    def register(fn: PairFunction) -> PairFunction:
        for situation in situations:
            pid = f"{LANGUAGE}.{mechanism}::{situation}"
            if pid in PAIRS:
                raise ValueError(f"pair {pid} registered twice")
            PAIRS[pid] = fn
        return fn

    return register


def raised(fn: Callable[[], Any]) -> BaseException:
    """What `fn` raised; a pair whose code raises nothing is a bug in the pair."""
    try:
        fn()
    except BaseException as exc:
        return exc
    raise AssertionError(f"{fn!r} raised nothing")


def load_pairs() -> dict[str, PairFunction]:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return dict(PAIRS)
