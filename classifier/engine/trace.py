"""What `explain` needs, gathered from the real evaluation.

The engine calls a `Tracer` while it classifies; `ExplainTracer` records
every rule's condition results and the decision, then builds an
`Explanation`: the rules that matched (with the conditions that held), why
the winner beat each other match, and, for an Unknown, the near misses.
There is no second engine: explain is the normal engine with a tracer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, assert_never

from classifier.answer import NO_TYPE_DEPTH, Explanation, NearMiss, PrecedenceDecision, RuleMatch
from classifier.engine.conditions import (
    AttributeIs,
    CauseMatches,
    Condition,
    FieldIn,
    FieldPresent,
    MessageMatches,
    TypeIs,
    is_set,
)
from classifier.engine.nearness import rank
from classifier.engine.ruleset import UNTYPED_DEPTH, CompiledRule, Match
from classifier.taxonomy import GRPC_CODE_NAMES
from classifier.text import depth_phrase

NEAR_MISSES = 3


class Tracer(Protocol):
    """Receives the engine's evaluation as it happens."""

    def evaluated(
        self, rule: CompiledRule, results: Sequence[tuple[Condition, bool]], depth: int | None
    ) -> None:
        """A rule was evaluated: each condition with whether it held, and the type depth."""

    def decided(self, matches: Sequence[Match], top: Sequence[Match], winner_rule_id: str) -> None:
        """All rules were evaluated; `top` shares the best precedence key."""


class ExplainTracer:
    """Records an evaluation and turns it into an Explanation.

    Given the descriptor, near misses also say what it had where each
    failed condition looked.
    """

    def __init__(self, near_misses: int = NEAR_MISSES, descriptor: Any = None) -> None:
        self.limit = near_misses
        self.descriptor = descriptor
        self.evaluations: list[
            tuple[CompiledRule, Sequence[tuple[Condition, bool]], int | None]
        ] = []
        self.explanation: Explanation | None = None
        self.matches: tuple[Match, ...] = ()
        self.top: tuple[Match, ...] = ()

    def evaluated(
        self, rule: CompiledRule, results: Sequence[tuple[Condition, bool]], depth: int | None
    ) -> None:
        self.evaluations.append((rule, results, depth))

    def decided(self, matches: Sequence[Match], top: Sequence[Match], winner_rule_id: str) -> None:
        ordered = sorted(matches, key=lambda m: (m.rank, m.rule.order))
        self.matches, self.top = tuple(ordered), tuple(top)
        self.explanation = Explanation(
            matches=tuple(_rule_match(m) for m in ordered),
            winner_rule_id=winner_rule_id,
            decisions=_decisions(ordered, top, winner_rule_id, self.descriptor),
            near_misses=self._near_misses() if not matches else (),
        )

    def _near_misses(self) -> tuple[NearMiss, ...]:
        """The nearest rules, ranked by the one near-miss ranking (`nearness.rank`)."""
        d = self.descriptor
        if d is None:
            return ()
        return tuple(
            NearMiss(
                n.rule.id,
                str(n.rule.location),
                n.rule.outcome.error_class.name,
                tuple(c.text for c in n.failed),
                len(n.held),
                tuple(c.text for c in n.held),
                tuple(observed(c, d) for c in n.failed),
            )
            for n in rank(self.evaluations, d)[: self.limit]
        )


def _rule_match(m: Match) -> RuleMatch:
    rule = m.rule
    return RuleMatch(
        rule_id=rule.id,
        location=str(rule.location),
        class_name=rule.outcome.error_class.name,
        conditions=tuple(c.text for c in rule.all_conditions),
        type_depth=shown_depth(m.depth),
        condition_count=rule.condition_count,
        priority=rule.priority,
        effect=rule.outcome.effect.label,
        fallback=rule.fallback,
    )


def _decisions(
    ordered: Sequence[Match], top: Sequence[Match], winner_rule_id: str, descriptor: Any = None
) -> tuple[PrecedenceDecision, ...]:
    if not ordered:
        return ()
    if not winner_rule_id:
        return tuple(
            PrecedenceDecision(
                m.rule.id,
                "conflict",
                f"{m.rule.id} ({m.rule.outcome.error_class.name}, {m.rule.outcome.effect.label}) "
                "ties with the other top rules on type depth, condition count and priority, "
                "and they disagree on class or effect",
            )
            for m in top
        )
    winner = next(m for m in ordered if m.rule.id == winner_rule_id)
    return tuple(_decision(winner, m, descriptor) for m in ordered if m is not winner)


def decision(winner: Match, loser: Match, descriptor: Any = None) -> PrecedenceDecision:
    """The precedence step at which `winner` beats `loser`, and a sentence saying why (with
    the descriptor, a decisive fact is named with the value the runtime stated)."""
    return _decision(winner, loser, descriptor)


def stated_facts(rule: CompiledRule, descriptor: Any = None) -> str:
    """The decisive facts a rule reads, as the runtime stated them (`time_limit=run`); without
    the descriptor, as the rule names them (`time_limit=tool|run`)."""
    attributes = getattr(descriptor, "attributes", None) or {}
    shown = []
    for fact in rule.facts:
        value = attributes.get(fact.name)
        if value is None or value not in fact.values:
            value = "|".join(sorted(fact.values))
        shown.append(f"{fact.name}={value}")
    return ", ".join(shown)


def _decision(winner: Match, loser: Match, descriptor: Any = None) -> PrecedenceDecision:
    w, l_ = winner.rule, loser.rule
    if w.decisive != l_.decisive:
        facts = stated_facts(w, descriptor)
        return PrecedenceDecision(
            l_.id,
            "decisive",
            f"decided by the runtime's fact {facts}: {w.id} reads it and {l_.id} does not (what "
            "the runtime states about the whole failure outranks what the exception carries)",
        )
    if w.fallback != l_.fallback:
        return PrecedenceDecision(
            l_.id,
            "fallback",
            f"{l_.id} is a fallback: it decides only when no other rule matches",
        )
    if winner.depth != loser.depth:
        return PrecedenceDecision(
            l_.id,
            "type_depth",
            f"{w.id} {depth_phrase(shown_depth(winner.depth), sentence=True)}; "
            f"{l_.id} {depth_phrase(shown_depth(loser.depth), sentence=True)}",
        )
    if w.condition_count != l_.condition_count:
        return PrecedenceDecision(
            l_.id,
            "condition_count",
            f"same type depth; {w.id} has {w.condition_count} conditions, "
            f"{l_.id} has {l_.condition_count}",
        )
    if w.priority != l_.priority:
        return PrecedenceDecision(
            l_.id,
            "priority",
            f"same type depth and condition count; {w.id} has priority {w.priority}, "
            f"{l_.id} has {l_.priority}",
        )
    if w.layer != l_.layer:
        return PrecedenceDecision(
            l_.id,
            "layer",
            f"same type depth, condition count and priority; {w.id} is in a layer above "
            f"{l_.id}'s (layer {w.layer} against {l_.layer}; 0 is the ruleset asked for)",
        )
    return PrecedenceDecision(
        l_.id,
        "order",
        f"tied on type depth, condition count and priority, and both say "
        f"{w.outcome.error_class.name}/{w.outcome.effect.label}; "
        f"{w.id} comes first in ruleset order",
    )


def shown_depth(depth: int) -> int:
    """The engine's type depth as answers show it (NO_TYPE_DEPTH for an untyped rule)."""
    return NO_TYPE_DEPTH if depth == UNTYPED_DEPTH else depth


def observed(c: Condition, subject: Any) -> str:
    """What the subject has where a condition looks (`http_status is 503`), for near misses."""
    match c:
        case TypeIs():
            chain = subject.chain
            if len(chain) == 1:
                return f"the type is {chain[0]}, with no supertypes"
            return f"the type is {chain[0]}, supertypes {', '.join(chain[1:])}"
        case FieldIn(field=name) | FieldPresent(field=name):
            value = getattr(subject, name)
            if not is_set(value):
                return f"{name} is not set"
            if name == "grpc_status":
                return f"{name} is {GRPC_CODE_NAMES.get(value, value)}"
            if name == "origin":
                return f"{name} is {value.name}"
            return f"{name} is {value!r}" if isinstance(value, str) else f"{name} is {value}"
        case MessageMatches():
            message = subject.message
            if not message:
                return "the message is empty"
            shown = message if len(message) <= 80 else message[:77] + "..."
            return f"the message is {shown!r}"
        case AttributeIs(name=name):
            value = subject.attributes.get(name)
            return (
                f"attribute {name} is not set"
                if value is None
                else f"attribute {name} is {value!r}"
            )
        case CauseMatches(conditions=inner):
            causes = subject.causes
            if not causes:
                return "the descriptor has no causes"
            nearest = max(causes, key=lambda cause: sum(i.holds(cause) for i in inner))
            failed = next(i for i in inner if not i.holds(nearest))
            seen = observed(failed, nearest)
            return f"the nearest cause, {nearest.type}, fails {failed.text}: {seen}"
        case _:
            assert_never(c)
