"""Classify a descriptor against a compiled ruleset. Pure: no grpc, no yaml, no pydantic.

Precedence, the way exception handlers pick a handler:

1. type depth: a rule matching the descriptor's own type beats one matching
   a supertype, nearer supertypes beat farther ones, and any typed rule beats
   a rule with no type condition;
2. condition count: among equals, the rule with more conditions wins;
3. priority: then the higher explicit `priority`;
4. still tied: if the tied rules agree on class and effect, the first in
   ruleset order decides; if they disagree, the answer is Unknown with
   reason `conflict`, never a coin toss.

A tracer, when given, sees every rule evaluated and every condition's
result; that is how `explain` works, through this same code path.
"""

from __future__ import annotations

from dataclasses import dataclass

from classifier.descriptor import Descriptor
from classifier.ruleset import Action, CompiledRule, Match, Ruleset
from classifier.taxonomy import Effect, ErrorClass, UnknownReason
from classifier.trace import Explanation, Tracer


@dataclass(frozen=True, slots=True)
class Classification:
    """The answer for one descriptor, and which ruleset and rule gave it."""

    error_class: ErrorClass
    action: Action
    effect: Effect
    retryable: bool
    rule_id: str
    ruleset_version: str
    ruleset_digest: str
    unknown_reason: UnknownReason = UnknownReason.none
    explanation: Explanation | None = None


def classify(
    ruleset: Ruleset, descriptor: Descriptor, tracer: Tracer | None = None
) -> Classification:
    """Classify one descriptor; with a tracer, every rule is evaluated and reported to it."""
    if tracer is None:
        matches = _matches(ruleset.index.candidates(descriptor), descriptor)
    else:
        matches = _traced_matches(ruleset.rules, descriptor, tracer)
    top = _top(matches)
    result = _decide(ruleset, top)
    if tracer is not None:
        tracer.decided(matches, top, result.rule_id)
    return result


def ranked_matches(ruleset: Ruleset, descriptor: Descriptor) -> list[Match]:
    """Every rule that matches, best first (precedence key, then ruleset order).

    The same lookup and matching `classify` does, for callers (the linter)
    that need the whole ranking rather than the decision.
    """
    matches = _matches(ruleset.index.candidates(descriptor), descriptor)
    return sorted(matches, key=lambda m: (m.rank, m.rule.order))


def classify_unindexed(ruleset: Ruleset, descriptor: Descriptor) -> Classification:
    """The oracle: the same decision over every rule, no index. Tests compare the two."""
    return _decide(ruleset, _top(_matches(ruleset.rules, descriptor)))


def _matches(
    candidates: list[CompiledRule] | tuple[CompiledRule, ...], d: Descriptor
) -> list[Match]:
    chain = d.chain
    out: list[Match] = []
    seen: set[int] = set()
    for rule in candidates:
        if rule.order in seen:
            continue
        seen.add(rule.order)
        depth = rule.type_depth(chain)
        if depth is None:
            continue
        for condition in rule.conditions:
            if not condition.holds(d):
                break
        else:
            out.append(Match(rule, depth, rule.rank(depth)))
    return out


def _traced_matches(rules: tuple[CompiledRule, ...], d: Descriptor, tracer: Tracer) -> list[Match]:
    chain = d.chain
    out: list[Match] = []
    for rule in rules:
        depth = rule.type_depth(chain)
        results = [(c, c.holds(d)) for c in rule.all_conditions]
        tracer.evaluated(rule, results, depth)
        if depth is not None and all(held for _, held in results):
            out.append(Match(rule, depth, rule.rank(depth)))
    return out


def _top(matches: list[Match]) -> list[Match]:
    """The matches that share the best precedence key, in ruleset order."""
    if not matches:
        return []
    best = min(m.rank for m in matches)
    return sorted((m for m in matches if m.rank == best), key=lambda m: m.rule.order)


def _decide(ruleset: Ruleset, top: list[Match]) -> Classification:
    if not top:
        return _unknown(ruleset, UnknownReason.no_match)
    first = top[0].rule.outcome
    if any(
        (m.rule.outcome.error_class, m.rule.outcome.effect) != (first.error_class, first.effect)
        for m in top[1:]
    ):
        return _unknown(ruleset, UnknownReason.conflict)
    return Classification(
        error_class=first.error_class,
        action=first.action,
        effect=first.effect,
        retryable=first.retryable,
        rule_id=top[0].rule.id,
        ruleset_version=ruleset.version,
        ruleset_digest=ruleset.digest,
    )


def _unknown(ruleset: Ruleset, reason: UnknownReason) -> Classification:
    action = ruleset.defaults[ErrorClass.Unknown].action
    if reason is UnknownReason.conflict and ruleset.conflict_action is not None:
        action = ruleset.conflict_action
    return Classification(
        error_class=ErrorClass.Unknown,
        action=action,
        effect=Effect.unspecified,
        retryable=False,
        rule_id="",
        ruleset_version=ruleset.version,
        ruleset_digest=ruleset.digest,
        unknown_reason=reason,
    )
