"""openai-python: `OpenAI` for api openai, `AzureOpenAI` for api azure; chat completions."""

from __future__ import annotations

from typing import Any

import openai

from tests.conformance.apis import AZURE_API_VERSION, AZURE_DEPLOYMENT, OPENAI_MODEL, PROMPT
from tests.conformance.drivers import TIMEOUT_S, Outcome, driver, outcome_of
from tests.conformance.loader import Scenario

MESSAGES: Any = PROMPT


def client_for(scenario: Scenario, base: str) -> openai.OpenAI:
    """A client of the scenario's API with retries off and the suite's short timeout."""
    if scenario.api == "azure":
        return openai.AzureOpenAI(
            azure_endpoint=base,
            api_key="azure-test-key",
            api_version=AZURE_API_VERSION,
            max_retries=0,
            timeout=TIMEOUT_S,
        )
    return openai.OpenAI(base_url=f"{base}/v1", api_key="sk-test", max_retries=0, timeout=TIMEOUT_S)


def chat(client: openai.OpenAI, scenario: Scenario) -> Any:
    """One chat completion; a stream is read to its end (chunks returned as a list)."""
    model = AZURE_DEPLOYMENT if scenario.api == "azure" else OPENAI_MODEL
    if scenario.stream is not None:
        stream = client.chat.completions.create(model=model, messages=MESSAGES, stream=True)
        return list(stream)
    return client.chat.completions.create(model=model, messages=MESSAGES)


@driver("python.openai")
def drive(scenario: Scenario, base: str) -> Outcome:
    with client_for(scenario, base) as client:
        return outcome_of(lambda: chat(client, scenario))
