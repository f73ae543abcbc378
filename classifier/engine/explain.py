"""Explain a classification: run the engine with a tracer, and render what it saw.

Used by `classifier explain`, `classifier classify --explain`, the gRPC
`explain` flag and the regression runner's failure report, so all of them
say the same thing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from classifier.answer import Classification, NearMiss
from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset
from classifier.engine.trace import ExplainTracer
from classifier.source.descriptor_file import render_descriptor
from classifier.taxonomy import UnknownReason
from classifier.text import and_list, depth_phrase, plural


def explain(ruleset: Ruleset, descriptor: Descriptor) -> Classification:
    """Classify with a tracer and attach the explanation to the answer."""
    tracer = ExplainTracer(descriptor=descriptor)
    result = classify(ruleset, descriptor, tracer)
    return dataclasses.replace(result, explanation=tracer.explanation)


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
    "fallback": "step 1, fallback",
    "type_depth": "step 2, type depth",
    "condition_count": "step 3, condition count",
    "priority": "step 4, priority",
    "layer": "step 5, layer",
    "order": "step 6, ruleset order",
}


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
                f"     {depth_phrase(m.type_depth)}, {plural(m.condition_count, 'condition')}, "
                f"priority {m.priority}" + (", fallback" if m.fallback else ""),
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
            f"conflict: {and_list(tied_ids)} tie at every precedence step "
            f"({depth_phrase(first.type_depth)}, {plural(first.condition_count, 'condition')}, "
            f"priority {first.priority}) and disagree, so the answer is Unknown:",
            *(f"  {m.rule_id} says {m.class_name}/{m.effect}" for m in tied),
            "  to settle it, add a condition to one of them or give one a priority",
        ]
    if e.near_misses:
        lines += ["", "near misses (closest first):", *near_miss_lines(e.near_misses, "  ")]
    elif not e.matches:
        lines += ["", "near misses: none (no rule had any condition hold)"]
    return "\n".join(lines)


def near_miss_lines(near_misses: Sequence[NearMiss], indent: str) -> list[str]:
    """Each near miss: the rule, the conditions that held, and those that failed with what
    the descriptor had there instead."""
    lines = []
    for n in near_misses:
        lines.append(f"{indent}{n.rule_id} -> {n.class_name}  {n.location}")
        lines += [f"{indent}   held:   {cond}" for cond in n.held_conditions]
        observed = n.observed or ("",) * len(n.failed_conditions)
        lines += [
            f"{indent}   failed: {cond}" + (f"  ({seen})" if seen else "")
            for cond, seen in zip(n.failed_conditions, observed, strict=True)
        ]
    return lines
