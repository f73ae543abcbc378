"""Explain a classification: run the engine with a tracer, and render what it saw.

Used by `classifier explain`, `classifier classify --explain`, and the gRPC
`explain` flag, so all three say the same thing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from classifier.answer import Classification
from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset
from classifier.engine.trace import ExplainTracer
from classifier.taxonomy import GRPC_CODE_NAMES, Origin, UnknownReason


def explain(ruleset: Ruleset, descriptor: Descriptor) -> Classification:
    """Classify with a tracer and attach the explanation to the answer."""
    tracer = ExplainTracer(descriptor=descriptor)
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


def plural(count: int, noun: str) -> str:
    """`1 rule`, `2 rules`: a count with its noun, as every report writes one."""
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


_STEPS = {
    "type_depth": "step 1, type depth",
    "condition_count": "step 2, condition count",
    "priority": "step 3, priority",
    "order": "step 4, ruleset order",
}


def _flow(value: Any) -> str:
    """A value as one line of YAML flow style, quoted only where YAML needs it."""
    text = yaml.safe_dump(
        value, default_flow_style=True, width=10**9, allow_unicode=True, sort_keys=False
    )
    return text.strip().removesuffix("...").strip()


def render_descriptor(d: Descriptor, indent: str = "") -> list[str]:
    """The normalised descriptor as YAML lines, one per field and one per cause.

    Valid YAML in the descriptor-file shape, so it can be copied into a case
    file or fed back to `classifier explain`.
    """
    lines = []
    for key, value in descriptor_dict(d).items():
        if key == "causes":
            lines.append(f"{indent}causes:")
            lines += [f"{indent}  - {_flow(cause)}" for cause in value]
        else:
            lines.append(f"{indent}{key}: {_flow(value)}")
    return lines


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _depth_label(depth: int) -> str:
    if depth < 0:
        return "no type condition"
    if depth == 0:
        return "own type"
    return f"supertype {depth} step{'s' if depth > 1 else ''} up"


def render_explanation(descriptor: Descriptor, c: Classification) -> str:
    """The whole explanation: descriptor, answer, matches, why the winner won, near misses.

    The layout is stable (golden files pin it): sections in a fixed order,
    separated by blank lines, each item's details indented under it.
    """
    e = c.explanation
    lines = ["descriptor (normalised):", *render_descriptor(descriptor, indent="  ")]
    lines += [
        "",
        "answer:",
        *("  " + line for line in render_classification(c).splitlines()),
    ]
    if e is None:
        return "\n".join(lines)
    lines.append("")
    if e.matches:
        lines.append(f"matched rules ({len(e.matches)}, best first):")
        for i, m in enumerate(e.matches, 1):
            verdict = f"{m.class_name}/{m.effect}" if m.effect else m.class_name
            lines += [
                f"  {i}. {m.rule_id} -> {verdict}  {m.location}",
                f"     {_depth_label(m.type_depth)}, {plural(m.condition_count, 'condition')}, "
                f"priority {m.priority}",
                *(f"     held: {cond}" for cond in m.conditions),
            ]
    else:
        lines.append("matched rules: none")
    if e.decisions and e.winner_rule_id:
        lines += ["", f"why {e.winner_rule_id} decided:"]
        lines += [
            f"  over {d.loser_rule_id} at {_STEPS.get(d.step, d.step)}: {d.reason}"
            for d in e.decisions
        ]
    elif e.decisions:
        tied_ids = [d.loser_rule_id for d in e.decisions]
        tied = [m for m in e.matches if m.rule_id in tied_ids]
        first = tied[0]
        lines += [
            "",
            f"conflict: {_and(tied_ids)} tie at every precedence step "
            f"({_depth_label(first.type_depth)}, {plural(first.condition_count, 'condition')}, "
            f"priority {first.priority}) and disagree, so the answer is Unknown:",
            *(f"  {m.rule_id} says {m.class_name}/{m.effect}" for m in tied),
            "  to settle it, add a condition to one of them or give one a priority",
        ]
    if e.near_misses:
        lines += ["", "near misses (closest first):"]
        for n in e.near_misses:
            lines.append(f"  {n.rule_id} -> {n.class_name}  {n.location}")
            lines += [f"     held:   {cond}" for cond in n.held_conditions]
            observed = n.observed or ("",) * len(n.failed_conditions)
            lines += [
                f"     failed: {cond}" + (f"  ({seen})" if seen else "")
                for cond, seen in zip(n.failed_conditions, observed, strict=True)
            ]
    elif not e.matches:
        lines += ["", "near misses: none (no rule had any condition hold)"]
    return "\n".join(lines)
