"""What does a rule change reclassify? Replay a corpus under two rulesets and compare.

A descriptor changed when its class, effect, action, deciding rule,
retryable flag or Unknown reason differs between the base and the head
ruleset. Identical descriptors (real traffic repeats itself) are compared
once and counted. Changes are grouped by (old class -> new class).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from classifier.answer import Classification
from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset
from classifier.regress.corpus import Entry
from classifier.regress.runner import observed
from classifier.source.descriptor_file import descriptor_dict
from classifier.taxonomy import ErrorClass

COMPARED = ("class", "effect", "action", "rule", "retryable", "unknown_reason")
MAX_MARKDOWN_ROWS = 50
"""Rows per group in a markdown table; a pull-request comment has a size limit."""


@dataclass(frozen=True, slots=True)
class Change:
    """A descriptor whose answer changed: where it was first seen, how often, old and new."""

    where: str
    note: str
    count: int
    descriptor: Descriptor
    base: Classification
    head: Classification
    fields: tuple[str, ...]

    @property
    def group(self) -> tuple[str, str]:
        return (self.base.error_class.name, self.head.error_class.name)


@dataclass
class RuleDiff:
    """The comparison of two rulesets over one corpus."""

    base: Ruleset
    head: Ruleset
    base_label: str
    head_label: str
    total: int = 0
    distinct: int = 0
    changes: list[Change] = field(default_factory=list)

    @property
    def changed(self) -> int:
        """Corpus entries (not distinct descriptors) whose answer changed."""
        return sum(c.count for c in self.changes)

    @property
    def version_bumped(self) -> bool:
        return self.base.version != self.head.version

    def groups(self) -> list[tuple[tuple[str, str], list[Change]]]:
        """Changes by (old class, new class), the largest group first."""
        out: dict[tuple[str, str], list[Change]] = {}
        for c in self.changes:
            out.setdefault(c.group, []).append(c)
        return sorted(
            out.items(),
            key=lambda kv: (
                -sum(c.count for c in kv[1]),
                ErrorClass[kv[0][0]].value,
                ErrorClass[kv[0][1]].value,
            ),
        )


def diff_rulesets(
    base: Ruleset, head: Ruleset, entries: Iterable[Entry], *, base_label: str, head_label: str
) -> RuleDiff:
    """Classify every distinct descriptor under both rulesets and keep those that changed."""
    result = RuleDiff(base, head, base_label, head_label)
    first: dict[str, Entry] = {}
    counts: dict[str, int] = {}
    for entry in entries:
        key = json.dumps(descriptor_dict(entry.descriptor), sort_keys=True)
        result.total += 1
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, entry)
    result.distinct = len(first)
    for key, entry in first.items():
        old = classify(base, entry.descriptor)
        new = classify(head, entry.descriptor)
        was, now = observed(old), observed(new)
        fields = tuple(name for name in COMPARED if was[name] != now[name])
        if fields:
            result.changes.append(
                Change(entry.where, entry.note, counts[key], entry.descriptor, old, new, fields)
            )
    return result


def _arrow(old: object, new: object) -> str:
    return f"{_v(old)} -> {_v(new)}" if old != new else _v(old)


def _v(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if value != "" else "-"


def _side(label: str, rs: Ruleset) -> str:
    return f"{label} ({rs.name} {rs.version})"


def _field_changes(c: Change) -> str:
    was, now = observed(c.base), observed(c.head)
    return "; ".join(f"{name} {_arrow(was[name], now[name])}" for name in c.fields)


def headline(d: RuleDiff) -> str:
    return (
        f"{d.changed} of {d.total} descriptors ({len(d.changes)} of {d.distinct} distinct) "
        "change class, effect, action or rule"
    )


def render_text(d: RuleDiff) -> str:
    lines = [
        f"base: {_side(d.base_label, d.base)}",
        f"head: {_side(d.head_label, d.head)}",
        headline(d),
    ]
    for (old, new), changes in d.groups():
        lines += ["", f"{old} -> {new}: {sum(c.count for c in changes)}"]
        for c in changes:
            times = f" (x{c.count})" if c.count > 1 else ""
            note = f"  {c.note}" if c.note else ""
            lines.append(f"  {c.where}: {c.descriptor.type}{times}{note}")
            lines.append(f"      {_field_changes(c)}")
    return "\n".join(lines)


def _md(text: object) -> str:
    value = _v(text).replace("|", "\\|").replace("\n", " ")
    return f"`{value}`" if "`" not in value else value


def _md_arrow(old: object, new: object) -> str:
    return f"{_md(old)} → {_md(new)}" if old != new else _md(old)


def render_markdown(d: RuleDiff) -> str:
    """A summary table and one collapsible table per group, fit for a pull-request comment."""
    lines = [
        "### Ruleset change: what it reclassifies",
        "",
        f"base {_md(d.base_label)} ({d.base.name} {d.base.version}) → "
        f"head {_md(d.head_label)} ({d.head.name} {d.head.version})",
        "",
        f"**{headline(d)}.**",
    ]
    if not d.changes:
        return "\n".join(lines)
    lines += ["", "| old class | new class | descriptors |", "|---|---|---:|"]
    for (old, new), changes in d.groups():
        lines.append(f"| {old} | {new} | {sum(c.count for c in changes)} |")
    for (old, new), changes in d.groups():
        lines += [
            "",
            f"<details><summary>{old} → {new} ({sum(c.count for c in changes)})</summary>",
            "",
            "| where | type | rule | effect | action | count |",
            "|---|---|---|---|---|---:|",
        ]
        for c in changes[:MAX_MARKDOWN_ROWS]:
            was, now = observed(c.base), observed(c.head)
            lines.append(
                f"| {_md(c.where)} | {_md(c.descriptor.type)} "
                f"| {_md_arrow(was['rule'], now['rule'])} "
                f"| {_md_arrow(was['effect'], now['effect'])} "
                f"| {_md_arrow(was['action'], now['action'])} | {c.count} |"
            )
        if len(changes) > MAX_MARKDOWN_ROWS:
            lines.append(f"| … and {len(changes) - MAX_MARKDOWN_ROWS} more | | | | | |")
        lines += ["", "</details>"]
    return "\n".join(lines)


def _ruleset_dict(label: str, rs: Ruleset) -> dict[str, Any]:
    return {"spec": label, "name": rs.name, "version": rs.version, "digest": rs.digest}


def render_json(d: RuleDiff) -> str:
    data = {
        "base": _ruleset_dict(d.base_label, d.base),
        "head": _ruleset_dict(d.head_label, d.head),
        "total": d.total,
        "distinct": d.distinct,
        "changed": d.changed,
        "version_bumped": d.version_bumped,
        "groups": [
            {
                "from": old,
                "to": new,
                "count": sum(c.count for c in changes),
                "changes": [
                    {
                        "where": c.where,
                        "note": c.note,
                        "count": c.count,
                        "fields": list(c.fields),
                        "descriptor": descriptor_dict(c.descriptor),
                        "base": observed(c.base),
                        "head": observed(c.head),
                    }
                    for c in changes
                ],
            }
            for (old, new), changes in d.groups()
        ],
    }
    return json.dumps(data, indent=2)


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
