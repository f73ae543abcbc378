"""Candidate lookup: which rules could match a descriptor, without scanning them all.

Typed rules are found by walking the descriptor's own type and then its
supertypes; a rule naming several types is listed under each. Rules with
no type condition are bucketed by the most selective plain field they test
(code, gRPC status, HTTP status, provider, origin, language) and the rest
are always candidates. The cost of a lookup therefore follows the length of
the type chain, not the number of rules. The engine's unindexed path (every
rule) is kept as the oracle this index is tested against.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Generic, Protocol, TypeVar

from classifier.conditions import Condition, FieldIn, TypeIs

INDEXED_FIELDS = ("code", "grpc_status", "http_status", "provider", "origin", "language")


class _Indexable(Protocol):
    @property
    def type_condition(self) -> TypeIs | None: ...
    @property
    def conditions(self) -> tuple[Condition, ...]: ...


R = TypeVar("R", bound=_Indexable)


class RuleIndex(Generic[R]):
    """Maps descriptor facts to the rules that could match them."""

    __slots__ = ("by_field", "by_type", "unindexed")

    def __init__(self, rules: Iterable[R]) -> None:
        by_type: dict[str, list[R]] = defaultdict(list)
        by_field: dict[str, dict[Any, list[R]]] = {}
        unindexed: list[R] = []
        for rule in rules:
            if rule.type_condition is not None:
                for name in rule.type_condition.names:
                    by_type[name].append(rule)
                continue
            key = _index_key(rule.conditions)
            if key is None:
                unindexed.append(rule)
                continue
            buckets = by_field.setdefault(key.field, defaultdict(list))
            for value in key.values:
                buckets[value].append(rule)
        self.by_type = {name: tuple(rs) for name, rs in by_type.items()}
        self.by_field = {
            f: {v: tuple(rs) for v, rs in by_field[f].items()}
            for f in INDEXED_FIELDS
            if f in by_field
        }
        self.unindexed = tuple(unindexed)

    def candidates(self, descriptor: Any) -> list[R]:
        """Every rule that could match (a rule naming two types in the chain appears twice)."""
        found: list[R] = list(self.unindexed)
        by_type = self.by_type
        for name in descriptor.chain:
            rules = by_type.get(name)
            if rules:
                found.extend(rules)
        for field, buckets in self.by_field.items():
            rules = buckets.get(getattr(descriptor, field))
            if rules:
                found.extend(rules)
        return found


def _index_key(conditions: tuple[Condition, ...]) -> FieldIn | None:
    plain = {c.field: c for c in conditions if isinstance(c, FieldIn)}
    return next((plain[f] for f in INDEXED_FIELDS if f in plain), None)
