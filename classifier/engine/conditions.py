"""The compiled conditions a rule is made of: a closed union of plain data.

Each kind tests one thing about a descriptor (or, inside `cause`, a cause)
and carries its canonical rule text (`http_status: 429`) for explain and
diagnostics. Everything done *with* conditions is a function that matches
over `Condition` and ends in `assert_never`: the test itself (`_predicate`,
built once into `holds`), precedence weight, the compiler's cost order, the
index key, explain's `observed`, and the linter's and witness builder's
analyses. Adding a kind to the union therefore fails `mypy --strict` at
every analysis that does not handle it yet.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Protocol, assert_never, cast

from classifier.engine.literals import NONE as NO_LITERALS
from classifier.engine.literals import Literals


class Subject(Protocol):
    """What a descriptor and a cause have in common: the fields cause conditions test."""

    @property
    def chain(self) -> tuple[str, ...]: ...
    @property
    def http_status(self) -> int | None: ...
    @property
    def grpc_status(self) -> int | None: ...
    @property
    def code(self) -> str: ...
    @property
    def message(self) -> str: ...


Test = Callable[[Any], bool]


@dataclass(frozen=True, slots=True, eq=False)
class _Compiled:
    """What every condition carries beside its values: `holds`, its test, built once."""

    holds: Test = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "holds", _predicate(cast(Condition, self)))


@dataclass(frozen=True, slots=True, eq=False)
class TypeIs(_Compiled):
    """The subject's type, or one of its supertypes, is one of `names`."""

    names: frozenset[str]
    text: str


@dataclass(frozen=True, slots=True, eq=False)
class FieldIn(_Compiled):
    """A plain field of the subject (status, code, origin, ...) is one of `values`."""

    field: str
    values: frozenset[Any]
    text: str


@dataclass(frozen=True, slots=True, eq=False)
class FieldPresent(_Compiled):
    """A plain field of the subject is set (`has: code`), or with `present` False is not
    (`lacks: http_status`): whether evidence is there, whatever it says.

    It weighs nothing in precedence: `code: X` implies `has: code`, so a rule
    that only asks for a code to be present must never outrank one that names it.
    """

    field: str
    text: str
    present: bool = True


@dataclass(frozen=True, slots=True, eq=False)
class MessageMatches(_Compiled):
    """The message contains a match of an RE2 pattern (compiled once, by the compiler).

    `literals` are runs every match contains (see `classifier.engine.literals`):
    RE2 is asked only when the message has them all. It is given the
    message as UTF-8 bytes, which it reads the same way, because a str
    costs the wrapper one more call into RE2 to map offsets back.
    """

    pattern: Any
    text: str
    literals: Literals = NO_LITERALS


@dataclass(frozen=True, slots=True, eq=False)
class AttributeIs(_Compiled):
    """An attribute is present with one of the given values."""

    name: str
    values: frozenset[str]
    text: str


@dataclass(frozen=True, slots=True, eq=False)
class CauseMatches(_Compiled):
    """Some cause in the chain satisfies every one of `conditions`."""

    conditions: tuple[Condition, ...]
    text: str


Condition = TypeIs | FieldIn | FieldPresent | MessageMatches | AttributeIs | CauseMatches
"""Every kind of condition. Analyses match over it and end in `assert_never`."""


def _predicate(c: Condition) -> Test:
    """The compiled test for a condition, closed over its values: the engine's hot path."""
    match c:
        case TypeIs(names=names):
            disjoint = names.isdisjoint
            return lambda s: not disjoint(s.chain)
        case FieldIn(field=name, values=values):
            get = attrgetter(name)
            return lambda s: get(s) in values
        case FieldPresent(field=name, present=wanted):
            get = attrgetter(name)
            return lambda s: is_set(get(s)) is wanted
        case MessageMatches(pattern=pattern, literals=literals):
            search = pattern.search
            present = literals.present if literals.runs else None

            def matches(s: Any) -> bool:
                message: str = s.message
                if present is not None and not present(message):
                    return False
                return search(message.encode()) is not None

            return matches
        case AttributeIs(name=name, values=values):
            return lambda s: s.attributes.get(name) in values
        case CauseMatches(conditions=inner):
            tests = tuple(i.holds for i in inner)
            return lambda s: any(all(t(cause) for t in tests) for cause in s.causes)
        case _:
            assert_never(c)


def is_set(value: Any) -> bool:
    """Whether a descriptor field carries a value: not None, not empty, not `unspecified`."""
    return value is not None and value != "" and getattr(value, "name", None) != "unspecified"


def weight(c: Condition) -> int:
    """How many conditions this counts as for precedence (a cause, as many as it holds)."""
    match c:
        case TypeIs() | FieldIn() | MessageMatches() | AttributeIs():
            return 1
        case FieldPresent():
            return 0
        case CauseMatches(conditions=inner):
            return sum(weight(i) for i in inner)
        case _:
            assert_never(c)


def type_depth(c: TypeIs, chain: tuple[str, ...]) -> int | None:
    """How far up the chain the nearest named type is (0 = the own type); None if absent."""
    names = c.names
    for i, name in enumerate(chain):
        if name in names:
            return i
    return None
