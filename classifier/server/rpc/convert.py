"""Proto <-> domain conversion: the only module that touches generated protobuf types.

A ruleset answers with one of a few hundred fixed Classifications (one per
rule, one per Unknown reason), so each is turned into protobuf once and
kept with the ruleset's `Responses`: an answer is then a copy of a prebuilt
message, and a batch is the
concatenation of prebuilt wire bytes (repeated fields concatenate on the
wire), parsed back in one C call instead of assembled message by message.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from operator import attrgetter
from typing import cast

import classifier
from classifier import limits
from classifier.answer import Action, Classification, Explanation, RuleVerdict
from classifier.descriptor import (
    CAUSE_FIELDS,
    FIELD_NAMES,
    FIELDS,
    Descriptor,
    DescriptorField,
    descriptor_from_row,
)
from classifier.engine.explain import render_explanation
from classifier.engine.ruleset import Ruleset
from classifier.server.serving_ruleset import ReloadResult, ReloadStatus, RulesetHolder
from classifier.taxonomy import CLASS_DESCRIPTIONS, Effect, ErrorClass
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb


def descriptor_from_proto(msg: pb.ExceptionDescriptor) -> Descriptor:
    """Validate and normalise a wire descriptor; raises DescriptorError naming each bad field
    (`descriptor.causes[1].type`).

    The proto's fields are the field table's, by name: each message is read as a row in
    one call, an `optional` field not set read as None.
    """
    row = list(_DESCRIPTOR_ROW(msg))
    for i, name in _DESCRIPTOR_OPTIONAL:
        if not msg.HasField(name):
            row[i] = None
    if row[_CAUSES]:
        row[_CAUSES] = [_cause_row(c) for c in row[_CAUSES]]
    return descriptor_from_row(row)


def _cause_row(msg: pb.Cause) -> list[object]:
    row = list(_CAUSE_ROW(msg))
    for i, name in _CAUSE_OPTIONAL:
        if not msg.HasField(name):
            row[i] = None
    return row


def _optional(fields: tuple[DescriptorField, ...]) -> tuple[tuple[int, str], ...]:
    return tuple((i, f.name) for i, f in enumerate(fields) if f.optional)


_DESCRIPTOR_ROW = attrgetter(*FIELD_NAMES)
_CAUSE_ROW = attrgetter(*(f.name for f in CAUSE_FIELDS))
_DESCRIPTOR_OPTIONAL = _optional(FIELDS)
_CAUSE_OPTIONAL = _optional(CAUSE_FIELDS)
_CAUSES = FIELD_NAMES.index("causes")


def action_to_proto(action: Action) -> pb.Action:
    return pb.Action(id=action.id, summary=action.summary, runbook_url=action.runbook_url)


class Responses:
    """One ruleset's answers as protobuf: each built on first use and kept for as
    long as this object (one per serving ruleset), so a reload lets the old ones go."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self._built: dict[int, tuple[Classification, pb.ClassifyResponse, bytes]] = {}

    def response(
        self, c: Classification, descriptor: Descriptor | None = None
    ) -> pb.ClassifyResponse:
        """The response for an answer (a fresh message: the caller may change it)."""
        if c.explanation is not None:
            return _build_response(c, descriptor)
        entry = self._built.get(id(c))
        if entry is None or entry[0] is not c:
            entry = self._build(c)
        response = pb.ClassifyResponse()
        response.CopyFrom(entry[1])
        return response

    def batch(
        self, answers: Iterable[tuple[Classification, Descriptor]]
    ) -> pb.ClassifyBatchResponse:
        """One response per answer, in order; answers without explanations cost a bytes join."""
        built = self._built
        pieces = []
        for c, d in answers:
            if c.explanation is not None:
                explained = pb.ClassifyBatchResponse(responses=[_build_response(c, d)])
                pieces.append(explained.SerializeToString())
                continue
            entry = built.get(id(c))
            if entry is None or entry[0] is not c:
                entry = self._build(c)
            pieces.append(entry[2])
        return pb.ClassifyBatchResponse.FromString(b"".join(pieces))

    def _build(self, c: Classification) -> tuple[Classification, pb.ClassifyResponse, bytes]:
        """The message for an answer, and its wire bytes as one element of a batch.

        Keyed by identity (hashing a Classification costs more than building
        it); the entry keeps the answer alive, so its id cannot be reused.
        The ruleset's answers are fixed (one per rule and Unknown reason), so
        the cap only guards against answers made some other way.
        """
        if len(self._built) >= _PREBUILT_MAX:
            self._built.clear()
        message = _build_response(c, None)
        piece = pb.ClassifyBatchResponse(responses=[message]).SerializeToString()
        entry = self._built[id(c)] = (c, message, piece)
        return entry


_PREBUILT_MAX = 1 << 16


def _build_response(c: Classification, descriptor: Descriptor | None) -> pb.ClassifyResponse:
    response = pb.ClassifyResponse(
        error_class=cast(pb.RunErrorClass, int(c.error_class)),
        class_name=c.error_class.name,
        action=action_to_proto(c.action),
        effect=cast(pb.RunEffect, int(c.effect)),
        retryable=c.retryable,
        rule_id=c.rule_id,
        ruleset_version=c.ruleset_version,
        ruleset_digest=c.ruleset_digest,
        unknown_reason=cast(pb.UnknownReason, int(c.unknown_reason)),
    )
    if c.explanation is not None:
        text = render_explanation(shortened(descriptor), c) if descriptor is not None else ""
        response.explanation.CopyFrom(explanation_to_proto(c.explanation, capped(text)))
    return response


def _cut(text: str, limit: int = limits.MAX_EXPLAINED_TEXT_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more)"


def shortened(d: Descriptor) -> Descriptor:
    """The descriptor as an explanation over gRPC shows it: long free text cut, so an
    explanation costs a bounded amount whatever the request carried."""
    if len(d.message) <= limits.MAX_EXPLAINED_TEXT_CHARS and not d.causes and not d.attributes:
        return d
    return dataclasses.replace(
        d,
        message=_cut(d.message),
        causes=tuple(dataclasses.replace(c, message=_cut(c.message)) for c in d.causes),
        attributes={k: _cut(v) for k, v in d.attributes.items()},
    )


def capped(text: str) -> str:
    """An explanation's text within MAX_EXPLANATION_CHARS, saying so when cut."""
    limit = limits.MAX_EXPLANATION_CHARS
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… (cut: an explanation over gRPC is at most {limit:,} characters)"


def explanation_to_proto(e: Explanation, text: str) -> pb.Explanation:
    return pb.Explanation(
        matches=[
            pb.RuleMatch(
                rule_id=m.rule_id,
                location=m.location,
                class_name=m.class_name,
                conditions=m.conditions,
                type_depth=m.type_depth,
                condition_count=m.condition_count,
                priority=m.priority,
                effect=cast(pb.RunEffect, int(Effect.from_label(m.effect) if m.effect else 0)),
                fallback=m.fallback,
            )
            for m in e.matches
        ],
        winner_rule_id=e.winner_rule_id,
        decisions=[
            pb.PrecedenceDecision(loser_rule_id=d.loser_rule_id, step=d.step, reason=d.reason)
            for d in e.decisions
        ],
        near_misses=[
            pb.NearMiss(
                rule_id=n.rule_id,
                location=n.location,
                class_name=n.class_name,
                failed_conditions=n.failed_conditions,
                held_count=n.held_count,
                held_conditions=n.held_conditions,
                observed=[_cut(o) for o in n.observed],
            )
            for n in e.near_misses
        ],
        text=text,
    )


def verdict_to_proto(v: RuleVerdict) -> pb.RuleVerdict:
    return pb.RuleVerdict(
        rule_id=v.rule_id,
        location=v.location,
        class_name=v.class_name,
        outcome=v.outcome,
        held_conditions=v.held_conditions,
        failed_conditions=v.failed_conditions,
        observed=v.observed,
        step=v.step,
        rivals=v.rivals,
        reason=v.reason,
    )


def ruleset_info(holder: RulesetHolder, candidate: RulesetHolder | None = None) -> pb.RulesetInfo:
    """The serving ruleset, its last reload, and the candidate shadowing it, if any."""
    ruleset = holder.current
    info = pb.RulesetInfo(
        name=ruleset.name,
        version=ruleset.version,
        digest=ruleset.digest,
        rule_count=len(ruleset.rules),
        loaded_at=ruleset.loaded_at,
        source=ruleset.source,
        description=ruleset.description,
        layers=[
            pb.RulesetLayer(name=k.name, version=k.version, digest=k.digest, source=k.source)
            for k in ruleset.layers
        ],
        classifier_version=classifier.__version__,
    )
    if holder.last_reload is not None:
        info.last_reload.CopyFrom(reload_status_to_proto(holder.last_reload))
    if candidate is not None:
        info.candidate.CopyFrom(ruleset_info(candidate))
    return info


_RELOAD_RESULTS = {
    ReloadResult.reloaded: pb.RELOAD_RESULT_RELOADED,
    ReloadResult.unchanged: pb.RELOAD_RESULT_UNCHANGED,
    ReloadResult.failed: pb.RELOAD_RESULT_FAILED,
}


def reload_status_to_proto(status: ReloadStatus) -> pb.ReloadStatus:
    return pb.ReloadStatus(
        result=_RELOAD_RESULTS[status.result],
        at=status.at,
        trigger=status.trigger,
        error=status.error,
    )


def list_classes(ruleset: Ruleset) -> pb.ListClassesResponse:
    return pb.ListClassesResponse(
        classes=[
            pb.ClassInfo(
                error_class=cast(pb.RunErrorClass, int(cls)),
                name=cls.name,
                description=CLASS_DESCRIPTIONS[cls],
                default_action=action_to_proto(ruleset.defaults[cls].action),
                default_effect=cast(pb.RunEffect, int(ruleset.defaults[cls].effect)),
                default_retryable=ruleset.defaults[cls].retryable,
            )
            for cls in ErrorClass
        ]
    )
