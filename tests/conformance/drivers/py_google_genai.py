"""google-genai: `genai.Client` against the Gemini Developer API, generate_content.

Retries off (`HttpRetryOptions(attempts=1)`: one attempt, the original request), the
suite's short timeout (milliseconds in google-genai), a dummy API key; a stream scenario
uses generate_content_stream and reads it to its end. A call that returns normally
(a SAFETY finish reason, a blocked prompt) returns the response for the finish-reason
helper.
"""

from __future__ import annotations

from typing import Any

from google import genai
from google.genai import types

from tests.conformance.drivers import TIMEOUT_S, Outcome, driver, outcome_of
from tests.conformance.loader import Scenario

GEMINI_MODEL = "gemini-2.5-flash"
PROMPT = "Say hello."


def client_for(base: str) -> genai.Client:
    return genai.Client(
        api_key="gemini-test-key",
        http_options=types.HttpOptions(
            base_url=base,
            retry_options=types.HttpRetryOptions(attempts=1),
            timeout=int(TIMEOUT_S * 1000),
        ),
    )


def generate(client: genai.Client, scenario: Scenario) -> Any:
    model = str(scenario.request.get("model", GEMINI_MODEL))
    if scenario.stream is not None:
        return list(client.models.generate_content_stream(model=model, contents=PROMPT))
    return client.models.generate_content(model=model, contents=PROMPT)


@driver("python.google-genai")
def drive(scenario: Scenario, base: str) -> Outcome:
    with client_for(base) as client:
        return outcome_of(lambda: generate(client, scenario))
