"""One redactor for everything written down that carries a descriptor.

Provider error messages echo prompts, API-key fragments, bearer tokens and
e-mail addresses. Before a descriptor reaches the decision log, a shadow
example, the live sample of Unknowns, a drafted case file or any log line,
its free text (each `message`, each attribute value, each `code`) passes
through the masks here: the built-in ones below, then the installation's own
(`serve --redact-pattern NAME=RE2`). A match is replaced by
`[REDACTED:NAME]`, and the record says what was masked, so a replay knows:

    "redacted": {"fields": ["descriptor.message"], "masks": {"openai_key": 1}}

Matching always sees the original descriptor: only what is stored is masked.
Patterns are RE2, so a pattern's cost is linear in the text whatever it says.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import re2

REPLACEMENT = "[REDACTED:{name}]"
MARKER_PATTERN = r"\[REDACTED:[\w-]+\]"
"""What REPLACEMENT leaves in stored text, as a Python pattern (a mask's name is letters,
digits, `_` and `-`): readers of stored text (the Unknown inbox's templates) keep a marker
whole, as the value it stands for, instead of reading its words."""
MAX_PATTERNS = 64
MAX_PATTERN_CHARS = 2048

BUILT_IN: tuple[tuple[str, str], ...] = (
    ("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{16,}"),
    ("openai_key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("aws_access_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("google_api_key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("slack_token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    ("bearer", r"(?i)\b(?:bearer|basic|token)\s+[A-Za-z0-9._~+/=\-]{8,}"),
    ("authorization", r"(?i)\b(?:x-api-key|api[_-]?key|authorization)\s*[:=]\s*\S{8,}"),
    ("password", r"(?i)\b(?:password|passwd|pwd|secret|client_secret)\s*[:=]\s*\S+"),
    ("email", r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"),
    ("hex_secret", r"\b[0-9a-fA-F]{32,}\b"),
    ("long_secret", r"[A-Za-z0-9+/_\-]{40,}={0,2}"),
)
"""(name, RE2) in the order applied: the specific before the general."""

_NEEDS_DIGIT = {"long_secret"}
"""Masks that apply only when the match has a digit as well as a letter, so a long
identifier (`AbstractSingletonProxyFactoryBean...`) is not taken for a secret."""


class RedactionError(ValueError):
    """A configured pattern that is not valid RE2, or too many or too long."""


@dataclass
class Masked:
    """What one record had masked: the fields, and how many matches of each mask."""

    fields: list[str] = field(default_factory=list)
    masks: dict[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.fields)

    def as_dict(self) -> dict[str, Any]:
        return {"fields": self.fields, "masks": self.masks}


def parse_pattern(spec: str, index: int) -> tuple[str, str]:
    """`NAME=RE2`, or a bare RE2 named `custom_N`."""
    name, sep, pattern = spec.partition("=")
    if not sep or not name.replace("_", "").replace("-", "").isalnum():
        name, pattern = f"custom_{index}", spec
    return name, pattern


class Redactor:
    """Masks secrets in text with the built-in patterns and `extra` ones (name, RE2)."""

    def __init__(self, extra: Iterable[tuple[str, str]] = (), *, built_in: bool = True) -> None:
        specs = [*(BUILT_IN if built_in else ()), *extra]
        if len(specs) > len(BUILT_IN) + MAX_PATTERNS:
            raise RedactionError(f"at most {MAX_PATTERNS} redaction patterns")
        self._masks: list[tuple[str, Any]] = []
        options = re2.Options()
        options.log_errors = False
        for name, pattern in specs:
            if len(pattern) > MAX_PATTERN_CHARS:
                raise RedactionError(
                    f"redaction pattern {name}: {len(pattern)} characters exceed "
                    f"{MAX_PATTERN_CHARS}"
                )
            try:
                compiled = re2.compile(pattern, options)
            except re2.error as exc:
                raise RedactionError(f"redaction pattern {name}: not valid RE2: {exc}") from None
            self._masks.append((name, compiled))
        self._any = _union([pattern for _, pattern in specs], options)

    @classmethod
    def from_specs(cls, specs: Sequence[str]) -> Redactor:
        return cls(parse_pattern(s, i) for i, s in enumerate(specs, start=1))

    def text(self, value: str, counts: dict[str, int] | None = None) -> str:
        """`value` with every match masked; matches counted into `counts` by mask.

        Most text holds no secret: one search for any mask settles it, where a search per
        mask took 85 % of a decision-log line (twelve calls into RE2 for each field).
        """
        if not value or (self._any is not None and not self._any.search(value)):
            return value
        for name, pattern in self._masks:
            if not pattern.search(value):
                continue
            value = self._sub(name, pattern, value, counts)
        return value

    @staticmethod
    def _sub(name: str, pattern: Any, value: str, counts: dict[str, int] | None) -> str:
        out: list[str] = []
        at = 0
        found = 0
        for m in pattern.finditer(value):
            hit = m.group(0)
            if name in _NEEDS_DIGIT and not (
                any(c.isdigit() for c in hit) and any(c.isalpha() for c in hit)
            ):
                continue
            out += [value[at : m.start()], REPLACEMENT.format(name=name)]
            at = m.end()
            found += 1
        if not found:
            return value
        out.append(value[at:])
        if counts is not None:
            counts[name] = counts.get(name, 0) + found
        return "".join(out)

    def descriptor(
        self, data: Mapping[str, Any], prefix: str = "descriptor"
    ) -> tuple[dict[str, Any], Masked]:
        """A descriptor dict (descriptor-file shape) with its free text masked, and what was."""
        masked = Masked()
        out = self._subject(data, prefix, masked)
        if isinstance(data.get("attributes"), Mapping):
            attributes = {}
            for key, value in data["attributes"].items():
                where = f"{prefix}.attributes.{key}"
                attributes[key] = self._field(str(value), where, masked)
            out["attributes"] = attributes
        if isinstance(data.get("causes"), list):
            out["causes"] = [
                self._subject(c, f"{prefix}.causes[{i}]", masked) if isinstance(c, Mapping) else c
                for i, c in enumerate(data["causes"])
            ]
        return out, masked

    def _subject(self, data: Mapping[str, Any], prefix: str, masked: Masked) -> dict[str, Any]:
        out = dict(data)
        for key in ("message", "code"):
            if key in out and isinstance(out[key], str):
                out[key] = self._field(out[key], f"{prefix}.{key}", masked)
        return out

    def _field(self, value: str, where: str, masked: Masked) -> str:
        before = sum(masked.masks.values())
        result = self.text(value, masked.masks)
        if sum(masked.masks.values()) != before:
            masked.fields.append(where)
        return result


def _union(patterns: Sequence[str], options: Any) -> Any:
    """One RE2 that matches where any of `patterns` does (each in a group of its own, so
    its flags stay its own), or None when RE2 cannot build it (past its memory budget):
    each mask is then searched for alone."""
    try:
        return re2.compile("|".join(f"(?:{p})" for p in patterns), options)
    except re2.error:
        return None


DEFAULT = Redactor()
"""The built-in masks alone."""
