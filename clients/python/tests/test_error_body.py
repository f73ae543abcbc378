"""The helper on real HTTP-client and SDK exceptions: provider error bodies, aiohttp's `.code`,
codes that only repeat the status, tenacity's last attempt, and the finish-reason convention."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import anthropic
import httpx
import openai
import pytest
import requests
import tenacity
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from classifier import Ruleset, classify
from errorclass_client import (
    Descriptor,
    Origin,
    descriptor_from_exception,
    descriptor_from_finish_reason,
    descriptor_from_response,
)

URL_OPENAI = "https://api.openai.com/v1/chat/completions"


def httpx_error(status: int, body: object, headers: dict[str, str] | None = None) -> BaseException:
    """A real httpx.HTTPStatusError from raise_for_status() on a read response."""
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = httpx.Response(
        status, content=content, headers=headers, request=httpx.Request("POST", URL_OPENAI)
    )
    try:
        response.raise_for_status()
    except httpx.HTTPStatusError as exc:
        return exc
    raise AssertionError("no error")


def requests_error(status: int, body: object) -> BaseException:
    """A real requests.HTTPError from raise_for_status() on a read response."""
    response = requests.Response()
    response.status_code = status
    response.reason = "Bad Request"
    response.url = URL_OPENAI
    response._content = json.dumps(body).encode()
    try:
        response.raise_for_status()
    except requests.HTTPError as exc:
        return exc
    raise AssertionError("no error")


def describe(exc: BaseException, provider: str = "openai") -> Descriptor:
    return descriptor_from_exception(exc, origin="provider", provider=provider)


OPENAI_CONTEXT = {
    "error": {
        "message": "This model's maximum context length is 128000 tokens.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
AZURE_FILTER = {
    "error": {
        "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
        "type": None,
        "param": "prompt",
        "code": "content_filter",
        "status": 400,
        "innererror": {
            "code": "ResponsibleAIPolicyViolation",
            "content_filter_result": {"jailbreak": {"filtered": True, "detected": True}},
        },
    }
}
ANTHROPIC_TOO_LONG = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 208651 tokens > 200000 maximum",
    },
    "request_id": "req_011",
}


def test_openai_body_on_httpx_and_requests(bundled: Ruleset) -> None:
    """A 400 context_length_exceeded read by a plain client is BudgetExceeded, not a generic 4xx."""
    for exc in (httpx_error(400, OPENAI_CONTEXT), requests_error(400, OPENAI_CONTEXT)):
        d = describe(exc)
        assert (d.http_status, d.code) == (400, "context_length_exceeded")
        assert "maximum context length" in d.message
        assert classify(bundled, d).error_class.name == "BudgetExceeded"


def test_azure_content_filter_body(bundled: Ruleset) -> None:
    d = describe(httpx_error(400, AZURE_FILTER), provider="azure")
    assert d.code == "content_filter"
    assert classify(bundled, d).error_class.name == "ContentFiltered"


def test_anthropic_body_type_message_and_error_code(bundled: Ruleset) -> None:
    """Anthropic's error.type is the code; the message reaches the prompt-too-long rule;
    details.error_code is the attribute error_code."""
    d = describe(requests_error(400, ANTHROPIC_TOO_LONG), provider="anthropic")
    assert d.code == "invalid_request_error"
    assert d.message.endswith("prompt is too long: 208651 tokens > 200000 maximum")
    assert classify(bundled, d).error_class.name == "BudgetExceeded"
    spend = {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "spend limit",
            "details": {"error_code": "contract_spend_limit_reached"},
        },
    }
    d = describe(httpx_error(429, spend), provider="anthropic")
    assert (d.code, dict(d.attributes)) == (
        "rate_limit_error",
        {"error_code": "contract_spend_limit_reached"},
    )
    assert classify(bundled, d).action.id == "provider.fix-billing"
    caller = descriptor_from_exception(
        httpx_error(429, spend), origin="provider", attributes={"error_code": "mine"}
    )
    assert caller.attributes["error_code"] == "mine"  # the caller's attributes win


def test_gemini_body_status_is_code_and_grpc_status() -> None:
    """Gemini's error.code is the HTTP status again (not a code); error.status is the code."""
    body = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
        }
    }
    d = describe(httpx_error(429, body), provider="gemini")
    assert (d.http_status, d.code, d.grpc_status) == (429, "RESOURCE_EXHAUSTED", 8)


def test_bedrock_error_type_header_and_body() -> None:
    header = httpx_error(
        429,
        {"message": "Too many requests, please wait before trying again."},
        headers={"x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/"},
    )
    assert describe(header, provider="bedrock").code == "ThrottlingException"
    body = requests_error(400, {"__type": "com.amazon.coral.validate#ValidationException"})
    assert describe(body, provider="bedrock").code == "ValidationException"


def test_a_code_that_repeats_the_status_is_not_a_code() -> None:
    """Azure's `"code": "429"`, on a plain client or on the openai SDK's own `.code`."""
    body = {"error": {"code": "429", "message": "Requests ... exceeded token rate limit"}}
    assert describe(httpx_error(429, body)).code == ""
    response = httpx.Response(429, json=body, request=httpx.Request("POST", URL_OPENAI))
    sdk = openai.RateLimitError("Error code: 429", response=response, body=body["error"])  # type: ignore[arg-type]
    assert sdk.code == "429"
    assert describe(sdk).code == ""


def test_unread_and_foreign_bodies_give_nothing() -> None:
    """A streamed response never read, HTML, or an unknown JSON shape: no code, no guess."""
    html = httpx_error(502, b"<html><head><title>502 Bad Gateway</title></head></html>")
    assert (describe(html).code, describe(html).http_status) == ("", 502)
    other = describe(httpx_error(400, {"detail": "nope"}))
    assert other.code == ""
    streamed = httpx.Response(
        400,
        stream=httpx.ByteStream(json.dumps(OPENAI_CONTEXT).encode()),
        request=httpx.Request("POST", URL_OPENAI),
    )
    with pytest.raises(httpx.HTTPStatusError) as info:
        streamed.raise_for_status()
    assert describe(info.value).code == ""


def test_aiohttp_code_is_the_status_and_never_read() -> None:
    """aiohttp's ClientResponseError.code is a deprecated alias of .status (reading it warns)."""
    url = URL(URL_OPENAI)
    info = aiohttp.RequestInfo(url, "POST", CIMultiDictProxy(CIMultiDict()), url)
    exc = aiohttp.ClientResponseError(info, (), status=400, message="Bad Request")
    with pytest.warns(DeprecationWarning, match="code property is deprecated"):
        assert exc.code == 400
    d = describe(exc)  # the suite's filterwarnings=error would fail here if .code were read
    assert (d.type, d.http_status, d.code, d.grpc_status) == (
        "aiohttp.client_exceptions.ClientResponseError",
        400,
        "",
        None,
    )


def test_an_aiohttp_error_with_the_body_its_caller_read_carries_the_code(bundled: Ruleset) -> None:
    """ClientResponseError keeps no body; `body=` hands over the one the caller read, with the
    exception's headers (Bedrock's error type is a header): the answer is no longer Unknown."""
    url = URL(URL_OPENAI)
    info = aiohttp.RequestInfo(url, "POST", CIMultiDictProxy(CIMultiDict()), url)
    exc = aiohttp.ClientResponseError(info, (), status=400, message="Bad Request")
    bare = descriptor_from_exception(exc, origin="provider")
    assert classify(bundled, bare).error_class.name == "Unknown"
    read = json.dumps(OPENAI_CONTEXT).encode()
    d = descriptor_from_exception(exc, origin="provider", body=read)
    assert (d.code, d.http_status) == ("context_length_exceeded", 400)
    assert "maximum context length" in d.message
    assert classify(bundled, d).error_class.name == "BudgetExceeded"
    headers = CIMultiDictProxy(CIMultiDict({"x-amzn-ErrorType": "ThrottlingException:http://x"}))
    throttled = aiohttp.ClientResponseError(
        info, (), status=400, message="Bad Request", headers=headers
    )
    aws = descriptor_from_exception(throttled, body=b'{"message": "Too many requests"}')
    assert (aws.code, aws.message) == (
        "ThrottlingException",
        "400, message='Bad Request', url='" + URL_OPENAI + "'\nToo many requests",
    )
    assert descriptor_from_exception(exc, body=b"<html>not json</html>").code == ""


def test_real_sdk_errors_keep_their_codes() -> None:
    """openai's .code and anthropic's body type, as the SDKs build them."""
    body = OPENAI_CONTEXT["error"]
    response = httpx.Response(400, json=OPENAI_CONTEXT, request=httpx.Request("POST", URL_OPENAI))
    oai = openai.BadRequestError("Error code: 400", response=response, body=body)  # type: ignore[arg-type]
    assert (describe(oai).code, describe(oai).http_status) == ("context_length_exceeded", 400)
    ant_response = httpx.Response(
        529,
        json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        request=httpx.Request("POST", "https://api.anthropic.com/v1/messages"),
    )
    ant = anthropic.OverloadedError(
        "Error code: 529",
        response=ant_response,  # type: ignore[arg-type]
        body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    d = describe(ant, provider="anthropic")
    assert (d.type, d.http_status, d.code) == ("anthropic.OverloadedError", 529, "overloaded_error")


def test_tenacity_retry_error_carries_the_last_attempt(bundled: Ruleset) -> None:
    """RetryError is raised from the last attempt's exception; the helper lists it (once) as a
    cause, with its code, so the RetryError gets the last attempt's class."""
    quota = {
        "error": {
            "message": "You exceeded your current quota",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    }

    def call() -> Any:
        raise httpx_error(429, quota)

    with pytest.raises(tenacity.RetryError) as info:
        tenacity.Retrying(stop=tenacity.stop_after_attempt(1))(call)
    d = describe(info.value)
    assert d.type == "tenacity.RetryError"
    assert [(c.type, c.http_status, c.code) for c in d.causes] == [
        ("httpx.HTTPStatusError", 429, "insufficient_quota")
    ]
    answer = classify(bundled, d)
    assert (answer.error_class.name, answer.action.id) == ("RateLimited", "provider.fix-billing")
    # a RetryError raised by hand keeps the attempt only in last_attempt
    by_hand = tenacity.RetryError(info.value.last_attempt)
    assert [c.type for c in describe(by_hand).causes] == ["httpx.HTTPStatusError"]


def test_finish_reasons_from_real_sdk_responses(bundled: Ruleset) -> None:
    """openai ChatCompletion, anthropic Message, and the same as JSON; cut-offs are no failure."""
    completion = openai.types.chat.ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1764547200,
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": ""},
                    "finish_reason": "content_filter",
                }
            ],
        }
    )
    d = descriptor_from_response(completion)
    assert d is not None
    assert (d.type, d.supertypes, d.origin, d.provider, d.code, d.attributes["model"]) == (
        "errorclass.FinishReason",
        ("errorclass.ResponseFailure",),
        Origin.provider,
        "openai",
        "content_filter",
        "gpt-4o-mini-2024-07-18",
    )
    assert classify(bundled, d).error_class.name == "ContentFiltered"
    message = anthropic.types.Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-5-5",
            "content": [],
            "stop_reason": "refusal",
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 0},
        }
    )
    refusal = descriptor_from_response(message)
    assert refusal is not None
    assert (refusal.provider, refusal.code) == ("anthropic", "refusal")
    assert (
        descriptor_from_response(message.model_copy(update={"stop_reason": "max_tokens"})) is None
    )
    assert descriptor_from_response(completion.model_dump(), provider="azure") is not None
    assert descriptor_from_response({"choices": [{"finish_reason": "length"}]}) is None
    assert descriptor_from_response({"choices": [{"finish_reason": "stop"}]}) is None


def test_finish_reasons_gemini_and_bedrock_shapes(bundled: Ruleset) -> None:
    gemini = {"candidates": [{"finishReason": "SAFETY"}], "modelVersion": "gemini-2.5-flash"}
    d = descriptor_from_response(gemini)
    assert d is not None
    assert (d.provider, d.code, d.type) == ("gemini", "SAFETY", "errorclass.FinishReason")
    blocked = descriptor_from_response({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}})
    assert blocked is not None
    assert (blocked.type, blocked.code) == ("errorclass.PromptBlocked", "PROHIBITED_CONTENT")
    assert classify(bundled, blocked).error_class.name == "ContentFiltered"
    assert descriptor_from_response({"candidates": [{"finishReason": "MAX_TOKENS"}]}) is None
    bedrock = descriptor_from_response({"stopReason": "guardrail_intervened", "output": {}})
    assert bedrock is not None
    assert (bedrock.provider, bedrock.code) == ("bedrock", "guardrail_intervened")
    stream = [
        {"messageStart": {"role": "assistant"}},
        {"messageStop": {"stopReason": "content_filtered"}},
    ]
    assert descriptor_from_response(stream) is not None


def test_descriptor_from_finish_reason() -> None:
    d = descriptor_from_finish_reason("SAFETY", provider="gemini", model="gemini-2.5-pro")
    assert d is not None
    assert (d.code, d.language, d.attributes["model"]) == ("SAFETY", "python", "gemini-2.5-pro")
    assert descriptor_from_finish_reason("length", provider="openai") is None
    assert descriptor_from_finish_reason("OTHER", provider="gemini") is None
    blocked = descriptor_from_finish_reason("OTHER", provider="gemini", prompt_blocked=True)
    assert blocked is not None
    assert blocked.type == "errorclass.PromptBlocked"
    none = descriptor_from_finish_reason(
        "BLOCKED_REASON_UNSPECIFIED", provider="gemini", prompt_blocked=True
    )
    assert none is None
