"""The errorclass classifier's Python client: describe a live failure, classify it over gRPC.

    from errorclass_client import Client, Unclassified, descriptor_from_exception

    with Client("127.0.0.1:50051") as client:
        try:
            call_the_model()
        except Exception as exc:
            try:
                answer = client.classify_exception(exc, origin="provider", provider="openai")
                store(answer.class_number, answer.rule_id, answer.ruleset_version)
            except Unclassified as outage:   # the service could not answer: not Unknown
                store_unclassified(outage.descriptors)

`descriptor_from_exception` builds a descriptor from a Python exception,
`descriptor_from_response` / `descriptor_from_finish_reason` from a response that
returned normally but is a provider-side refusal (a finish reason), and
`descriptor_from_span` / `descriptor_from_span_event` from OpenTelemetry data; none
talks to the network. The package depends on grpcio and protobuf only; it carries the
proto's generated stubs (`errorclass_client.proto`) and the facts every language's client
shares (`errorclass_client.facts`, rendered from clients/spec).

The names below load on first use (PEP 562): `import errorclass_client.retry_after` (which
the service's engine does, for the one copy of that algorithm) or `.facts` loads neither
grpcio nor protobuf.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from errorclass_client.facts import VERSION

if TYPE_CHECKING:
    from errorclass_client.answer import (
        Action,
        Answer,
        ClassInfo,
        Explanation,
        NearMiss,
        PrecedenceDecision,
        ReloadInfo,
        ReloadResult,
        RuleMatch,
        RulesetInfo,
        RulesetLayer,
        RuleVerdict,
    )
    from errorclass_client.breaker import Breaker, BreakerState
    from errorclass_client.client import DEFAULT_ATTEMPTS, DEFAULT_TIMEOUT, Client, Fallback
    from errorclass_client.descriptor import (
        Cause,
        CauseFields,
        CauseInput,
        Descriptor,
        DescriptorFields,
        DescriptorInput,
        descriptor_from_mapping,
        fit,
        validate,
    )
    from errorclass_client.error_body import BodyEvidence, evidence, stream_error
    from errorclass_client.errors import (
        ClientError,
        DescriptorError,
        FieldViolation,
        RuntimeFactError,
        ServiceError,
        Unclassified,
    )
    from errorclass_client.finish_reason import (
        descriptor_from_finish_reason,
        descriptor_from_response,
    )
    from errorclass_client.otel import descriptor_from_span, descriptor_from_span_event
    from errorclass_client.python_exception import describe_tool_failure, descriptor_from_exception
    from errorclass_client.runtime_facts import runtime_attributes
    from errorclass_client.taxonomy import Effect, ErrorClass, Origin, UnknownReason
    from errorclass_client.tls import TLS

_LAZY: dict[str, str] = {
    "Action": "errorclass_client.answer",
    "Answer": "errorclass_client.answer",
    "ClassInfo": "errorclass_client.answer",
    "Explanation": "errorclass_client.answer",
    "NearMiss": "errorclass_client.answer",
    "PrecedenceDecision": "errorclass_client.answer",
    "ReloadInfo": "errorclass_client.answer",
    "ReloadResult": "errorclass_client.answer",
    "RuleMatch": "errorclass_client.answer",
    "RulesetInfo": "errorclass_client.answer",
    "RulesetLayer": "errorclass_client.answer",
    "RuleVerdict": "errorclass_client.answer",
    "Breaker": "errorclass_client.breaker",
    "BreakerState": "errorclass_client.breaker",
    "DEFAULT_ATTEMPTS": "errorclass_client.client",
    "DEFAULT_TIMEOUT": "errorclass_client.client",
    "Client": "errorclass_client.client",
    "Fallback": "errorclass_client.client",
    "Cause": "errorclass_client.descriptor",
    "CauseFields": "errorclass_client.descriptor",
    "CauseInput": "errorclass_client.descriptor",
    "Descriptor": "errorclass_client.descriptor",
    "DescriptorFields": "errorclass_client.descriptor",
    "DescriptorInput": "errorclass_client.descriptor",
    "descriptor_from_mapping": "errorclass_client.descriptor",
    "fit": "errorclass_client.descriptor",
    "validate": "errorclass_client.descriptor",
    "BodyEvidence": "errorclass_client.error_body",
    "evidence": "errorclass_client.error_body",
    "stream_error": "errorclass_client.error_body",
    "ClientError": "errorclass_client.errors",
    "DescriptorError": "errorclass_client.errors",
    "FieldViolation": "errorclass_client.errors",
    "RuntimeFactError": "errorclass_client.errors",
    "ServiceError": "errorclass_client.errors",
    "Unclassified": "errorclass_client.errors",
    "descriptor_from_finish_reason": "errorclass_client.finish_reason",
    "descriptor_from_response": "errorclass_client.finish_reason",
    "descriptor_from_span": "errorclass_client.otel",
    "descriptor_from_span_event": "errorclass_client.otel",
    "describe_tool_failure": "errorclass_client.python_exception",
    "descriptor_from_exception": "errorclass_client.python_exception",
    "runtime_attributes": "errorclass_client.runtime_facts",
    "Effect": "errorclass_client.taxonomy",
    "ErrorClass": "errorclass_client.taxonomy",
    "Origin": "errorclass_client.taxonomy",
    "UnknownReason": "errorclass_client.taxonomy",
    "TLS": "errorclass_client.tls",
}
"""Each public name and the module it lives in."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'errorclass_client' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__version__ = VERSION

__all__ = [
    "DEFAULT_ATTEMPTS",
    "DEFAULT_TIMEOUT",
    "TLS",
    "Action",
    "Answer",
    "BodyEvidence",
    "Breaker",
    "BreakerState",
    "Cause",
    "CauseFields",
    "CauseInput",
    "ClassInfo",
    "Client",
    "ClientError",
    "Descriptor",
    "DescriptorError",
    "DescriptorFields",
    "DescriptorInput",
    "Effect",
    "ErrorClass",
    "Explanation",
    "Fallback",
    "FieldViolation",
    "NearMiss",
    "Origin",
    "PrecedenceDecision",
    "ReloadInfo",
    "ReloadResult",
    "RuleMatch",
    "RuleVerdict",
    "RulesetInfo",
    "RulesetLayer",
    "RuntimeFactError",
    "ServiceError",
    "Unclassified",
    "UnknownReason",
    "__version__",
    "describe_tool_failure",
    "descriptor_from_exception",
    "descriptor_from_finish_reason",
    "descriptor_from_mapping",
    "descriptor_from_response",
    "descriptor_from_span",
    "descriptor_from_span_event",
    "evidence",
    "fit",
    "runtime_attributes",
    "stream_error",
    "validate",
]
