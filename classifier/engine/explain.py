"""Explain a classification: run the engine with a tracer, and render what it saw.

Used by `classifier explain`, `classifier classify --explain`, the gRPC
`explain` flag and the regression runner's failure report, so all of them
say the same thing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from classifier.answer import Classification, NearMiss, RuleVerdict
from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset
from classifier.engine.trace import ExplainTracer, decision, observed
from classifier.source.descriptor_file import render_descriptor
from classifier.taxonomy import UnknownReason
from classifier.text import and_list, depth_phrase, plural


def explain(ruleset: Ruleset, descriptor: Descriptor) -> Classification:
    """Classify with a tracer and attach the explanation to the answer."""
    tracer = ExplainTracer(descriptor=descriptor)
    result = classify(ruleset, descriptor, tracer)
    return dataclasses.replace(result, explanation=tracer.explanation)


def explain_rule(
    ruleset: Ruleset, descriptor: Descriptor, rule_id: str
) -> tuple[Classification, RuleVerdict]:
    """The explained answer, and why rule `rule_id` did or did not decide it.

    Raises KeyError when the ruleset has no such rule. The same traced evaluation as
    `explain`: every rule's conditions were tested, so the named rule's results are read,
    not recomputed.
    """
    rule = ruleset.rule(rule_id)
    if rule is None:
        raise KeyError(rule_id)
    tracer = ExplainTracer(descriptor=descriptor)
    result = dataclasses.replace(
        classify(ruleset, descriptor, tracer), explanation=tracer.explanation
    )
    results = next(r for evaluated, r, _ in tracer.evaluations if evaluated is rule)
    held = tuple(c.text for c, ok in results if ok)
    failed = [c for c, ok in results if not ok]
    base = (rule.id, str(rule.location), rule.outcome.error_class.name)
    if failed:
        return result, RuleVerdict(
            *base,
            "no_match",
            held,
            tuple(c.text for c in failed),
            tuple(observed(c, descriptor) for c in failed),
        )
    if result.rule_id == rule.id:
        return result, RuleVerdict(*base, "decided", held)
    mine = next(m for m in tracer.matches if m.rule is rule)
    top = tracer.top
    if mine in top and not result.rule_id:  # tied at every step, and the tie disagrees
        rivals = tuple(m.rule.id for m in top if m is not mine)
        reason = (
            f"{rule.id} ties with {and_list(list(rivals))} on type depth, condition count and "
            "priority, and they disagree on class or effect, so the answer is Unknown (conflict)"
        )
        return result, RuleVerdict(*base, "conflict", held, step="conflict", rivals=rivals,
                                   reason=reason)  # fmt: skip
    winner = next((m for m in top if m.rule.id == result.rule_id), top[0])
    d = decision(winner, mine, descriptor)
    rivals = (winner.rule.id,) if result.rule_id else tuple(m.rule.id for m in top)
    reason = d.reason
    if not result.rule_id:
        reason += f" (and {and_list(list(rivals))} then tie and disagree: Unknown, conflict)"
    return result, RuleVerdict(*base, "lost", held, step=d.step, rivals=rivals, reason=reason)


def explained_text(
    ruleset: Ruleset, descriptor: Descriptor, rule_id: str = ""
) -> tuple[Classification, RuleVerdict | None, str]:
    """The explained answer, with `rule_id` that rule's verdict, and the text
    `classifier explain` prints for them (the console shows the same text).

    Raises KeyError when the ruleset has no rule `rule_id`.
    """
    if not rule_id:
        result = explain(ruleset, descriptor)
        return result, None, render_explanation(descriptor, result)
    result, verdict = explain_rule(ruleset, descriptor, rule_id)
    text = render_explanation(descriptor, result) + "\n\n" + "\n".join(render_verdict(verdict))
    return result, verdict, text


def render_verdict(v: RuleVerdict) -> list[str]:
    """Why one rule did or did not decide, as explain --rule prints it."""
    lines = [f"rule {v.rule_id} -> {v.class_name}  {v.location}"]
    if v.outcome == "decided":
        lines.append("  decided this descriptor: it matched and won every precedence step")
    elif v.outcome == "no_match":
        count = len(v.held_conditions) + len(v.failed_conditions)
        lines.append(
            f"  did not match: {len(v.failed_conditions)} of {plural(count, 'condition')} failed"
        )
    elif v.outcome == "conflict":
        lines.append(f"  matched, and tied with {and_list(list(v.rivals))}: {v.reason}")
    else:
        lines.append(
            f"  matched, but lost at {_STEPS.get(v.step, v.step)}, to {and_list(list(v.rivals))}: "
            f"{v.reason}"
        )
    lines += [f"     held:   {cond}" for cond in v.held_conditions]
    lines += [
        f"     failed: {cond}  ({seen})"
        for cond, seen in zip(v.failed_conditions, v.observed, strict=True)
    ]
    return lines


def render_classification(c: Classification) -> str:
    """The answer in a few lines, for a person at a terminal."""
    lines = [f"class:     {c.error_class.name} ({int(c.error_class)})"]
    if c.unknown_reason is not UnknownReason.none:
        lines.append(f"reason:    {c.unknown_reason.name}")
    lines += [
        f"effect:    {c.effect.label}",
        f"retryable: {'yes' if c.retryable else 'no'}"
        + (f", {c.retry_after.text()}" if c.retry_after is not None else ""),
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
    "decisive": "step 1, decisive",
    "fallback": "step 2, fallback",
    "type_depth": "step 3, type depth",
    "condition_count": "step 4, condition count",
    "priority": "step 5, priority",
    "layer": "step 6, layer",
    "order": "step 7, ruleset order",
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
        lines += ["", "near misses: none (no rule held on a type, status, code, message or cause)"]
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
