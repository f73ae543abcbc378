"""The descriptor-file format: one descriptor as YAML or JSON, read and written here.

Case files, corpora, `classifier explain` and the decision log all use this
shape: the proto's field names, origin in lower case, gRPC codes by name or
number, empty fields left out. A file is read through the same safe YAML
reader as rule files, so every problem in it is reported with its line and
column; a field is named as the server names it (`descriptor.causes[0].code`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Field, ValidationError

from classifier.descriptor import (
    CAUSE_FIELDS,
    FIELDS,
    Cause,
    CauseInput,
    Descriptor,
    DescriptorField,
    descriptor_from_row,
)
from classifier.errors import DescriptorError, FieldViolation
from classifier.source import messages
from classifier.source.documents import (
    Doc,
    doc_path,
    parse_grpc_code,
    parse_origin,
    parsed_as,
    scalar_text,
)
from classifier.source.yamlsource import Positions, flow, parse_yaml
from classifier.taxonomy import GRPC_CODE_NAMES, Origin


def _origin(value: str) -> Origin:
    return parse_origin(value) if value else Origin.unspecified


GrpcCode = Annotated[int, parsed_as(int | str, parse_grpc_code)]
Text = Annotated[str, parsed_as(str | int, scalar_text)]
AttributeText = Annotated[str, parsed_as(str | int | float | bool, scalar_text)]


# The two models' fields are the field table's (`classifier.descriptor.FIELDS`), in its
# order: a test checks they agree. (Their docstrings are the JSON Schema's descriptions.)


class CauseDoc(Doc):
    """A cause in a descriptor file."""

    model_config = ConfigDict(title="cause")

    type: str
    supertypes: tuple[str, ...] = ()
    http_status: int | None = None
    grpc_status: GrpcCode | None = None
    code: Text = ""
    message: str = ""

    def to_input(self) -> CauseInput:
        return CauseInput(**dict(self))


class DescriptorDoc(Doc):
    """A descriptor in a file (YAML or JSON), its values parsed."""

    model_config = ConfigDict(title="descriptor")

    type: str
    supertypes: tuple[str, ...] = ()
    http_status: int | None = None
    grpc_status: GrpcCode | None = None
    origin: Annotated[Origin, parsed_as(str, _origin)] = Origin.unspecified
    code: Text = ""
    message: str = ""
    causes: tuple[CauseDoc, ...] = ()
    language: str = ""
    provider: str = ""
    attributes: dict[str, AttributeText] = Field(default_factory=dict)

    def to_descriptor(self, field_prefix: str = "descriptor") -> Descriptor:
        """The normalised descriptor; raises DescriptorError for out-of-range values."""
        row = [
            [c.to_input() for c in self.causes] if f.kind == "causes" else getattr(self, f.name)
            for f in FIELDS
        ]
        return descriptor_from_row(row, field_prefix)


class WrappedDescriptorDoc(Doc):
    """A descriptor file may also hold `descriptor:` and the descriptor under it."""

    model_config = ConfigDict(title="descriptor under `descriptor:`")

    descriptor: DescriptorDoc


DescriptorFile = DescriptorDoc | WrappedDescriptorDoc
"""What a descriptor file may hold (its JSON Schema: `classifier schema`)."""


def descriptor_from_data(data: Any, field_prefix: str = "descriptor") -> Descriptor:
    """Validate data in the descriptor-file shape; raise DescriptorError naming bad fields.

    Fields are named as the server names them (`descriptor.causes[0].code`),
    each under field_prefix.
    """
    return _validated(data, field_prefix, None)


def _validated(data: Any, field_prefix: str, positions: Positions | None) -> Descriptor:
    """The descriptor; given the positions of the document the data came from, each
    violation also says where it is."""
    if not isinstance(data, dict):
        where = positions.value(()) if positions is not None else None
        raise DescriptorError([FieldViolation(field_prefix, "must be a mapping", where)])
    try:
        doc = DescriptorDoc.model_validate(data)
    except ValidationError as exc:
        violations = []
        for err in messages.merged(exc.errors(include_url=False)):
            parts = doc_path(err["loc"])
            where = positions.value(parts) if positions is not None else None
            message = messages.violation_message(err, parts, DescriptorDoc)
            violations.append(FieldViolation(_field_path(field_prefix, parts), message, where))
        raise DescriptorError(violations) from None
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
    """Read one descriptor from a YAML or JSON file, or from stdin when path is `-`.

    A file may hold the descriptor itself or a mapping `{descriptor: ...}`.
    """
    shown = "<stdin>" if path == "-" else path
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    return parse_descriptor(text, shown)


def parse_descriptor(text: str, shown: str) -> Descriptor:
    """One descriptor from YAML or JSON text (`shown` names it in locations), as a file
    holds it: the descriptor itself or a mapping `{descriptor: ...}`."""
    doc = parse_yaml(text, shown, json_escapes=True)
    if doc.diagnostics:
        raise DescriptorError(
            FieldViolation("descriptor", f"{d.code}: {d.message}", d.location)
            for d in doc.diagnostics
        )
    data, positions = doc.value, doc.positions
    if isinstance(data, dict) and set(data) == {"descriptor"}:
        data, positions = data["descriptor"], positions.within(("descriptor",))
    return _validated(data, "descriptor", positions)


def descriptor_dict(d: Descriptor) -> dict[str, Any]:
    """The normalised descriptor in the descriptor-file shape, empty fields left out."""
    return _file_dict(d, _FILE_ORDER)


_FILE_ORDER = (
    *CAUSE_FIELDS,
    *(f for f in FIELDS if not f.in_cause and f.kind != "causes"),
    *(f for f in FIELDS if f.kind == "causes"),
)
"""A file's order of the fields: those a cause has too, then the descriptor's own, and the
causes last (they are the longest)."""


def _file_dict(s: Descriptor | Cause, fields: Iterable[DescriptorField]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        value = getattr(s, f.name)
        if f.kind == "type":
            out[f.name] = value
        elif value is None or (not value and not f.optional):
            continue  # empty (an unspecified origin too); a status of 0 is a status
        elif f.kind == "type_names":
            out[f.name] = list(value)
        elif f.kind == "grpc_status":
            out[f.name] = GRPC_CODE_NAMES[value]
        elif f.kind == "origin":
            out[f.name] = value.name
        elif f.kind == "attributes":
            out[f.name] = dict(value)
        elif f.kind == "causes":
            out[f.name] = [_file_dict(c, CAUSE_FIELDS) for c in value]
        else:
            out[f.name] = value
    return out


def render_descriptor(d: Descriptor, indent: str = "") -> list[str]:
    """The normalised descriptor as YAML lines, one per field and one per cause.

    Valid YAML in the descriptor-file shape, so it can be copied into a case
    file or fed back to `classifier explain`.
    """
    lines = []
    for key, value in descriptor_dict(d).items():
        if key == "causes":
            lines.append(f"{indent}causes:")
            lines += [f"{indent}  - {flow(cause)}" for cause in value]
        else:
            lines.append(f"{indent}{key}: {flow(value)}")
    return lines
