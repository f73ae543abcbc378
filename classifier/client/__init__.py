"""The Python client: call the classifier service, and describe live failures for it.

    from classifier.client import Client, Origin

    with Client("127.0.0.1:50051") as client:
        try:
            call_the_model()
        except Exception as exc:
            answer = client.classify_exception(exc, origin=Origin.provider, provider="openai")
            store(answer.class_number, answer.rule_id, answer.ruleset_version)

`descriptor_from_exception` builds a descriptor from a Python exception,
`descriptor_from_response` / `descriptor_from_finish_reason` from a response
that returned normally but is a provider-side refusal (a finish reason), and
`descriptor_from_span` / `descriptor_from_span_event` from OpenTelemetry
data; none talks to the network, so they also feed `classifier.classify`
in-process. docs/clients.md covers the other languages.
"""

from classifier.client.answer import (
    Answer,
    ClassInfo,
    ReloadInfo,
    ReloadResult,
    RulesetInfo,
    RulesetLayer,
)
from classifier.client.client import (
    TLS,
    CauseFields,
    Client,
    DescriptorFields,
    ServiceError,
)
from classifier.client.finish_reason import (
    descriptor_from_finish_reason,
    descriptor_from_response,
)
from classifier.client.otel import descriptor_from_span, descriptor_from_span_event
from classifier.client.python_exception import describe_tool_failure, descriptor_from_exception
from classifier.client.runtime_knowledge import runtime_attributes
from classifier.defaults import DEFAULT_ATTEMPTS, DEFAULT_TIMEOUT
from classifier.descriptor import CauseInput, Descriptor
from classifier.errors import DescriptorError, FieldViolation
from classifier.taxonomy import Effect, ErrorClass, Origin, UnknownReason

__all__ = [
    "DEFAULT_ATTEMPTS",
    "DEFAULT_TIMEOUT",
    "TLS",
    "Answer",
    "CauseFields",
    "CauseInput",
    "ClassInfo",
    "Client",
    "Descriptor",
    "DescriptorError",
    "DescriptorFields",
    "Effect",
    "ErrorClass",
    "FieldViolation",
    "Origin",
    "ReloadInfo",
    "ReloadResult",
    "RulesetInfo",
    "RulesetLayer",
    "ServiceError",
    "UnknownReason",
    "describe_tool_failure",
    "descriptor_from_exception",
    "descriptor_from_finish_reason",
    "descriptor_from_response",
    "descriptor_from_span",
    "descriptor_from_span_event",
    "runtime_attributes",
]
