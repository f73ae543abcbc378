"""Entries (exception classes and error codes) and the rules that can decide them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOTS = frozenset(
    {
        "Exception",
        "BaseException",
        "Error",
        "object",
        "java.lang.Throwable",
        "java.lang.Exception",
        "java.lang.RuntimeException",
        "java.lang.Error",
    }
)
"""Types every exception of a language derives from: a rule on them decides no class in particular."""
NOT_RULE_FILES = ("ruleset.yaml", "actions.yaml")


@dataclass(frozen=True)
class Entry:
    """One exception class an SDK exports, or one error code it lists (then `code` is set)."""

    sdk: str
    language: str
    type: str
    supertypes: tuple[str, ...] = ()
    code: str = ""

    @property
    def name(self) -> str:
        """How the allow-list names it: the type, or `code:<code>` for a code."""
        return f"code:{self.code}" if self.code else self.type

    @classmethod
    def from_data(cls, raw: Mapping[str, Any]) -> Entry:
        """From the JSON shape: {sdk, language, type, supertypes, code?}."""
        supertypes = raw.get("supertypes") or []
        if not isinstance(raw.get("type"), str) or not isinstance(supertypes, list):
            raise ValueError(f"an entry needs a type and a supertypes list: {raw!r}")
        return cls(
            sdk=str(raw.get("sdk", "")),
            language=str(raw.get("language", "")).lower(),
            type=raw["type"],
            supertypes=tuple(str(s) for s in supertypes),
            code=str(raw.get("code") or ""),
        )

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sdk": self.sdk,
            "language": self.language,
            "type": self.type,
            "supertypes": list(self.supertypes),
        }
        if self.code:
            out["code"] = self.code
        return out


def read_entries(path: Path) -> list[Entry]:
    """A JSON list of entries (the Node side writes one)."""
    data = json.loads(path.read_text())
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of entries")
    return [Entry.from_data(raw) for raw in data]


@dataclass(frozen=True)
class RuleSpec:
    """What the check needs of a rule: its id and the conditions a class or code fixes."""

    id: str
    types: frozenset[str] | None
    languages: frozenset[str] | None
    codes: frozenset[str] | None
    """The rule's own `code` values and its `cause`'s, or None when it tests no code."""


def _names(value: object) -> frozenset[str] | None:
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    return frozenset(str(v).strip() for v in items)


def read_rules(folder: Path) -> list[RuleSpec]:
    """Every rule of a ruleset folder, read from its YAML as docs/rules.md defines it.

    This reads the documented file format rather than the engine's compiled rules, so
    it stays independent of the engine's internals; the manifest's include/exclude are
    not needed by the bundled ruleset (every rule file is loaded).
    """
    out: list[RuleSpec] = []
    for path in sorted(folder.rglob("*.y*ml")):
        rel = path.relative_to(folder)
        if (
            path.name in NOT_RULE_FILES
            or path.name.endswith((".cases.yaml", ".cases.yml"))
            or any(part.startswith(".") for part in rel.parts)
        ):
            continue
        data = yaml.safe_load(path.read_text()) or {}
        for rule in data.get("rules") or []:
            when = rule.get("when") or {}
            cause = when.get("cause") or {}
            codes = _names(when.get("code"))
            cause_codes = _names(cause.get("code")) if isinstance(cause, dict) else None
            if cause_codes is not None:
                codes = cause_codes if codes is None else codes | cause_codes
            languages = _names(when.get("language"))
            out.append(
                RuleSpec(
                    id=str(rule["id"]),
                    types=_names(when.get("type")),
                    languages=None
                    if languages is None
                    else frozenset(x.lower() for x in languages),
                    codes=codes,
                )
            )
    return out


def can_decide(rule: RuleSpec, entry: Entry) -> bool:
    """Whether some descriptor of the entry could be decided by the rule (see the package doc)."""
    if rule.languages is not None and entry.language not in rule.languages:
        return False
    chain = {entry.type, *entry.supertypes} - ROOTS
    if entry.code:
        if rule.codes is None or entry.code not in rule.codes:
            return False
        return rule.types is None or bool(rule.types & chain)
    return rule.types is not None and bool(rule.types & chain)


def deciders(entry: Entry, rules: Iterable[RuleSpec]) -> list[str]:
    return [r.id for r in rules if can_decide(r, entry)]


@dataclass(frozen=True)
class Allowed:
    name: str
    language: str
    reason: str


def read_allowlist(path: Path) -> list[Allowed]:
    """`deliberately-unknown.yaml`: groups of names, each group with a language and a reason."""
    data = yaml.safe_load(path.read_text()) or {}
    out: list[Allowed] = []
    for i, group in enumerate(data.get("deliberately_unknown") or []):
        reason = str(group.get("reason") or "").strip()
        language = str(group.get("language") or "").lower()
        names = group.get("names") or []
        if not reason or not language or not isinstance(names, list) or not names:
            raise ValueError(f"{path.name}: group {i} needs language, reason and names")
        out += [Allowed(str(n), language, reason) for n in names]
    return out


@dataclass(frozen=True)
class Report:
    undecided: tuple[Entry, ...]
    """Entries no rule can decide and the allow-list does not name: the failures."""
    stale: tuple[Allowed, ...]
    """Allow-list names of the checked languages that are no entry, or are now decided."""
    allowed: tuple[tuple[Entry, Allowed], ...]
    decided: int

    @property
    def ok(self) -> bool:
        return not self.undecided and not self.stale

    def text(self) -> str:
        lines = [
            f"{self.decided} decided by a rule, {len(self.allowed)} deliberately Unknown, "
            f"{len(self.undecided)} undecided, {len(self.stale)} stale allow-list entries"
        ]
        for e in self.undecided:
            what = f"code {e.code} (raised as {e.type})" if e.code else e.type
            lines.append(f"  undecided: {e.language} {e.sdk}: {what}")
        for a in self.stale:
            lines.append(f"  stale: {a.language} {a.name}: no such entry, or a rule decides it now")
        return "\n".join(lines)


def check(
    entries: Sequence[Entry], rules: Sequence[RuleSpec], allowlist: Sequence[Allowed]
) -> Report:
    languages = {e.language for e in entries}
    allowed = {(a.language, a.name): a for a in allowlist}
    undecided, kept, decided_names, seen = [], [], set(), set()
    decided = 0
    for entry in entries:
        key = (entry.language, entry.name)
        seen.add(key)
        if deciders(entry, rules):
            decided += 1
            decided_names.add(key)
        elif key in allowed:
            kept.append((entry, allowed[key]))
        else:
            undecided.append(entry)
    stale = [
        a
        for key, a in allowed.items()
        if a.language in languages and (key not in seen or key in decided_names)
    ]
    return Report(tuple(undecided), tuple(stale), tuple(kept), decided)
