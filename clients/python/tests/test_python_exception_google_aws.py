"""descriptor_from_exception on real google-genai, google-api-core, botocore and litellm errors.

The objects are the SDKs' own (the conformance extra installs them), built the way the SDK
builds them when a response comes back, so the helper is tested on what a runtime catches.
"""

# google-api-core's exception constructors are untyped.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import os

import httpx
import pytest

from errorclass_client import descriptor_from_exception
from errorclass_client.facts import GRPC_CODES

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"


def gemini_body(code: int, status: str, message: str) -> dict[str, object]:
    return {"error": {"code": code, "message": message, "status": status, "details": []}}


def test_google_genai_status_is_grpc_status_and_code() -> None:
    from google.genai import errors

    response = httpx.Response(429, json=gemini_body(429, "RESOURCE_EXHAUSTED", "quota"))
    with pytest.raises(errors.ClientError) as caught:
        errors.APIError.raise_for_response(response)
    d = descriptor_from_exception(caught.value, origin="provider", provider="gemini")
    assert d.type == "google.genai.errors.ClientError"
    assert d.supertypes == ("google.genai.errors.APIError", "Exception")
    assert d.http_status == 429
    assert d.grpc_status == GRPC_CODES["RESOURCE_EXHAUSTED"]
    assert d.code == "RESOURCE_EXHAUSTED"  # the status name, never "429"


@pytest.mark.parametrize(
    ("status", "name"),
    [
        (400, "INVALID_ARGUMENT"),
        (400, "FAILED_PRECONDITION"),
        (403, "PERMISSION_DENIED"),
        (404, "NOT_FOUND"),
        (500, "INTERNAL"),
        (503, "UNAVAILABLE"),
        (504, "DEADLINE_EXCEEDED"),
    ],
)
def test_google_genai_every_documented_status(status: int, name: str) -> None:
    from google.genai import errors

    response = httpx.Response(status, json=gemini_body(status, name, "m"))
    with pytest.raises(errors.APIError) as caught:
        errors.APIError.raise_for_response(response)
    d = descriptor_from_exception(caught.value)
    assert (d.http_status, d.grpc_status, d.code) == (status, GRPC_CODES[name], name)


def test_google_genai_error_inside_a_200_stream_keeps_the_error_status() -> None:
    """google-genai raises a stream's `{"error": ...}` line with the 200 stream response."""
    from google.genai import errors

    stream = httpx.Response(200, text="")
    body = gemini_body(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted")
    with pytest.raises(errors.ClientError) as caught:
        errors.APIError.raise_error(429, body, stream)
    d = descriptor_from_exception(caught.value)
    assert d.http_status == 429  # not the stream's 200
    assert d.code == "RESOURCE_EXHAUSTED"


def test_google_genai_body_without_status_falls_back_to_the_generic_reading() -> None:
    """A non-JSON error body: google-genai sets status to the reason phrase, not a gRPC name."""
    from google.genai import errors

    response = httpx.Response(502, text="<html>bad gateway</html>")
    with pytest.raises(errors.ServerError) as caught:
        errors.APIError.raise_for_response(response)
    d = descriptor_from_exception(caught.value)
    assert d.http_status == 502
    assert d.grpc_status is None


def test_google_api_core_status() -> None:
    from google.api_core import exceptions

    for exc, http, name in [
        (exceptions.ResourceExhausted("Quota exceeded"), 429, "RESOURCE_EXHAUSTED"),
        (exceptions.DeadlineExceeded("Deadline Exceeded"), 504, "DEADLINE_EXCEEDED"),
        (exceptions.InvalidArgument("bad"), 400, "INVALID_ARGUMENT"),
        (exceptions.ServiceUnavailable("down"), 503, "UNAVAILABLE"),
    ]:
        d = descriptor_from_exception(exc, origin="provider")
        assert (d.http_status, d.grpc_status, d.code) == (http, GRPC_CODES[name], name), exc


def test_google_status_on_a_cause() -> None:
    """A wrapper (pydantic-ai's ModelHTTPError, a tenacity RetryError) keeps the status one cause down."""
    from google.genai import errors

    response = httpx.Response(504, json=gemini_body(504, "DEADLINE_EXCEEDED", "Deadline"))
    try:
        try:
            errors.APIError.raise_for_response(response)
        except errors.APIError as inner:
            raise RuntimeError("model call failed") from inner
    except RuntimeError as outer:
        d = descriptor_from_exception(outer)
    assert d.causes[0].grpc_status == GRPC_CODES["DEADLINE_EXCEEDED"]
    assert d.causes[0].code == "DEADLINE_EXCEEDED"
    assert d.causes[0].http_status == 504


def test_botocore_client_error_code_and_status() -> None:
    from botocore.exceptions import ClientError, EventStreamError

    response = {
        "Error": {"Code": "ThrottlingException", "Message": "Too many requests"},
        "ResponseMetadata": {"HTTPStatusCode": 429, "RequestId": "r-1"},
    }
    d = descriptor_from_exception(ClientError(response, "Converse"), provider="bedrock")
    assert (d.type, d.http_status, d.code) == (
        "botocore.exceptions.ClientError",
        429,
        "ThrottlingException",
    )
    stream = EventStreamError(
        {"Error": {"Code": "modelStreamErrorException", "Message": "x"}}, "ConverseStream"
    )
    d = descriptor_from_exception(stream)
    assert d.supertypes[0] == "botocore.exceptions.ClientError"
    assert (d.http_status, d.code) == (None, "modelStreamErrorException")


def test_litellm_status_repeated_as_code_is_not_a_code() -> None:
    """litellm's RateLimitError sets `code = "429"`: that is the status, not an error code."""
    from litellm.exceptions import RateLimitError

    exc = RateLimitError("slow down", llm_provider="openai", model="gpt-4o")
    d = descriptor_from_exception(exc)
    assert d.http_status == 429
    assert d.code == ""


def test_google_api_core_http_only_class_sends_no_code() -> None:
    """TooManyRequests names an HTTP status only (grpc_status_code None): no gRPC status, no code."""
    from google.api_core import exceptions

    d = descriptor_from_exception(exceptions.TooManyRequests("Quota exceeded"))
    assert (d.http_status, d.grpc_status, d.code) == (429, None, "")
