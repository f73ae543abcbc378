"""`classifier.client`: the Python client, for code written before it had its own package.

The client is its own distribution now, `errorclass-client` (clients/python), imported
as `errorclass_client`: it depends on grpcio and protobuf alone, so a runtime that only
reports its failures does not install the server. This package re-exports its public
names, so `from classifier.client import Client` keeps working; new code imports
`errorclass_client`. Two things moved with it:

- the descriptor and answer types are the client's own (`errorclass_client.Descriptor`,
  `Answer`, ...), not `classifier.Descriptor`: `Client` still takes a `classifier`
  descriptor (any object with the fields), and `classifier.classify` takes the client's;
- its errors are the client's (`errorclass_client.DescriptorError`, `ServiceError`, and
  `Unclassified`, the outage that keeps the descriptors), not subclasses of
  `classifier.ClassifierError`.

`classifier.client.local.LocalFallback` (the in-process fallback, which needs the rule
compiler) stays here, in the server's package.
"""

from errorclass_client import (
    DEFAULT_ATTEMPTS,
    DEFAULT_TIMEOUT,
    TLS,
    Action,
    Answer,
    Cause,
    CauseFields,
    CauseInput,
    ClassInfo,
    Client,
    ClientError,
    Descriptor,
    DescriptorError,
    DescriptorFields,
    Effect,
    ErrorClass,
    Explanation,
    Fallback,
    FieldViolation,
    Origin,
    ReloadInfo,
    ReloadResult,
    RulesetInfo,
    RulesetLayer,
    RuntimeFactError,
    ServiceError,
    Unclassified,
    UnknownReason,
    describe_tool_failure,
    descriptor_from_exception,
    descriptor_from_finish_reason,
    descriptor_from_response,
    descriptor_from_span,
    descriptor_from_span_event,
    fit,
    runtime_attributes,
    validate,
)

__all__ = [
    "DEFAULT_ATTEMPTS",
    "DEFAULT_TIMEOUT",
    "TLS",
    "Action",
    "Answer",
    "Cause",
    "CauseFields",
    "CauseInput",
    "ClassInfo",
    "Client",
    "ClientError",
    "Descriptor",
    "DescriptorError",
    "DescriptorFields",
    "Effect",
    "ErrorClass",
    "Explanation",
    "Fallback",
    "FieldViolation",
    "Origin",
    "ReloadInfo",
    "ReloadResult",
    "RulesetInfo",
    "RulesetLayer",
    "RuntimeFactError",
    "ServiceError",
    "Unclassified",
    "UnknownReason",
    "describe_tool_failure",
    "descriptor_from_exception",
    "descriptor_from_finish_reason",
    "descriptor_from_response",
    "descriptor_from_span",
    "descriptor_from_span_event",
    "fit",
    "runtime_attributes",
    "validate",
]
