"""Descriptors from files and plain data (YAML, JSON): the shape case files and corpora share."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from classifier.descriptor import Descriptor
from classifier.errors import DescriptorError, FieldViolation
from classifier.source.documents import DescriptorDoc, doc_path


def descriptor_from_data(data: Any, field_prefix: str = "descriptor") -> Descriptor:
    """Validate data in the descriptor-file shape; raise DescriptorError naming bad fields.

    Fields are named as the server names them (`descriptor.causes[0].code`),
    each under field_prefix.
    """
    if not isinstance(data, dict):
        raise DescriptorError([FieldViolation(field_prefix, "must be a mapping")])
    try:
        doc = DescriptorDoc.model_validate(data)
    except ValidationError as exc:
        raise DescriptorError(
            FieldViolation(_field_path(field_prefix, doc_path(err["loc"])), err["msg"])
            for err in exc.errors(include_url=False)
        ) from None
    return doc.to_descriptor(field_prefix)


def _field_path(prefix: str, parts: tuple[str | int, ...]) -> str:
    """A field's path in FieldViolation's spelling: `causes[0].code`, `attributes['k']`."""
    path = prefix
    for i, part in enumerate(parts):
        if isinstance(part, int):
            path += f"[{part}]"
        elif i == 1 and parts[0] == "attributes":
            path += f"[{part!r}]"
        else:
            path += f".{part}" if path else part
    return path


def read_descriptor(path: str) -> Descriptor:
    """Read one descriptor from a YAML or JSON file, or from stdin when path is `-`."""
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise DescriptorError([FieldViolation(path, f"not YAML or JSON: {exc}")]) from None
    if isinstance(data, dict) and set(data) == {"descriptor"}:
        data = data["descriptor"]
    return descriptor_from_data(data)
