"""A document validated by its pydantic model, its errors turned into located diagnostics.

pydantic reports a path into the value and its own error types; an author needs the
file, line and column, a stable code (the documented ones: `unknown_key`, `missing_key`,
`invalid_value`, or the code a document's validator raised) and words (`messages`). The
loader (rule, manifest and catalog files) and the case-file reader validate through here.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from classifier.codes import Code, parse_code
from classifier.errors import Diagnostic
from classifier.location import Location
from classifier.source import messages
from classifier.source.documents import doc_path
from classifier.source.yamlsource import Path_, Positions, YamlDocument

DocT = TypeVar("DocT", bound=BaseModel)


def validated(doc: YamlDocument, model: type[DocT], diagnostics: list[Diagnostic]) -> DocT | None:
    """The document as model, or None with why added to diagnostics: an empty document,
    or each of pydantic's errors located (a YAML error is already among them)."""
    if doc.value is None and not doc.diagnostics:
        diagnostics.append(
            Diagnostic(
                Code.empty_document,
                f"expected a {messages.title(model)}, but the file holds no YAML document "
                "(only comments, or nothing)",
                doc.positions.value(()),
            )
        )
        return None
    if doc.value is None:
        return None
    try:
        return model.model_validate(doc.value)
    except ValidationError as exc:
        diagnostics.extend(pydantic_diagnostics(exc, doc.positions, doc.value, model))
        return None


def pydantic_diagnostics(
    exc: ValidationError, positions: Positions, value: Any, model: type[BaseModel] | None = None
) -> list[Diagnostic]:
    """Turn pydantic's errors into located diagnostics with stable codes.

    The codes documents.py raises pass through; pydantic's own error types
    become `unknown_key`, `missing_key` or `invalid_value`, so the codes an
    author can see are the documented ones. Given the model that was
    validated, a wrong key comes with the valid ones and a missing key with
    what the mapping needs.
    """
    out = []
    for err in messages.merged(exc.errors(include_url=False)):
        loc = doc_path(err["loc"])
        code, message, where = _describe(err, loc, positions, value, model)
        out.append(Diagnostic(code, message, where, rule_id=_rule_id(value, loc)))
    return out


def _describe(
    err: Any, path: Path_, positions: Positions, value: Any, model: type[BaseModel] | None
) -> tuple[Code, str, Location]:
    kind = err["type"]
    field = ".".join(str(p) for p in path) or "document"
    if kind == "extra_forbidden":
        return Code.unknown_key, messages.unknown_key(path[-1], path, model), positions.key(path)
    if kind == "invalid_key":
        key = _written_key(value, path)
        message = messages.unknown_key(key, (*path[:-1], key), model)
        return Code.unknown_key, message, positions.key((*path[:-1], key))
    if kind == "missing":
        parent = path[:-1]
        return Code.missing_key, messages.missing_key(path, model), positions.value(parent)
    where = positions.value(path)
    if (code := parse_code(kind)) is not None:
        return code, str(err["msg"]), where
    return Code.invalid_value, messages.value_message(err, field), where


def _written_key(value: Any, path: Path_) -> Any:
    """The key as the document holds it (pydantic's error path spells some keys as text)."""
    mapping = value
    for part in path[:-1]:
        if isinstance(mapping, dict):
            mapping = mapping.get(part)
        elif isinstance(mapping, list) and isinstance(part, int) and part < len(mapping):
            mapping = mapping[part]
        else:
            return path[-1]
    if isinstance(mapping, dict):
        for key in mapping:
            if not isinstance(key, str) and path[-1] in (key, str(key), repr(key)):
                return key
    return path[-1]


def _rule_id(value: Any, path: Path_) -> str:
    if (
        len(path) >= 2
        and path[0] == "rules"
        and isinstance(path[1], int)
        and isinstance(value, dict)
    ):
        rules = value.get("rules")
        if isinstance(rules, list) and path[1] < len(rules) and isinstance(rules[path[1]], dict):
            rule_id = rules[path[1]].get("id")
            return rule_id if isinstance(rule_id, str) else ""
    return ""
