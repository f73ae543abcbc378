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
import datetime as dt
import re
from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import cast

import classifier
from classifier import limits
from classifier.answer import Action, Classification, Explanation, RetryAfter, RuleVerdict
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
from classifier.errors import DescriptorError, FieldViolation
from classifier.server.shared.serving_bundle import LocalDecision, ServingBundle
from classifier.server.shared.serving_ruleset import ReloadResult, ReloadStatus, RulesetHolder
from classifier.source.documents import RULE_ID_PATTERN
from classifier.taxonomy import CLASS_DESCRIPTIONS, Effect, ErrorClass, UnknownReason
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
        if c.explanation is not None or c.retry_after is not None:
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
            if c.explanation is not None or c.retry_after is not None:
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
    if c.retry_after is not None:
        _set_retry_after(response, c.retry_after)
    if c.explanation is not None:
        text = render_explanation(shortened(descriptor), c) if descriptor is not None else ""
        response.explanation.CopyFrom(explanation_to_proto(c.explanation, capped(text)))
    return response


def _set_retry_after(response: pb.ClassifyResponse, advice: RetryAfter) -> None:
    """An answer with a wait is never one of the prebuilt responses (the wait is the
    descriptor's, not the rule's), so this sets it on a fresh message."""
    response.retry_after.FromTimedelta(advice.delay)
    response.retry_after_source = advice.labelled_source


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
    """The serving ruleset with its bundle, its last reload, and the candidate shadowing it,
    if any."""
    ruleset, bundle = holder.serving
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
    if bundle is not None:
        info.bundle_digest = bundle.digest
        info.bundle_signed = bundle.signed
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


def bundle_responses(bundle: ServingBundle) -> tuple[pb.GetBundleResponse, pb.GetBundleResponse]:
    """GetBundle's two answers for a bundle: in full, and `unchanged` (to a caller that has
    it), made once per bundle and returned to every call (nothing changes them)."""
    unchanged = pb.GetBundleResponse(
        bundle_digest=bundle.digest,
        ruleset_digest=bundle.ruleset_digest,
        signed=bundle.signed,
        unchanged=True,
    )
    full = pb.GetBundleResponse(
        bundle=bundle.data,
        signatures=bundle.signatures,
        bundle_digest=bundle.digest,
        ruleset_digest=bundle.ruleset_digest,
        signed=bundle.signed,
    )
    return full, unchanged


_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_RULE_ID = re.compile(RULE_ID_PATTERN)
_CLASSES = {int(k) for k in ErrorClass}
_EFFECTS = {int(e) for e in Effect}
_REASONS = {int(r) for r in UnknownReason}
_TIMESTAMP_SECONDS = (-62_135_596_800, 253_402_300_799)
"""google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z."""


class ReportedAnswers:
    """Reported answers, each checked once: a client's answers are the few hundred its
    bundle gives (one per rule and Unknown reason), so a report of a thousand decisions
    is mostly answers seen before, found by their wire bytes (checking one costs about
    twice as much as checking its descriptor). One per servicer; the cap only guards
    against answers made some other way."""

    def __init__(self, limit: int = _PREBUILT_MAX) -> None:
        self.limit = limit
        self._checked: dict[bytes, Classification] = {}

    def answer(self, msg: pb.ClassifyResponse) -> Classification:
        """The answer as a Classification; DescriptorError as `reported_answer` raises it."""
        key = msg.SerializeToString(deterministic=True)
        found = self._checked.get(key)
        if found is None:
            found = reported_answer(msg)
            if len(self._checked) >= self.limit:
                self._checked.clear()
            self._checked[key] = found
        return found


def reported_decision(
    msg: pb.ReportedDecision, serving_bundle: str, answers: ReportedAnswers
) -> tuple[Descriptor, Classification, LocalDecision]:
    """A decision a client reported, validated: the descriptor as Classify validates it, the
    answer's class, effect and reason ones this server knows, the digests well formed.
    DescriptorError names every bad field from the decision (`descriptor.type`,
    `answer.error_class`, `bundle_digest`); `serving_bundle` is the serving bundle's digest.
    """
    violations: list[FieldViolation] = []
    descriptor: Descriptor | None = None
    if not msg.HasField("descriptor"):
        violations.append(FieldViolation("descriptor", "is required"))
    else:
        try:
            descriptor = descriptor_from_proto(msg.descriptor)
        except DescriptorError as exc:
            violations += exc.violations
    answer: Classification | None = None
    if not msg.HasField("answer"):
        violations.append(FieldViolation("answer", "is required"))
    else:
        try:
            answer = answers.answer(msg.answer)
        except DescriptorError as exc:
            violations += exc.violations
    if not _DIGEST.fullmatch(msg.bundle_digest):
        violations.append(
            FieldViolation(
                "bundle_digest",
                "must be the digest of the bundle that decided, sha256:<64 hex digits> "
                f"(GetBundleResponse.bundle_digest), not {_shown(msg.bundle_digest)}",
            )
        )
    decided_at: float | None = None
    if msg.HasField("decided_at"):
        at = msg.decided_at
        if _TIMESTAMP_SECONDS[0] <= at.seconds <= _TIMESTAMP_SECONDS[1] and (
            0 <= at.nanos < 1_000_000_000
        ):
            decided_at = at.seconds + at.nanos / 1e9
        else:
            violations.append(
                FieldViolation(
                    "decided_at",
                    f"not a time (seconds {at.seconds}, nanos {at.nanos}): a Timestamp is "
                    "0001-01-01 to 9999-12-31, nanos 0 to 999,999,999",
                )
            )
    if violations:
        raise DescriptorError(violations)
    assert descriptor is not None
    assert answer is not None
    local = LocalDecision(msg.bundle_digest, msg.bundle_digest == serving_bundle, decided_at)
    return descriptor, answer, local


def reported_answer(msg: pb.ClassifyResponse) -> Classification:
    """A reported answer as a Classification; DescriptorError naming each bad field
    (`answer.effect`). Its class, effect and reason must be ones this server knows (it
    counts them by name), an Unknown must say why and nothing else may, and its texts are
    bounded (they are written to the decision log)."""
    violations: list[FieldViolation] = []

    def bad(field: str, message: str) -> None:
        violations.append(FieldViolation(f"answer.{field}", message))

    number, reason = int(msg.error_class), int(msg.unknown_reason)
    if number not in _CLASSES:
        bad("error_class", f"{number} is no class this server knows (0-{max(_CLASSES)})")
    elif msg.class_name and msg.class_name != ErrorClass(number).name:
        bad(
            "class_name",
            f"{_shown(msg.class_name)} is not the name of class {number} "
            f"({ErrorClass(number).name})",
        )
    if msg.effect not in _EFFECTS:
        bad("effect", f"{msg.effect} is no effect this server knows (0-{max(_EFFECTS)})")
    if reason not in _REASONS:
        bad("unknown_reason", f"{reason} is no reason this server knows")
    elif number == ErrorClass.Unknown and reason == UnknownReason.none:
        bad("unknown_reason", "an Unknown answer says why: NO_MATCH or CONFLICT")
    elif number in _CLASSES and number != ErrorClass.Unknown and reason != UnknownReason.none:
        bad("unknown_reason", "only an Unknown answer has a reason")
    if msg.rule_id and not _RULE_ID.fullmatch(msg.rule_id):
        bad("rule_id", f"{_shown(msg.rule_id)} is not a rule id (the rules' id grammar)")
    if not _DIGEST.fullmatch(msg.ruleset_digest):
        bad(
            "ruleset_digest",
            "must be the digest of the ruleset that decided, sha256:<64 hex digits>, not "
            f"{_shown(msg.ruleset_digest)}",
        )
    for field, text in (
        ("class_name", msg.class_name),
        ("rule_id", msg.rule_id),
        ("ruleset_version", msg.ruleset_version),
        ("action.id", msg.action.id),
        ("action.summary", msg.action.summary),
        ("action.runbook_url", msg.action.runbook_url),
    ):
        if len(text) > limits.MAX_REPORTED_TEXT_CHARS:
            bad(field, f"{len(text):,} characters, over {limits.MAX_REPORTED_TEXT_CHARS:,}")
    advice = _reported_retry_after(msg, bad)
    if violations:
        raise DescriptorError(violations)
    return Classification(
        retry_after=advice,
        error_class=ErrorClass(msg.error_class),
        action=Action(msg.action.id, msg.action.summary, msg.action.runbook_url),
        effect=Effect(msg.effect),
        retryable=msg.retryable,
        rule_id=msg.rule_id,
        ruleset_version=msg.ruleset_version,
        ruleset_digest=msg.ruleset_digest,
        unknown_reason=UnknownReason(msg.unknown_reason),
    )


MAX_REPORTED_RETRY_AFTER = dt.timedelta(days=1)
"""The longest wait a reported answer may advise: past any ruleset's sensible cap, so a
client's evaluator that capped differently still reports; a day bounds what is logged."""


def _reported_retry_after(
    msg: pb.ClassifyResponse, bad: Callable[[str, str], None]
) -> RetryAfter | None:
    if not msg.HasField("retry_after"):
        if msg.retry_after_source:
            bad("retry_after_source", "set without retry_after")
        return None
    delay = msg.retry_after.ToTimedelta()
    if not msg.retryable:
        bad("retry_after", "only a retryable answer advises a wait")
    if not dt.timedelta(0) <= delay <= MAX_REPORTED_RETRY_AFTER:
        bad("retry_after", f"{delay.total_seconds():g} s is outside 0 s to 1 day")
    if not msg.retry_after_source:
        bad("retry_after_source", "must name the attribute the wait was read from")
    elif len(msg.retry_after_source) > limits.MAX_REPORTED_TEXT_CHARS:
        bad(
            "retry_after_source",
            f"{len(msg.retry_after_source):,} characters, over {limits.MAX_REPORTED_TEXT_CHARS:,}",
        )
    return RetryAfter.from_labelled(delay, msg.retry_after_source)


def _shown(text: str) -> str:
    """A value a caller sent, quoted and cut, for a violation's message."""
    return repr(text[:80] + ("..." if len(text) > 80 else "")) if text else "empty"
