"""The exception descriptor a runtime sends, and the two ways it is made sendable.

`Descriptor` has the proto's fields (`ExceptionDescriptor`), and converts its origin
when it is built: an `Origin`, its number, or its name as rules write it (`provider`,
`caller` for `user`); anything else is a DescriptorError naming `descriptor.origin`.
Causes may be given as `Cause`s or as mappings of their fields.

- `validate` is the service's own check, done before a call: the descriptor normalised
  (names stripped, labels lower-cased, the message cut) or a DescriptorError naming every
  field the service would refuse, by the service's paths (`descriptor.causes[1].type`).
  `Client.classify` validates what it is given, so a malformed descriptor fails fast
  with the same error the server would send.
- `fit` is what the builders (`descriptor_from_exception`, `descriptor_from_response`,
  ...) do: cut a descriptor to the limits so that it is never refused, since they run
  while a runtime is already handling a failure.

clients/spec/vectors/validate.json and fit.json hold both to the spec, in every language.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Required, TypedDict

from errorclass_client import facts
from errorclass_client._text import strip, utf8_text
from errorclass_client.errors import DescriptorError, FieldViolation
from errorclass_client.taxonomy import Origin

FIELD_NAMES: tuple[str, ...] = (
    "type",
    "supertypes",
    "http_status",
    "grpc_status",
    "origin",
    "code",
    "message",
    "causes",
    "language",
    "provider",
    "attributes",
)
"""The descriptor's fields, as the proto names and orders them (a test checks)."""
CAUSE_FIELD_NAMES: tuple[str, ...] = (
    "type",
    "supertypes",
    "http_status",
    "grpc_status",
    "code",
    "message",
)
"""A cause's fields, as the proto names and orders them."""


def origin(value: Origin | int | str, field: str = "descriptor.origin") -> Origin:
    """An Origin, its number, or its name as rules write it (`caller` is `user`).

    Raises DescriptorError naming `field` for anything else.
    """
    if isinstance(value, Origin):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if value in Origin._value2member_map_:
            return Origin(value)
        problem = f"{value} is not a known origin (0-{max(Origin)})"
    elif isinstance(value, str):
        name = strip(value).lower()
        name = facts.ORIGIN_ALIASES.get(name, name)
        if name in Origin.__members__:
            return Origin[name]
        known = [*Origin.__members__, *facts.ORIGIN_ALIASES]
        problem = (
            f"unknown origin {value!r}{_did_you_mean(name, known)}; "
            f"known: {', '.join(Origin.__members__)}"
        )
    else:
        problem = f"an origin is an Origin, its number or its name, not {type(value).__name__}"
    raise DescriptorError([FieldViolation(field, problem)])


def grpc_code(value: str | int) -> int:
    """A gRPC status given by name (either spelling of CANCELLED) or number.

    Raises ValueError naming the accepted values.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a gRPC status code")
    if isinstance(value, int):
        if value in facts.GRPC_CODE_NAMES:
            return value
        raise ValueError(f"{value} is not a gRPC status code (0-16)")
    name = strip(value).upper()
    name = "CANCELLED" if name == "CANCELED" else name
    if name in facts.GRPC_CODES:
        return facts.GRPC_CODES[name]
    if name.isascii() and name.isdigit():
        return grpc_code(int(name))
    raise ValueError(f"unknown gRPC status code {value!r}; known: {', '.join(facts.GRPC_CODES)}")


@dataclass(frozen=True, slots=True, init=False)
class Cause:
    """An inner exception, flattened out of the chain (outermost first)."""

    type: str
    supertypes: tuple[str, ...]
    http_status: int | None
    grpc_status: int | None
    code: str
    message: str

    def __init__(
        self,
        type: str,
        supertypes: Iterable[str] = (),
        http_status: int | None = None,
        grpc_status: int | None = None,
        code: str = "",
        message: str = "",
    ) -> None:
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "supertypes", _names(supertypes))
        object.__setattr__(self, "http_status", http_status)
        object.__setattr__(self, "grpc_status", grpc_status)
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "message", message)

    @property
    def chain(self) -> tuple[str, ...]:
        """The type followed by its supertypes, most specific first."""
        return (self.type, *self.supertypes)


CauseInput = Cause
"""The name `classifier.client` gave a cause (`CauseInput("System.TimeoutException")`)."""


class CauseFields(TypedDict, total=False):
    """A cause given as a mapping, keyed by its fields: `{"type": "TimeoutError"}`."""

    type: Required[str]
    supertypes: Sequence[str]
    http_status: int | None
    grpc_status: int | None
    code: str
    message: str


@dataclass(frozen=True, slots=True, init=False)
class Descriptor:
    """One failure as a runtime reports it: the proto's `ExceptionDescriptor`.

    Built as given (only the origin and the causes are converted); `validate` says
    whether the service would take it, `fit` cuts it to the limits.
    """

    type: str
    supertypes: tuple[str, ...]
    http_status: int | None
    grpc_status: int | None
    origin: Origin
    code: str
    message: str
    causes: tuple[Cause, ...]
    language: str
    provider: str
    attributes: Mapping[str, str]

    def __init__(
        self,
        type: str,
        supertypes: Iterable[str] = (),
        http_status: int | None = None,
        grpc_status: int | None = None,
        origin: Origin | int | str = Origin.unspecified,
        code: str = "",
        message: str = "",
        causes: Iterable[Cause | CauseFields | Mapping[str, Any]] = (),
        language: str = "",
        provider: str = "",
        attributes: Mapping[str, str] | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "type", type)
        set_(self, "supertypes", _names(supertypes))
        set_(self, "http_status", http_status)
        set_(self, "grpc_status", grpc_status)
        set_(self, "origin", _origin(origin))
        set_(self, "code", code)
        set_(self, "message", message)
        set_(self, "causes", cause_list(causes))
        set_(self, "language", language)
        set_(self, "provider", provider)
        set_(self, "attributes", dict(attributes) if attributes else {})

    @property
    def chain(self) -> tuple[str, ...]:
        """The type followed by its supertypes, most specific first."""
        return (self.type, *self.supertypes)


def _origin(value: Origin | int | str) -> Origin:
    return value if isinstance(value, Origin) else origin(value)


def _names(values: Iterable[str]) -> tuple[str, ...]:
    if isinstance(values, str):  # one name is not a list of its letters
        return (values,)
    return tuple(values)


class DescriptorFields(TypedDict, total=False):
    """A descriptor given as a mapping or as keywords: its fields, as the proto names them."""

    type: Required[str]
    supertypes: Iterable[str]
    http_status: int | None
    grpc_status: int | None
    origin: Origin | int | str
    code: str
    message: str
    causes: Iterable[Cause | CauseFields | Mapping[str, Any]]
    language: str
    provider: str
    attributes: Mapping[str, str] | None


class DescriptorShaped(Protocol):
    """Anything with a descriptor's fields as attributes (`classifier.Descriptor` too)."""

    @property
    def type(self) -> str: ...
    @property
    def supertypes(self) -> Sequence[str]: ...
    @property
    def http_status(self) -> int | None: ...
    @property
    def grpc_status(self) -> int | None: ...
    @property
    def origin(self) -> int: ...
    @property
    def code(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def causes(self) -> Sequence[Any]: ...
    @property
    def language(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def attributes(self) -> Mapping[str, str]: ...


DescriptorInput = Descriptor | DescriptorShaped | Mapping[str, Any]
"""What every call that takes a descriptor accepts: a Descriptor, a mapping of its fields
(`{"type": ..., "origin": "tool"}`, as a descriptor file writes it), or any object with
the fields as attributes (the server package's own `classifier.Descriptor`)."""


def cause_list(causes: Iterable[Any], field_prefix: str = "descriptor") -> tuple[Cause, ...]:
    """Causes given as Causes, mappings of their fields or objects with them.

    Anything else, and a mapping with an unknown key or no `type`, is refused with a
    DescriptorError naming the cause (`descriptor.causes[0]`).
    """
    out: list[Cause] = []
    violations: list[FieldViolation] = []
    for i, cause in enumerate(causes):
        where = f"{field_prefix}.causes[{i}]"
        if isinstance(cause, Cause):
            out.append(cause)
        elif isinstance(cause, Mapping):
            unknown = sorted(map(str, set(cause) - set(CAUSE_FIELD_NAMES)))
            if unknown:
                violations.append(
                    FieldViolation(
                        where,
                        f"unknown key {', '.join(map(repr, unknown))}; "
                        f"a cause has {', '.join(CAUSE_FIELD_NAMES)}",
                    )
                )
            elif "type" not in cause:
                violations.append(FieldViolation(f"{where}.type", "is required"))
            else:
                out.append(Cause(**cause))
        elif isinstance(cause, str | bytes) or not hasattr(cause, "type"):
            violations.append(
                FieldViolation(
                    where,
                    "a cause is a Cause or a mapping of its fields ({'type': ...}), "
                    f"not {type(cause).__name__}",
                )
            )
        else:
            out.append(Cause(*(getattr(cause, name) for name in CAUSE_FIELD_NAMES)))
    if violations:
        raise DescriptorError(violations)
    return tuple(out)


def descriptor_from_mapping(
    data: Mapping[str, Any], field_prefix: str = "descriptor"
) -> Descriptor:
    """A descriptor from a mapping of its fields (origin by name, causes as mappings).

    Every problem is reported at once, as the service reports a descriptor's: an unknown
    key, no `type`, an unknown origin or gRPC status name, a malformed cause, and what
    `validate` finds in the rest; each a DescriptorError violation naming its field.
    """
    violations = [
        FieldViolation(
            f"{field_prefix}.{key}",
            f"unknown field{_did_you_mean(key, FIELD_NAMES)}; a descriptor has "
            f"{', '.join(FIELD_NAMES)}",
        )
        for key in sorted(map(str, set(data) - set(FIELD_NAMES)))
    ]
    fields = {k: v for k, v in data.items() if k in FIELD_NAMES}
    if "type" not in fields:
        violations.append(FieldViolation(f"{field_prefix}.type", "is required"))
    steps: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
        ("grpc_status", lambda f: f.update(_grpc_by_name(f, field_prefix))),
        ("origin", lambda f: f.update(origin=origin(f["origin"], f"{field_prefix}.origin"))),
        ("causes", lambda f: f.update(causes=_causes_of(f["causes"], field_prefix))),
    ]
    for name, step in steps:
        if name in fields:
            try:
                step(fields)
            except DescriptorError as exc:
                violations += exc.violations
                del fields[name]
    if not violations:
        return Descriptor(**fields)
    try:  # the rest, checked as the service would: every problem in one answer
        validate(Descriptor(**{"type": "-", **fields}), field_prefix)
    except DescriptorError as exc:
        missing_type = "type" not in data
        violations += [
            v for v in exc.violations if not (missing_type and v.field == f"{field_prefix}.type")
        ]
    except (TypeError, ValueError):
        pass  # a value of the wrong kind: the structural problems above say enough
    raise DescriptorError(violations)


def _causes_of(value: Any, field_prefix: str) -> tuple[Cause, ...]:
    causes = [
        _grpc_by_name(c, f"{field_prefix}.causes[{i}]") if isinstance(c, Mapping) else c
        for i, c in enumerate(value or ())
    ]
    return cause_list(causes, field_prefix)


def _did_you_mean(word: str, known: Sequence[str]) -> str:
    """` (did you mean 'x'?)` for the closest known name, if one is close."""
    close = difflib.get_close_matches(word, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _grpc_by_name(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The fields, a gRPC status given by name (`DEADLINE_EXCEEDED`, as descriptor files
    may write it) read as its number."""
    fields = dict(data)
    status = fields.get("grpc_status")
    if isinstance(status, str):
        try:
            fields["grpc_status"] = grpc_code(status)
        except ValueError as exc:
            raise DescriptorError([FieldViolation(f"{where}.grpc_status", str(exc))]) from None
    return fields


def as_descriptor(value: DescriptorInput, field_prefix: str = "descriptor") -> Descriptor:
    """A Descriptor from what a call was given (see DescriptorInput), not yet validated."""
    if isinstance(value, Descriptor):
        return value
    if isinstance(value, Mapping):
        return descriptor_from_mapping(value, field_prefix)
    if isinstance(value, str | bytes) or not hasattr(value, "type"):
        raise DescriptorError(
            [
                FieldViolation(
                    field_prefix,
                    "a descriptor is a Descriptor or a mapping of its fields "
                    f"({{'type': ...}}), not {type(value).__name__}",
                )
            ]
        )
    return Descriptor(
        type=value.type,
        supertypes=value.supertypes,
        http_status=value.http_status,
        grpc_status=value.grpc_status,
        origin=origin(value.origin, f"{field_prefix}.origin"),
        code=value.code,
        message=value.message,
        causes=cause_list(value.causes, field_prefix),
        language=value.language,
        provider=value.provider,
        attributes=value.attributes,
    )


# What the service refuses, and how it says it (the service's own wording).


class _Check:
    """Collects violations while normalising, so every one is reported at once."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.violations: list[FieldViolation] = []

    def add(self, name: str, message: str) -> None:
        self.violations.append(FieldViolation(f"{self.prefix}.{name}", message))

    def text(self, name: str, value: object) -> str:
        if isinstance(value, str):
            return utf8_text(value)
        self.add(name, f"must be text, not {type(value).__name__}")
        return ""

    def bounded(self, name: str, value: object, limit: int) -> str:
        text = strip(self.text(name, value))
        if len(text) > limit:
            self.add(name, f"{len(text)} characters exceed the limit of {limit}")
        return text

    def type_name(self, name: str, value: object) -> str:
        text = self.bounded(name, value, facts.MAX_TYPE_NAME_CHARS)
        if not text and isinstance(value, str):
            self.add(name, "must not be empty")
        return text

    def type_names(self, name: str, values: Sequence[object]) -> tuple[str, ...]:
        if len(values) > facts.MAX_SUPERTYPES:
            self.add(name, f"{len(values)} entries exceed the limit of {facts.MAX_SUPERTYPES}")
            return ()
        out = (self.type_name(f"{name}[{i}]", v) for i, v in enumerate(values))
        return tuple(n for n in out if n)

    def status(self, name: str, value: object, grpc: bool) -> int | None:
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            self.add(name, f"must be a whole number, not {type(value).__name__}")
            return None
        if grpc and value not in facts.GRPC_CODE_NAMES:
            self.add(name, f"{value} is not a gRPC status code (0-16)")
            return None
        if not grpc and not 100 <= value <= 599:
            self.add(name, f"{value} is not an HTTP status (100-599)")
            return None
        return value

    def message(self, name: str, value: object) -> str:
        return self.text(name, value)[: facts.MAX_MESSAGE_CHARS]

    def cause(self, name: str, c: Cause) -> Cause:
        return Cause(
            type=self.type_name(f"{name}.type", c.type),
            supertypes=self.type_names(f"{name}.supertypes", c.supertypes),
            http_status=self.status(f"{name}.http_status", c.http_status, grpc=False),
            grpc_status=self.status(f"{name}.grpc_status", c.grpc_status, grpc=True),
            code=self.bounded(f"{name}.code", c.code, facts.MAX_CODE_CHARS),
            message=self.message(f"{name}.message", c.message),
        )

    def attributes(self, attributes: Mapping[str, str]) -> dict[str, str]:
        if len(attributes) > facts.MAX_ATTRIBUTES:
            self.add(
                "attributes",
                f"{len(attributes)} attributes exceed the limit of {facts.MAX_ATTRIBUTES}",
            )
            return {}
        out: dict[str, str] = {}
        for key, value in attributes.items():
            if not isinstance(key, str) or not isinstance(value, str):
                self.add(f"attributes[{key!r}]", "keys and values must be text")
            elif not key:
                self.add("attributes", "an attribute key must not be empty")
            elif len(key) > facts.MAX_ATTRIBUTE_KEY_CHARS:
                self.add(
                    f"attributes[{key[:40]!r}]",
                    f"key exceeds the limit of {facts.MAX_ATTRIBUTE_KEY_CHARS} characters",
                )
            elif len(value) > facts.MAX_ATTRIBUTE_VALUE_CHARS:
                self.add(
                    f"attributes[{key!r}]",
                    f"value exceeds the limit of {facts.MAX_ATTRIBUTE_VALUE_CHARS} characters",
                )
            else:
                out[utf8_text(key)] = utf8_text(value)
        return out


def validate(value: DescriptorInput, field_prefix: str = "descriptor") -> Descriptor:
    """The descriptor as the service would accept it, normalised as the service does.

    Names stripped (the facts' whitespace), language and provider lower-cased, the
    message cut to MAX_MESSAGE_CHARS and every lone surrogate replaced by U+FFFD.
    Anything the service would refuse raises DescriptorError listing every violation by
    the service's field path, under field_prefix, in the service's order.
    """
    d = as_descriptor(value, field_prefix)
    check = _Check(field_prefix)
    type_name = check.type_name("type", d.type)
    supertypes = check.type_names("supertypes", d.supertypes)
    causes = d.causes
    if len(causes) > facts.MAX_CAUSES:
        check.add("causes", f"{len(causes)} causes exceed the limit of {facts.MAX_CAUSES}")
        causes = ()
    checked_causes = tuple(check.cause(f"causes[{i}]", c) for i, c in enumerate(causes))
    attributes = check.attributes(d.attributes)
    out = Descriptor(
        type=type_name,
        supertypes=supertypes,
        http_status=check.status("http_status", d.http_status, grpc=False),
        grpc_status=check.status("grpc_status", d.grpc_status, grpc=True),
        origin=d.origin,
        code=check.bounded("code", d.code, facts.MAX_CODE_CHARS),
        message=check.message("message", d.message),
        causes=checked_causes,
        language=check.bounded("language", d.language, facts.MAX_LABEL_CHARS).lower(),
        provider=check.bounded("provider", d.provider, facts.MAX_LABEL_CHARS).lower(),
        attributes=attributes,
    )
    if check.violations:
        raise DescriptorError(check.violations)
    return out


# What the builders send: never refused.


def _fit_name(value: object, limit: int) -> str:
    return strip(utf8_text(value))[:limit] if isinstance(value, str) else ""


def _fit_names(values: Iterable[object]) -> tuple[str, ...]:
    names = (_fit_name(v, facts.MAX_TYPE_NAME_CHARS) for v in values)
    return tuple(n for n in names if n)[: facts.MAX_SUPERTYPES]


def _fit_status(value: object, grpc: bool) -> int | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    ok = value in facts.GRPC_CODE_NAMES if grpc else 100 <= value <= 599
    return value if ok else None


def _fit_message(value: object) -> str:
    return utf8_text(value)[: facts.MAX_MESSAGE_CHARS] if isinstance(value, str) else ""


def _fit_label(value: object) -> str:
    return (
        strip(utf8_text(value)).lower()[: facts.MAX_LABEL_CHARS] if isinstance(value, str) else ""
    )


def _fit_attributes(attributes: Mapping[str, str]) -> dict[str, str]:
    kept = {
        utf8_text(k): utf8_text(v)[: facts.MAX_ATTRIBUTE_VALUE_CHARS]
        for k, v in attributes.items()
        if isinstance(k, str) and isinstance(v, str) and 0 < len(k) <= facts.MAX_ATTRIBUTE_KEY_CHARS
    }
    return {k: kept[k] for k in sorted(kept)[: facts.MAX_ATTRIBUTES]}


def fit(value: DescriptorInput) -> Descriptor:
    """The descriptor cut to the limits, so that the service never refuses it.

    Names stripped and cut (never splitting a surrogate pair), empty supertypes dropped
    and the first MAX_SUPERTYPES kept, causes without a type dropped and the first
    MAX_CAUSES kept, codes cut, messages' lone surrogates replaced and cut, statuses out
    of range left out, labels stripped, lower-cased and cut, attributes with an empty or
    over-long key dropped, values cut, and at most MAX_ATTRIBUTES kept (the keys first
    in code-point order). Only an empty `type` stays: there is nothing to send without it.
    """
    d = as_descriptor(value)
    causes = [
        Cause(
            type=_fit_name(c.type, facts.MAX_TYPE_NAME_CHARS),
            supertypes=_fit_names(c.supertypes),
            http_status=_fit_status(c.http_status, grpc=False),
            grpc_status=_fit_status(c.grpc_status, grpc=True),
            code=_fit_name(c.code, facts.MAX_CODE_CHARS),
            message=_fit_message(c.message),
        )
        for c in d.causes
    ]
    return Descriptor(
        type=_fit_name(d.type, facts.MAX_TYPE_NAME_CHARS),
        supertypes=_fit_names(d.supertypes),
        http_status=_fit_status(d.http_status, grpc=False),
        grpc_status=_fit_status(d.grpc_status, grpc=True),
        origin=d.origin,
        code=_fit_name(d.code, facts.MAX_CODE_CHARS),
        message=_fit_message(d.message),
        causes=[c for c in causes if c.type][: facts.MAX_CAUSES],
        language=_fit_label(d.language),
        provider=_fit_label(d.provider),
        attributes=_fit_attributes(d.attributes),
    )


def descriptor_fields(d: Descriptor | Cause) -> dict[str, Any]:
    """A descriptor as the spec's vectors spell it: the proto's names, empty fields left
    out, origin by name, statuses by number, causes as lists of such mappings."""
    out: dict[str, Any] = {"type": d.type} if d.type else {}
    if d.supertypes:
        out["supertypes"] = list(d.supertypes)
    if d.http_status is not None:
        out["http_status"] = d.http_status
    if d.grpc_status is not None:
        out["grpc_status"] = d.grpc_status
    if isinstance(d, Descriptor) and d.origin:
        out["origin"] = d.origin.name
    if d.code:
        out["code"] = d.code
    if d.message:
        out["message"] = d.message
    if isinstance(d, Descriptor):
        if d.causes:
            out["causes"] = [descriptor_fields(c) for c in d.causes]
        if d.language:
            out["language"] = d.language
        if d.provider:
            out["provider"] = d.provider
        if d.attributes:
            out["attributes"] = dict(d.attributes)
    return out
