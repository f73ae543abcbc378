"""The drivers: one function per SDK that makes ONE real call against a scenario's base URL.

A driver gets the scenario and its base URL, makes a single call with the real SDK
(retries off, a short timeout) and returns an `Outcome`: the exception the SDK raised
(the runner describes it with our own helper), the response when the call returned
normally (a finish-reason failure), or a ready descriptor (drivers that run outside this
process, such as Node's, describe the error there with that language's helper).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.conformance.loader import Scenario

TIMEOUT_S = 1.0
"""Every driver's client timeout: `hang` and `connect_timeout` scenarios wait this long."""


@dataclass(frozen=True)
class Outcome:
    exception: BaseException | None = None
    response: Any = None
    descriptor: dict[str, Any] | None = None
    body: bytes | None = None
    """The error body the driver read itself, for a client whose exception keeps none."""


Driver = Callable[[Scenario, str], Outcome]
DRIVERS: dict[str, Driver] = {}


def driver(name: str) -> Callable[[Driver], Driver]:
    """Register a driver under its SDK name (`python.openai`, `node.openai`)."""

    def register(fn: Driver) -> Driver:
        DRIVERS[name] = fn
        return fn

    return register


def outcome_of(call: Callable[[], Any]) -> Outcome:
    """Run the call; what it raised, or what it returned."""
    try:
        return Outcome(response=call())
    except Exception as exc:
        return Outcome(exception=exc)


def load_all() -> dict[str, Driver]:
    """Import every driver module (each registers itself) and return the registry."""
    from tests.conformance.drivers import (  # noqa: F401 - imported to register
        py_aiohttp,
        py_anthropic,
        py_boto3,
        py_google_genai,
        py_httpx,
        py_langchain,
        py_litellm,
        py_openai,
        py_openai_agents,
        py_pydantic_ai,
        py_requests,
        py_tenacity,
    )

    return DRIVERS
