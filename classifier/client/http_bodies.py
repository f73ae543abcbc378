"""The provider's error body on an HTTP client's exception, read without importing any SDK.

`httpx.HTTPStatusError` and `requests.HTTPError` keep the response (`exc.response`), and
with it the body the provider sent: the evidence a descriptor needs (a 400 that is
`context_length_exceeded` is BudgetExceeded, an Azure 400 `content_filter` is
ContentFiltered), which the status alone does not carry. The shapes read:

- OpenAI, Azure OpenAI: `{"error": {"code", "message", "type", "param"}}`; the code is
  `error.code`.
- Anthropic: `{"type": "error", "error": {"type", "message", "details": {"error_code"}}}`;
  the code is `error.type`, and `details.error_code` goes to the attribute `error_code`.
- Gemini and Google APIs: `{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
  "message"}}`; the code is `error.status`, and so is `grpc_status`.
- Bedrock (AWS JSON): `{"message": ...}` with the header `x-amzn-ErrorType:
  ThrottlingException:...`, or `{"__type": "...#ValidationException"}`; the code is that
  error type.

The provider's `message` is returned too, so rules that must read it (Anthropic's context
overflow is a generic invalid_request_error whose message says `prompt is too long`) see it.

Only a body the client already read is used (`response._content`, set by httpx's and
requests' `read()`): describing a failure never reads from the network. aiohttp's
`ClientResponseError` holds no response, so its caller passes the body it read
(`descriptor_from_exception(exc, body=...)`), which is read the same way.
Nothing is invented: a code that only repeats the HTTP status (Gemini's `error.code: 429`,
Azure's `"code": "429"`) is not a code, and an unknown shape gives nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from classifier.taxonomy import GRPC_CODES

MAX_BODY_BYTES = 256 * 1024
"""Larger bodies are not parsed (an error body is small; a large one is not an error body)."""


@dataclass(frozen=True)
class BodyEvidence:
    code: str = ""
    grpc_status: int | None = None
    message: str = ""
    attributes: Mapping[str, str] = field(default_factory=dict)


NOTHING = BodyEvidence()


def evidence_from_response(response: object, status: int | None) -> BodyEvidence:
    """What the provider's error body (and headers) on an HTTP response say; NOTHING when unread."""
    if response is None:
        return NOTHING
    body = _json_body(response)
    aws_type = _aws_error_type(response, body)
    if aws_type:
        message = _text(body.get("message")) or _text(body.get("Message"))
        return BodyEvidence(code=aws_type, message=message)
    error = body.get("error")
    if not isinstance(error, Mapping):
        return NOTHING
    message = _text(error.get("message"))
    if body.get("type") == "error" and isinstance(error.get("type"), str):
        details = error.get("details")
        detail_code = _text(details.get("error_code")) if isinstance(details, Mapping) else ""
        return BodyEvidence(
            code=_text(error["type"]),
            message=message,
            attributes={"error_code": detail_code} if detail_code else {},
        )
    google_status = error.get("status")
    if isinstance(google_status, str) and google_status in GRPC_CODES:
        return BodyEvidence(
            code=google_status, grpc_status=GRPC_CODES[google_status], message=message
        )
    return BodyEvidence(code=_not_the_status(error.get("code"), status), message=message)


def _json_body(response: object) -> dict[str, Any]:
    content = _attr(response, "_content")
    if not isinstance(content, bytes | bytearray) or not content or len(content) > MAX_BODY_BYTES:
        return {}
    try:
        data = json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _aws_error_type(response: object, body: Mapping[str, Any]) -> str:
    """`x-amzn-ErrorType: ThrottlingException:http://...`, else the body's `__type` (`...#Name`)."""
    headers = _attr(response, "headers")
    value: object = None
    try:
        value = headers.get("x-amzn-errortype") if headers is not None else None
    except Exception:
        value = None
    if not isinstance(value, str) or not value.strip():
        value = body.get("__type")
    if not isinstance(value, str):
        return ""
    return value.split(":", 1)[0].rsplit("#", 1)[-1].strip()


def _not_the_status(code: object, status: int | None) -> str:
    text = _text(code) if not isinstance(code, int) or isinstance(code, bool) else str(code)
    if status is not None and text == str(status):
        return ""
    return text


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _attr(obj: object, name: str) -> Any:
    try:
        return getattr(obj, name, None)
    except Exception:
        return None
