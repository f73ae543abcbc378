"""The structural key of an Unknown: what must be equal before two messages are compared.

Two Unknowns are the same failure only if they agree on everything a rule can test without
reading free text: the runtime's language, the type and its supertypes, the origin, the
HTTP and gRPC statuses, the code, the provider, and each cause's type, statuses and code.
So the key never merges across runtimes, SDKs (their types differ, and so do their
supertype chains across SDK versions) or providers. The Unknown reason is part of it too:
a conflict is resolved differently from a gap.

Keys are built from the descriptor-file shape (a decision log's `descriptor`), already
normalised by whatever wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from classifier.descriptor import CAUSE_FIELDS, FIELDS, Descriptor, DescriptorField
from classifier.source.descriptor_file import descriptor_dict

_FREE_TEXT = ("message", "attributes")
"""The kinds of field a key leaves out: free text, which the messages' templates compare."""
KEY_FIELDS: tuple[DescriptorField, ...] = tuple(f for f in FIELDS if f.kind not in _FREE_TEXT)
"""The descriptor's fields a key holds (`StructuralKey` has one attribute for each)."""
CAUSE_KEY_FIELDS: tuple[str, ...] = tuple(
    f.name for f in CAUSE_FIELDS if f.kind not in (*_FREE_TEXT, "type_names")
)
"""A cause's fields a key holds: the type (its supertypes vary with SDK versions), the
statuses and the code."""

SHOWN_FIELDS: tuple[str, ...] = tuple(
    f.name for f in sorted((f for f in KEY_FIELDS if f.shown), key=lambda f: f.shown)
)
"""The key's single-valued fields after its type, in the order reports and drafts show them
(the field table's `shown`)."""

CauseKey = tuple[str, int | None, str | int | None, str]
"""A cause's type, HTTP status, gRPC status and code (`CAUSE_KEY_FIELDS`)."""


@dataclass(frozen=True, slots=True)
class StructuralKey:
    """Everything about an Unknown that is not free text (see the module docstring)."""

    language: str
    type: str
    supertypes: tuple[str, ...]
    origin: str
    http_status: int | None
    grpc_status: str | int | None
    code: str
    provider: str
    causes: tuple[CauseKey, ...]
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """The key as JSON-ready data, empty fields left out (what reports print)."""
        out: dict[str, Any] = {"type": self.type}
        for name in SHOWN_FIELDS:
            value = getattr(self, name)
            if value not in (None, ""):
                out[name] = value
        if self.supertypes:
            out["supertypes"] = list(self.supertypes)
        if self.causes:
            out["causes"] = [
                {k: v for k, v in zip(CAUSE_KEY_FIELDS, c, strict=True) if v not in (None, "")}
                for c in self.causes
            ]
        out["reason"] = self.reason
        return out

    def text(self) -> str:
        """A stable serialisation, part of what a cluster id hashes."""
        return json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))

    def label(self) -> str:
        """One line for a person: `python openai.RateLimitError http 429 provider=openai`."""
        parts = [self.language or "?", self.type]
        if self.origin:
            parts.append(f"origin={self.origin}")
        if self.http_status is not None:
            parts.append(f"http={self.http_status}")
        if self.grpc_status is not None:
            parts.append(f"grpc={self.grpc_status}")
        if self.code:
            parts.append(f"code={self.code}")
        if self.provider:
            parts.append(f"provider={self.provider}")
        if self.causes:
            parts.append("caused by " + " < ".join(c[0] for c in self.causes))
        return " ".join(parts)


def _cause_key(c: Mapping[str, Any]) -> CauseKey:
    key = tuple(
        str(c.get(name, "")) if name == "type" else c.get(name, "" if name == "code" else None)
        for name in CAUSE_KEY_FIELDS
    )
    return cast(CauseKey, key)


def _key_value(f: DescriptorField, data: Mapping[str, Any]) -> Any:
    """A field's part of the key, read from the descriptor-file shape."""
    if f.kind == "type":
        return data[f.name]
    value = data.get(f.name)
    if f.kind == "type_names":
        return tuple(value or ())
    if f.kind == "causes":
        return tuple(_cause_key(c) for c in value or () if isinstance(c, Mapping))
    if f.kind == "code":
        return str(data.get(f.name, ""))
    return value if f.optional else data.get(f.name, "")


def structural_key(data: Mapping[str, Any], reason: str) -> StructuralKey:
    """The key of a descriptor in the descriptor-file shape (a decision log's `descriptor`)."""
    return StructuralKey(**{f.name: _key_value(f, data) for f in KEY_FIELDS}, reason=reason)


def descriptor_key(d: Descriptor, reason: str) -> StructuralKey:
    """The key of a normalised descriptor (the same as of its descriptor-file shape)."""
    return structural_key(descriptor_dict(d), reason)
