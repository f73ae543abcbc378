"""Where in a request's bytes a protobuf parse fails: `requests[3].descriptor.message`.

protobuf says only that a message did not parse. To answer INVALID_ARGUMENT
naming the field, the bytes are walked field by field at the wire level (tag,
wire type, length), and each length-delimited field that is a message (or a
string) is tried on its own, descending to the innermost part that fails.
Only a request that failed to parse pays for this.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

MAX_DEPTH = 16


def locate_decode_error(parse: Callable[[bytes], Any] | None, data: bytes) -> str:
    """The field path at which `data` stops being a valid message for `parse`, or ''."""
    message_class = getattr(parse, "__self__", None)
    if not isinstance(message_class, type) or not issubclass(message_class, Message):
        return ""
    try:
        return _locate(message_class.DESCRIPTOR, data, 0)  # type: ignore[arg-type]
    except Exception:  # the walk is a courtesy: never let it fail the answer
        return ""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def _locate(descriptor: Descriptor, data: bytes, depth: int) -> str:
    counts: dict[int, int] = {}
    at = 0
    while at < len(data):
        try:
            tag, at = _varint(data, at)
        except ValueError:
            return "(a truncated field tag)"
        number, wire_type = tag >> 3, tag & 7
        field = descriptor.fields_by_number.get(number)
        name = _name(field, number, counts)
        try:
            if wire_type == 0:
                _, at = _varint(data, at)
            elif wire_type == 1:
                at += 8
            elif wire_type == 5:
                at += 4
            elif wire_type == 2:
                length, at = _varint(data, at)
                end = at + length
                if end > len(data):
                    return f"{name} (length {length} runs past the end)"
                inner = _inside(field, data[at:end], depth)
                if inner is not None:
                    return f"{name}{inner}"
                at = end
            else:
                return f"{name} (wire type {wire_type}: groups and bad tags are not accepted)"
        except ValueError:
            return f"{name} (truncated)"
        if at > len(data):
            return f"{name} (truncated)"
    return ""


def _name(field: FieldDescriptor | None, number: int, counts: dict[int, int]) -> str:
    if field is None:
        return f"(unknown field {number})"
    if _repeated(field):
        index = counts.get(number, 0)
        counts[number] = index + 1
        return f"{field.name}[{index}]"
    return field.name


def _inside(field: FieldDescriptor | None, chunk: bytes, depth: int) -> str | None:
    """What is wrong inside one length-delimited field, or None when it is fine."""
    if field is None:
        return None
    if field.type == FieldDescriptor.TYPE_STRING:
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f" (not UTF-8 at byte {exc.start})"
        return None
    if field.type != FieldDescriptor.TYPE_MESSAGE or field.message_type is None:
        return None
    if depth >= MAX_DEPTH:
        return " (nested too deep)"
    message_type = field.message_type
    if message_type.GetOptions().map_entry:
        found = _locate(message_type, chunk, depth + 1)
        return f".{found}" if found else None
    from google.protobuf import message_factory

    try:
        message_factory.GetMessageClass(message_type).FromString(chunk)
    except DecodeError:
        found = _locate(message_type, chunk, depth + 1)
        return f".{found}" if found else " (does not parse)"
    return None


def _repeated(field: FieldDescriptor) -> bool:
    repeated = getattr(field, "is_repeated", None)  # protobuf 6.31+; `label` is gone in 7
    if repeated is not None:
        return bool(repeated)
    label = getattr(field, "label", None)  # pragma: no cover
    return bool(label == FieldDescriptor.LABEL_REPEATED)  # pragma: no cover
