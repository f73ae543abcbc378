"""Each API's request as a hand-rolled HTTP client sends it (for the plain HTTP-client drivers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.conformance.loader import Scenario

OPENAI_MODEL = "gpt-4o-mini"
AZURE_DEPLOYMENT = "gpt-4o"
AZURE_API_VERSION = "2024-10-21"
ANTHROPIC_MODEL = "claude-sonnet-5-5"
ANTHROPIC_VERSION = "2023-06-01"
PROMPT = [{"role": "user", "content": "Say hello."}]


@dataclass(frozen=True)
class Request:
    url: str
    headers: dict[str, str]
    json: dict[str, Any]


def request_for(scenario: Scenario, base: str) -> Request:
    """The chat request of the scenario's API, streaming when the scenario streams."""
    stream = scenario.stream is not None
    if scenario.api == "openai":
        body: dict[str, Any] = {"model": OPENAI_MODEL, "messages": PROMPT}
        headers = {"authorization": "Bearer sk-test"}
        url = f"{base}/v1/chat/completions"
    elif scenario.api == "azure":
        body = {"messages": PROMPT}
        headers = {"api-key": "azure-test-key"}
        url = (
            f"{base}/openai/deployments/{AZURE_DEPLOYMENT}/chat/completions"
            f"?api-version={AZURE_API_VERSION}"
        )
    elif scenario.api == "anthropic":
        body = {"model": ANTHROPIC_MODEL, "max_tokens": 64, "messages": PROMPT}
        headers = {"x-api-key": "sk-ant-test", "anthropic-version": ANTHROPIC_VERSION}
        url = f"{base}/v1/messages"
    else:
        raise ValueError(f"no plain-HTTP request for api {scenario.api!r}")
    if stream:
        body["stream"] = True
    return Request(url=url, headers={"content-type": "application/json", **headers}, json=body)
