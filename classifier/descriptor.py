"""The exception descriptor a runtime sends, normalised once before matching.

`FIELDS` is the one table of a descriptor's fields (name, kind, default,
whether a cause has it): the proto conversions, the descriptor-file format,
the Arrow readers, the clients and the Unknowns' structural key read it
rather than spell the fields again.

Every entry point validates through one constructor, `descriptor_from_row`
(a row is the fields' values in the table's order); `build_descriptor` is
its keyword form. It has one fast path for well-formed input, which checks
every limit at once and builds, and one field-by-field path that names each
violation by its path (`descriptor.causes[2].type`) and is the authority (a
test checks they agree). A caller that has proven a row's names good (the
Arrow reader checks whole columns in Arrow's kernels) says so with
`proven=True`, and the fast path skips those checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeVar

from classifier import limits
from classifier.errors import DescriptorError, FieldViolation
from classifier.taxonomy import GRPC_CODE_NAMES, ORIGIN_ALIASES, Origin, origin_named
from classifier.text import did_you_mean

FieldKind = Literal[
    "type", "type_names", "http_status", "grpc_status", "origin", "code", "message", "causes",
    "label", "attributes",
]  # fmt: skip
"""What a field holds, and so how it is validated and carried:

- type: a type name, stripped, required, at most MAX_TYPE_NAME_CHARS
- type_names: a list of type names (at most MAX_SUPERTYPES), each as `type`
- http_status: 100-599, optional; grpc_status: a gRPC code 0-16, optional
- origin: an `Origin`, by number (or, in files and tables, by name)
- code: a provider's code, stripped, at most MAX_CODE_CHARS (a number in a file)
- message: free text, cut to MAX_MESSAGE_CHARS, never refused
- causes: a list of causes (at most MAX_CAUSES), each with the cause fields
- label: a lower-case label (language, provider), at most MAX_LABEL_CHARS
- attributes: a map of strings, MAX_ATTRIBUTES keys
"""


@dataclass(frozen=True, slots=True)
class DescriptorField:
    """One field of the descriptor (and, if `in_cause`, of each cause)."""

    name: str
    kind: FieldKind
    default: Any
    """The value of a field not given, in row form (immutable; no attributes are `()`)."""
    in_cause: bool

    @property
    def optional(self) -> bool:
        """Whether the field may be absent (None): the proto's `optional` fields."""
        return self.default is None


FIELDS: tuple[DescriptorField, ...] = (
    DescriptorField("type", "type", "", in_cause=True),
    DescriptorField("supertypes", "type_names", (), in_cause=True),
    DescriptorField("http_status", "http_status", None, in_cause=True),
    DescriptorField("grpc_status", "grpc_status", None, in_cause=True),
    DescriptorField("origin", "origin", Origin.unspecified, in_cause=False),
    DescriptorField("code", "code", "", in_cause=True),
    DescriptorField("message", "message", "", in_cause=True),
    DescriptorField("causes", "causes", (), in_cause=False),
    DescriptorField("language", "label", "", in_cause=False),
    DescriptorField("provider", "label", "", in_cause=False),
    DescriptorField("attributes", "attributes", (), in_cause=False),
)
"""The descriptor's fields, in the order of `Descriptor`'s and of a row's."""
CAUSE_FIELDS: tuple[DescriptorField, ...] = tuple(f for f in FIELDS if f.in_cause)
"""A cause's fields, in the order of `Cause`'s and `CauseInput`'s."""
FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
CAUSE_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in CAUSE_FIELDS)

NAME_LIMITS: dict[FieldKind, int] = {
    "type": limits.MAX_TYPE_NAME_CHARS,
    "type_names": limits.MAX_TYPE_NAME_CHARS,
    "code": limits.MAX_CODE_CHARS,
    "label": limits.MAX_LABEL_CHARS,
}
"""The longest a name of each kind may be, once stripped."""


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
    row: Row, field_prefix: str = "descriptor", *, proven: bool = False
) -> Descriptor:
    """Validate and normalise a descriptor given as a row (see `Row`).

    Raises DescriptorError listing every malformed field by its path, so a
    client learns all its mistakes from one answer. Names are stripped,
    language and provider lower-cased, and an over-long message is cut to
    its documented prefix rather than refused; a character UTF-8 cannot
    encode in a message is replaced too (see `utf8_text`).

    `proven` says the caller has proven the row's names good (the Arrow
    reader, a whole column at a time): `type`, each supertype, `code`,
    `language`, `provider` and every attribute key and value already
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


def utf8_text(text: str) -> str:
    """text with each lone surrogate replaced by U+FFFD, so it encodes as UTF-8.

    A JSON or YAML file can spell one (`"\\ud800"`) and RE2 is given the
    message as UTF-8 bytes; a surrogate pair spelt as two escapes is joined.
    Nearly every message is ASCII, which is checked first and costs little.
    """
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def _names_ok(names: tuple[str, ...]) -> bool:
    return not names or (
        len(names) <= limits.MAX_SUPERTYPES
        and "" not in names
        and max(map(len, names)) <= limits.MAX_TYPE_NAME_CHARS
    )


def _attributes_ok(attributes: Mapping[str, str]) -> bool:
    return len(attributes) <= limits.MAX_ATTRIBUTES and all(
        0 < len(k) <= limits.MAX_ATTRIBUTE_KEY_CHARS and len(v) <= limits.MAX_ATTRIBUTE_VALUE_CHARS
        for k, v in attributes.items()
    )


def well_formed(row: Row, proven: bool = False) -> Descriptor | None:
    """The fast path: the normalised descriptor when nothing is wrong with the row, else None.

    Nearly every descriptor is well formed; this checks all limits at once
    and builds, and only a row that fails goes through `_validated`, which
    names each problem (and is the authority: a test checks the two agree
    on everything this one accepts). `proven` as for `descriptor_from_row`.
    """
    (type_name, supers, http, grpc, origin, code, message, causes, language, provider,
     attributes) = row  # fmt: skip
    attrs = dict(attributes) if attributes else {}
    if proven:
        supers = tuple(supers)
    else:
        type_name = type_name.strip()
        supers = tuple([s.strip() for s in supers])
        code = code.strip()
        language = language.strip()
        provider = provider.strip()
        if not (
            0 < len(type_name) <= limits.MAX_TYPE_NAME_CHARS
            and _names_ok(supers)
            and len(code) <= limits.MAX_CODE_CHARS
            and len(language) <= limits.MAX_LABEL_CHARS
            and len(provider) <= limits.MAX_LABEL_CHARS
            and (not attrs or _attributes_ok(attrs))
        ):
            return None
        message = utf8_text(message[: limits.MAX_MESSAGE_CHARS])
        language = language.lower()
        provider = provider.lower()
    if not (
        (http is None or 100 <= http <= 599)
        and (grpc is None or grpc in GRPC_CODE_NAMES)
        and origin in _ORIGINS
        and len(causes) <= limits.MAX_CAUSES
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
            0 < len(cause_type) <= limits.MAX_TYPE_NAME_CHARS
            and _names_ok(supers)
            and (http is None or 100 <= http <= 599)
            and (grpc is None or grpc in GRPC_CODE_NAMES)
            and len(code) <= limits.MAX_CODE_CHARS
        ):
            return None
        text = utf8_text(message[: limits.MAX_MESSAGE_CHARS])
        built.append(_new_cause(cause_type, supers, http, grpc, code, text))
    return tuple(built)


def _validated(row: Row, field_prefix: str) -> Descriptor:
    """The slow path, field by field: every violation, named by its path."""
    (type_name, supertypes, http, grpc, origin, code, message, causes, language, provider,
     attributes) = row  # fmt: skip
    v = _Violations(field_prefix)
    type_name = v.type_name("type", type_name, required=True)
    supers = v.type_names("supertypes", supertypes, limits.MAX_SUPERTYPES)
    if len(causes) > limits.MAX_CAUSES:
        v.add("causes", f"{len(causes)} causes exceed the limit of {limits.MAX_CAUSES}")
        causes = ()
    built_causes = tuple(v.cause(f"causes[{i}]", c) for i, c in enumerate(causes))
    attrs = v.attributes(dict(attributes) if attributes else {})
    descriptor = Descriptor(
        type=type_name,
        supertypes=supers,
        http_status=v.http_status("http_status", http),
        grpc_status=v.grpc_status("grpc_status", grpc),
        origin=v.origin(origin),
        code=v.bounded("code", code, limits.MAX_CODE_CHARS),
        message=utf8_text(message[: limits.MAX_MESSAGE_CHARS]),
        causes=built_causes,
        language=v.bounded("language", language, limits.MAX_LABEL_CHARS).lower(),
        provider=v.bounded("provider", provider, limits.MAX_LABEL_CHARS).lower(),
        attributes=attrs,
    )
    if v.violations:
        raise DescriptorError(v.violations)
    return descriptor


class _Violations:
    """Collects field violations while normalising, so all are reported at once."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.violations: list[FieldViolation] = []

    def add(self, name: str, message: str) -> None:
        path = f"{self.prefix}.{name}" if self.prefix else name
        self.violations.append(FieldViolation(path, message))

    def cause(self, name: str, row: Sequence[Any]) -> Cause:
        cause_type, supertypes, http, grpc, code, message = row
        return Cause(
            type=self.type_name(f"{name}.type", cause_type, required=True),
            supertypes=self.type_names(f"{name}.supertypes", supertypes, limits.MAX_SUPERTYPES),
            http_status=self.http_status(f"{name}.http_status", http),
            grpc_status=self.grpc_status(f"{name}.grpc_status", grpc),
            code=self.bounded(f"{name}.code", code, limits.MAX_CODE_CHARS),
            message=utf8_text(message[: limits.MAX_MESSAGE_CHARS]),
        )

    def bounded(self, name: str, value: str, limit: int) -> str:
        value = value.strip()
        if len(value) > limit:
            self.add(name, f"{len(value)} characters exceed the limit of {limit}")
        return value

    def type_name(self, name: str, value: str, *, required: bool) -> str:
        value = self.bounded(name, value, limits.MAX_TYPE_NAME_CHARS)
        if required and not value:
            self.add(name, "must not be empty")
        return value

    def type_names(self, name: str, values: Iterable[str], limit: int) -> tuple[str, ...]:
        names = tuple(values)
        if len(names) > limit:
            self.add(name, f"{len(names)} entries exceed the limit of {limit}")
            return ()
        out = []
        for i, value in enumerate(names):
            stripped = self.type_name(f"{name}[{i}]", value, required=True)
            if stripped:
                out.append(stripped)
        return tuple(out)

    def http_status(self, name: str, value: int | None) -> int | None:
        if value is not None and not 100 <= value <= 599:
            self.add(name, f"{value} is not an HTTP status (100-599)")
            return None
        return value

    def grpc_status(self, name: str, value: int | None) -> int | None:
        if value is not None and value not in GRPC_CODE_NAMES:
            self.add(name, f"{value} is not a gRPC status code (0-16)")
            return None
        return value

    def origin(self, value: Origin | int) -> Origin:
        try:
            return Origin(value)
        except ValueError:
            self.add("origin", f"{value} is not a known origin (0-{max(Origin)})")
            return Origin.unspecified

    def attributes(self, attributes: Mapping[str, str]) -> dict[str, str]:
        if len(attributes) > limits.MAX_ATTRIBUTES:
            self.add(
                "attributes",
                f"{len(attributes)} attributes exceed the limit of {limits.MAX_ATTRIBUTES}",
            )
            return {}
        for key, value in attributes.items():
            if not key:
                self.add("attributes", "an attribute key must not be empty")
            elif len(key) > limits.MAX_ATTRIBUTE_KEY_CHARS:
                self.add(
                    f"attributes[{key[:40]!r}]",
                    f"key exceeds the limit of {limits.MAX_ATTRIBUTE_KEY_CHARS} characters",
                )
            elif len(value) > limits.MAX_ATTRIBUTE_VALUE_CHARS:
                self.add(
                    f"attributes[{key!r}]",
                    f"value exceeds the limit of {limits.MAX_ATTRIBUTE_VALUE_CHARS} characters",
                )
        return dict(attributes)
