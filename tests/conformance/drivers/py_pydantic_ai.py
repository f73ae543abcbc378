"""pydantic-ai (slim): an Agent over the openai, Azure, anthropic, google-genai and boto3 clients.

Each model is given an SDK client built with retries off and the suite's timeout, so
pydantic-ai makes one request and re-raises the SDK error as its own ModelHTTPError
categories (ModelRateLimitError, ModelContextWindowExceededError, ...) with the SDK error
as `__cause__`. A stream scenario runs `run_stream` and reads the text to its end. A run
that returns normally gives its `AgentRunResult` / `StreamedRunResult`, whose last
`ModelResponse` keeps the finish reason (`descriptor_from_response` reads it there), as a
runtime would.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import openai
from pydantic_ai import Agent
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
from pydantic_ai.models.bedrock import BedrockConverseModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.bedrock import BedrockProvider
from pydantic_ai.providers.google import GoogleProvider
from pydantic_ai.providers.openai import OpenAIProvider

from tests.conformance.apis import (
    ANTHROPIC_MODEL,
    AZURE_API_VERSION,
    AZURE_DEPLOYMENT,
    OPENAI_MODEL,
)
from tests.conformance.drivers import TIMEOUT_S, Outcome, driver, py_boto3, py_google_genai
from tests.conformance.loader import Scenario

PROMPT = "Say hello."
MAX_TOKENS = 64
"""As the other drivers ask: without it, AnthropicModel streams a plain `run` behind the
scenes (the model's default max_tokens is above its non-streaming limit and the client
has a custom timeout), and a non-stream scenario's JSON answer to a streaming request is
not what the real API sends (the fake provider flags that; see `stream_mismatches`)."""


def model_for(scenario: Scenario, base: str) -> Model:
    if scenario.api == "openai":
        oc = openai.AsyncOpenAI(
            base_url=f"{base}/v1", api_key="sk-test", max_retries=0, timeout=TIMEOUT_S
        )
        return OpenAIChatModel(OPENAI_MODEL, provider=OpenAIProvider(openai_client=oc))
    if scenario.api == "azure":
        az = openai.AsyncAzureOpenAI(
            azure_endpoint=base,
            api_key="azure-test-key",
            api_version=AZURE_API_VERSION,
            max_retries=0,
            timeout=TIMEOUT_S,
        )
        return OpenAIChatModel(AZURE_DEPLOYMENT, provider=OpenAIProvider(openai_client=az))
    if scenario.api == "anthropic":
        ac = anthropic.AsyncAnthropic(
            base_url=base, api_key="sk-ant-test", max_retries=0, timeout=TIMEOUT_S
        )
        return AnthropicModel(
            ANTHROPIC_MODEL,
            provider=AnthropicProvider(anthropic_client=ac),
            settings=AnthropicModelSettings(max_tokens=MAX_TOKENS),
        )
    if scenario.api == "gemini":
        gc = py_google_genai.client_for(base)
        return GoogleModel(py_google_genai.GEMINI_MODEL, provider=GoogleProvider(client=gc))
    if scenario.api == "bedrock":
        bc = py_boto3.client_for(base)
        return BedrockConverseModel(
            py_boto3.BEDROCK_MODEL, provider=BedrockProvider(bedrock_client=bc)
        )
    raise ValueError(f"no pydantic-ai model for api {scenario.api!r}")


async def run(scenario: Scenario, base: str) -> Any:
    agent = Agent(model_for(scenario, base))
    if scenario.stream is not None:
        async with agent.run_stream(PROMPT) as result:
            async for _ in result.stream_text():
                pass
            return result
    return await agent.run(PROMPT)


@driver("python.pydantic-ai")
def drive(scenario: Scenario, base: str) -> Outcome:
    try:
        return Outcome(response=asyncio.run(run(scenario, base)))
    except Exception as exc:
        return Outcome(exception=exc)
