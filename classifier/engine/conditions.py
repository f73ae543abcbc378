"""The compiled conditions a rule is made of.

Each condition tests one thing about a descriptor (or a cause) and renders
itself back as canonical rule text, which explain output and diagnostics
show; `observed` says what it found instead, for explain's near misses.
Conditions are built by the compiler; the engine only calls `holds`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Protocol

from classifier.engine.literals import NONE as NO_LITERALS
from classifier.engine.literals import Literals
from classifier.taxonomy import GRPC_CODE_NAMES


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


class Condition(ABC):
    """One test a rule makes; `text` is its canonical rule text (`http_status: 429`)."""

    __slots__ = ("key", "text")

    def __init__(self, key: str, text: str) -> None:
        self.key = key
        self.text = text

    @abstractmethod
    def holds(self, subject: Any) -> bool:
        """Whether the condition holds for a descriptor (or, inside `cause`, a cause)."""

    @abstractmethod
    def observed(self, subject: Any) -> str:
        """What the subject has where this condition looks (`http_status is 503`)."""

    @property
    def weight(self) -> int:
        """How many conditions this counts as for precedence."""
        return 1

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.text}>"


class TypeIs(Condition):
    """The subject's type, or one of its supertypes, is one of `names`."""

    __slots__ = ("names",)

    def __init__(self, names: frozenset[str], text: str) -> None:
        super().__init__("type", text)
        self.names = names

    def depth(self, chain: tuple[str, ...]) -> int | None:
        """How far up the chain the nearest named type is (0 = the own type); None if absent."""
        for i, name in enumerate(chain):
            if name in self.names:
                return i
        return None

    def holds(self, subject: Subject) -> bool:
        return not self.names.isdisjoint(subject.chain)

    def observed(self, subject: Subject) -> str:
        chain = subject.chain
        if len(chain) == 1:
            return f"the type is {chain[0]}, with no supertypes"
        return f"the type is {chain[0]}, supertypes {', '.join(chain[1:])}"


class FieldIn(Condition):
    """A plain field of the subject (status, code, origin, ...) is one of `values`."""

    __slots__ = ("field", "values")

    def __init__(self, key: str, field: str, values: frozenset[Any], text: str) -> None:
        super().__init__(key, text)
        self.field = field
        self.values = values

    def holds(self, subject: Any) -> bool:
        return getattr(subject, self.field) in self.values

    def observed(self, subject: Any) -> str:
        value = getattr(subject, self.field)
        if value is None or value == "" or getattr(value, "name", None) == "unspecified":
            return f"{self.field} is not set"
        if self.field == "grpc_status":
            return f"{self.field} is {GRPC_CODE_NAMES.get(value, value)}"
        if self.field == "origin":
            return f"{self.field} is {value.name}"
        return (
            f"{self.field} is {value!r}" if isinstance(value, str) else f"{self.field} is {value}"
        )


class MessageMatches(Condition):
    """The message contains a match of an RE2 pattern (compiled once, by the compiler).

    `literals` are runs every match contains (see `classifier.engine.literals`):
    RE2 is asked only when the message has them all. It is given the
    message as UTF-8 bytes, which it reads the same way, because a str
    costs the wrapper one more call into RE2 to map offsets back.
    """

    __slots__ = ("literals", "pattern")

    def __init__(self, pattern: Any, text: str, literals: Literals = NO_LITERALS) -> None:
        super().__init__("message", text)
        self.pattern = pattern
        self.literals = literals

    def holds(self, subject: Subject) -> bool:
        message = subject.message
        if self.literals.runs and not self.literals.present(message):
            return False
        return self.pattern.search(message.encode()) is not None

    def observed(self, subject: Subject) -> str:
        message = subject.message
        if not message:
            return "the message is empty"
        shown = message if len(message) <= 80 else message[:77] + "..."
        return f"the message is {shown!r}"


class AttributeIs(Condition):
    """An attribute is present with one of the given values."""

    __slots__ = ("name", "values")

    def __init__(self, name: str, values: frozenset[str], text: str) -> None:
        super().__init__("attributes", text)
        self.name = name
        self.values = values

    def holds(self, subject: Any) -> bool:
        attributes: Mapping[str, str] = subject.attributes
        return attributes.get(self.name) in self.values

    def observed(self, subject: Any) -> str:
        value = subject.attributes.get(self.name)
        return (
            f"attribute {self.name} is not set"
            if value is None
            else (f"attribute {self.name} is {value!r}")
        )


class CauseMatches(Condition):
    """Some cause in the chain satisfies every one of `conditions`."""

    __slots__ = ("conditions",)

    def __init__(self, conditions: tuple[Condition, ...], text: str) -> None:
        super().__init__("cause", text)
        self.conditions = conditions

    @property
    def weight(self) -> int:
        return sum(c.weight for c in self.conditions)

    def holds(self, subject: Any) -> bool:
        return any(all(c.holds(cause) for c in self.conditions) for cause in subject.causes)

    def observed(self, subject: Any) -> str:
        causes = subject.causes
        if not causes:
            return "the descriptor has no causes"
        nearest = max(causes, key=lambda c: sum(cond.holds(c) for cond in self.conditions))
        failed = next(cond for cond in self.conditions if not cond.holds(nearest))
        return f"the nearest cause, {nearest.type}, fails {failed.text}: {failed.observed(nearest)}"
