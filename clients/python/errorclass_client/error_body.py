"""A provider's HTTP error body, read as every client reads it (clients/spec, `error_body`).

The body says more than the status: a 400 that is `context_length_exceeded` is
BudgetExceeded, an Azure 400 `content_filter` is ContentFiltered. `evidence(status,
headers, body)` is the one reading, from the status, the headers (by name, any case)
and the body's text; `descriptor_from_exception` applies it to the response an httpx or
requests exception keeps, and to the body an aiohttp caller read. A body larger than
MAX_BODY_BYTES (UTF-8 bytes), not JSON, or not a JSON object gives nothing from the body.
Then, in order:

1. AWS JSON (Bedrock): the header `x-amzn-ErrorType` when not blank, else the body's
   `__type`: its text before the first `:`, after the last `#`, stripped, is the code;
   the body's `message` (else `Message`) the message.
2. An `error` object is the error: its `message` is the message, and
   - with the body's `type` `"error"` and a text `error.type` (Anthropic), the code is
     `error.type`, and `error.details.error_code`, when not empty, the attribute
     `error_code`;
   - else with a text `error.status` that is a gRPC status name (Google), the code is
     that name and `grpc_status` its number;
   - else (OpenAI, Azure OpenAI) the code is `error.code`: text stripped, a whole number
     in decimal; a code equal to the HTTP status (Azure's `"429"`) is no code.
3. A text `error` (`{"error": "model not found"}`) is the message.
4. A body whose `message` is text and that has no `error` is the error object itself (an
   SDK that keeps the inner object, a provider with no envelope), read as in 2 without
   the Anthropic case.
5. Anything else gives nothing.

Reading never raises. Only a body already read is used: describing a failure never
reads from the network.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from errorclass_client import facts
from errorclass_client._text import strip, utf8_bytes


@dataclass(frozen=True, slots=True)
class BodyEvidence:
    """What an error body says: the provider's code, a gRPC status, its message, attributes."""

    code: str = ""
    grpc_status: int | None = None
    message: str = ""
    attributes: Mapping[str, str] = field(default_factory=dict)


NOTHING = BodyEvidence()


def evidence(status: int | None, headers: Mapping[str, str] | None, body: str) -> BodyEvidence:
    """What a provider's error response says (see the module's rules); NOTHING when unread."""
    data = _json_object(body)
    aws = _aws_error_type(headers, data)
    if aws:
        return BodyEvidence(
            code=aws, message=_text(data.get("message")) or _text(data.get("Message"))
        )
    error = data.get("error")
    if isinstance(error, Mapping):
        if data.get("type") == "error" and isinstance(error.get("type"), str):
            details = error.get("details")
            detail_code = _text(details.get("error_code")) if isinstance(details, Mapping) else ""
            return BodyEvidence(
                code=_text(error["type"]),
                message=_text(error.get("message")),
                attributes={"error_code": detail_code} if detail_code else {},
            )
        return _error_object(error, status)
    if isinstance(error, str):
        return BodyEvidence(message=_text(error))
    if error is None and isinstance(data.get("message"), str):
        return _error_object(data, status)
    return NOTHING


def evidence_from_bytes(
    status: int | None, headers: Mapping[str, str] | None, body: bytes | None
) -> BodyEvidence:
    """`evidence` for a body as bytes: too large, or not UTF-8, is no body (the headers
    may still speak)."""
    text = ""
    if body and len(body) <= facts.MAX_BODY_BYTES:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
    return evidence(status, headers, text)


def _error_object(error: Mapping[str, Any], status: int | None) -> BodyEvidence:
    message = _text(error.get("message"))
    google = error.get("status")
    if isinstance(google, str) and google in facts.GRPC_CODES:
        return BodyEvidence(code=google, grpc_status=facts.GRPC_CODES[google], message=message)
    code = _code(error.get("code"))
    if status is not None and code == str(status):
        code = ""
    return BodyEvidence(code=code, message=message)


def _json_object(body: str) -> dict[str, Any]:
    if not body or utf8_bytes(body) > facts.MAX_BODY_BYTES:
        return {}
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def header(headers: Mapping[str, str] | None, name: str) -> str | None:
    """A header's value by name in any case; None when absent (or unreadable)."""
    if headers is None:
        return None
    wanted = name.lower()
    try:
        for key, value in headers.items():
            if isinstance(key, str) and key.lower() == wanted:
                return value if isinstance(value, str) else None
    except Exception:
        return None
    return None


def _aws_error_type(headers: Mapping[str, str] | None, body: Mapping[str, Any]) -> str:
    """`x-amzn-ErrorType: ThrottlingException:http://...`, else the body's `__type` (`...#Name`)."""
    value: object = header(headers, "x-amzn-ErrorType")
    if not isinstance(value, str) or not strip(value):
        value = body.get("__type")
    if not isinstance(value, str):
        return ""
    return strip(value.split(":", 1)[0].rsplit("#", 1)[-1])


def _code(value: object) -> str:
    """A code as text: text stripped, a whole number in decimal; anything else is none."""
    if isinstance(value, bool):
        return ""
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return _text(value)


def _text(value: object) -> str:
    return strip(value) if isinstance(value, str) else ""
