"""The descriptor-file format: one descriptor as YAML or JSON, read and written here.

Case files, corpora, `classifier explain` and the decision log all use this
shape: the proto's field names, origin in lower case, gRPC codes by name or
number, empty fields left out. A file is read through the same safe YAML
reader as rule files, so every problem in it is reported with its line and
column; a field is named as the server names it (`descriptor.causes[0].code`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Field, ValidationError

from classifier.descriptor import CauseInput, Descriptor, build_descriptor
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
        return build_descriptor(
            **{name: value for name, value in self if name != "causes"},
            causes=[c.to_input() for c in self.causes],
            field_prefix=field_prefix,
        )


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
    out = _subject_dict(d)
    if d.origin is not Origin.unspecified:
        out["origin"] = d.origin.name
    for key in ("language", "provider"):
        if value := getattr(d, key):
            out[key] = value
    if d.attributes:
        out["attributes"] = dict(d.attributes)
    if d.causes:
        out["causes"] = [_subject_dict(c) for c in d.causes]
    return out


def _subject_dict(s: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": s.type}
    if s.supertypes:
        out["supertypes"] = list(s.supertypes)
    if s.http_status is not None:
        out["http_status"] = s.http_status
    if s.grpc_status is not None:
        out["grpc_status"] = GRPC_CODE_NAMES[s.grpc_status]
    if s.code:
        out["code"] = s.code
    if s.message:
        out["message"] = s.message
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
