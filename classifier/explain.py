"""Explain a classification: run the engine with a tracer, and render what it saw.

Used by `classifier explain`, `classifier classify --explain`, and the gRPC
`explain` flag, so all three say the same thing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from classifier.descriptor import Descriptor
from classifier.engine import Classification, classify
from classifier.ruleset import Ruleset
from classifier.taxonomy import GRPC_CODE_NAMES, Origin, UnknownReason
from classifier.trace import ExplainTracer


def explain(ruleset: Ruleset, descriptor: Descriptor) -> Classification:
    """Classify with a tracer and attach the explanation to the answer."""
    tracer = ExplainTracer()
    result = classify(ruleset, descriptor, tracer)
    return dataclasses.replace(result, explanation=tracer.explanation)


def descriptor_dict(d: Descriptor) -> dict[str, Any]:
    """The normalised descriptor in the descriptor-file shape, empty fields left out."""

    def subject(s: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"type": s.type}
        if s.supertypes:
            out["supertypes"] = list(s.supertypes)
        if s.http_status is not None:
            out["http_status"] = s.http_status
        if s.grpc_status is not None:
            out["grpc_status"] = GRPC_CODE_NAMES[s.grpc_status]
        if s.code:
            out["code"] = s.code
        if s.message:
            out["message"] = s.message
        return out

    out = subject(d)
    if d.origin is not Origin.unspecified:
        out["origin"] = d.origin.name
    for key in ("language", "provider"):
        if value := getattr(d, key):
            out[key] = value
    if d.attributes:
        out["attributes"] = dict(d.attributes)
    if d.causes:
        out["causes"] = [subject(c) for c in d.causes]
    return out


def classification_dict(c: Classification) -> dict[str, Any]:
    """A classification as plain data (for JSON output and tests)."""
    out: dict[str, Any] = {
        "class": c.error_class.name,
        "class_number": int(c.error_class),
        "effect": c.effect.label,
        "retryable": c.retryable,
        "action": {
            "id": c.action.id,
            "summary": c.action.summary,
            "runbook_url": c.action.runbook_url,
        },
        "rule": c.rule_id,
        "ruleset_version": c.ruleset_version,
        "ruleset_digest": c.ruleset_digest,
    }
    if c.unknown_reason is not UnknownReason.none:
        out["unknown_reason"] = c.unknown_reason.name
    if c.explanation is not None:
        out["explanation"] = dataclasses.asdict(c.explanation)
    return out


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def render_classification(c: Classification) -> str:
    """The answer in a few lines, for a person at a terminal."""
    lines = [f"class:     {c.error_class.name} ({int(c.error_class)})"]
    if c.unknown_reason is not UnknownReason.none:
        lines.append(f"reason:    {c.unknown_reason.name}")
    lines += [
        f"effect:    {c.effect.label}",
        f"retryable: {'yes' if c.retryable else 'no'}",
        f"action:    {c.action.id}: {c.action.summary}",
    ]
    if c.action.runbook_url:
        lines.append(f"runbook:   {c.action.runbook_url}")
    lines += [
        f"rule:      {c.rule_id or '-'}",
        f"ruleset:   {c.ruleset_version} ({c.ruleset_digest[:19]})",
    ]
    return "\n".join(lines)


def render_explanation(descriptor: Descriptor, c: Classification) -> str:
    """The whole explanation: descriptor, matches, why the winner won, near misses."""
    e = c.explanation
    dumped = yaml.safe_dump(
        descriptor_dict(descriptor), sort_keys=False, allow_unicode=True, width=100
    )
    lines = [
        "descriptor (normalised):",
        *("  " + line for line in dumped.rstrip().splitlines()),
        "",
    ]
    lines.append(render_classification(c))
    if e is None:
        return "\n".join(lines)
    lines.append("")
    if e.matches:
        lines.append(f"matched rules ({len(e.matches)}, best first):")
        for m in e.matches:
            depth = "no type" if m.type_depth < 0 else f"type depth {m.type_depth}"
            lines.append(
                f"  {m.rule_id} -> {m.class_name}  [{depth}, {_n(m.condition_count, 'condition')}, "
                f"priority {m.priority}]  {m.location}"
            )
            lines += [f"      held: {cond}" for cond in m.conditions]
    else:
        lines.append("matched rules: none")
    if e.decisions:
        lines.append("")
        lines.append("why:" if e.winner_rule_id else "conflict:")
        for d in e.decisions:
            who = f"beats {d.loser_rule_id}" if e.winner_rule_id else d.loser_rule_id
            lines.append(f"  {who} [{d.step}]: {d.reason}")
    if e.near_misses:
        lines.append("")
        lines.append("near misses:")
        for n in e.near_misses:
            lines.append(f"  {n.rule_id} -> {n.class_name}  ({n.held_count} held)  {n.location}")
            lines += [f"      failed: {cond}" for cond in n.failed_conditions]
    return "\n".join(lines)
