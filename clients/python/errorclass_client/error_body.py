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

Besides, whatever the body, the evidence a client keeps (facts.json `evidence`): each
header of EVIDENCE_HEADERS (`retry-after`, the rate limits' resets, ...) with a value, as
the attribute `http.response.header.<name>`, and from a Google error's `details` the
RetryInfo delay, the ErrorInfo reason and the QuotaFailure's quota, each value stripped
and cut to EVIDENCE_MAX_CHARS. `stream_error` reads an error that arrives inside a stream
after its 200 (an SSE `error` event, a Responses API `response.failed`, a Bedrock
exception event).

Reading never raises. Only a body already read is used: describing a failure never
reads from the network.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from errorclass_client import facts
from errorclass_client._text import strip, utf8_bytes, utf8_text


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
    found = _from_body(status, headers, _json_object(body))
    kept = _kept_headers(headers)
    if not kept:
        return found
    return BodyEvidence(found.code, found.grpc_status, found.message, {**kept, **found.attributes})


def _from_body(
    status: int | None, headers: Mapping[str, str] | None, data: Mapping[str, Any]
) -> BodyEvidence:
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


def stream_error(event: str, data: str) -> BodyEvidence:
    """What an error inside a stream says, after the stream's 200: `event` is the SSE event
    (or Bedrock's event type; "" for none), `data` its text.

    A Bedrock exception event (`throttlingException`) is the code as the non-stream API
    spells it (`ThrottlingException`) with its data's message; otherwise the data is read as
    an error body with no status and no headers, a Responses API `response.failed`
    event's error being its `response.error`.
    """
    parsed = _json_object(data)
    if event.endswith("Exception"):
        message = _text(parsed.get("message")) or _text(parsed.get("Message"))
        return BodyEvidence(code=event[:1].upper() + event[1:], message=message)
    if event == "response.failed" or parsed.get("type") == "response.failed":
        response = parsed.get("response")
        error = response.get("error") if isinstance(response, Mapping) else None
        parsed = {"error": error} if isinstance(error, Mapping) else {}
    return _from_body(None, None, parsed)


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
    attributes = _google_details(error.get("details"))
    google = error.get("status")
    if isinstance(google, str) and google in facts.GRPC_CODES:
        return BodyEvidence(google, facts.GRPC_CODES[google], message, attributes)
    code = _code(error.get("code"))
    if status is not None and code == str(status):
        code = ""
    return BodyEvidence(code=code, message=message, attributes=attributes)


def _kept_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """The evidence headers with a value, as attributes."""
    out: dict[str, str] = {}
    for name in facts.EVIDENCE_HEADERS:
        kept = _evidence(header(headers, name))
        if kept:
            out[facts.EVIDENCE_HEADER_ATTRIBUTE_PREFIX + name.lower()] = kept
    return out


def _google_details(details: object) -> dict[str, str]:
    """What a google.rpc.Status's details say that a client keeps (facts.json `evidence`)."""
    if not isinstance(details, list):
        return {}
    out: dict[str, str] = {}
    for name, where in facts.EVIDENCE_GOOGLE_DETAILS.items():
        item = next(
            (d for d in details if isinstance(d, Mapping) and d.get("@type") == where["type_url"]),
            None,
        )
        kept = _evidence(_path(item, where["field"]))
        if kept:
            out[name] = kept
    return out


_STEP = re.compile(r"([^.\[\]]+)(?:\[(\d+)\])?")


def _path(value: object, path: str) -> object:
    """`violations[0].quotaId` read through mappings and lists; None where it is not there."""
    for step in path.split("."):
        match = _STEP.fullmatch(step)
        if match is None or not isinstance(value, Mapping):
            return None
        value = value.get(match[1])
        if match[2] is not None:
            index = int(match[2])
            value = value[index] if isinstance(value, list) and index < len(value) else None
    return value


def _evidence(value: object) -> str:
    """A kept value: text, stripped, cut to EVIDENCE_MAX_CHARS; "" for anything else."""
    return strip(utf8_text(value))[: facts.EVIDENCE_MAX_CHARS] if isinstance(value, str) else ""


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
