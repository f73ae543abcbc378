"""Descriptors from files and plain data (YAML, JSON): the shape case files and corpora share."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from classifier.descriptor import Descriptor
from classifier.errors import DescriptorError, FieldViolation
from classifier.schema import DescriptorDoc, doc_path


def descriptor_from_data(data: Any, field_prefix: str = "descriptor") -> Descriptor:
    """Validate data in the descriptor-file shape; raise DescriptorError naming bad fields."""
    if not isinstance(data, dict):
        raise DescriptorError([FieldViolation(field_prefix, "must be a mapping")])
    try:
        doc = DescriptorDoc.model_validate(data)
    except ValidationError as exc:
        raise DescriptorError(
            FieldViolation(".".join([field_prefix, *map(str, doc_path(err["loc"]))]), err["msg"])
            for err in exc.errors(include_url=False)
        ) from None
    return doc.to_descriptor()


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
