"""tenacity around a call, giving up after one attempt (so the server sees one request).

`python.tenacity` wraps the openai (or anthropic) SDK call, `python.tenacity-httpx` a plain
httpx call; tenacity raises `RetryError` from the last attempt's exception (its __cause__).
"""

from __future__ import annotations

import httpx
import tenacity

from tests.conformance.drivers import (
    TIMEOUT_S,
    Outcome,
    driver,
    outcome_of,
    py_anthropic,
    py_httpx,
    py_openai,
)
from tests.conformance.loader import Scenario

ONE_ATTEMPT = tenacity.Retrying(stop=tenacity.stop_after_attempt(1), reraise=False)


@driver("python.tenacity")
def drive(scenario: Scenario, base: str) -> Outcome:
    if scenario.api == "anthropic":
        with py_anthropic.client_for(base) as client:
            return outcome_of(lambda: ONE_ATTEMPT(py_anthropic.message, client, scenario))
    with py_openai.client_for(scenario, base) as oclient:
        return outcome_of(lambda: ONE_ATTEMPT(py_openai.chat, oclient, scenario))


@driver("python.tenacity-httpx")
def drive_httpx(scenario: Scenario, base: str) -> Outcome:
    with httpx.Client(timeout=TIMEOUT_S) as client:
        return outcome_of(lambda: ONE_ATTEMPT(py_httpx.call, client, scenario, base))
