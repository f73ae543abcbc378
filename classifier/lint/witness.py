"""Concrete descriptors that satisfy every condition of some rules: lint witnesses.

A witness is built from the rules' conditions alone: the type is a name every
typed rule lists (or a fresh name no rule lists, when none is typed), each
plain field and attribute takes a value in every rule's set, the message is
a sample every pattern finds (see `patterns`), and each `cause` condition
gets a cause of its own (a cause condition asks for *some* cause, so one per
condition always works). Fields no rule tests stay empty, so as few other
rules as possible match too.

Other rules may still match a witness and outrank the rules it was built
for, so `candidates` yields several, varying the choices that other rules
care about least first; the linter keeps the first one the engine confirms.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from classifier.descriptor import Cause, CauseInput, Descriptor, build_descriptor
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
from classifier.engine.ruleset import CompiledRule, Ruleset
from classifier.errors import DescriptorError
from classifier.lint import patterns
from classifier.source.descriptor_file import descriptor_dict
from classifier.taxonomy import Origin
from classifier.text import and_list

FRESH_TYPE = "lint.Witness"
FRESH_CAUSE_TYPE = "lint.Cause"
CAUSE_CHOICES = 2
PLACEHOLDERS: dict[str, frozenset[Any]] = {
    "http_status": frozenset({599}),
    "grpc_status": frozenset({2}),
    "code": frozenset({"lint_witness_code"}),
    "provider": frozenset({"lint-witness"}),
    "language": frozenset({"lint-witness"}),
}
"""A value for each field `has:` can ask for, used when no other condition names one."""
PLACEHOLDER_MESSAGE = "lint witness message"
ATTEMPTS_PER_WITNESS = 8
"""How many combinations may fail (a value over a descriptor limit) per witness produced."""


def witness_text(d: Descriptor) -> str:
    """A descriptor as one line of JSON, in the descriptor-file shape `classifier explain` reads."""
    return json.dumps(descriptor_dict(d), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Contradiction:
    """Conditions that cannot all hold on one subject (a descriptor or a cause), and why."""

    conditions: tuple[Condition, ...]
    text: str
    """As the linter says it: which conditions contradict each other, and why."""


def _contradict(conditions: Sequence[Condition], why: str) -> Contradiction:
    shown = and_list([f"`{c.text}`" for c in conditions])
    return Contradiction(tuple(conditions), f"{shown} contradict each other ({why})")


@dataclass
class _Constraints:
    """What every one of some conditions demands of one subject (a descriptor or a cause).

    The one analysis of what conditions ask for together: the witness builder reads the
    values it may choose from it, and the linter's `unsatisfiable_rule` the contradictions
    (`contradictions`), so a condition kind either analysis misses fails `mypy --strict`
    here, in `add`.
    """

    types: frozenset[str] | None = None
    fields: dict[str, frozenset[Any]] = field(default_factory=dict)
    attributes: dict[str, frozenset[str]] = field(default_factory=dict)
    messages: list[Any] = field(default_factory=list)
    causes: list[CauseMatches] = field(default_factory=list)
    present: set[str] = field(default_factory=set)
    absent: set[str] = field(default_factory=set)
    by_key: dict[str, list[Condition]] = field(default_factory=dict)
    """Each condition under what it constrains: `type`, a field, `attributes.<name>`."""
    subject: str = "descriptor"
    """What the conditions test, as `contradictions` names it: a descriptor, or a cause."""

    def settled(self) -> dict[str, frozenset[Any]]:
        """The value sets of every plain field, a placeholder where `has:` asks only for one;
        a field `lacks:` rules out is left unset (no value set at all if another names one)."""
        out = {**{f: PLACEHOLDERS[f] for f in self.present - {"message"}}, **self.fields}
        for name in self.absent & out.keys():
            out[name] = frozenset()  # asked to be both set and unset: no value will do
        return out

    def add(self, condition: Condition) -> None:
        match condition:
            case TypeIs(names=names):
                self.types = _meet(self.types, names)
                self._under("type", condition)
            case FieldIn(field=name, values=values):
                self.fields[name] = _meet(self.fields.get(name), values)
                self._under(name, condition)
            case FieldPresent(field=name, present=True):
                self.present.add(name)
                self._under(name, condition)
            case FieldPresent(field=name):
                self.absent.add(name)
                self._under(name, condition)
            case AttributeIs(name=name, values=values):
                self.attributes[name] = _meet(self.attributes.get(name), values)
                self._under(f"attributes.{name}", condition)
            case MessageMatches(pattern=pattern):
                self.messages.append(pattern)
                self._under("message", condition)
            case CauseMatches():
                self.causes.append(condition)
            case _:
                assert_never(condition)

    def _under(self, key: str, condition: Condition) -> None:
        self.by_key.setdefault(key, []).append(condition)

    def _values(self, key: str) -> frozenset[Any] | None:
        """The values every condition on a key that names values allows (None: none names)."""
        if key == "type":
            return self.types
        if key.startswith("attributes."):
            return self.attributes.get(key.removeprefix("attributes."))
        return self.fields.get(key)

    @property
    def satisfiable(self) -> bool:
        return not self.contradictions()

    def contradictions(self) -> list[Contradiction]:
        """Every set of these conditions that no subject satisfies, each proven, in the
        order of what they constrain. None found means only that no value set rules a
        subject out: patterns that no one message matches together are left to the
        witness search."""
        out: list[Contradiction] = []
        for key, found in self.by_key.items():
            out += _contradictions(key, found, self._values(key), self.subject)
        for cause in self.causes:
            inner = constraints(cause.conditions, subject="cause").contradictions()
            if inner:
                reasons = "; ".join(c.text for c in inner)
                out.append(Contradiction((cause,), f"`{cause.text}` holds for no cause: {reasons}"))
        return out


def _contradictions(
    key: str, found: Sequence[Condition], values: frozenset[Any] | None, subject: str
) -> list[Contradiction]:
    """What the conditions on one key (`type`, a field, an attribute) rule out together;
    `values` are those all of them allow (None: none of them names values)."""
    named = [c for c in found if isinstance(c, TypeIs | FieldIn | AttributeIs)]
    has = [c for c in found if isinstance(c, FieldPresent) and c.present]
    lacks = [c for c in found if isinstance(c, FieldPresent) and not c.present]
    out: list[Contradiction] = []
    if values is not None and not values:
        both = "both" if len(named) == 2 else "in all of them"
        out.append(_contradict(named, f"no {key} is {both}"))
    if has and lacks:
        why = f"a {subject} cannot have {key} set and not set"
        out.append(_contradict((has[0], lacks[0]), why))
    if values and lacks and all(is_set(v) for v in values):
        why = f"a {subject} whose {key} is {_which(values)} has {key} set"
        out.append(_contradict((*named, lacks[0]), why))
    if values and has and not any(is_set(v) for v in values):
        why = f"a {subject} whose {key} is {_which(values)} has {key} not set"
        out.append(_contradict((*named, has[0]), why))
    if lacks:
        for c in found:
            if isinstance(c, MessageMatches) and c.pattern.search(b"") is None:
                why = (
                    f"the pattern matches no empty message, and a {subject} that lacks a "
                    "message has an empty one"
                )
                out.append(_contradict((c, lacks[0]), why))
    return out


def _which(values: frozenset[Any]) -> str:
    """One value as it reads (`507`, `provider`), or `one of those`."""
    if len(values) > 1:
        return "one of those"
    [value] = values
    return repr(value) if value == "" else str(getattr(value, "name", value))


def _meet(known: frozenset[Any] | None, values: frozenset[Any]) -> frozenset[Any]:
    return values if known is None else known & values


def constraints(conditions: Sequence[Condition], subject: str = "descriptor") -> _Constraints:
    out = _Constraints(subject=subject)
    for condition in conditions:
        out.add(condition)
    return out


def plain_values(rule: CompiledRule) -> dict[str, frozenset[Any]]:
    """A rule's value sets by key (`type`, each plain field, `attributes.<name>`)."""
    out: dict[str, frozenset[Any]] = {}
    for c in rule.all_conditions:
        match c:
            case TypeIs(names=names):
                out["type"] = names
            case FieldIn(field=name, values=values):
                out[name] = values
            case AttributeIs(name=name, values=values):
                out[f"attributes.{name}"] = values
            case FieldPresent() | MessageMatches() | CauseMatches():
                pass
            case _:
                assert_never(c)
    return out


def compatible(a: dict[str, frozenset[Any]], b: dict[str, frozenset[Any]]) -> bool:
    """Whether no type, plain field or attribute rules out a descriptor both rules match.

    Takes `plain_values` of each rule; a cheap test before building a
    witness (patterns and causes are left to the witness builder).
    """
    return all(not values.isdisjoint(b[key]) for key, values in a.items() if key in b)


class WitnessBuilder:
    """Builds witnesses for the rules of one ruleset.

    Values that many rules name are tried last: a witness that only the
    rules in question match is the clearest, and the likeliest to show what
    the linter claims.
    """

    def __init__(self, ruleset: Ruleset) -> None:
        self.popularity: Counter[tuple[str, Any]] = Counter()
        names: set[str] = set()
        for rule in ruleset.rules:
            for condition in rule.all_conditions:
                self._count(condition, "", names)
        self.fresh_type = _fresh(FRESH_TYPE, names)
        self.fresh_cause_type = _fresh(FRESH_CAUSE_TYPE, names)

    def _count(self, condition: Condition, scope: str, names: set[str]) -> None:
        match condition:
            case TypeIs(names=listed):
                names.update(listed)
                self.popularity.update((f"{scope}type", n) for n in listed)
            case FieldIn(field=name, values=values):
                self.popularity.update((scope + name, v) for v in values)
            case AttributeIs(name=name, values=values):
                self.popularity.update((f"{scope}attributes.{name}", v) for v in values)
            case CauseMatches(conditions=inner):
                for c in inner:
                    self._count(c, "cause.", names)
            case FieldPresent() | MessageMatches():
                pass
            case _:
                assert_never(condition)

    def _ordered(self, key: str, values: frozenset[Any]) -> list[Any]:
        return sorted(values, key=lambda v: (self.popularity[(key, v)], _sort_key(v)))

    def candidates(self, rules: Sequence[CompiledRule], limit: int = 24) -> Iterator[Descriptor]:
        """Descriptors that every rule in `rules` matches, most promising first (at most limit)."""
        need = constraints([c for rule in rules for c in rule.all_conditions])
        if not need.satisfiable:
            return
        dims: list[tuple[str, list[Any]]] = [
            ("type", self._ordered("type", need.types) if need.types else [self.fresh_type])
        ]
        dims += [(f, self._ordered(f, vs)) for f, vs in sorted(need.settled().items())]
        dims += [
            (f"attributes.{name}", self._ordered(f"attributes.{name}", vs))
            for name, vs in sorted(need.attributes.items())
        ]
        messages = _messages(need, patterns.combined(need.messages))
        if not messages:
            return
        dims.append(("message", messages))
        for i, cause in enumerate(need.causes):
            options = list(self._causes(cause))
            if not options:
                return
            dims.append((f"causes.{i}", options))
        produced = 0
        sizes = [len(values) for _, values in dims]
        for picks in itertools.islice(_by_index_sum(sizes), limit * ATTEMPTS_PER_WITNESS):
            chosen = {key: values[i] for (key, values), i in zip(dims, picks, strict=True)}
            d = _descriptor(chosen)
            if d is not None and all(_matches(rule, d) for rule in rules):
                yield d
                produced += 1
                if produced >= limit:
                    return

    def _causes(self, condition: CauseMatches) -> Iterator[CauseInput]:
        need = constraints(condition.conditions)
        if not need.satisfiable:
            return
        types = self._ordered("cause.type", need.types) if need.types else [self.fresh_cause_type]
        fields = {f: self._ordered(f"cause.{f}", vs) for f, vs in need.settled().items()}
        messages = _messages(need, patterns.combined(need.messages, limit=CAUSE_CHOICES))
        dims = [types, *fields.values(), messages]
        produced = 0
        sizes = [len(values) for values in dims]
        for picks in itertools.islice(_by_index_sum(sizes), CAUSE_CHOICES * ATTEMPTS_PER_WITNESS):
            type_name, *values, message = (dim[i] for dim, i in zip(dims, picks, strict=True))
            chosen: dict[str, Any] = dict(zip(fields, values, strict=True))
            cause = CauseInput(
                type=type_name,
                http_status=chosen.get("http_status"),
                grpc_status=chosen.get("grpc_status"),
                code=chosen.get("code", ""),
                message=message,
            )
            as_cause = Cause(
                type=cause.type,
                http_status=cause.http_status,
                grpc_status=cause.grpc_status,
                code=cause.code,
                message=cause.message,
            )
            if all(c.holds(as_cause) for c in condition.conditions):
                yield cause
                produced += 1
                if produced >= CAUSE_CHOICES:
                    return


def _messages(need: _Constraints, samples: list[str]) -> list[str]:
    """The candidate messages; a non-empty one when `has: message` asks for one."""
    if "message" in need.absent:
        return [m for m in samples if not m]
    if "message" not in need.present:
        return samples
    return [m for m in samples if m] or [PLACEHOLDER_MESSAGE]


def _matches(rule: CompiledRule, d: Descriptor) -> bool:
    return all(c.holds(d) for c in rule.all_conditions)


def _descriptor(chosen: dict[str, Any]) -> Descriptor | None:
    try:
        return build_descriptor(
            type=chosen["type"],
            http_status=chosen.get("http_status"),
            grpc_status=chosen.get("grpc_status"),
            origin=chosen.get("origin", Origin.unspecified),
            code=chosen.get("code", ""),
            message=chosen["message"],
            causes=[v for k, v in chosen.items() if k.startswith("causes.")],
            language=chosen.get("language", ""),
            provider=chosen.get("provider", ""),
            attributes={
                k.removeprefix("attributes."): v
                for k, v in chosen.items()
                if k.startswith("attributes.")
            },
        )
    except DescriptorError:
        return None


def _by_index_sum(sizes: list[int]) -> Iterator[tuple[int, ...]]:
    """Every index vector within `sizes`, by increasing sum: one choice varies at a time first."""
    if any(size == 0 for size in sizes):
        return
    top = sum(size - 1 for size in sizes)
    for total in range(top + 1):
        yield from _with_sum(sizes, total)


def _with_sum(sizes: list[int], total: int) -> Iterator[tuple[int, ...]]:
    if not sizes:
        if total == 0:
            yield ()
        return
    head, rest = sizes[0], sizes[1:]
    room = sum(size - 1 for size in rest)
    for i in range(max(0, total - room), min(head - 1, total) + 1):
        for tail in _with_sum(rest, total - i):
            yield (i, *tail)


def _sort_key(value: Any) -> tuple[int, str]:
    return (int(value), "") if isinstance(value, int) else (0, str(value))


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    return name
