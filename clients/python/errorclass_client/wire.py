"""Domain <-> protobuf for the client: the only module that touches the generated messages.

The server's `classifier.server.rpc.convert` reads descriptors off the wire and writes
answers onto it; this module does the opposite two directions, so a descriptor survives
the round trip unchanged (a test checks that).

Enum numbers this client does not know (a newer server) are kept for the class, which
runtimes store, and read as the zero value ("no claim") for effect and unknown reason.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

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
    error_class,
)
from errorclass_client.descriptor import Cause, Descriptor, DescriptorShaped
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.taxonomy import Effect, UnknownReason

_E = TypeVar("_E", Effect, UnknownReason)


def descriptor_to_proto(d: Descriptor | DescriptorShaped) -> pb.ExceptionDescriptor:
    """The descriptor as the proto carries it, an `optional` status left unset when None.

    Sent as it is: `validate` first (the Client does), or the server may refuse it. The
    server's own `classifier.Descriptor` has the same fields, so its tests send theirs."""
    return pb.ExceptionDescriptor(
        type=d.type,
        supertypes=d.supertypes,
        http_status=d.http_status,
        grpc_status=d.grpc_status,
        origin=cast("pb.Origin", int(d.origin)),  # protobuf takes the number
        code=d.code,
        message=d.message,
        causes=[cause_to_proto(c) for c in d.causes],
        language=d.language,
        provider=d.provider,
        attributes=d.attributes,
    )


def cause_to_proto(c: Cause | Any) -> pb.Cause:
    return pb.Cause(
        type=c.type,
        supertypes=c.supertypes,
        http_status=c.http_status,
        grpc_status=c.grpc_status,
        code=c.code,
        message=c.message,
    )


def descriptor_from_proto(msg: pb.ExceptionDescriptor) -> Descriptor:
    """The descriptor a message carries, as sent (the server validates what it reads)."""
    return Descriptor(
        type=msg.type,
        supertypes=msg.supertypes,
        http_status=msg.http_status if msg.HasField("http_status") else None,
        grpc_status=msg.grpc_status if msg.HasField("grpc_status") else None,
        origin=msg.origin,
        code=msg.code,
        message=msg.message,
        causes=[
            Cause(
                type=c.type,
                supertypes=c.supertypes,
                http_status=c.http_status if c.HasField("http_status") else None,
                grpc_status=c.grpc_status if c.HasField("grpc_status") else None,
                code=c.code,
                message=c.message,
            )
            for c in msg.causes
        ],
        language=msg.language,
        provider=msg.provider,
        attributes=dict(msg.attributes),
    )


def request(
    d: Descriptor | DescriptorShaped, explain: bool, explain_rule: str = ""
) -> pb.ClassifyRequest:
    return pb.ClassifyRequest(
        descriptor=descriptor_to_proto(d), explain=explain, explain_rule=explain_rule
    )


def _enum(kind: type[_E], number: int) -> _E:
    try:
        return kind(number)
    except ValueError:
        return kind(0)


def action_from_proto(a: pb.Action) -> Action:
    return Action(id=a.id, summary=a.summary, runbook_url=a.runbook_url)


def answer_from_proto(r: pb.ClassifyResponse) -> Answer:
    has_explanation = r.HasField("explanation")
    has_wait = r.HasField("retry_after")
    return Answer(
        error_class=error_class(r.error_class),
        class_name=r.class_name,
        action=action_from_proto(r.action),
        effect=_enum(Effect, r.effect),
        retryable=r.retryable,
        rule_id=r.rule_id,
        ruleset_version=r.ruleset_version,
        ruleset_digest=r.ruleset_digest,
        unknown_reason=_enum(UnknownReason, r.unknown_reason),
        explanation=explanation_from_proto(r.explanation) if has_explanation else None,
        explanation_text=r.explanation.text if has_explanation else "",
        retry_after=r.retry_after.ToTimedelta() if has_wait else None,
        retry_after_source=r.retry_after_source if has_wait else "",
    )


def answer_to_proto(a: Answer) -> pb.ClassifyResponse:
    """An answer as the service writes one (what ReportDecisions carries), without its
    explanation (a report's is ignored)."""
    msg = pb.ClassifyResponse(
        error_class=cast("pb.RunErrorClass", int(a.error_class)),
        class_name=a.class_name,
        action=pb.Action(
            id=a.action.id, summary=a.action.summary, runbook_url=a.action.runbook_url
        ),
        effect=cast("pb.RunEffect", int(a.effect)),
        retryable=a.retryable,
        rule_id=a.rule_id,
        ruleset_version=a.ruleset_version,
        ruleset_digest=a.ruleset_digest,
        unknown_reason=cast("pb.UnknownReason", int(a.unknown_reason)),
    )
    if a.retry_after is not None:
        msg.retry_after.FromTimedelta(a.retry_after)
        msg.retry_after_source = a.retry_after_source
    return msg


def _effect_label(number: int) -> str:
    """A match's effect as the explanation spells it; "" for none, or one this client lacks."""
    effect = _enum(Effect, number)
    return effect.label if effect else ""


def explanation_from_proto(e: pb.Explanation) -> Explanation:
    return Explanation(
        matches=tuple(
            RuleMatch(
                rule_id=m.rule_id,
                location=m.location,
                class_name=m.class_name,
                conditions=tuple(m.conditions),
                type_depth=m.type_depth,
                condition_count=m.condition_count,
                priority=m.priority,
                effect=_effect_label(m.effect),
                fallback=m.fallback,
            )
            for m in e.matches
        ),
        winner_rule_id=e.winner_rule_id,
        decisions=tuple(
            PrecedenceDecision(loser_rule_id=d.loser_rule_id, step=d.step, reason=d.reason)
            for d in e.decisions
        ),
        near_misses=tuple(
            NearMiss(
                rule_id=n.rule_id,
                location=n.location,
                class_name=n.class_name,
                failed_conditions=tuple(n.failed_conditions),
                held_count=n.held_count,
                held_conditions=tuple(n.held_conditions),
                observed=tuple(n.observed),
            )
            for n in e.near_misses
        ),
    )


def verdict_from_proto(v: pb.RuleVerdict) -> RuleVerdict:
    return RuleVerdict(
        rule_id=v.rule_id,
        location=v.location,
        class_name=v.class_name,
        outcome=v.outcome,
        held_conditions=tuple(v.held_conditions),
        failed_conditions=tuple(v.failed_conditions),
        observed=tuple(v.observed),
        step=v.step,
        rivals=tuple(v.rivals),
        reason=v.reason,
    )


_RELOAD_RESULTS = {
    pb.RELOAD_RESULT_RELOADED: ReloadResult.reloaded,
    pb.RELOAD_RESULT_UNCHANGED: ReloadResult.unchanged,
    pb.RELOAD_RESULT_FAILED: ReloadResult.failed,
}


def ruleset_info_from_proto(r: pb.RulesetInfo) -> RulesetInfo:
    return RulesetInfo(
        name=r.name,
        version=r.version,
        digest=r.digest,
        rule_count=r.rule_count,
        loaded_at=r.loaded_at,
        source=r.source,
        description=r.description,
        layers=tuple(
            RulesetLayer(name=k.name, version=k.version, digest=k.digest, source=k.source)
            for k in r.layers
        ),
        classifier_version=r.classifier_version,
        bundle_digest=r.bundle_digest,
        bundle_signed=r.bundle_signed,
        last_reload=reload_info_from_proto(r.last_reload) if r.HasField("last_reload") else None,
        candidate=ruleset_info_from_proto(r.candidate) if r.HasField("candidate") else None,
    )


def reload_info_from_proto(r: pb.ReloadStatus) -> ReloadInfo:
    return ReloadInfo(
        result=_RELOAD_RESULTS.get(r.result, ReloadResult.unspecified),
        at=r.at,
        trigger=r.trigger,
        error=r.error,
    )


def class_info_from_proto(c: pb.ClassInfo) -> ClassInfo:
    return ClassInfo(
        error_class=error_class(c.error_class),
        name=c.name,
        description=c.description,
        default_action=action_from_proto(c.default_action),
        default_effect=_enum(Effect, c.default_effect),
        default_retryable=c.default_retryable,
    )
