"""Descriptors from OpenTelemetry: an exception span event and the attributes around it.

A runtime that already records exceptions on spans can classify from its
telemetry. The mapping (docs/clients.md has it as a table):

    exception.type                   -> type (else the span's error.type)
    exception.message                -> message
    http.response.status_code        -> http_status   (older: http.status_code)
    rpc.grpc.status_code             -> grpc_status   (newer: rpc.response.status_code /
                                                       rpc.status_code, by name or number)
    gen_ai.provider.name             -> provider      (older: gen_ai.system)
    gen_ai.operation.name            -> origin: execute_tool is `tool`; chat,
                                        text_completion, generate_content and
                                        embeddings are `provider`
    telemetry.sdk.language (resource)-> language      (nodejs is `node`)
    error.type, gen_ai.* and rpc.* context -> attributes, under their OTel names

Telemetry carries no supertypes and no cause chain, so rules that need them
do not match a descriptor built this way; the language helpers
(`descriptor_from_exception`, docs/clients.md) send both.

Nothing here imports OpenTelemetry: the functions take plain mappings, and
`descriptor_from_span` reads any object shaped like the SDK's ReadableSpan.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from errorclass_client import descriptor as _descriptor
from errorclass_client import facts
from errorclass_client.descriptor import Descriptor, fit, grpc_code
from errorclass_client.errors import DescriptorError, FieldViolation
from errorclass_client.taxonomy import Origin

EXCEPTION_EVENT = "exception"
PROVIDER_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "embeddings"})
TOOL_OPERATIONS = frozenset({"execute_tool"})
LANGUAGES = {"nodejs": "node", "webjs": "node"}
CONTEXT_KEYS = (
    "error.type",
    "gen_ai.operation.name",
    "gen_ai.request.model",
    "gen_ai.response.finish_reasons",
    "gen_ai.tool.name",
    "rpc.system",
    "rpc.service",
    "rpc.method",
    "server.address",
    "http.request.method",
)
"""Span attributes copied into the descriptor's attributes, so rules can name them."""


def descriptor_from_span_event(
    event: Mapping[str, Any],
    span: Mapping[str, Any] | None = None,
    *,
    resource: Mapping[str, Any] | None = None,
    origin: Origin | str | None = None,
    provider: str = "",
    attributes: Mapping[str, str] | None = None,
) -> Descriptor:
    """A descriptor from an `exception` event's attributes and its span's attributes.

    Explicit `origin`, `provider` and `attributes` win over what the span
    says. Raises DescriptorError when neither the event nor the span names a
    type.
    """
    span = span or {}
    resource = resource or {}
    grpc_status, rpc_code = _rpc_status(span)
    context = {key: _text(span[key]) for key in CONTEXT_KEYS if key in span}
    d = fit(
        Descriptor(
            type=_text(event.get("exception.type") or span.get("error.type") or ""),
            http_status=_http_status(span),
            grpc_status=grpc_status,
            origin=_origin(span) if origin is None else _descriptor.origin(origin),
            code=rpc_code,
            message=_text(event.get("exception.message", "")),
            language=_language(resource),
            provider=provider or _provider(span),
            attributes={**context, **(attributes or {})},
        )
    )
    if not d.type:
        raise DescriptorError(
            [FieldViolation("descriptor.type", "neither exception.type nor error.type is set")]
        )
    return d


def descriptor_from_span(
    span: Any,
    *,
    origin: Origin | str | None = None,
    provider: str = "",
    attributes: Mapping[str, str] | None = None,
) -> Descriptor | None:
    """A descriptor from a finished span (an SDK ReadableSpan or anything shaped like one).

    Uses the span's last `exception` event (the one that ended it); a span
    with no exception event but an `error.type` gives a descriptor of that
    type. A span with neither recorded no failure: None.
    """
    span_attributes: Mapping[str, Any] = getattr(span, "attributes", None) or {}
    resource = getattr(getattr(span, "resource", None), "attributes", None) or {}
    events = [
        e for e in getattr(span, "events", ()) or () if getattr(e, "name", "") == EXCEPTION_EVENT
    ]
    event: Mapping[str, Any] = (getattr(events[-1], "attributes", None) or {}) if events else {}
    if not event.get("exception.type") and not span_attributes.get("error.type"):
        return None
    return descriptor_from_span_event(
        event,
        span_attributes,
        resource=resource,
        origin=origin,
        provider=provider,
        attributes=attributes,
    )


def _text(value: Any) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, list | tuple):
        text = ",".join(_text(v) for v in value)
    else:
        text = str(value)
    return text[: facts.MAX_ATTRIBUTE_VALUE_CHARS]


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _http_status(span: Mapping[str, Any]) -> int | None:
    for key in ("http.response.status_code", "http.status_code"):
        status = _int(span.get(key))
        if status is not None and 100 <= status <= 599:
            return status
    return None


def _rpc_status(span: Mapping[str, Any]) -> tuple[int | None, str]:
    """(gRPC status, other RPC error code): JSON-RPC codes share the newer attribute."""
    numeric = _int(span.get("rpc.grpc.status_code"))
    if numeric is not None and numeric in facts.GRPC_CODE_NAMES:
        return numeric, ""
    is_grpc = span.get("rpc.system") == "grpc"
    for key in ("rpc.response.status_code", "rpc.status_code"):
        value = span.get(key)
        if value is None:
            continue
        number = _int(value)
        if number is None or is_grpc:
            try:
                return grpc_code(number if number is not None else _text(value)), ""
            except ValueError:
                pass
        return None, _text(value)[: facts.MAX_CODE_CHARS]
    return None, ""


def _origin(span: Mapping[str, Any]) -> Origin:
    operation = span.get("gen_ai.operation.name")
    if operation in TOOL_OPERATIONS:
        return Origin.tool
    if operation in PROVIDER_OPERATIONS:
        return Origin.provider
    return Origin.unspecified


def _provider(span: Mapping[str, Any]) -> str:
    return _text(span.get("gen_ai.provider.name") or span.get("gen_ai.system") or "")


def _language(resource: Mapping[str, Any]) -> str:
    language = _text(resource.get("telemetry.sdk.language", "")).lower()
    return LANGUAGES.get(language, language)
