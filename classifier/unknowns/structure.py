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
from typing import Any

from classifier.descriptor import Descriptor
from classifier.source.descriptor_file import descriptor_dict

CauseKey = tuple[str, int | None, str | int | None, str]
"""A cause's type, HTTP status, gRPC status and code."""


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
        for name in ("language", "origin", "http_status", "grpc_status", "code", "provider"):
            value = getattr(self, name)
            if value not in (None, ""):
                out[name] = value
        if self.supertypes:
            out["supertypes"] = list(self.supertypes)
        if self.causes:
            out["causes"] = [
                {
                    k: v
                    for k, v in zip(("type", "http_status", "grpc_status", "code"), c, strict=True)
                    if v not in (None, "")
                }
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
    return (str(c.get("type", "")), c.get("http_status"), c.get("grpc_status"), c.get("code", ""))


def structural_key(data: Mapping[str, Any], reason: str) -> StructuralKey:
    """The key of a descriptor in the descriptor-file shape (a decision log's `descriptor`)."""
    causes = data.get("causes") or ()
    return StructuralKey(
        language=data.get("language", ""),
        type=data["type"],
        supertypes=tuple(data.get("supertypes") or ()),
        origin=data.get("origin", ""),
        http_status=data.get("http_status"),
        grpc_status=data.get("grpc_status"),
        code=str(data.get("code", "")),
        provider=data.get("provider", ""),
        causes=tuple(_cause_key(c) for c in causes if isinstance(c, Mapping)),
        reason=reason,
    )


def descriptor_key(d: Descriptor, reason: str) -> StructuralKey:
    """The key of a normalised descriptor (the same as of its descriptor-file shape)."""
    return structural_key(descriptor_dict(d), reason)
