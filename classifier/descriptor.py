"""The exception descriptor a runtime sends, normalised once before matching.

`build_descriptor` is the way in: the server's proto conversion, the
descriptor-file reader and the Python client all go through it, so every
entry point validates and normalises the same way. The one other,
`descriptor_from_proven`, is for the Arrow batch reader, which checks the
limits on names a whole column at a time; it builds what `build_descriptor`
builds (a test checks they agree) and leaves every row it refuses to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from classifier import limits
from classifier.errors import DescriptorError, FieldViolation
from classifier.taxonomy import GRPC_CODE_NAMES, Origin


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
    """One failure as a runtime reports it, normalised (see `build_descriptor`)."""

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
        object.__setattr__(self, "chain", (self.type, *self.supertypes))


class CauseInput(NamedTuple):
    """A cause as received, before validation (a tuple: the server builds one per cause)."""

    type: str
    supertypes: Sequence[str] = ()
    http_status: int | None = None
    grpc_status: int | None = None
    code: str = ""
    message: str = ""


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
    """Validate and normalise a descriptor.

    Raises DescriptorError listing every malformed field by its path, so a
    client learns all its mistakes from one answer. Names are stripped,
    language and provider lower-cased, and an over-long message is cut to
    its documented prefix rather than refused; a character UTF-8 cannot
    encode in a message is replaced too (see `utf8_text`).
    """
    if isinstance(supertypes, Iterator):
        supertypes = tuple(supertypes)
    cause_list = causes if isinstance(causes, list | tuple) else list(causes)
    quick = _well_formed(
        type, supertypes, http_status, grpc_status, origin, code, message, cause_list,
        language, provider, attributes,
    )  # fmt: skip
    if quick is not None:
        return quick
    return _validated(
        field_prefix, type, supertypes, http_status, grpc_status, origin, code, message,
        cause_list, language, provider, attributes,
    )  # fmt: skip


def _validated(
    field_prefix: str,
    type: str,
    supertypes: Iterable[str],
    http_status: int | None,
    grpc_status: int | None,
    origin: Origin | int,
    code: str,
    message: str,
    causes: Sequence[CauseInput],
    language: str,
    provider: str,
    attributes: Mapping[str, str] | None,
) -> Descriptor:
    """The slow path, field by field: every violation, named by its path."""
    v = _Violations(field_prefix)
    type_name = v.type_name("type", type, required=True)
    supers = v.type_names("supertypes", supertypes, limits.MAX_SUPERTYPES)
    if len(causes) > limits.MAX_CAUSES:
        v.add("causes", f"{len(causes)} causes exceed the limit of {limits.MAX_CAUSES}")
        causes = ()
    built_causes = tuple(
        Cause(
            type=v.type_name(f"causes[{i}].type", c.type, required=True),
            supertypes=v.type_names(f"causes[{i}].supertypes", c.supertypes, limits.MAX_SUPERTYPES),
            http_status=v.http_status(f"causes[{i}].http_status", c.http_status),
            grpc_status=v.grpc_status(f"causes[{i}].grpc_status", c.grpc_status),
            code=v.bounded(f"causes[{i}].code", c.code, limits.MAX_CODE_CHARS),
            message=utf8_text(c.message[: limits.MAX_MESSAGE_CHARS]),
        )
        for i, c in enumerate(causes)
    )
    attrs = v.attributes(attributes or {})
    descriptor = Descriptor(
        type=type_name,
        supertypes=supers,
        http_status=v.http_status("http_status", http_status),
        grpc_status=v.grpc_status("grpc_status", grpc_status),
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


_ORIGINS: dict[int, Origin] = {int(o): o for o in Origin}


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


def _well_formed(
    type: str,
    supertypes: Iterable[str],
    http_status: int | None,
    grpc_status: int | None,
    origin: Origin | int,
    code: str,
    message: str,
    causes: list[CauseInput] | tuple[CauseInput, ...],
    language: str,
    provider: str,
    attributes: Mapping[str, str] | None,
) -> Descriptor | None:
    """The normalised descriptor when nothing is wrong with it, else None.

    Nearly every descriptor is well formed; this checks all limits at once
    and builds it, and only a descriptor that fails goes through
    `_Violations`, which names each problem (and is the authority: a test
    checks the two agree on everything this one accepts).
    """
    type_name = type.strip()
    supers = tuple([s.strip() for s in supertypes])
    code = code.strip()
    language = language.strip()
    provider = provider.strip()
    if not (
        0 < len(type_name) <= limits.MAX_TYPE_NAME_CHARS
        and _names_ok(supers)
        and (http_status is None or 100 <= http_status <= 599)
        and (grpc_status is None or grpc_status in GRPC_CODE_NAMES)
        and origin in _ORIGINS
        and len(code) <= limits.MAX_CODE_CHARS
        and len(language) <= limits.MAX_LABEL_CHARS
        and len(provider) <= limits.MAX_LABEL_CHARS
        and len(causes) <= limits.MAX_CAUSES
        and (not attributes or _attributes_ok(attributes))
    ):
        return None
    built = _well_formed_causes(causes)
    if built is None:
        return None
    return Descriptor(
        type_name,
        supers,
        http_status,
        grpc_status,
        _ORIGINS[origin],
        code,
        utf8_text(message[: limits.MAX_MESSAGE_CHARS]),
        built,
        language.lower(),
        provider.lower(),
        dict(attributes) if attributes else {},
    )


def _well_formed_causes(causes: Iterable[CauseInput]) -> tuple[Cause, ...] | None:
    """The normalised causes when nothing is wrong with any of them, else None."""
    built: list[Cause] = []
    for c in causes:
        cause_type = c.type.strip()
        cause_supers = tuple([s.strip() for s in c.supertypes])
        cause_code = c.code.strip()
        if not (
            0 < len(cause_type) <= limits.MAX_TYPE_NAME_CHARS
            and _names_ok(cause_supers)
            and (c.http_status is None or 100 <= c.http_status <= 599)
            and (c.grpc_status is None or c.grpc_status in GRPC_CODE_NAMES)
            and len(cause_code) <= limits.MAX_CODE_CHARS
        ):
            return None
        built.append(
            Cause(
                cause_type,
                cause_supers,
                c.http_status,
                c.grpc_status,
                cause_code,
                utf8_text(c.message[: limits.MAX_MESSAGE_CHARS]),
            )
        )
    return tuple(built)


def descriptor_from_proven(
    type: str,
    supertypes: tuple[str, ...],
    http_status: int | None,
    grpc_status: int | None,
    origin: Origin | int,
    code: str,
    message: str,
    causes: Sequence[CauseInput],
    language: str,
    provider: str,
    attributes: dict[str, str],
) -> Descriptor | None:
    """`build_descriptor`'s answer for a descriptor whose names a caller has proven good,
    or None when a check left to this function fails (then `build_descriptor` names why).

    The Arrow batch reader checks whole columns at once in Arrow's kernels
    (`classifier.batch.arrow`), which is far cheaper than checking each row
    here: the caller proves that `type`, each supertype, `code`, `language`,
    `provider` and every attribute key and value are already stripped and
    within their limits, `type` and the supertypes not empty, at most
    MAX_SUPERTYPES supertypes and MAX_ATTRIBUTES attributes, no key empty;
    `attributes` is a fresh dict the descriptor may keep. This checks the
    rest (the statuses, the origin, the causes) and builds; a test checks it
    agrees with `build_descriptor` on everything it accepts.
    """
    if not (
        (http_status is None or 100 <= http_status <= 599)
        and (grpc_status is None or grpc_status in GRPC_CODE_NAMES)
        and origin in _ORIGINS
        and len(causes) <= limits.MAX_CAUSES
    ):
        return None
    built = _well_formed_causes(causes) if causes else ()
    if built is None:
        return None
    return Descriptor(
        type,
        supertypes,
        http_status,
        grpc_status,
        _ORIGINS[origin],
        code,
        utf8_text(message[: limits.MAX_MESSAGE_CHARS]),
        built,
        language.lower(),
        provider.lower(),
        attributes,
    )


class _Violations:
    """Collects field violations while normalising, so all are reported at once."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.violations: list[FieldViolation] = []

    def add(self, name: str, message: str) -> None:
        path = f"{self.prefix}.{name}" if self.prefix else name
        self.violations.append(FieldViolation(path, message))

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
