"""The kinds of a descriptor's fields: for each, what a value becomes, how much of it may
be, whether it may be empty, and what a client is told when it is wrong.

Every validator of a descriptor reads this table rather than restating it: the
field-by-field path (`classifier.descriptor`, which names each violation by its
path and is the authority), the one-pass fast path (hand-tuned, because a batch of
distinct rows spends most of its time there, and tested field by field against this
table), and the Arrow column checks (`classifier.batch.checks`, one per kind, which
prove a whole column's values good at once). The field table itself
(`classifier.descriptor.FIELDS`) says which field has which kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from classifier import limits
from classifier.taxonomy import GRPC_CODE_NAMES, Origin

# One home for "a lone surrogate becomes U+FFFD" (the service and every client agree on
# it, clients/spec/README.md "Counting"): the Python client's, re-exported here.
from errorclass_client._text import utf8_text as utf8_text

FieldKind = Literal[
    "type", "type_names", "http_status", "grpc_status", "origin", "code", "message", "causes",
    "label", "attributes",
]  # fmt: skip
"""What a field holds, and so how it is validated and carried (`KINDS` says each)."""

Shape = Literal["one", "names", "causes", "pairs"]
"""How a kind's value is laid out: one value; a list of names (each checked as a `type`);
a list of causes (each checked field by field); a map of strings."""


def _stripped(value: str) -> str:
    return value.strip()


def _lower(value: str) -> str:
    return value.lower()


def _message(value: str) -> str:
    return utf8_text(value[: limits.MAX_MESSAGE_CHARS])


def _same(value: Any) -> Any:
    return value


def _names(values: Any) -> tuple[str, ...]:
    return tuple(values)


def _pairs(value: Mapping[str, str] | Any) -> dict[str, str]:
    return dict(value) if value else {}


_ORIGINS: dict[int, Origin] = {int(o): o for o in Origin}


def _origin(value: Any) -> Any:
    return _ORIGINS.get(value, value) if type(value) is not Origin else value


def _http_problem(value: int | None) -> str | None:
    if value is None or 100 <= value <= 599:
        return None
    return f"{value} is not an HTTP status (100-599)"


def _grpc_problem(value: int | None) -> str | None:
    if value is None or value in GRPC_CODE_NAMES:
        return None
    return f"{value} is not a gRPC status code (0-16)"


def _origin_problem(value: Any) -> str | None:
    if type(value) is Origin:
        return None
    return f"{value} is not a known origin (0-{max(Origin)})"


def _no_problem(value: Any) -> str | None:
    return None


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of field: its normalisation, its limit, whether it is required, and the
    words of its violations."""

    name: FieldKind
    normalise: Callable[[Any], Any]
    """What a value as received becomes: stripped, lower-cased, cut to its limit, a tuple or
    a dict; an origin's number its Origin. Applied before the limit is checked."""
    limit: int | None
    """The most a normalised value may hold, counted in `unit` (None: no count is limited).
    A message's is the length it is cut to, never refused."""
    unit: str
    """What the limit counts, as a violation says it (`characters`, `entries`, ...)."""
    required: bool
    """Whether an empty value is refused (`must not be empty`)."""
    problem: Callable[[Any], str | None]
    """What is wrong with a normalised value other than its size (a status out of range),
    in the words a client is told; None when nothing is."""
    shape: Shape = "one"
    finish: Callable[[Any], Any] = _same
    """What a value that passed becomes after its limit is checked: a label lower-cased
    (after, because lower-casing may lengthen it: `'İ'.lower()` is two characters)."""
    entry_limits: tuple[int, int] = (0, 0)
    """A map's: the most characters of a key and of a value (`attribute_problem`)."""
    refused: bool = True
    """Whether a value past `limit` is refused (a message is cut instead)."""
    proven_by_columns: bool = False
    """Whether the Arrow column checks prove this kind's values good a column at a time (the
    fast path then skips them for a proven row); the rest it checks in every row."""

    def too_many(self, size: int) -> str | None:
        """The violation of a value of size `unit`s, if it is past the limit."""
        if self.limit is None or not self.refused or size <= self.limit:
            return None
        return f"{size} {self.unit} exceed the limit of {self.limit}"

    def violation(self, value: Any) -> str | None:
        """What is wrong with a normalised value as a whole (not its entries), or None."""
        size = len(value) if self.limit is not None else 0
        if (over := self.too_many(size)) is not None:
            return over
        if self.required and not value:
            return "must not be empty"
        return self.problem(value)


KINDS: dict[FieldKind, Kind] = {
    k.name: k
    for k in (
        Kind("type", _stripped, limits.MAX_TYPE_NAME_CHARS, "characters", True, _no_problem,
             proven_by_columns=True),
        Kind("type_names", _names, limits.MAX_SUPERTYPES, "entries", False, _no_problem,
             shape="names", proven_by_columns=True),
        Kind("http_status", _same, None, "", False, _http_problem),
        Kind("grpc_status", _same, None, "", False, _grpc_problem),
        Kind("origin", _origin, None, "", False, _origin_problem),
        Kind("code", _stripped, limits.MAX_CODE_CHARS, "characters", False, _no_problem,
             proven_by_columns=True),
        Kind("message", _message, limits.MAX_MESSAGE_CHARS, "characters", False, _no_problem,
             refused=False, proven_by_columns=True),
        Kind("causes", _same, limits.MAX_CAUSES, "causes", False, _no_problem, shape="causes"),
        Kind("label", _stripped, limits.MAX_LABEL_CHARS, "characters", False, _no_problem,
             finish=_lower, proven_by_columns=True),
        Kind("attributes", _pairs, limits.MAX_ATTRIBUTES, "attributes", False, _no_problem,
             shape="pairs", proven_by_columns=True,
             entry_limits=(limits.MAX_ATTRIBUTE_KEY_CHARS, limits.MAX_ATTRIBUTE_VALUE_CHARS)),
    )
}  # fmt: skip
"""Every kind, by name (`FieldKind` names exactly these)."""

ITEM_KIND: Kind = KINDS["type"]
"""What each entry of a list of names is checked as."""


def attribute_problem(key: str, value: str) -> tuple[str, str] | None:
    """What is wrong with one attribute, as (the suffix of its path, the words), or None."""
    key_chars, value_chars = KINDS["attributes"].entry_limits
    if not key:
        return "", "an attribute key must not be empty"
    if len(key) > key_chars:
        return f"[{key[:40]!r}]", f"key exceeds the limit of {key_chars} characters"
    if len(value) > value_chars:
        return f"[{key!r}]", f"value exceeds the limit of {value_chars} characters"
    return None
