"""Which rules came closest to deciding a descriptor: the one near-miss ranking.

A rule is near when it held on a condition that decides classes in this library: a type
that is not generic (`classifier.generic_types`), an HTTP or gRPC status, a code, a
message pattern, a cause (one that held on such a condition itself). Conditions that
only scope a rule (`language`, `origin`, `provider`, `has`, `lacks`, `attributes`) hold
for most descriptors of a runtime, so a rule that held on those alone is not near at
all: `language: python` holding says nothing about which failure it was.

Near rules are ranked by how many deciding conditions held (most first), then by how
few conditions failed, a rule whose type held before one for another type, then by how
many conditions held, then by ruleset order. Explain (`classifier explain`, `classify
--explain`, the gRPC explain flag), `classifier unknowns`, the console and `--propose`
all rank with `rank` (through `ExplainTracer`), so they show the same rules in the same
order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from classifier.engine.conditions import (
    AttributeIs,
    CauseMatches,
    Condition,
    FieldIn,
    FieldPresent,
    MessageMatches,
    TypeIs,
)
from classifier.engine.ruleset import CompiledRule
from classifier.generic_types import is_generic

DECIDING_FIELDS = frozenset({"http_status", "grpc_status", "code"})
"""The plain fields whose value names a class (a status, a provider's or runtime's code)."""

Evaluation = tuple[CompiledRule, Sequence[tuple[Condition, bool]], int | None]
"""A rule with each condition and whether it held, and its type depth (the tracer's record)."""


@dataclass(frozen=True, slots=True)
class Near:
    """A rule that did not match, and why it is near: its deciding conditions that held."""

    rule: CompiledRule
    held: tuple[Condition, ...]
    failed: tuple[Condition, ...]
    deciding: tuple[Condition, ...]
    """The held conditions that decide classes (a subset of `held`)."""


def decides(c: Condition, subject: Any) -> bool:
    """Whether a condition that held on `subject` decides classes (see the module docstring).

    A type decides only through a name that is not generic and that the subject has; a
    cause only when some cause satisfies it on a deciding condition of its own.
    """
    match c:
        case TypeIs(names=names):
            chain = set(subject.chain)
            return any(n in chain and not is_generic(n) for n in names)
        case FieldIn(field=name):
            return name in DECIDING_FIELDS
        case MessageMatches():
            return True
        case FieldPresent() | AttributeIs():
            return False
        case CauseMatches(conditions=inner):
            return any(
                all(i.holds(cause) for i in inner) and any(decides(i, cause) for i in inner)
                for cause in subject.causes
            )
        case _:
            assert_never(c)


def rank(evaluations: Sequence[Evaluation], subject: Any) -> list[Near]:
    """Every near rule of an evaluation, nearest first (see the module docstring)."""
    scored = []
    for rule, results, _depth in evaluations:
        held = tuple(c for c, ok in results if ok)
        failed = tuple(c for c, ok in results if not ok)
        if not failed:
            continue
        deciding = tuple(c for c in held if decides(c, subject))
        if not deciding:
            continue
        type_failed = rule.type_condition in failed
        key = (-len(deciding), len(failed), type_failed, -len(held), rule.order)
        scored.append((key, Near(rule, held, failed, deciding)))
    scored.sort(key=lambda s: s[0])
    return [near for _, near in scored]
