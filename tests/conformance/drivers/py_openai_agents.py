"""openai-agents: Runner.run over OpenAIChatCompletionsModel with an openai (or Azure) client.

Tracing is disabled before anything runs (it would export spans to OpenAI's API), the
client has retries off and the suite's timeout, so one request reaches the fake provider.
The SDK lets the openai error through unwrapped (openai.RateLimitError, ...). A stream
scenario runs `Runner.run_streamed` and reads every event. A run that returns normally
gives its `RunResult` / `RunResultStreaming`, which `descriptor_from_response` reads
through `raw_responses`, as a runtime would.
"""

from __future__ import annotations

import os

os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"

import asyncio
from typing import Any

import openai
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled

from tests.conformance import netguard
from tests.conformance.apis import (
    AZURE_API_VERSION,
    AZURE_DEPLOYMENT,
    OPENAI_MODEL,
)
from tests.conformance.drivers import TIMEOUT_S, Outcome, driver
from tests.conformance.loader import Scenario

netguard.install()
set_tracing_disabled(True)
PROMPT = "Say hello."


def client_for(scenario: Scenario, base: str) -> openai.AsyncOpenAI:
    if scenario.api == "azure":
        return openai.AsyncAzureOpenAI(
            azure_endpoint=base,
            api_key="azure-test-key",
            api_version=AZURE_API_VERSION,
            max_retries=0,
            timeout=TIMEOUT_S,
        )
    return openai.AsyncOpenAI(
        base_url=f"{base}/v1", api_key="sk-test", max_retries=0, timeout=TIMEOUT_S
    )


async def run(scenario: Scenario, base: str) -> Any:
    model_name = AZURE_DEPLOYMENT if scenario.api == "azure" else OPENAI_MODEL
    model = OpenAIChatCompletionsModel(model=model_name, openai_client=client_for(scenario, base))
    agent = Agent(name="conformance", model=model)
    if scenario.stream is not None:
        result = Runner.run_streamed(agent, PROMPT, max_turns=1)
        async for _ in result.stream_events():
            pass
        return result
    return await Runner.run(agent, PROMPT, max_turns=1)


@driver("python.openai-agents")
def drive(scenario: Scenario, base: str) -> Outcome:
    try:
        return Outcome(response=asyncio.run(run(scenario, base)))
    except Exception as exc:
        return Outcome(exception=exc)
