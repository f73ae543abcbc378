"""litellm.completion against the fake provider: openai/, azure/, anthropic/ and gemini/ models.

`LITELLM_LOCAL_MODEL_COST_MAP=True` is set before litellm is imported (otherwise it
fetches its cost map from the internet on import), telemetry is off, and retries are off
twice over (`num_retries=0` for litellm's own retry loop, `max_retries=0` for the
underlying openai client). A stream is read to its end.

litellm builds pydantic `TypeAdapter`s over its TypedDicts lazily, in modules it imports
on first use: every `completion` imports `litellm.llms.github_copilot.per_user_auth` (to
attach a Copilot user session), a Gemini call its context-caching types, an Anthropic
reply its thinking-block types. Many of those TypedDicts have `ReadOnly` items, and
pydantic warns about each ("Items ... on TypedDict class ... are using the `ReadOnly`
qualifier", a UserWarning from `pydantic._internal._generate_schema`), which the suite's
`filterwarnings = error` turns into the exception the call "raises" (the one attempt then
never reaches the fake provider). So the import and each call run inside
`readonly_typeddicts_quiet()`: that one warning, by category, message and module, is
ignored there, and every other warning still fails the test.
"""

from __future__ import annotations

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("LITELLM_TELEMETRY", "False")

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.conformance import netguard
from tests.conformance.apis import (
    ANTHROPIC_MODEL,
    AZURE_API_VERSION,
    AZURE_DEPLOYMENT,
    OPENAI_MODEL,
    PROMPT,
)
from tests.conformance.drivers import TIMEOUT_S, Outcome, driver, outcome_of
from tests.conformance.loader import Scenario


@contextmanager
def readonly_typeddicts_quiet() -> Iterator[None]:
    """Ignore pydantic's warning about litellm's ReadOnly TypedDict items, and nothing else."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message=r"Items? .* on TypedDict class .* using the `ReadOnly` qualifier",
            category=UserWarning,
            module=r"pydantic\._internal\._generate_schema",
        )
        yield


with readonly_typeddicts_quiet():
    import litellm

netguard.install()
litellm.telemetry = False
litellm.suppress_debug_info = True
GEMINI_MODEL = "gemini-2.5-flash"


def arguments(scenario: Scenario, base: str) -> dict[str, Any]:
    common: dict[str, Any] = {
        "messages": PROMPT,
        "num_retries": 0,
        "max_retries": 0,
        "timeout": TIMEOUT_S,
        "stream": scenario.stream is not None,
    }
    if scenario.api == "openai":
        return {
            **common,
            "model": f"openai/{OPENAI_MODEL}",
            "api_base": f"{base}/v1",
            "api_key": "sk-test",
        }
    if scenario.api == "azure":
        return {
            **common,
            "model": f"azure/{AZURE_DEPLOYMENT}",
            "api_base": base,
            "api_key": "azure-test-key",
            "api_version": AZURE_API_VERSION,
        }
    if scenario.api == "anthropic":
        return {
            **common,
            "model": f"anthropic/{ANTHROPIC_MODEL}",
            "api_base": base,
            "api_key": "sk-ant-test",
            "max_tokens": 64,
        }
    if scenario.api == "gemini":
        return {
            **common,
            "model": f"gemini/{GEMINI_MODEL}",
            "api_base": base,
            "api_key": "gemini-test-key",
        }
    raise ValueError(f"no litellm route for api {scenario.api!r}")


def complete(scenario: Scenario, base: str) -> Any:
    with readonly_typeddicts_quiet():
        response = litellm.completion(**arguments(scenario, base))
        if scenario.stream is not None:
            return list(response)
        return response


@driver("python.litellm")
def drive(scenario: Scenario, base: str) -> Outcome:
    return outcome_of(lambda: complete(scenario, base))
