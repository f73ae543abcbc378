"""Candidate lookup: which rules could match a descriptor, without scanning them all.

Typed rules are bucketed under each type name they list; rules with no type
condition share one more bucket. The engine walks the descriptor's own type
and then its supertypes, so it meets the buckets in precedence order (own
type first, untyped last) and stops at the first bucket with a match.

A bucket that holds many rules is split once more by one plain field each
rule tests (code, gRPC status, HTTP status, provider, origin, language):
the field that puts the rule among the fewest others, so a thousand
`provider:` rules on one generic type cost a dictionary lookup, not a scan.
The cost of a lookup therefore follows the length of the type chain, not
the number of rules. The engine's unindexed path (every rule) is kept as
the oracle this index is tested against.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar, assert_never

from classifier.engine.conditions import (
    AttributeIs,
    CauseMatches,
    Condition,
    FieldIn,
    FieldPresent,
    MessageMatches,
    TypeIs,
)

INDEXED_FIELDS = ("code", "grpc_status", "http_status", "provider", "origin", "language")
SPLIT_AT = 8
"""A bucket with this many rules or more is split by a plain field."""


class _Indexable(Protocol):
    @property
    def type_condition(self) -> TypeIs | None: ...
    @property
    def conditions(self) -> tuple[Condition, ...]: ...


R = TypeVar("R", bound=_Indexable)


class Bucket(Generic[R]):
    """Rules that share a type name (or have none), split by a plain field when many."""

    __slots__ = ("always", "by_field")

    def __init__(self, rules: Sequence[R]) -> None:
        always: list[R] = []
        by_field: dict[str, dict[Any, list[R]]] = {}
        keys = _split_keys(rules) if len(rules) >= SPLIT_AT else {}
        for rule in rules:
            key = keys.get(id(rule))
            if key is None:
                always.append(rule)
                continue
            buckets = by_field.setdefault(key.field, defaultdict(list))
            for value in key.values:
                buckets[value].append(rule)
        self.always: tuple[R, ...] = tuple(always)
        self.by_field: tuple[tuple[str, dict[Any, tuple[R, ...]]], ...] = tuple(
            (f, {v: tuple(rs) for v, rs in by_field[f].items()})
            for f in INDEXED_FIELDS
            if f in by_field
        )

    def candidates(self, descriptor: Any) -> Sequence[R]:
        """The rules here that could match: every rule whose split field agrees."""
        if not self.by_field:
            return self.always
        found = list(self.always)
        for field, buckets in self.by_field:
            rules = buckets.get(getattr(descriptor, field))
            if rules:
                found += rules
        return found


class RuleIndex(Generic[R]):
    """Maps type names to the rules that name them, and keeps the untyped rules apart."""

    __slots__ = ("by_type", "empty", "untyped")

    def __init__(self, rules: Iterable[R]) -> None:
        by_type: dict[str, list[R]] = defaultdict(list)
        untyped: list[R] = []
        for rule in rules:
            if rule.type_condition is None:
                untyped.append(rule)
                continue
            for name in rule.type_condition.names:
                by_type[name].append(rule)
        self.by_type: dict[str, Bucket[R]] = {name: Bucket(rs) for name, rs in by_type.items()}
        self.untyped: Bucket[R] = Bucket(untyped)
        self.empty = not by_type and not untyped
        """No rule at all (a ruleset without fallbacks has an empty fallback index)."""

    def candidates(self, descriptor: Any) -> list[R]:
        """Every rule that could match at any depth (a rule naming two types of the chain
        appears twice). The engine stops at the first depth with a match; the
        linter, which ranks every match, asks for them all."""
        found: list[R] = []
        for name in descriptor.chain:
            bucket = self.by_type.get(name)
            if bucket is not None:
                found += bucket.candidates(descriptor)
        found += self.untyped.candidates(descriptor)
        return found


def _plain(conditions: tuple[Condition, ...]) -> dict[str, FieldIn]:
    """The conditions a bucket can be split by: plain fields among INDEXED_FIELDS."""
    out: dict[str, FieldIn] = {}
    for c in conditions:
        if (key := _index_key(c)) is not None:
            out[key.field] = key
    return out


def _index_key(c: Condition) -> FieldIn | None:
    match c:
        case FieldIn(field=name):
            return c if name in INDEXED_FIELDS else None
        case TypeIs() | FieldPresent() | MessageMatches() | AttributeIs() | CauseMatches():
            return None
        case _:
            assert_never(c)


def _split_keys(rules: Sequence[R]) -> dict[int, FieldIn]:
    """For each rule, the plain condition whose values the fewest other rules share."""
    crowd: Counter[tuple[str, Any]] = Counter()
    plains = [_plain(rule.conditions) for rule in rules]
    for plain in plains:
        for c in plain.values():
            crowd.update((c.field, v) for v in c.values)
    keys: dict[int, FieldIn] = {}
    for rule, plain in zip(rules, plains, strict=True):
        if plain:
            keys[id(rule)] = min(
                plain.values(),
                key=lambda c: (
                    sum(crowd[c.field, v] for v in c.values),
                    INDEXED_FIELDS.index(c.field),
                ),
            )
    return keys
