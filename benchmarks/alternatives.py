"""What a user would build instead: the same rules as CEL expressions and as `rule-engine` rules.

Each rule's conditions become one boolean expression over a plain context
(the descriptor as a dict; statuses 0 and -1 stand for "not set", as no
rule names them). The expression engine says which rules match; the host
then applies the engine's own precedence to those matches, so answers
can be compared one for one with `classify` before anything is timed.

CEL gets its best case: one program evaluating every rule at once (a list
of booleans), so the context is converted once per descriptor, not once
per rule. `rule-engine` has no such form; each rule is its own `Rule`.

Both libraries are benchmark-only dependencies (the `bench` extra).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from classifier.answer import Classification
from classifier.descriptor import Cause, Descriptor
from classifier.engine import evaluate as engine
from classifier.engine.conditions import (
    AttributeIs,
    CauseMatches,
    Condition,
    FieldIn,
    MessageMatches,
    TypeIs,
)
from classifier.engine.ruleset import CompiledRule, Match, Ruleset
from classifier.taxonomy import ErrorClass, UnknownReason

Answer = tuple[ErrorClass, str, UnknownReason]


def context(d: Descriptor) -> dict[str, Any]:
    """The descriptor as the plain data an expression engine reads."""
    return {
        **_subject(d),
        "origin": d.origin.name,
        "provider": d.provider,
        "language": d.language,
        "attributes": dict(d.attributes),
        "causes": [_subject(c) for c in d.causes],
    }


def _subject(s: Descriptor | Cause) -> dict[str, Any]:
    return {
        "type": s.type,
        "chain": list(s.chain),
        "http_status": 0 if s.http_status is None else s.http_status,
        "grpc_status": -1 if s.grpc_status is None else s.grpc_status,
        "code": s.code,
        "message": s.message,
    }


def answer_of(c: Classification) -> Answer:
    """What the benchmark compares: class, deciding rule and unknown reason."""
    return (c.error_class, c.rule_id, c.unknown_reason)


def decide(ruleset: Ruleset, d: Descriptor, matched: Iterable[CompiledRule]) -> Answer:
    """The engine's own precedence over the rules an expression engine said match."""
    matches = []
    for rule in matched:
        depth = rule.type_depth(d.chain)
        if depth is not None:
            matches.append(Match(rule, depth, rule.rank(depth)))
    return answer_of(engine.decide(ruleset, matches))


def _ranges(values: Iterable[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for v in sorted(values):
        if out and v == out[-1][1] + 1:
            out[-1] = (out[-1][0], v)
        else:
            out.append((v, v))
    return out


class _Dialect:
    """How one expression language spells the few things rules need."""

    AND = " && "
    OR = " || "
    TRUE = "true"

    def string(self, s: str) -> str:
        return json.dumps(s)

    def member(self, subject: str, name: str) -> str:
        return f"{subject}.{name}"

    def item(self, subject: str, key: str) -> str:
        return f"{subject}[{self.string(key)}]"

    def one_of(self, value: str, options: Sequence[str]) -> str:
        return f"{value} in [{', '.join(options)}]"

    def search(self, value: str, pattern: str) -> str:
        raise NotImplementedError

    def some(self, collection: str, var: str, condition: str) -> str:
        raise NotImplementedError

    def rule(self, rule: CompiledRule) -> str:
        parts = [self.condition(c, "") for c in rule.all_conditions]
        return "(" + (self.AND.join(parts) if parts else self.TRUE) + ")"

    def field(self, subject: str, name: str) -> str:
        return self.member(subject, name) if subject else name

    def condition(self, c: Condition, subject: str) -> str:
        if isinstance(c, TypeIs):
            chain = self.field(subject, "chain")
            return "(" + self.OR.join(f"{self.string(n)} in {chain}" for n in sorted(c.names)) + ")"
        if isinstance(c, FieldIn):
            value = self.field(subject, c.field)
            if c.field in ("http_status", "grpc_status"):
                spans = [
                    f"{value} == {lo}"
                    if lo == hi
                    else f"({value} >= {lo}{self.AND}{value} <= {hi})"
                    for lo, hi in _ranges(c.values)
                ]
                return "(" + self.OR.join(spans) + ")"
            names = sorted(getattr(v, "name", v) for v in c.values)
            return self.one_of(value, [self.string(str(n)) for n in names])
        if isinstance(c, MessageMatches):
            return self.search(self.field(subject, "message"), c.pattern.pattern)
        if isinstance(c, AttributeIs):
            values = [self.string(v) for v in sorted(c.values)]
            value = self.one_of(self.item("attributes", c.name), values)
            return f"({self.string(c.name)} in attributes{self.AND}{value})"
        if isinstance(c, CauseMatches):
            inner = self.AND.join(self.condition(x, "c") for x in c.conditions)
            return self.some("causes", "c", inner)
        raise TypeError(f"no translation for {c!r}")


class _Cel(_Dialect):
    def search(self, value: str, pattern: str) -> str:
        return f"{value}.matches({self.string(pattern)})"

    def some(self, collection: str, var: str, condition: str) -> str:
        return f"{collection}.exists({var}, {condition})"


class _RuleEngine(_Dialect):
    AND = " and "
    OR = " or "

    def member(self, subject: str, name: str) -> str:
        return self.item(subject, name)

    def search(self, value: str, pattern: str) -> str:
        return f"{value} =~~ {self.string(pattern)}"

    def some(self, collection: str, var: str, condition: str) -> str:
        return f"[{var} for {var} in {collection} if {condition}]"


def cel_classifier(ruleset: Ruleset) -> Callable[[Descriptor], Answer]:
    """Every rule in one CEL program returning a list of booleans; precedence in the host."""
    import cel

    rules = ruleset.rules
    dialect = _Cel()
    program = cel.compile("[" + ", ".join(dialect.rule(r) for r in rules) + "]")

    def answer(d: Descriptor) -> Answer:
        flags = program.execute(context(d))
        return decide(ruleset, d, (r for r, hit in zip(rules, flags, strict=True) if hit))

    return answer


def rule_engine_classifier(ruleset: Ruleset) -> Callable[[Descriptor], Answer]:
    """One `rule_engine.Rule` per rule, each asked in turn; precedence in the host."""
    import rule_engine

    dialect = _RuleEngine()
    compiled = [(r, rule_engine.Rule(dialect.rule(r))) for r in ruleset.rules]

    def answer(d: Descriptor) -> Answer:
        thing = context(d)
        return decide(ruleset, d, (r for r, expr in compiled if expr.matches(thing)))

    return answer
