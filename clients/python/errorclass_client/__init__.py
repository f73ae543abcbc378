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
"""

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
from errorclass_client.facts import VERSION
from errorclass_client.finish_reason import descriptor_from_finish_reason, descriptor_from_response
from errorclass_client.otel import descriptor_from_span, descriptor_from_span_event
from errorclass_client.python_exception import describe_tool_failure, descriptor_from_exception
from errorclass_client.runtime_facts import runtime_attributes
from errorclass_client.taxonomy import Effect, ErrorClass, Origin, UnknownReason
from errorclass_client.tls import TLS

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
