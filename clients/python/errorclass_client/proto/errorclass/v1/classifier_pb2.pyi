import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RunErrorClass(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_ERROR_CLASS_UNKNOWN: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_PROVIDER_ERROR: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_PROVIDER_UNAVAILABLE: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_RATE_LIMITED: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_QUOTA_EXCEEDED: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_CONTENT_FILTERED: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_TOOL_ERROR: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_TIMEOUT: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_COMPILATION_FAILED: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_BUDGET_EXCEEDED: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_CANCELED: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_CONTENT_BLOCKED: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_INFRASTRUCTURE: _ClassVar[RunErrorClass]
    RUN_ERROR_CLASS_TOOL_TIMEOUT: _ClassVar[RunErrorClass]

class Origin(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ORIGIN_UNSPECIFIED: _ClassVar[Origin]
    ORIGIN_PROVIDER: _ClassVar[Origin]
    ORIGIN_TOOL: _ClassVar[Origin]
    ORIGIN_GUARD: _ClassVar[Origin]
    ORIGIN_RUNTIME: _ClassVar[Origin]
    ORIGIN_INTERCEPTOR: _ClassVar[Origin]
    ORIGIN_RECONCILER: _ClassVar[Origin]
    ORIGIN_USER: _ClassVar[Origin]

class RunEffect(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_EFFECT_UNSPECIFIED: _ClassVar[RunEffect]
    RUN_EFFECT_FAIL: _ClassVar[RunEffect]
    RUN_EFFECT_PAUSE: _ClassVar[RunEffect]
    RUN_EFFECT_CONTINUE: _ClassVar[RunEffect]

class UnknownReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    UNKNOWN_REASON_UNSPECIFIED: _ClassVar[UnknownReason]
    UNKNOWN_REASON_NO_MATCH: _ClassVar[UnknownReason]
    UNKNOWN_REASON_CONFLICT: _ClassVar[UnknownReason]

class ReloadResult(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RELOAD_RESULT_UNSPECIFIED: _ClassVar[ReloadResult]
    RELOAD_RESULT_RELOADED: _ClassVar[ReloadResult]
    RELOAD_RESULT_UNCHANGED: _ClassVar[ReloadResult]
    RELOAD_RESULT_FAILED: _ClassVar[ReloadResult]
RUN_ERROR_CLASS_UNKNOWN: RunErrorClass
RUN_ERROR_CLASS_PROVIDER_ERROR: RunErrorClass
RUN_ERROR_CLASS_PROVIDER_UNAVAILABLE: RunErrorClass
RUN_ERROR_CLASS_RATE_LIMITED: RunErrorClass
RUN_ERROR_CLASS_QUOTA_EXCEEDED: RunErrorClass
RUN_ERROR_CLASS_CONTENT_FILTERED: RunErrorClass
RUN_ERROR_CLASS_TOOL_ERROR: RunErrorClass
RUN_ERROR_CLASS_TIMEOUT: RunErrorClass
RUN_ERROR_CLASS_COMPILATION_FAILED: RunErrorClass
RUN_ERROR_CLASS_BUDGET_EXCEEDED: RunErrorClass
RUN_ERROR_CLASS_CANCELED: RunErrorClass
RUN_ERROR_CLASS_CONTENT_BLOCKED: RunErrorClass
RUN_ERROR_CLASS_INFRASTRUCTURE: RunErrorClass
RUN_ERROR_CLASS_TOOL_TIMEOUT: RunErrorClass
ORIGIN_UNSPECIFIED: Origin
ORIGIN_PROVIDER: Origin
ORIGIN_TOOL: Origin
ORIGIN_GUARD: Origin
ORIGIN_RUNTIME: Origin
ORIGIN_INTERCEPTOR: Origin
ORIGIN_RECONCILER: Origin
ORIGIN_USER: Origin
RUN_EFFECT_UNSPECIFIED: RunEffect
RUN_EFFECT_FAIL: RunEffect
RUN_EFFECT_PAUSE: RunEffect
RUN_EFFECT_CONTINUE: RunEffect
UNKNOWN_REASON_UNSPECIFIED: UnknownReason
UNKNOWN_REASON_NO_MATCH: UnknownReason
UNKNOWN_REASON_CONFLICT: UnknownReason
RELOAD_RESULT_UNSPECIFIED: ReloadResult
RELOAD_RESULT_RELOADED: ReloadResult
RELOAD_RESULT_UNCHANGED: ReloadResult
RELOAD_RESULT_FAILED: ReloadResult

class Cause(_message.Message):
    __slots__ = ("type", "supertypes", "http_status", "grpc_status", "code", "message")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SUPERTYPES_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    GRPC_STATUS_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    type: str
    supertypes: _containers.RepeatedScalarFieldContainer[str]
    http_status: int
    grpc_status: int
    code: str
    message: str
    def __init__(self, type: _Optional[str] = ..., supertypes: _Optional[_Iterable[str]] = ..., http_status: _Optional[int] = ..., grpc_status: _Optional[int] = ..., code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class ExceptionDescriptor(_message.Message):
    __slots__ = ("type", "supertypes", "http_status", "grpc_status", "origin", "code", "message", "causes", "language", "provider", "attributes")
    class AttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SUPERTYPES_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    GRPC_STATUS_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CAUSES_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    type: str
    supertypes: _containers.RepeatedScalarFieldContainer[str]
    http_status: int
    grpc_status: int
    origin: Origin
    code: str
    message: str
    causes: _containers.RepeatedCompositeFieldContainer[Cause]
    language: str
    provider: str
    attributes: _containers.ScalarMap[str, str]
    def __init__(self, type: _Optional[str] = ..., supertypes: _Optional[_Iterable[str]] = ..., http_status: _Optional[int] = ..., grpc_status: _Optional[int] = ..., origin: _Optional[_Union[Origin, str]] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., causes: _Optional[_Iterable[_Union[Cause, _Mapping]]] = ..., language: _Optional[str] = ..., provider: _Optional[str] = ..., attributes: _Optional[_Mapping[str, str]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("id", "summary", "runbook_url")
    ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RUNBOOK_URL_FIELD_NUMBER: _ClassVar[int]
    id: str
    summary: str
    runbook_url: str
    def __init__(self, id: _Optional[str] = ..., summary: _Optional[str] = ..., runbook_url: _Optional[str] = ...) -> None: ...

class ClassifyRequest(_message.Message):
    __slots__ = ("descriptor", "explain", "explain_rule")
    DESCRIPTOR_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_RULE_FIELD_NUMBER: _ClassVar[int]
    descriptor: ExceptionDescriptor
    explain: bool
    explain_rule: str
    def __init__(self, descriptor: _Optional[_Union[ExceptionDescriptor, _Mapping]] = ..., explain: _Optional[bool] = ..., explain_rule: _Optional[str] = ...) -> None: ...

class ClassifyResponse(_message.Message):
    __slots__ = ("error_class", "class_name", "action", "effect", "retryable", "rule_id", "ruleset_version", "ruleset_digest", "unknown_reason", "explanation", "retry_after", "retry_after_source")
    ERROR_CLASS_FIELD_NUMBER: _ClassVar[int]
    CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    RULESET_VERSION_FIELD_NUMBER: _ClassVar[int]
    RULESET_DIGEST_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_REASON_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_SOURCE_FIELD_NUMBER: _ClassVar[int]
    error_class: RunErrorClass
    class_name: str
    action: Action
    effect: RunEffect
    retryable: bool
    rule_id: str
    ruleset_version: str
    ruleset_digest: str
    unknown_reason: UnknownReason
    explanation: Explanation
    retry_after: _duration_pb2.Duration
    retry_after_source: str
    def __init__(self, error_class: _Optional[_Union[RunErrorClass, str]] = ..., class_name: _Optional[str] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., effect: _Optional[_Union[RunEffect, str]] = ..., retryable: _Optional[bool] = ..., rule_id: _Optional[str] = ..., ruleset_version: _Optional[str] = ..., ruleset_digest: _Optional[str] = ..., unknown_reason: _Optional[_Union[UnknownReason, str]] = ..., explanation: _Optional[_Union[Explanation, _Mapping]] = ..., retry_after: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., retry_after_source: _Optional[str] = ...) -> None: ...

class Explanation(_message.Message):
    __slots__ = ("matches", "winner_rule_id", "decisions", "near_misses", "text", "rule_verdict")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    WINNER_RULE_ID_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    NEAR_MISSES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    RULE_VERDICT_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[RuleMatch]
    winner_rule_id: str
    decisions: _containers.RepeatedCompositeFieldContainer[PrecedenceDecision]
    near_misses: _containers.RepeatedCompositeFieldContainer[NearMiss]
    text: str
    rule_verdict: RuleVerdict
    def __init__(self, matches: _Optional[_Iterable[_Union[RuleMatch, _Mapping]]] = ..., winner_rule_id: _Optional[str] = ..., decisions: _Optional[_Iterable[_Union[PrecedenceDecision, _Mapping]]] = ..., near_misses: _Optional[_Iterable[_Union[NearMiss, _Mapping]]] = ..., text: _Optional[str] = ..., rule_verdict: _Optional[_Union[RuleVerdict, _Mapping]] = ...) -> None: ...

class RuleVerdict(_message.Message):
    __slots__ = ("rule_id", "location", "class_name", "outcome", "held_conditions", "failed_conditions", "observed", "step", "rivals", "reason")
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    HELD_CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    FAILED_CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    RIVALS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    rule_id: str
    location: str
    class_name: str
    outcome: str
    held_conditions: _containers.RepeatedScalarFieldContainer[str]
    failed_conditions: _containers.RepeatedScalarFieldContainer[str]
    observed: _containers.RepeatedScalarFieldContainer[str]
    step: str
    rivals: _containers.RepeatedScalarFieldContainer[str]
    reason: str
    def __init__(self, rule_id: _Optional[str] = ..., location: _Optional[str] = ..., class_name: _Optional[str] = ..., outcome: _Optional[str] = ..., held_conditions: _Optional[_Iterable[str]] = ..., failed_conditions: _Optional[_Iterable[str]] = ..., observed: _Optional[_Iterable[str]] = ..., step: _Optional[str] = ..., rivals: _Optional[_Iterable[str]] = ..., reason: _Optional[str] = ...) -> None: ...

class RuleMatch(_message.Message):
    __slots__ = ("rule_id", "location", "class_name", "conditions", "type_depth", "condition_count", "priority", "effect", "fallback")
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    TYPE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    CONDITION_COUNT_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    rule_id: str
    location: str
    class_name: str
    conditions: _containers.RepeatedScalarFieldContainer[str]
    type_depth: int
    condition_count: int
    priority: int
    effect: RunEffect
    fallback: bool
    def __init__(self, rule_id: _Optional[str] = ..., location: _Optional[str] = ..., class_name: _Optional[str] = ..., conditions: _Optional[_Iterable[str]] = ..., type_depth: _Optional[int] = ..., condition_count: _Optional[int] = ..., priority: _Optional[int] = ..., effect: _Optional[_Union[RunEffect, str]] = ..., fallback: _Optional[bool] = ...) -> None: ...

class PrecedenceDecision(_message.Message):
    __slots__ = ("loser_rule_id", "step", "reason")
    LOSER_RULE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    loser_rule_id: str
    step: str
    reason: str
    def __init__(self, loser_rule_id: _Optional[str] = ..., step: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class NearMiss(_message.Message):
    __slots__ = ("rule_id", "location", "class_name", "failed_conditions", "held_count", "held_conditions", "observed")
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    FAILED_CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    HELD_COUNT_FIELD_NUMBER: _ClassVar[int]
    HELD_CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_FIELD_NUMBER: _ClassVar[int]
    rule_id: str
    location: str
    class_name: str
    failed_conditions: _containers.RepeatedScalarFieldContainer[str]
    held_count: int
    held_conditions: _containers.RepeatedScalarFieldContainer[str]
    observed: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, rule_id: _Optional[str] = ..., location: _Optional[str] = ..., class_name: _Optional[str] = ..., failed_conditions: _Optional[_Iterable[str]] = ..., held_count: _Optional[int] = ..., held_conditions: _Optional[_Iterable[str]] = ..., observed: _Optional[_Iterable[str]] = ...) -> None: ...

class ClassifyBatchRequest(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[ClassifyRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[ClassifyRequest, _Mapping]]] = ...) -> None: ...

class ClassifyBatchResponse(_message.Message):
    __slots__ = ("responses",)
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[ClassifyResponse]
    def __init__(self, responses: _Optional[_Iterable[_Union[ClassifyResponse, _Mapping]]] = ...) -> None: ...

class GetRulesetRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RulesetInfo(_message.Message):
    __slots__ = ("name", "version", "digest", "rule_count", "loaded_at", "source", "description", "last_reload", "candidate", "layers", "classifier_version", "bundle_digest", "bundle_signed")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    RULE_COUNT_FIELD_NUMBER: _ClassVar[int]
    LOADED_AT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    LAST_RELOAD_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_FIELD_NUMBER: _ClassVar[int]
    LAYERS_FIELD_NUMBER: _ClassVar[int]
    CLASSIFIER_VERSION_FIELD_NUMBER: _ClassVar[int]
    BUNDLE_DIGEST_FIELD_NUMBER: _ClassVar[int]
    BUNDLE_SIGNED_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    digest: str
    rule_count: int
    loaded_at: str
    source: str
    description: str
    last_reload: ReloadStatus
    candidate: RulesetInfo
    layers: _containers.RepeatedCompositeFieldContainer[RulesetLayer]
    classifier_version: str
    bundle_digest: str
    bundle_signed: bool
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., digest: _Optional[str] = ..., rule_count: _Optional[int] = ..., loaded_at: _Optional[str] = ..., source: _Optional[str] = ..., description: _Optional[str] = ..., last_reload: _Optional[_Union[ReloadStatus, _Mapping]] = ..., candidate: _Optional[_Union[RulesetInfo, _Mapping]] = ..., layers: _Optional[_Iterable[_Union[RulesetLayer, _Mapping]]] = ..., classifier_version: _Optional[str] = ..., bundle_digest: _Optional[str] = ..., bundle_signed: _Optional[bool] = ...) -> None: ...

class RulesetLayer(_message.Message):
    __slots__ = ("name", "version", "digest", "source")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    digest: str
    source: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., digest: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class ReloadStatus(_message.Message):
    __slots__ = ("result", "at", "trigger", "error")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    result: ReloadResult
    at: str
    trigger: str
    error: str
    def __init__(self, result: _Optional[_Union[ReloadResult, str]] = ..., at: _Optional[str] = ..., trigger: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class ListClassesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListClassesResponse(_message.Message):
    __slots__ = ("classes",)
    CLASSES_FIELD_NUMBER: _ClassVar[int]
    classes: _containers.RepeatedCompositeFieldContainer[ClassInfo]
    def __init__(self, classes: _Optional[_Iterable[_Union[ClassInfo, _Mapping]]] = ...) -> None: ...

class ClassInfo(_message.Message):
    __slots__ = ("error_class", "name", "description", "default_action", "default_effect", "default_retryable")
    ERROR_CLASS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ACTION_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_EFFECT_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    error_class: RunErrorClass
    name: str
    description: str
    default_action: Action
    default_effect: RunEffect
    default_retryable: bool
    def __init__(self, error_class: _Optional[_Union[RunErrorClass, str]] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., default_action: _Optional[_Union[Action, _Mapping]] = ..., default_effect: _Optional[_Union[RunEffect, str]] = ..., default_retryable: _Optional[bool] = ...) -> None: ...

class GetBundleRequest(_message.Message):
    __slots__ = ("if_none_match",)
    IF_NONE_MATCH_FIELD_NUMBER: _ClassVar[int]
    if_none_match: str
    def __init__(self, if_none_match: _Optional[str] = ...) -> None: ...

class GetBundleResponse(_message.Message):
    __slots__ = ("bundle", "signatures", "bundle_digest", "ruleset_digest", "signed", "unchanged")
    BUNDLE_FIELD_NUMBER: _ClassVar[int]
    SIGNATURES_FIELD_NUMBER: _ClassVar[int]
    BUNDLE_DIGEST_FIELD_NUMBER: _ClassVar[int]
    RULESET_DIGEST_FIELD_NUMBER: _ClassVar[int]
    SIGNED_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    bundle: bytes
    signatures: bytes
    bundle_digest: str
    ruleset_digest: str
    signed: bool
    unchanged: bool
    def __init__(self, bundle: _Optional[bytes] = ..., signatures: _Optional[bytes] = ..., bundle_digest: _Optional[str] = ..., ruleset_digest: _Optional[str] = ..., signed: _Optional[bool] = ..., unchanged: _Optional[bool] = ...) -> None: ...

class ReportedDecision(_message.Message):
    __slots__ = ("descriptor", "answer", "bundle_digest", "decided_at")
    DESCRIPTOR_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    BUNDLE_DIGEST_FIELD_NUMBER: _ClassVar[int]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    descriptor: ExceptionDescriptor
    answer: ClassifyResponse
    bundle_digest: str
    decided_at: _timestamp_pb2.Timestamp
    def __init__(self, descriptor: _Optional[_Union[ExceptionDescriptor, _Mapping]] = ..., answer: _Optional[_Union[ClassifyResponse, _Mapping]] = ..., bundle_digest: _Optional[str] = ..., decided_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ReportDecisionsRequest(_message.Message):
    __slots__ = ("decisions",)
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    decisions: _containers.RepeatedCompositeFieldContainer[ReportedDecision]
    def __init__(self, decisions: _Optional[_Iterable[_Union[ReportedDecision, _Mapping]]] = ...) -> None: ...

class ReportDecisionsResponse(_message.Message):
    __slots__ = ("accepted", "bundle_digest")
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    BUNDLE_DIGEST_FIELD_NUMBER: _ClassVar[int]
    accepted: int
    bundle_digest: str
    def __init__(self, accepted: _Optional[int] = ..., bundle_digest: _Optional[str] = ...) -> None: ...
