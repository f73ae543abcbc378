"""boto3 `bedrock-runtime`: Converse, ConverseStream, InvokeModel(WithResponseStream).

`endpoint_url` on loopback, dummy credentials (no credential chain is consulted, no
instance metadata), retries off (`total_max_attempts: 1`), the suite's short connect and
read timeouts. The operation is the scenario's `request.operation` (default `converse`;
`converse_stream` when the scenario streams); a stream is read to its end, so an
exception event raises botocore's EventStreamError. A Converse call that returns normally
(stopReason guardrail_intervened) returns the response dict for the finish-reason helper.
A stream (or InvokeModel's body) is closed once read, as a runtime closes it: an exception
event raises mid-iteration, and an EventStream left open keeps its connection's socket
until the garbage collector finds it (a ResourceWarning at some later test).
"""

from __future__ import annotations

import json
from contextlib import closing
from typing import Any

import boto3
from botocore.config import Config

from tests.conformance.drivers import TIMEOUT_S, Outcome, driver, outcome_of
from tests.conformance.loader import Scenario

BEDROCK_MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
MESSAGES: Any = [{"role": "user", "content": [{"text": "Say hello."}]}]
ONE_ATTEMPT = Config(
    retries={"total_max_attempts": 1, "mode": "standard"},
    connect_timeout=TIMEOUT_S,
    read_timeout=TIMEOUT_S,
)


def client_for(base: str) -> Any:
    return boto3.session.Session().client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=base,
        aws_access_key_id="AKIDTESTTESTTESTTEST",
        aws_secret_access_key="bedrock-test-secret",
        config=ONE_ATTEMPT,
    )


def operation(scenario: Scenario) -> str:
    default = "converse_stream" if scenario.stream is not None else "converse"
    return str(scenario.request.get("operation", default))


def call(client: Any, scenario: Scenario) -> Any:
    model = str(scenario.request.get("model", BEDROCK_MODEL))
    op = operation(scenario)
    if op == "converse":
        return client.converse(modelId=model, messages=MESSAGES)
    if op == "converse_stream":
        response = client.converse_stream(modelId=model, messages=MESSAGES)
        with closing(response["stream"]) as stream:
            return {**response, "stream": list(stream)}
    body = json.dumps(
        {
            "anthropic_version": "bedrock-2023-05-31",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "Say hello."}],
        }
    )
    if op == "invoke_model":
        response = client.invoke_model(modelId=model, body=body)
        with closing(response["body"]) as payload:
            return {**response, "body": payload.read()}
    if op == "invoke_model_with_response_stream":
        response = client.invoke_model_with_response_stream(modelId=model, body=body)
        with closing(response["body"]) as events:
            return {**response, "body": list(events)}
    raise ValueError(f"unknown bedrock operation {op!r}")


@driver("python.boto3")
def drive(scenario: Scenario, base: str) -> Outcome:
    client = client_for(base)
    try:
        return outcome_of(lambda: call(client, scenario))
    finally:
        client.close()
