"""The on-disk documents, as pydantic models: what a YAML file may say.

These are the *parsed* shapes (`RuleDoc`, `ManifestDoc`, ...). The engine
never sees them: the compiler turns them into `CompiledRule`s. Unknown keys
are errors everywhere, and every value error carries a stable code (the
pydantic error type) that the loader turns into `file:line:col: code: ...`.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from classifier.codes import LINT_CODES, RULE_LINT_CODES, Code
from classifier.descriptor import CauseInput, Descriptor, build_descriptor
from classifier.taxonomy import GRPC_CODES, ErrorClass, Origin, grpc_code

RULE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._/:-]*$"
ACTION_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
ORIGIN_ALIASES = {"caller": "user"}
DEFAULT_INCLUDE = ("**/*.yaml", "**/*.yml")
"""The rule files of a ruleset whose manifest has no `include:`."""
_STATUS_CLASS = re.compile(r"^([1-5])xx$", re.IGNORECASE)
_STATUS_RANGE = re.compile(r"^(\d{3})\s*-\s*(\d{3})$")


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


_UNION_MEMBERS = frozenset({"function-before", "function-after", "str", "int", "float", "bool"})


def doc_path(loc: tuple[Any, ...]) -> tuple[str | int, ...]:
    """A pydantic error's path as the document spells it: without the union members and
    validator names pydantic adds, and with `class` for the `class_` field."""
    out: list[str | int] = []
    for part in loc:
        if isinstance(part, int):
            out.append(part)
        elif part == "class_":
            out.append("class")
        elif "[" not in part and part not in _UNION_MEMBERS:
            out.append(part)
    return tuple(out)


def scalar_text(value: object) -> str:
    """The text a YAML scalar stands for, as descriptors carry it (`true`, `408`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _one_or_many(value: Any) -> Any:
    return value if isinstance(value, list) else [value]


def _non_empty(values: list[Any], what: str) -> list[Any]:
    if not values:
        raise PydanticCustomError(
            Code.empty_condition, "an empty list of {what} matches nothing", {"what": what}
        )
    return values


def parse_http_statuses(value: int | str) -> frozenset[int]:
    """`429`, `5xx` or `500-504` as the set of statuses it means.

    Raises PydanticCustomError(Code.invalid_http_status) for anything else.
    """
    if isinstance(value, bool):
        raise PydanticCustomError(
            Code.invalid_http_status, "{value} is not an HTTP status", {"value": repr(value)}
        )
    if isinstance(value, int):
        if 100 <= value <= 599:
            return frozenset({value})
    else:
        text = value.strip()
        if text.isdigit() and 100 <= int(text) <= 599:
            return frozenset({int(text)})
        if m := _STATUS_CLASS.match(text):
            base = int(m.group(1)) * 100
            return frozenset(range(base, base + 100))
        if m := _STATUS_RANGE.match(text):
            low, high = int(m.group(1)), int(m.group(2))
            if 100 <= low <= high <= 599:
                return frozenset(range(low, high + 1))
    raise PydanticCustomError(
        Code.invalid_http_status,
        "{value} is not an HTTP status: use a number (429), a class (5xx) or a range (500-504)",
        {"value": repr(value)},
    )


def parse_origin(value: str) -> Origin:
    """An origin by its lower-case name (`provider`); `caller` is an alias of `user`."""
    name = ORIGIN_ALIASES.get(value.strip().lower(), value.strip().lower())
    if name in Origin.__members__:
        return Origin[name]
    raise PydanticCustomError(
        Code.unknown_origin,
        "unknown origin {value}; known: {known}",
        {
            "value": repr(value),
            "known": ", ".join(o.name for o in Origin if o is not Origin.unspecified),
        },
    )


def _lint_codes(values: list[str], allowed: tuple[str, ...], where: str) -> list[str]:
    for value in values:
        if value not in allowed:
            raise PydanticCustomError(
                Code.unknown_lint_code,
                "{value} is not a lint code {where} can ignore; known: {known}",
                {"value": repr(value), "where": where, "known": ", ".join(allowed)},
            )
    return values


def parse_class(value: str) -> ErrorClass:
    """A class by its taxonomy name (`RateLimited`)."""
    if value in ErrorClass.__members__:
        return ErrorClass[value]
    raise PydanticCustomError(
        Code.unknown_class,
        "unknown class {value}; known: {known}",
        {"value": repr(value), "known": ", ".join(ErrorClass.__members__)},
    )


def parse_grpc_code(value: str | int) -> int:
    try:
        return grpc_code(value)
    except ValueError:
        raise PydanticCustomError(
            Code.unknown_grpc_code,
            "unknown gRPC status code {value}; known: {known}",
            {"value": repr(value), "known": ", ".join(GRPC_CODES)},
        ) from None


Names = Annotated[list[Annotated[str, Field(min_length=1)]], BeforeValidator(_one_or_many)]
Scalars = Annotated[list[str | int], BeforeValidator(_one_or_many)]
StatusValues = Annotated[list[int | str], BeforeValidator(_one_or_many)]
GrpcValues = Annotated[list[str | int], BeforeValidator(_one_or_many)]
AttributeValues = Annotated[list[str | int | float | bool], BeforeValidator(_one_or_many)]


class CauseWhenDoc(_Doc):
    """Conditions a cause in the chain can satisfy (the fields a Cause carries)."""

    type: Names | None = None
    http_status: StatusValues | None = None
    grpc_status: GrpcValues | None = None
    code: Scalars | None = None
    message: str | None = None

    @field_validator("type", "code")
    @classmethod
    def _not_empty(cls, values: list[Any] | None) -> list[Any] | None:
        return None if values is None else _non_empty(values, "values")

    @field_validator("http_status")
    @classmethod
    def _statuses(cls, values: list[int | str] | None) -> list[int | str] | None:
        if values is not None:
            for value in _non_empty(values, "statuses"):
                parse_http_statuses(value)
        return values

    @field_validator("grpc_status")
    @classmethod
    def _grpc(cls, values: list[str | int] | None) -> list[str | int] | None:
        if values is not None:
            for value in _non_empty(values, "codes"):
                parse_grpc_code(value)
        return values

    @field_validator("message")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        if value is not None and not value:
            raise PydanticCustomError(Code.empty_condition, "an empty pattern matches everything")
        return value


class WhenDoc(CauseWhenDoc):
    """A rule's conditions; all of them must hold."""

    origin: Names | None = None
    provider: Names | None = None
    language: Names | None = None
    attributes: dict[str, AttributeValues] | None = None
    cause: CauseWhenDoc | None = None

    @field_validator("origin")
    @classmethod
    def _origins(cls, values: list[str] | None) -> list[str] | None:
        if values is not None:
            for value in _non_empty(values, "origins"):
                parse_origin(value)
        return values

    @field_validator("provider", "language")
    @classmethod
    def _labels(cls, values: list[str] | None) -> list[str] | None:
        return None if values is None else _non_empty(values, "values")


class RuleDoc(_Doc):
    """One rule as written in a rule file."""

    id: Annotated[str, Field(pattern=RULE_ID_PATTERN)]
    description: str = ""
    when: WhenDoc
    class_: Annotated[str, Field(alias="class")]
    action: Annotated[str, Field(pattern=ACTION_ID_PATTERN)] | None = None
    effect: Literal["fail", "pause", "continue"] | None = None
    retryable: bool | None = None
    priority: int = 0
    lint_ignore: Annotated[list[str], BeforeValidator(_one_or_many)] = []

    @field_validator("lint_ignore")
    @classmethod
    def _lint_ignore(cls, values: list[str]) -> list[str]:
        return _lint_codes(values, RULE_LINT_CODES, "a rule")

    @field_validator("class_")
    @classmethod
    def _class(cls, value: str) -> str:
        parse_class(value)
        if value == ErrorClass.Unknown.name:
            raise PydanticCustomError(
                Code.unknown_as_rule_class,
                "a rule cannot produce Unknown (it means no rule matched); delete the rule instead",
            )
        return value


class RuleFileDoc(_Doc):
    """A rule file: a mapping whose `rules:` key lists rules."""

    rules: list[RuleDoc]


class ChangelogEntryDoc(_Doc):
    version: str
    date: dt.date | None = None
    changes: list[str] = []


class ManifestDoc(_Doc):
    """`ruleset.yaml`: the ruleset's identity and which files hold its rules."""

    name: Annotated[str, Field(min_length=1)]
    version: Annotated[str, Field(min_length=1)]
    description: str = ""
    changelog: list[ChangelogEntryDoc] = []
    include: list[str] = list(DEFAULT_INCLUDE)
    exclude: list[str] = []
    lint_ignore: Annotated[list[str], BeforeValidator(_one_or_many)] = []

    @field_validator("lint_ignore")
    @classmethod
    def _lint_ignore(cls, values: list[str]) -> list[str]:
        return _lint_codes(values, LINT_CODES, "a ruleset")

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return (
            str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value
        )


class ActionDoc(_Doc):
    """An operator action in the catalog."""

    id: Annotated[str, Field(pattern=ACTION_ID_PATTERN)]
    summary: Annotated[str, Field(min_length=1)]
    runbook: str = ""


class ClassDefaultDoc(_Doc):
    """What a class means for the run when a rule does not say otherwise."""

    action: Annotated[str, Field(pattern=ACTION_ID_PATTERN)]
    effect: Literal["unspecified", "fail", "pause", "continue"]
    retryable: bool = False
    conflict_action: Annotated[str, Field(pattern=ACTION_ID_PATTERN)] | None = None
    """Unknown only: the action when equally specific rules disagree (default: `action`)."""


class CatalogDoc(_Doc):
    """`actions.yaml`: the action catalog and every class's defaults."""

    actions: list[ActionDoc]
    classes: dict[str, ClassDefaultDoc]

    @field_validator("classes")
    @classmethod
    def _class_names(cls, value: dict[str, ClassDefaultDoc]) -> dict[str, ClassDefaultDoc]:
        for name in value:
            parse_class(name)
        missing = [c.name for c in ErrorClass if c.name not in value]
        if missing:
            raise PydanticCustomError(
                Code.missing_class_default,
                "every class needs a default action and effect; missing: {missing}",
                {"missing": ", ".join(missing)},
            )
        return value


class CauseDoc(_Doc):
    """A cause in a descriptor file."""

    type: str
    supertypes: list[str] = []
    http_status: int | None = None
    grpc_status: int | str | None = None
    code: str | int = ""
    message: str = ""

    @field_validator("grpc_status")
    @classmethod
    def _grpc(cls, value: int | str | None) -> int | str | None:
        return None if value is None else parse_grpc_code(value)

    def to_input(self) -> CauseInput:
        return CauseInput(
            type=self.type,
            supertypes=tuple(self.supertypes),
            http_status=self.http_status,
            grpc_status=None if self.grpc_status is None else int(self.grpc_status),
            code=scalar_text(self.code),
            message=self.message,
        )


class DescriptorDoc(_Doc):
    """A descriptor in a file (YAML or JSON): the proto's field names, origin in lower case,
    gRPC codes by name or number."""

    type: str
    supertypes: list[str] = []
    http_status: int | None = None
    grpc_status: int | str | None = None
    origin: str = ""
    code: str | int = ""
    message: str = ""
    causes: list[CauseDoc] = []
    language: str = ""
    provider: str = ""
    attributes: dict[str, str | int | float | bool] = {}

    @field_validator("grpc_status")
    @classmethod
    def _grpc(cls, value: int | str | None) -> int | str | None:
        return None if value is None else parse_grpc_code(value)

    @field_validator("origin")
    @classmethod
    def _origin(cls, value: str) -> str:
        return parse_origin(value).name if value else ""

    def to_descriptor(self, field_prefix: str = "descriptor") -> Descriptor:
        """The normalised descriptor; raises DescriptorError for out-of-range values."""
        return build_descriptor(
            type=self.type,
            supertypes=self.supertypes,
            http_status=self.http_status,
            grpc_status=None if self.grpc_status is None else int(self.grpc_status),
            origin=Origin[self.origin] if self.origin else Origin.unspecified,
            code=scalar_text(self.code),
            message=self.message,
            causes=[c.to_input() for c in self.causes],
            language=self.language,
            provider=self.provider,
            attributes={k: scalar_text(v) for k, v in self.attributes.items()},
            field_prefix=field_prefix,
        )
