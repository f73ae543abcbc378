"""The on-disk documents, as pydantic models: what a YAML file may say.

These are the *parsed* shapes (`RuleDoc`, `ManifestDoc`, ...). The engine
never sees them: the compiler turns them into `CompiledRule`s. Unknown keys
are errors everywhere, and every value error carries a stable code (the
pydantic error type) that the loader turns into `file:line:col: code: ...`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetPydanticSchema,
    StrictFloat,
    StrictInt,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError, core_schema

from classifier.codes import LINT_CODES, RULE_LINT_CODES, Code
from classifier.durations import decimal_seconds, go_duration
from classifier.taxonomy import (
    GRPC_CODES,
    ORIGIN_ALIASES,
    ErrorClass,
    Origin,
    grpc_code,
    origin_named,
)
from classifier.text import did_you_mean

RULE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._/:-]*$"
ACTION_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
PATTERN_MEANINGS = {
    RULE_ID_PATTERN: "a rule id starts with a letter or digit and holds only letters, "
    "digits and . _ / : - (no spaces)",
    ACTION_ID_PATTERN: "an action id starts with a lower-case letter or digit and holds "
    "only lower-case letters, digits and . _ -",
}
"""The id patterns in words, for messages (a regular expression is not a sentence)."""
DEFAULT_INCLUDE = ("**/*.yaml", "**/*.yml")
"""The rule files of a ruleset whose manifest has no `include:`."""
_STATUS_CLASS = re.compile(r"^([1-5])xx$", re.IGNORECASE)
_STATUS_RANGE = re.compile(r"^(\d{3})\s*-\s*(\d{3})$")


class Doc(BaseModel):
    """Every document: unknown keys are errors, and a parsed document never changes.

    The models' JSON Schema (`make schemas`) is what editors check files
    against: attribute docstrings become its descriptions.
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True
    )


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


def one_or_many(item: Any) -> BeforeValidator:
    """A value written as one item or a list of them (`type: A` or `type: [A, B]`), read as
    the list; its JSON Schema says both."""
    return BeforeValidator(_one_or_many, json_schema_input_type=Union[item, list[item]])  # noqa: UP007


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
    origin = origin_named(value)
    if origin is not None:
        return origin
    known = [o.name for o in Origin if o is not Origin.unspecified]
    raise PydanticCustomError(
        Code.unknown_origin,
        "unknown origin {value}{hint}; known: {known}",
        {
            "value": repr(value),
            "hint": did_you_mean(value.strip(), [*known, *ORIGIN_ALIASES]),
            "known": ", ".join(known),
        },
    )


def _lint_codes(values: list[str], allowed: tuple[str, ...], where: str) -> list[str]:
    for value in values:
        if value not in allowed:
            raise PydanticCustomError(
                Code.unknown_lint_code,
                "{value} is not a lint code {where} can ignore{hint}; known: {known}",
                {
                    "value": repr(value),
                    "where": where,
                    "hint": did_you_mean(value, allowed),
                    "known": ", ".join(allowed),
                },
            )
    return values


CLASS_TO_CHOOSE = "TO CHOOSE:"
"""How a drafted rule's (or case's) class begins while a person has still to choose it:
`class: 'TO CHOOSE: ToolError (a tool raised it); ProviderError (...)'` (what
`classifier unknowns --propose` writes when the evidence does not settle the class)."""


def parse_class(value: str) -> ErrorClass:
    """A class by its taxonomy name (`RateLimited`); a drafted placeholder is refused with
    its candidates, so that a draft cannot be merged before a person picks."""
    if value in ErrorClass.__members__:
        return ErrorClass[value]
    if value.strip().upper().startswith(CLASS_TO_CHOOSE):
        candidates = value.strip()[len(CLASS_TO_CHOOSE) :].strip() or "none named"
        raise PydanticCustomError(
            Code.class_to_choose,
            "the class is still to choose (a drafted rule): the candidates are {candidates}; "
            "write the one that fits as `class: NAME` (or delete the draft if none does: "
            "the failure stays Unknown)",
            {"candidates": candidates},
        )
    raise PydanticCustomError(
        Code.unknown_class,
        "unknown class {value}{hint}; known: {known}",
        {
            "value": repr(value),
            "hint": did_you_mean(value, ErrorClass.__members__),
            "known": ", ".join(ErrorClass.__members__),
        },
    )


def parse_grpc_code(value: str | int) -> int:
    try:
        return grpc_code(value)
    except ValueError:
        raise PydanticCustomError(
            Code.unknown_grpc_code,
            "unknown gRPC status code {value}{hint}; known: {known}",
            {
                "value": repr(value),
                "hint": did_you_mean(str(value), GRPC_CODES),
                "known": ", ".join(GRPC_CODES),
            },
        ) from None


def parsed_as(written: Any, parse: Callable[[Any], Any]) -> GetPydanticSchema:
    """Validate a field as `written` (the YAML form, and so its JSON Schema), then keep what
    `parse` makes of it: the compiler gets parsed values, never text to parse again."""
    return GetPydanticSchema(
        lambda _source, handler: core_schema.no_info_after_validator_function(
            parse, handler.generate_schema(written)
        )
    )


def _statuses(values: list[int | str]) -> frozenset[int]:
    return frozenset().union(*(parse_http_statuses(v) for v in _non_empty(values, "statuses")))


def _grpc_codes(values: list[str | int]) -> frozenset[int]:
    return frozenset(parse_grpc_code(v) for v in _non_empty(values, "codes"))


def _origins(values: list[str]) -> frozenset[Origin]:
    return frozenset(parse_origin(v) for v in _non_empty(values, "origins"))


def _texts(values: list[str | int]) -> frozenset[str]:
    return frozenset(scalar_text(v) for v in _non_empty(values, "values"))


def _labels(values: list[str]) -> frozenset[str]:
    return frozenset(v.strip().lower() for v in _non_empty(values, "values"))


def _names(values: list[str]) -> frozenset[str]:
    return frozenset(_non_empty(values, "values"))


def _attribute_values(
    attributes: dict[str, list[str | int | float | bool]],
) -> dict[str, frozenset[str]]:
    return {name: frozenset(scalar_text(v) for v in vs) for name, vs in attributes.items()}


def _pattern(value: str) -> str:
    if not value:
        raise PydanticCustomError(Code.empty_condition, "an empty pattern matches everything")
    return value


_Name = Annotated[str, Field(min_length=1)]
_Status = StrictInt | str
"""Strict: YAML's `true` is not status 1."""
_Code = str | int
_AttributeValue = str | int | float | bool
TypeNames = Annotated[frozenset[str], parsed_as(list[_Name], _names), one_or_many(_Name)]
HttpStatuses = Annotated[frozenset[int], parsed_as(list[_Status], _statuses), one_or_many(_Status)]
GrpcCodes = Annotated[frozenset[int], parsed_as(list[_Code], _grpc_codes), one_or_many(_Code)]
Codes = Annotated[frozenset[str], parsed_as(list[_Code], _texts), one_or_many(_Code)]
Origins = Annotated[frozenset[Origin], parsed_as(list[_Name], _origins), one_or_many(_Name)]
Labels = Annotated[frozenset[str], parsed_as(list[_Name], _labels), one_or_many(_Name)]
Pattern = Annotated[str, AfterValidator(_pattern)]
Attributes = Annotated[
    dict[str, frozenset[str]],
    parsed_as(
        dict[str, Annotated[list[_AttributeValue], one_or_many(_AttributeValue)]],
        _attribute_values,
    ),
]


MAX_RETRY_AFTER_CAP = dt.timedelta(hours=24)
"""The longest cap a ruleset or rule may set on a retry's wait."""


def parse_cap(value: int | float | str) -> dt.timedelta:
    """A cap on the advised wait: seconds (`60`, `1.5`) or a duration (`90s`, `2m`,
    `1m30s`), more than zero and at most MAX_RETRY_AFTER_CAP.

    Raises PydanticCustomError(Code.invalid_value) naming what is wrong.
    """
    if isinstance(value, str):
        seconds = go_duration(value)
        if seconds is None:
            seconds = decimal_seconds(value)
    else:
        seconds = float(value)
    if seconds is None:
        raise PydanticCustomError(
            Code.invalid_value,
            "{value} is not a duration: write seconds (60) or a duration (90s, 2m, 1m30s)",
            {"value": repr(value)},
        )
    if not 0 < seconds <= MAX_RETRY_AFTER_CAP.total_seconds():
        raise PydanticCustomError(
            Code.invalid_value,
            "a cap of {value} is out of range: it must be more than 0 and at most 24h",
            {"value": repr(value)},
        )
    return dt.timedelta(seconds=seconds)


Cap = Annotated[dt.timedelta, parsed_as(StrictInt | StrictFloat | str, parse_cap)]
"""A `retry_after_cap`: seconds, or a duration as Go writes one."""


def _choices(names: Any) -> Any:
    """Field extras naming the values a text field accepts: editors offer them."""
    return Field(json_schema_extra={"enum": list(names)})


_RULE_CLASSES = [c.name for c in ErrorClass if c is not ErrorClass.Unknown]
_RuleLintCode = Annotated[str, _choices(RULE_LINT_CODES)]
_LintCode = Annotated[str, _choices(LINT_CODES)]


CausePresent = Literal["http_status", "grpc_status", "code", "message"]
Present = Literal["http_status", "grpc_status", "code", "message", "provider", "language"]
"""The fields `has:` can ask for: the plain ones a descriptor (or a cause) may leave unset."""


def _distinct(values: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_non_empty(values, "fields")))


CauseFields = Annotated[
    tuple[str, ...], parsed_as(list[CausePresent], _distinct), one_or_many(CausePresent)
]
Fields = Annotated[tuple[str, ...], parsed_as(list[Present], _distinct), one_or_many(Present)]


class CauseWhenDoc(Doc):
    """Conditions a cause in the chain can satisfy (the fields a Cause carries), parsed."""

    model_config = ConfigDict(title="conditions on a cause")

    type: TypeNames | None = None
    http_status: HttpStatuses | None = None
    grpc_status: GrpcCodes | None = None
    code: Codes | None = None
    message: Pattern | None = None
    has: CauseFields | None = None
    lacks: CauseFields | None = None


class WhenDoc(CauseWhenDoc):
    """A rule's conditions; all of them must hold."""

    model_config = ConfigDict(title="conditions")

    origin: Origins | None = None
    provider: Labels | None = None
    language: Labels | None = None
    attributes: Attributes | None = None
    cause: CauseWhenDoc | None = None
    has: Fields | None = None
    lacks: Fields | None = None


def _rule_class(value: str) -> ErrorClass:
    error_class = parse_class(value)
    if error_class is ErrorClass.Unknown:
        raise PydanticCustomError(
            Code.unknown_as_rule_class,
            "a rule cannot produce Unknown (it means no rule matched); delete the rule instead",
        )
    return error_class


class RuleDoc(Doc):
    """One rule as written in a rule file."""

    model_config = ConfigDict(title="rule")

    id: Annotated[str, Field(pattern=RULE_ID_PATTERN)]
    description: str = ""
    when: WhenDoc
    class_: Annotated[
        ErrorClass, parsed_as(str, _rule_class), Field(alias="class"), _choices(_RULE_CLASSES)
    ]
    action: Annotated[str, Field(pattern=ACTION_ID_PATTERN)] | None = None
    effect: Literal["fail", "pause", "continue"] | None = None
    retryable: bool | None = None
    retry_after_cap: Cap | None = None
    """The longest wait this rule's answer advises (`30s`), in place of the ruleset's cap."""
    priority: int = 0
    override: bool = False
    """Replaces the base rule with the same id (a layered ruleset only)."""
    fallback: bool = False
    """Decides only when no other rule matches: for a catch-all on an SDK's base type."""
    lint_ignore: Annotated[list[str], one_or_many(_RuleLintCode)] = []
    """Lint warnings about this rule that its authors accept."""

    @field_validator("lint_ignore")
    @classmethod
    def _lint_ignore(cls, values: list[str]) -> list[str]:
        return _lint_codes(values, RULE_LINT_CODES, "a rule")


class RuleFileDoc(Doc):
    """A rule file: a mapping whose `rules:` key lists rules."""

    model_config = ConfigDict(title="rule file")

    rules: list[RuleDoc]


class ChangelogEntryDoc(Doc):
    model_config = ConfigDict(title="changelog entry")

    version: str
    date: dt.date | None = None
    changes: list[str] = []


class BaseDoc(Doc):
    """A ruleset this one builds on: the bundled library by name, or a folder by path."""

    library: Annotated[str, Field(min_length=1)] | None = None
    path: Annotated[str, Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _one_of(self) -> BaseDoc:
        if (self.library is None) == (self.path is None):
            raise PydanticCustomError(
                Code.invalid_value,
                "a base names either a library (`library: default`) or a folder "
                "(`path: ../shared`), not both and not neither",
            )
        return self


class DisableDoc(Doc):
    """A base rule this ruleset turns off, and why."""

    rule: Annotated[str, Field(pattern=RULE_ID_PATTERN)]
    reason: Annotated[str, Field(min_length=1)]


class ManifestDoc(Doc):
    """`ruleset.yaml`: the ruleset's identity, what it builds on, and which files hold its rules."""

    model_config = ConfigDict(title="manifest (ruleset.yaml)")

    name: Annotated[str, Field(min_length=1)]
    version: Annotated[str, Field(min_length=1)]
    description: str = ""
    changelog: list[ChangelogEntryDoc] = []
    base: list[BaseDoc] = []
    disable: list[DisableDoc] = []
    include: list[str] = list(DEFAULT_INCLUDE)
    exclude: list[str] = []
    lint_ignore: Annotated[list[str], one_or_many(_LintCode)] = []
    """Lint warnings the whole ruleset accepts."""
    retry_after_cap: Cap | None = None
    """The longest wait an answer advises (`60s` when no layer says; a rule may set its own)."""

    @field_validator("lint_ignore")
    @classmethod
    def _lint_ignore(cls, values: list[str]) -> list[str]:
        return _lint_codes(values, LINT_CODES, "a ruleset")

    @field_validator("version", mode="before", json_schema_input_type=str | int | float)
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return (
            str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value
        )


class ActionDoc(Doc):
    """An operator action in the catalog."""

    model_config = ConfigDict(title="action")

    id: Annotated[str, Field(pattern=ACTION_ID_PATTERN)]
    summary: Annotated[str, Field(min_length=1)]
    runbook: str = ""
    retry: Literal["never", "may"] | None = None
    """Whether a retry can help when this is the advice: `never` (fixing billing, the
    request, the credentials) makes every answer naming it not retryable. Left out: `may`,
    or for an action a base defines, the base's."""


class ClassDefaultDoc(Doc):
    """What a class means for the run when a rule does not say otherwise."""

    model_config = ConfigDict(title="class default")

    action: Annotated[str, Field(pattern=ACTION_ID_PATTERN)]
    effect: Literal["unspecified", "fail", "pause", "continue"]
    retryable: bool = False
    conflict_action: Annotated[str, Field(pattern=ACTION_ID_PATTERN)] | None = None
    """Unknown only: the action when equally specific rules disagree (default: `action`)."""


def _class_defaults(value: dict[str, ClassDefaultDoc]) -> dict[ErrorClass, ClassDefaultDoc]:
    return {parse_class(name): default for name, default in value.items()}


class CatalogDoc(Doc):
    """`actions.yaml`: the action catalog and class defaults.

    A ruleset of its own gives every class a default (the compiler checks);
    one that builds on a base inherits the base's catalog, adds actions and
    may change some classes' defaults.
    """

    model_config = ConfigDict(title="catalog (actions.yaml)")

    actions: list[ActionDoc] = []
    classes: Annotated[
        dict[ErrorClass, ClassDefaultDoc],
        parsed_as(
            dict[Annotated[str, _choices(ErrorClass.__members__)], ClassDefaultDoc], _class_defaults
        ),
    ] = Field(default_factory=dict)
    """Class defaults: every class in a ruleset of its own; those to change in one with a base."""
