"""anthropic-sdk-python: `Anthropic`, messages.create (streamed with stream=True)."""

from __future__ import annotations

from typing import Any

import anthropic

from tests.conformance.apis import ANTHROPIC_MODEL, PROMPT
from tests.conformance.drivers import TIMEOUT_S, Outcome, driver, outcome_of
from tests.conformance.loader import Scenario

MESSAGES: Any = PROMPT


def client_for(base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=base, api_key="sk-ant-test", max_retries=0, timeout=TIMEOUT_S
    )


def message(client: anthropic.Anthropic, scenario: Scenario) -> Any:
    if scenario.stream is not None:
        stream = client.messages.create(
            model=ANTHROPIC_MODEL,
            max_tokens=64,
            messages=MESSAGES,
            stream=True,
        )
        return list(stream)
    return client.messages.create(model=ANTHROPIC_MODEL, max_tokens=64, messages=MESSAGES)


@driver("python.anthropic")
def drive(scenario: Scenario, base: str) -> Outcome:
    with client_for(base) as client:
        return outcome_of(lambda: message(client, scenario))
