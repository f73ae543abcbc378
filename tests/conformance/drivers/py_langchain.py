"""langchain-openai (ChatOpenAI, AzureChatOpenAI) and langchain-anthropic (ChatAnthropic).

`max_retries=0` and the suite's short timeout; `.invoke` for a response, `.stream` read
to its end (its chunks added up into one message) for a stream. A message that returned
normally is described by `descriptor_from_response`, which reads its `response_metadata`. Both packages re-raise the SDK's error as a subclass of the SDK
class and of langchain-core's ModelError (OpenAIRateLimitError, AnthropicContextOverflowError).
"""

from __future__ import annotations

import operator
from functools import reduce
from typing import Any

from langchain_anthropic import ChatAnthropic
from langchain_openai import AzureChatOpenAI, ChatOpenAI
from pydantic import SecretStr

from tests.conformance.apis import (
    ANTHROPIC_MODEL,
    AZURE_API_VERSION,
    AZURE_DEPLOYMENT,
    OPENAI_MODEL,
)
from tests.conformance.drivers import TIMEOUT_S, Outcome, driver, outcome_of
from tests.conformance.loader import Scenario

PROMPT = "Say hello."


def run(model: Any, scenario: Scenario) -> Any:
    """The message a runtime ends up with: `invoke`'s AIMessage, or a stream's chunks added up.

    Adding `AIMessageChunk`s merges their `response_metadata`, so the last chunk's
    `finish_reason` / `stop_reason` is in the whole message, where
    `descriptor_from_response` reads it.
    """
    if scenario.stream is not None:
        chunks = list(model.stream(PROMPT))
        return reduce(operator.add, chunks) if chunks else chunks
    return model.invoke(PROMPT)


@driver("python.langchain-openai")
def drive_openai(scenario: Scenario, base: str) -> Outcome:
    model: Any
    if scenario.api == "azure":
        model = AzureChatOpenAI(
            azure_endpoint=base,
            azure_deployment=AZURE_DEPLOYMENT,
            api_version=AZURE_API_VERSION,
            api_key=SecretStr("azure-test-key"),
            max_retries=0,
            timeout=TIMEOUT_S,
        )
    else:
        model = ChatOpenAI(
            model=OPENAI_MODEL,
            base_url=f"{base}/v1",
            api_key=SecretStr("sk-test"),
            max_retries=0,
            timeout=TIMEOUT_S,
        )
    return outcome_of(lambda: run(model, scenario))


@driver("python.langchain-anthropic")
def drive_anthropic(scenario: Scenario, base: str) -> Outcome:
    model = ChatAnthropic(  # type: ignore[call-arg]
        model_name=ANTHROPIC_MODEL,
        base_url=base,
        api_key=SecretStr("sk-ant-test"),
        max_retries=0,
        default_request_timeout=TIMEOUT_S,
        max_tokens_to_sample=64,
    )
    return outcome_of(lambda: run(model, scenario))
