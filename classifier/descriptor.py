"""The exception descriptor a runtime sends, normalised once before matching.

`FIELDS` is the one table of a descriptor's fields (name, kind, default,
whether a cause has it): the proto conversions, the descriptor-file format,
the Arrow readers, the clients and the Unknowns' structural key read it
rather than spell the fields again.

Every entry point validates through one constructor, `descriptor_from_row`
(a row is the fields' values in the table's order); `build_descriptor` is
its keyword form. What each kind of field may hold, and what a client is told
when it does not, is the kinds' table (`classifier.field_kinds.KINDS`). The
constructor has one fast path for well-formed input, which checks every limit
at once and builds (hand-tuned: a batch of distinct rows spends most of its
time there; tests check it field by field against the table), and one
field-by-field path, written against the table, that names each violation by
its path (`descriptor.causes[2].type`) and is the authority. The Arrow reader
proves whole columns' names good in Arrow's kernels (`classifier.batch.checks`),
and hands each row it proved a `Proven`, which only those checks make; the fast
path then skips those checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar, final

from classifier.errors import DescriptorError, FieldViolation
from classifier.field_kinds import (
    ITEM_KIND,
    KINDS,
    FieldKind,
    Kind,
    attribute_problem,
    utf8_text,
)
from classifier.taxonomy import GRPC_CODE_NAMES, ORIGIN_ALIASES, Origin, origin_named
from classifier.text import did_you_mean


@dataclass(frozen=True, slots=True)
class DescriptorField:
    """One field of the descriptor (and, if `in_cause`, of each cause)."""

    name: str
    kind: FieldKind
    """Its kind's name: what it holds, and so how it is validated (`KINDS[kind]`)."""
    default: Any
    """The value of a field not given, in row form (immutable; no attributes are `()`)."""
    in_cause: bool
    shown: int = 0
    """Where reports and drafted rules show it among the single-valued fields a Unknown's
    structural key holds (1 first: the runtime's language, which scopes everything); 0 for
    the fields shown otherwise (the type first, the lists after) or not at all."""

    @property
    def optional(self) -> bool:
        """Whether the field may be absent (None): the proto's `optional` fields."""
        return self.default is None


FIELDS: tuple[DescriptorField, ...] = (
    DescriptorField("type", "type", "", in_cause=True),
    DescriptorField("supertypes", "type_names", (), in_cause=True),
    DescriptorField("http_status", "http_status", None, in_cause=True, shown=3),
    DescriptorField("grpc_status", "grpc_status", None, in_cause=True, shown=4),
    DescriptorField("origin", "origin", Origin.unspecified, in_cause=False, shown=2),
    DescriptorField("code", "code", "", in_cause=True, shown=5),
    DescriptorField("message", "message", "", in_cause=True),
    DescriptorField("causes", "causes", (), in_cause=False),
    DescriptorField("language", "label", "", in_cause=False, shown=1),
    DescriptorField("provider", "label", "", in_cause=False, shown=6),
    DescriptorField("attributes", "attributes", (), in_cause=False),
)
"""The descriptor's fields, in the order of `Descriptor`'s and of a row's."""
CAUSE_FIELDS: tuple[DescriptorField, ...] = tuple(f for f in FIELDS if f.in_cause)
"""A cause's fields, in the order of `Cause`'s and `CauseInput`'s."""
FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
CAUSE_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in CAUSE_FIELDS)


def _reported_first(fields: Sequence[DescriptorField]) -> tuple[int, ...]:
    """The fields' positions in the order their violations are reported: the type, then
    the fields of many entries (lists and the map), then the rest, each in table order."""
    return tuple(
        sorted(
            range(len(fields)),
            key=lambda i: (fields[i].kind != "type", KINDS[fields[i].kind].shape == "one", i),
        )
    )


_REPORT_ORDER = _reported_first(FIELDS)
_CAUSE_REPORT_ORDER = _reported_first(CAUSE_FIELDS)


@final
class Proven:
    """The Arrow column checks' word that a row's names are good (see `descriptor_from_row`).

    Made only by `classifier.batch.checks`, from the columns it checked (a test holds
    every other module to that): a flag any caller could pass would let a row skip its
    checks on a promise no one had kept.
    """

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Cause:
    """An inner exception, flattened out of the chain."""

    type: str
    supertypes: tuple[str, ...] = ()
    http_status: int | None = None
    grpc_status: int | None = None
    code: str = ""
    message: str = ""

    @property
    def chain(self) -> tuple[str, ...]:
        """The type followed by its supertypes, most specific first."""
        return (self.type, *self.supertypes)


@dataclass(frozen=True, slots=True)
class Descriptor:
    """One failure as a runtime reports it, normalised (see `descriptor_from_row`)."""

    type: str
    supertypes: tuple[str, ...] = ()
    http_status: int | None = None
    grpc_status: int | None = None
    origin: Origin = Origin.unspecified
    code: str = ""
    message: str = ""
    causes: tuple[Cause, ...] = ()
    language: str = ""
    provider: str = ""
    attributes: Mapping[str, str] = field(default_factory=dict)
    chain: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """The type followed by its supertypes, most specific first."""

    def __post_init__(self) -> None:
        # Only a descriptor built by hand comes here (the row paths assemble theirs): an
        # origin given by name or number becomes the Origin, or is refused now, by its field.
        if type(self.origin) is not Origin:
            object.__setattr__(self, "origin", origin_of(self.origin))
        object.__setattr__(self, "chain", (self.type, *self.supertypes))


class CauseInput(NamedTuple):
    """A cause as received, before validation: a row of the cause fields (`CAUSE_FIELDS`)."""

    type: str
    supertypes: Sequence[str] = ()
    http_status: int | None = None
    grpc_status: int | None = None
    code: str = ""
    message: str = ""


Row = Sequence[Any]
"""A descriptor as received, before validation: its fields' values in `FIELDS` order.

supertypes a sequence of strings; origin an `Origin` or its number; causes a
sequence of cause rows (`CauseInput`, or any tuple in `CAUSE_FIELDS` order);
attributes a mapping of strings, or key/value pairs, or None.
"""

_T = TypeVar("_T")


def _assembler(cls: type[_T], names: Sequence[str], *, chain: bool = False) -> Callable[..., _T]:
    """A function taking cls's fields by position (names) and returning the instance.

    It sets each slot through the slot's own setter rather than through
    cls's `__init__`: a frozen dataclass's sets every field through
    `object.__setattr__`, which costs twice as much, and a batch of distinct
    rows builds a descriptor per row. Generated, as dataclasses generates
    `__init__`, so each slot is one call; `chain` sets `Descriptor.chain` as
    its `__post_init__` does. Only for values already normalised.
    """
    space: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    lines = [f"def assemble({', '.join(names)}):", "    obj = _new(_cls)"]
    for name in [*names, "chain"] if chain else names:
        space[f"_set_{name}"] = getattr(cls, name).__set__
        value = "(type, *supertypes)" if name == "chain" and chain else name
        lines.append(f"    _set_{name}(obj, {value})")
    lines.append("    return obj")
    exec("\n".join(lines), space)  # the names are the table's, never input
    assemble: Callable[..., _T] = space["assemble"]
    return assemble


_new_descriptor = _assembler(Descriptor, FIELD_NAMES, chain=True)
_new_cause = _assembler(Cause, CAUSE_FIELD_NAMES)

_WEIGHTS: dict[FieldKind, str] = {
    "type": "len({0})",
    "type_names": "(sum(map(len, {0})) + 3 * len({0}) if {0} else 0)",
    "http_status": "",
    "grpc_status": "",
    "origin": "",
    "code": "len({0})",
    "message": "len({0})",
    "causes": "(sum(map(_cause_weight, {0})) + 40 * len({0}) if {0} else 0)",
    "label": "len({0})",
    "attributes": "(sum(map(len, {0})) + sum(map(len, {0}.values())) + 6 * len({0}) if {0} else 0)",
}
"""What a field of each kind adds to a JSON line, from above for ASCII text: its text,
each name with its quotes and comma, each cause with its keys, each attribute with its
key's and value's quotes, colon and comma (a status or origin is within a line's own
overhead, as an empty list or map is: it costs a test, not a call)."""


def _weigher(fields: Sequence[DescriptorField], **names: Any) -> Callable[[Any], int]:
    """A function of a descriptor (or cause) summing its fields' weights (`_WEIGHTS`).

    Generated from the table, as `_assembler` is, because the decision log weighs every
    answer's descriptor: one expression, no loop over the fields, and no comprehension
    (each is a call of its own before Python 3.12: with them the weight cost 1.5 times
    the hand-written one it replaced, without them 0.8 times, median of 21 interleaved
    rounds over the corpus and the bundled cases).
    """
    space: dict[str, Any] = dict(names)
    terms = " + ".join(_WEIGHTS[f.kind].format(f"d.{f.name}") for f in fields if _WEIGHTS[f.kind])
    exec(f"def weight(d):\n    return {terms}", space)  # the names are the table's
    weight: Callable[[Any], int] = space["weight"]
    return weight


_cause_weight = _weigher(CAUSE_FIELDS)
_descriptor_weight = _weigher(FIELDS, _cause_weight=_cause_weight)


def text_weight(d: Descriptor) -> int:
    """An estimate, from above for ASCII text, of the bytes a descriptor's fields take in a
    JSON line (a log's line adds its own overhead): every field of the table counted."""
    return _descriptor_weight(d)


def build_descriptor(
    *,
    type: str,
    supertypes: Iterable[str] = (),
    http_status: int | None = None,
    grpc_status: int | None = None,
    origin: Origin | int = Origin.unspecified,
    code: str = "",
    message: str = "",
    causes: Iterable[CauseInput] = (),
    language: str = "",
    provider: str = "",
    attributes: Mapping[str, str] | None = None,
    field_prefix: str = "descriptor",
) -> Descriptor:
    """Validate and normalise a descriptor given by keyword (see `descriptor_from_row`).

    A cause may be a CauseInput or any object with its fields as attributes
    (another descriptor's `Cause`); supertypes and causes any iterable.
    """
    if isinstance(supertypes, Iterator):
        supertypes = tuple(supertypes)
    rows = [c if isinstance(c, tuple) else _cause_row(c) for c in causes]
    return descriptor_from_row(
        (type, supertypes, http_status, grpc_status, origin, code, message, rows, language,
         provider, attributes),
        field_prefix,
    )  # fmt: skip


def _cause_row(cause: Any) -> tuple[Any, ...]:
    return tuple(getattr(cause, name) for name in CAUSE_FIELD_NAMES)


def descriptor_from_row(
    row: Row, field_prefix: str = "descriptor", *, proven: Proven | None = None
) -> Descriptor:
    """Validate and normalise a descriptor given as a row (see `Row`).

    Raises DescriptorError listing every malformed field by its path, so a
    client learns all its mistakes from one answer. Names are stripped,
    language and provider lower-cased, and an over-long message is cut to
    its documented prefix rather than refused; a character UTF-8 cannot
    encode in a message is replaced too (see `utf8_text`).

    `proven`, which only the Arrow column checks make (`classifier.batch.checks`),
    says they have proven the row's names good, a whole column at a time:
    `type`, each supertype, `code`, `language`, `provider` and every
    attribute key and value already
    stripped and within their limits, `type` and the supertypes not empty,
    at most MAX_SUPERTYPES supertypes (a tuple) and MAX_ATTRIBUTES
    attributes, no key empty; `language` and `provider` ASCII and lower
    case already; the message within MAX_MESSAGE_CHARS and free of lone
    surrogates (as any text decoded from UTF-8 is). The rest (statuses,
    origin, causes) is checked here either way, and a row that fails is
    named field by field.
    """
    quick = well_formed(row, proven=proven)
    return quick if quick is not None else _validated(row, field_prefix)


_ORIGINS: dict[int, Origin] = {int(o): o for o in Origin}
_CAUSES = FIELD_NAMES.index("causes")
_TYPE_CHARS = KINDS["type"].limit or 0
_SUPERTYPES = KINDS["type_names"].limit or 0
_CODE_CHARS = KINDS["code"].limit or 0
_LABEL_CHARS = KINDS["label"].limit or 0
_MESSAGE_CHARS = KINDS["message"].limit or 0
_CAUSE_COUNT = KINDS["causes"].limit or 0
_ATTRIBUTE_COUNT = KINDS["attributes"].limit or 0
_KEY_CHARS = KINDS["attributes"].entry_limits[0]
_VALUE_CHARS = KINDS["attributes"].entry_limits[1]
"""The fast path's limits, each its kind's (read once: a global is found faster than an
attribute)."""


def as_descriptor(value: object, field_prefix: str = "descriptor") -> Descriptor:
    """A Descriptor from any object with the descriptor's fields as attributes, validated
    as a descriptor off the wire is; a Descriptor passes as it is.

    The public entry points (`classifier.classify`, `classifier.explain`) take the
    client's descriptor (`errorclass_client.Descriptor`, the same fields) this way, so a
    runtime that builds one with the client can classify it in process. Raises
    DescriptorError naming each bad field, or the descriptor itself when it has no such
    fields.
    """
    if isinstance(value, Descriptor):
        return value
    try:
        row = [getattr(value, name) for name in FIELD_NAMES]
        row[_CAUSES] = [_cause_row(c) for c in row[_CAUSES]]
    except AttributeError:
        raise DescriptorError(
            [
                FieldViolation(
                    field_prefix,
                    f"a descriptor has the fields {', '.join(FIELD_NAMES)}; "
                    f"{type(value).__name__} does not",
                )
            ]
        ) from None
    return descriptor_from_row(row, field_prefix)


def origin_of(value: object, field: str = "descriptor.origin") -> Origin:
    """An origin given other than as an Origin (`Descriptor(origin=...)`, a client's
    keywords): a name or alias as descriptor files write it (blank for none), or a number,
    as the Origin. Anything else is a DescriptorError naming `field`, rather than a value
    built now that fails later (on the wire, in a rule)."""
    if isinstance(value, Origin):
        return value
    if isinstance(value, str):
        origin = origin_named(value) if value.strip() else Origin.unspecified
    elif isinstance(value, int) and not isinstance(value, bool):
        origin = _ORIGINS.get(value)
    else:
        origin = None
    if origin is not None:
        return origin
    known = [o.name for o in Origin if o is not Origin.unspecified]
    hint = did_you_mean(value.strip(), [*known, *ORIGIN_ALIASES]) if isinstance(value, str) else ""
    raise DescriptorError(
        [
            FieldViolation(
                field,
                f"unknown origin {value!r}{hint}; known: {', '.join(known)} "
                f"(or their numbers, 0-{max(Origin)})",
            )
        ]
    )


def _names_ok(names: tuple[str, ...]) -> bool:
    return not names or (
        len(names) <= _SUPERTYPES and "" not in names and max(map(len, names)) <= _TYPE_CHARS
    )


def _attributes_ok(attributes: Mapping[str, str]) -> bool:
    return len(attributes) <= _ATTRIBUTE_COUNT and all(
        0 < len(k) <= _KEY_CHARS and len(v) <= _VALUE_CHARS for k, v in attributes.items()
    )


def well_formed(row: Row, proven: Proven | None = None) -> Descriptor | None:
    """The fast path: the normalised descriptor when nothing is wrong with the row, else None.

    Nearly every descriptor is well formed; this checks all limits at once
    and builds, and only a row that fails goes through `_validated`, which
    names each problem (and is the authority: a test checks the two agree
    on everything this one accepts). `proven` as for `descriptor_from_row`.

    Hand-tuned rather than a loop over the kinds' table, because measured it
    must be: `_validated`, that loop, costs 5.6 times as much per well-formed
    row (median of 21 interleaved rounds over the corpus and the bundled cases:
    52 µs against 9.4 µs, on a machine at load 10). It reads its limits from the
    table, and tests/test_field_kinds.py checks it field by field against it.
    """
    (type_name, supers, http, grpc, origin, code, message, causes, language, provider,
     attributes) = row  # fmt: skip
    attrs = dict(attributes) if attributes else {}
    if proven.__class__ is Proven:  # not merely truthy: a True passed by mistake proves nothing
        supers = tuple(supers)
    else:
        type_name = type_name.strip()
        supers = tuple([s.strip() for s in supers])
        code = code.strip()
        language = language.strip()
        provider = provider.strip()
        if not (
            0 < len(type_name) <= _TYPE_CHARS
            and _names_ok(supers)
            and len(code) <= _CODE_CHARS
            and len(language) <= _LABEL_CHARS
            and len(provider) <= _LABEL_CHARS
            and (not attrs or _attributes_ok(attrs))
        ):
            return None
        message = utf8_text(message[:_MESSAGE_CHARS])
        language = language.lower()
        provider = provider.lower()
    if not (
        (http is None or 100 <= http <= 599)
        and (grpc is None or grpc in GRPC_CODE_NAMES)
        and origin in _ORIGINS
        and len(causes) <= _CAUSE_COUNT
    ):
        return None
    built = _well_formed_causes(causes) if causes else ()
    if built is None:
        return None
    return _new_descriptor(
        type_name, supers, http, grpc, _ORIGINS[origin], code, message, built, language,
        provider, attrs,
    )  # fmt: skip


def _well_formed_causes(causes: Iterable[Sequence[Any]]) -> tuple[Cause, ...] | None:
    """The normalised causes when nothing is wrong with any of them, else None."""
    built: list[Cause] = []
    for cause_type, cause_supers, http, grpc, code, message in causes:
        cause_type = cause_type.strip()
        supers = tuple([s.strip() for s in cause_supers])
        code = code.strip()
        if not (
            0 < len(cause_type) <= _TYPE_CHARS
            and _names_ok(supers)
            and (http is None or 100 <= http <= 599)
            and (grpc is None or grpc in GRPC_CODE_NAMES)
            and len(code) <= _CODE_CHARS
        ):
            return None
        text = utf8_text(message[:_MESSAGE_CHARS])
        built.append(_new_cause(cause_type, supers, http, grpc, code, text))
    return tuple(built)


def _validated(row: Row, field_prefix: str) -> Descriptor:
    """The slow path, field by field: every violation, named by its path, in the table's
    words (`KINDS`)."""
    v = _Violations(field_prefix)
    values = v.row(FIELDS, _REPORT_ORDER, row, "")
    if v.violations:
        raise DescriptorError(v.violations)
    return _new_descriptor(*values)


class _Violations:
    """Collects field violations while normalising, so all are reported at once."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.violations: list[FieldViolation] = []

    def add(self, name: str, message: str) -> None:
        path = f"{self.prefix}.{name}" if self.prefix else name
        self.violations.append(FieldViolation(path, message))

    def row(
        self, fields: Sequence[DescriptorField], order: Sequence[int], row: Sequence[Any], at: str
    ) -> list[Any]:
        """The row's normalised values (a value that is wrong becomes its field's default),
        each field checked as its kind says, at `at` + its name."""
        values = list(row)
        for i in order:
            f = fields[i]
            values[i] = self.value(KINDS[f.kind], f"{at}{f.name}", row[i], f.default)
        return values

    def value(self, kind: Kind, name: str, value: Any, default: Any) -> Any:
        value = kind.normalise(value)
        problem = kind.violation(value)
        if problem is not None:
            self.add(name, problem)
            if kind.too_many(len(value) if kind.limit is not None else 0) is not None:
                return default  # its entries are not looked into
            if kind.shape == "one" and kind.limit is None:
                return default  # a status or origin out of range
        if kind.shape == "names":
            return tuple(
                n
                for i, item in enumerate(value)
                if (n := self.value(ITEM_KIND, f"{name}[{i}]", item, ""))
            )
        if kind.shape == "causes":
            return tuple(
                _new_cause(*self.row(CAUSE_FIELDS, _CAUSE_REPORT_ORDER, c, f"{name}[{i}]."))
                for i, c in enumerate(value)
            )
        if kind.shape == "pairs":
            for key, text in value.items():
                found = attribute_problem(key, text)
                if found is not None:
                    self.add(f"{name}{found[0]}", found[1])
        return kind.finish(value)
