"""The field violations of an INVALID_ARGUMENT, read from the `grpc-status-details-bin` trailer.

The server sends a `google.rpc.Status` whose details hold a `google.rpc.BadRequest` (one
`FieldViolation` per bad field). Decoding them needs two messages of googleapis'
`google/rpc` protos; rather than depend on googleapis-common-protos (and grpcio-status)
for them, this module builds the two from their descriptors in a private descriptor pool:
nothing is registered in protobuf's default pool, so a process that also imports
`google.rpc` from googleapis-common-protos (the server does) sees no second definition.
The wire format is the proto's, so what is read is exactly what those packages read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from errorclass_client.errors import FieldViolation

TRAILER = "grpc-status-details-bin"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"

_F = descriptor_pb2.FieldDescriptorProto


def _field(name: str, number: int, kind: int, *, repeated: bool = False, of: str = "") -> Any:
    field = _F(
        name=name,
        number=number,
        type=kind,  # type: ignore[arg-type]  # the stubs type enums as their own NewType
        label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL,
        json_name=name,
    )
    if of:
        field.type_name = of
    return field


def _messages() -> tuple[Any, Any]:
    """google.rpc.Status (its details as `Any`: type URL and bytes) and google.rpc.BadRequest."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(
        descriptor_pb2.FileDescriptorProto(
            name="errorclass_client/google_rpc.proto",
            package="google.rpc",
            syntax="proto3",
            message_type=[
                descriptor_pb2.DescriptorProto(
                    name="Any",
                    field=[
                        _field("type_url", 1, _F.TYPE_STRING),
                        _field("value", 2, _F.TYPE_BYTES),
                    ],
                ),
                descriptor_pb2.DescriptorProto(
                    name="Status",
                    field=[
                        _field("code", 1, _F.TYPE_INT32),
                        _field("message", 2, _F.TYPE_STRING),
                        _field("details", 3, _F.TYPE_MESSAGE, repeated=True, of=".google.rpc.Any"),
                    ],
                ),
                descriptor_pb2.DescriptorProto(
                    name="FieldViolation",
                    field=[
                        _field("field", 1, _F.TYPE_STRING),
                        _field("description", 2, _F.TYPE_STRING),
                    ],
                ),
                descriptor_pb2.DescriptorProto(
                    name="BadRequest",
                    field=[
                        _field(
                            "field_violations",
                            1,
                            _F.TYPE_MESSAGE,
                            repeated=True,
                            of=".google.rpc.FieldViolation",
                        )
                    ],
                ),
            ],
        )
    )
    status = message_factory.GetMessageClass(pool.FindMessageTypeByName("google.rpc.Status"))
    bad = message_factory.GetMessageClass(pool.FindMessageTypeByName("google.rpc.BadRequest"))
    return status, bad


_STATUS, _BAD_REQUEST = _messages()


def field_violations(
    trailing_metadata: Sequence[tuple[str, str | bytes]] | None,
) -> list[FieldViolation]:
    """The BadRequest's violations in the call's trailers; [] when there are none (or they
    do not decode: the status message still says what was wrong)."""
    for key, value in trailing_metadata or ():
        if key != TRAILER or not isinstance(value, bytes):
            continue
        try:
            status = _STATUS.FromString(value)
            out: list[FieldViolation] = []
            for detail in status.details:
                if detail.type_url == BAD_REQUEST:
                    bad = _BAD_REQUEST.FromString(detail.value)
                    out += [FieldViolation(v.field, v.description) for v in bad.field_violations]
        except Exception:  # a malformed trailer must not hide the call's own error
            return []
        return out
    return []
