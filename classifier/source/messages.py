"""What a validation error says to the person who wrote the file.

pydantic names its own types (`instance of WhenDoc`) and regular expressions;
an author needs the place, what is expected there in words, the value as it
was written, and the likely fix: the valid keys where a key is wrong, the
closest name where a name is misspelt. The loader (rule, manifest, catalog
and case files) and the descriptor-file reader both word their errors here.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from classifier.source.documents import PATTERN_MEANINGS, doc_path
from classifier.source.yamlsource import Path_, flow
from classifier.text import and_list, did_you_mean

_TYPE_WORDS = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "frozen_set_type": "a list",
    "dict_type": "a mapping of keys to values",
    "model_type": "a mapping of keys to values",
    "model_attributes_type": "a mapping of keys to values",
    "date_type": "a date (YYYY-MM-DD)",
    "date_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "a date (YYYY-MM-DD)",
}
"""pydantic's type errors as what the value must be."""
MAX_SHOWN = 60


def written(value: Any) -> str:
    """A value as the author wrote it (YAML flow style), cut short when long."""
    text = flow(value)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def merged(errors: Sequence[ErrorDetails]) -> list[ErrorDetails]:
    """One error per place: a value that fits no member of a union (`int | str`) gets one
    error saying every kind it may be, instead of one per member."""
    out: list[ErrorDetails] = []
    at: dict[tuple[str | int, ...], int] = {}
    for err in errors:
        path = doc_path(err["loc"])
        kinds = _TYPE_WORDS.get(err["type"])
        if path in at and kinds is not None:
            first = out[at[path]]
            if first["type"] in _TYPE_WORDS or first["type"] == "union":
                words = first.get("ctx", {}).get("kinds") or [_TYPE_WORDS[first["type"]]]
                if kinds not in words:
                    words = [*words, kinds]
                out[at[path]] = ErrorDetails(
                    type="union",
                    loc=first["loc"],
                    msg=first["msg"],
                    input=first["input"],
                    ctx={"kinds": words},
                )
                continue
        at.setdefault(path, len(out))
        out.append(err)
    return out


def value_message(err: ErrorDetails, field: str) -> str:
    """A value error in words: `rules.0.priority: must be a whole number, not high`."""
    kind = err["type"]
    value = err["input"]
    if kind == "union":
        must = " or ".join(dict.fromkeys(err.get("ctx", {})["kinds"]))
        return f"{field}: must be {must}, not {written(value)}"
    if kind in _TYPE_WORDS:
        return f"{field}: must be {_TYPE_WORDS[kind]}, not {written(value)}"
    ctx = err.get("ctx", {})
    if kind == "literal_error":
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        hint = did_you_mean(str(value), choices) if isinstance(value, str) else ""
        return f"{field}: must be one of {', '.join(choices)}, not {written(value)}{hint}"
    if kind == "string_pattern_mismatch":
        meaning = PATTERN_MEANINGS.get(str(ctx.get("pattern")))
        if meaning is not None:
            return f"{field}: {written(value)} is not a valid id: {meaning}"
    if kind in ("string_too_short", "too_short"):
        return f"{field}: must not be empty"
    return f"{field}: {err['msg']}"


def unknown_key(key: Any, path: Path_, model: type[BaseModel] | None) -> str:
    """`unknown key 'status' at rules.0.when (did you mean 'http_status'?); valid keys
    there: type, http_status, ...`"""
    where = _field(path[:-1])
    keys = keys_at(model, path[:-1]) if model is not None else None
    if isinstance(key, str):
        message = f"unknown key {key!r} at {where}" + did_you_mean(key, keys or ())
    else:
        message = f"unknown key {flow(key)} at {where} (a key must be a name)"
    return message if keys is None else f"{message}; valid keys there: {', '.join(keys)}"


def missing_key(path: Path_, model: type[BaseModel] | None) -> str:
    """`missing required key 'class' at rules.0 (a rule needs id, when and class)`."""
    message = f"missing required key {path[-1]!r}"
    parent = _model_at(model, path[:-1]) if model is not None else None
    if parent is None:
        return message
    needed = [_key(name, f) for name, f in parent.model_fields.items() if f.is_required()]
    title = str(parent.model_config.get("title") or "document")
    article = "an" if title[:1] in "aeiou" else "a"
    return f"{message} ({article} {title} needs {and_list(needed)})"


def title(model: type[BaseModel]) -> str:
    """What a document is called in a message (`rule file`, `manifest (ruleset.yaml)`)."""
    return str(model.model_config.get("title") or model.__name__)


def _field(path: Path_) -> str:
    return ".".join(str(p) for p in path) or "the top level"


def _key(name: str, info: Any) -> str:
    return str(info.alias or name)


def keys_at(model: type[BaseModel] | None, path: Path_) -> list[str] | None:
    """The keys the mapping at path may have, as written; None when it is not a document."""
    found = _model_at(model, path)
    if found is None:
        return None
    return [_key(name, f) for name, f in found.model_fields.items()]


def _model_at(model: Any, path: Path_) -> type[BaseModel] | None:
    """The document model of the mapping at path inside model, following lists and dicts."""
    current: Any = model
    for part in path:
        current = _strip(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            by_key = {_key(n, f): f for n, f in current.model_fields.items()}
            info = by_key.get(str(part))
            if info is None:
                return None
            current = info.annotation
        elif typing.get_origin(current) in (list, tuple, frozenset, set) and isinstance(part, int):
            current = typing.get_args(current)[0]
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        else:
            return None
    current = _strip(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _strip(t: Any) -> Any:
    """The one document-ish member of an Optional, an Annotated or a union."""
    while True:
        origin = typing.get_origin(t)
        if origin is typing.Annotated:
            t = typing.get_args(t)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(t) if a is not type(None)]
            docs = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
            t = docs[0] if docs else members[0]
        else:
            return t


def violation_message(err: ErrorDetails, path: Path_, model: type[BaseModel]) -> str:
    """The same words for a field of a descriptor, whose violation names the field itself."""
    kind = err["type"]
    if kind == "extra_forbidden":
        keys = keys_at(model, path[:-1]) or []
        return f"unknown key{did_you_mean(str(path[-1]), keys)}; valid keys: {', '.join(keys)}"
    if kind == "missing":
        return "is required"
    if kind in _TYPE_WORDS or kind in ("union", "literal_error", "string_too_short", "too_short"):
        return value_message(err, "").removeprefix(": ")
    return str(err["msg"])
