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


@dataclass(frozen=True, slots=True)
class Transition:
    """Every changed descriptor that went from one answer to one other (from rule to rule).

    `count` counts corpus entries (or table rows), `distinct` the distinct
    descriptors among them; a report lists some or all of them as Changes.
    """

    base: Classification
    head: Classification
    fields: tuple[str, ...]
    count: int
    distinct: int

    @property
    def group(self) -> tuple[str, str]:
        return (self.base.error_class.name, self.head.error_class.name)


@dataclass(frozen=True)
class Group:
    """The changes from one class to another: every transition, and the changes listed."""

    old: str
    new: str
    transitions: list[Transition]
    """Largest first."""
    changes: list[Change]
    """The changed descriptors listed, first seen first (all of them unless examples were
    limited)."""

    @property
    def count(self) -> int:
        return sum(t.count for t in self.transitions)

    @property
    def distinct(self) -> int:
        return sum(t.distinct for t in self.transitions)

    @property
    def unlisted(self) -> tuple[int, int]:
        """(distinct descriptors, entries) of this group that no listed change shows."""
        return (self.distinct - len(self.changes), self.count - sum(c.count for c in self.changes))


@dataclass
class RuleDiff:
    """The comparison of two rulesets over one corpus (or table).

    `transitions` counts every change; `changes` lists changed descriptors,
    each once: every one of them for `classifier diff`, the first few of each
    transition when a replay over a table limits its examples.
    """

    base: Ruleset
    head: Ruleset
    base_label: str
    head_label: str
    total: int = 0
    distinct: int = 0
    changes: list[Change] = field(default_factory=list)
    transitions: list[Transition] = field(default_factory=list)

    @property
    def changed(self) -> int:
        """Corpus entries (not distinct descriptors) whose answer changed."""
        return sum(t.count for t in self.transitions)

    @property
    def changed_distinct(self) -> int:
        return sum(t.distinct for t in self.transitions)

    @property
    def version_bumped(self) -> bool:
        return self.base.version != self.head.version

    def unbumped(self) -> str | None:
        """Why `--require-version-bump` fails (answers changed, the version did not), or None."""
        if not self.transitions or self.version_bumped:
            return None
        return (
            f"{self.changed} descriptor(s) change but the ruleset version is still "
            f"{self.head.version}; bump `version:` in ruleset.yaml (and add a changelog entry)"
        )

    def groups(self) -> list[Group]:
        """Changes by (old class, new class), the largest group first."""
        transitions: dict[tuple[str, str], list[Transition]] = {}
        for t in self.transitions:
            transitions.setdefault(t.group, []).append(t)
        listed: dict[tuple[str, str], list[Change]] = {}
        for c in self.changes:
            listed.setdefault(c.group, []).append(c)
        groups = [
            Group(old, new, sorted(ts, key=_transition_order), listed.get((old, new), []))
            for (old, new), ts in transitions.items()
        ]
        return sorted(
            groups,
            key=lambda g: (-g.count, ErrorClass[g.old].value, ErrorClass[g.new].value),
        )


def _transition_order(t: Transition) -> tuple[int, str, str]:
    return (-t.count, t.base.rule_id, t.head.rule_id)


def changed_fields(base: Classification, head: Classification) -> tuple[str, ...]:
    """The compared fields (COMPARED) in which two answers differ; empty when they agree."""
    was, now = observed(base), observed(head)
    return tuple(name for name in COMPARED if was[name] != now[name])


def transitions_of(changes: Iterable[Change]) -> list[Transition]:
    """The transitions a complete list of changes makes up, first seen first."""
    out: dict[tuple[Classification, Classification], Transition] = {}
    for c in changes:
        t = out.get((c.base, c.head))
        count, distinct = (t.count, t.distinct) if t is not None else (0, 0)
        out[c.base, c.head] = Transition(c.base, c.head, c.fields, count + c.count, distinct + 1)
    return list(out.values())


def diff_rulesets(
    base: Ruleset,
    head: Ruleset,
    entries: Iterable[Entry],
    *,
    base_label: str,
    head_label: str,
    examples: int | None = None,
) -> RuleDiff:
    """Classify every distinct descriptor under both rulesets and keep those that changed.

    With `examples`, only the first that many changed descriptors of each
    transition are listed; the counts still cover every one.
    """
    result = RuleDiff(base, head, base_label, head_label)
    first: dict[str, Entry] = {}
    counts: dict[str, int] = {}
    for entry in entries:
        key = descriptor_key(entry.descriptor)
        result.total += 1
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, entry)
    result.distinct = len(first)
    changes = []
    for key, entry in first.items():
        old = classify(base, entry.descriptor)
        new = classify(head, entry.descriptor)
        fields = changed_fields(old, new)
        if fields:
            changes.append(
                Change(entry.where, entry.note, counts[key], entry.descriptor, old, new, fields)
            )
    result.transitions = transitions_of(changes)
    result.changes = limit_examples(changes, examples)
    return result


def descriptor_key(d: Descriptor) -> str:
    """The key two descriptors share exactly when they are the same normalised descriptor."""
    return json.dumps(descriptor_dict(d), sort_keys=True)


def limit_examples(changes: list[Change], examples: int | None) -> list[Change]:
    """The first `examples` changes of each transition (all when None), in the order given."""
    if examples is None:
        return changes
    shown: dict[tuple[Classification, Classification], int] = {}
    out = []
    for c in changes:
        n = shown.get((c.base, c.head), 0)
        if n < examples:
            out.append(c)
            shown[c.base, c.head] = n + 1
    return out


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
        f"{d.changed} of {d.total} descriptors ({d.changed_distinct} of {d.distinct} distinct) "
        "change class, effect, action or rule"
    )


def _rule_line(t: Transition) -> str:
    return (
        f"{_arrow(t.base.rule_id, t.head.rule_id)}: {t.count} ({t.distinct} distinct)"
        if t.base.rule_id != t.head.rule_id
        else f"{_v(t.base.rule_id)}: {t.count} ({t.distinct} distinct)"
    )


def render_text(d: RuleDiff) -> str:
    """Each group, its changes listed; where some are not listed, the group's transitions by
    rule first and a line counting the rest after."""
    lines = [
        f"base: {_side(d.base_label, d.base)}",
        f"head: {_side(d.head_label, d.head)}",
        headline(d),
    ]
    for g in d.groups():
        lines += ["", f"{g.old} -> {g.new}: {g.count}"]
        more, rows = g.unlisted
        if more:
            lines += [f"  by rule: {_rule_line(t)}" for t in g.transitions]
        for c in g.changes:
            times = f" (x{c.count})" if c.count > 1 else ""
            note = f"  {c.note}" if c.note else ""
            lines.append(f"  {c.where}: {c.descriptor.type}{times}{note}")
            lines.append(f"      {_field_changes(c)}")
        if more:
            lines.append(f"  ... and {more} more distinct ({rows} descriptors)")
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
    if not d.transitions:
        return "\n".join(lines)
    groups = d.groups()
    lines += ["", "| old class | new class | descriptors |", "|---|---|---:|"]
    for g in groups:
        lines.append(f"| {g.old} | {g.new} | {g.count} |")
    for g in groups:
        lines += [
            "",
            f"<details><summary>{g.old} → {g.new} ({g.count})</summary>",
            "",
        ]
        if g.unlisted[0]:
            lines += ["| rule | descriptors | distinct |", "|---|---:|---:|"]
            lines += [
                f"| {_md_arrow(t.base.rule_id, t.head.rule_id)} | {t.count} | {t.distinct} |"
                for t in g.transitions
            ]
            lines.append("")
        lines += [
            "| where | type | rule | effect | action | count |",
            "|---|---|---|---|---|---:|",
        ]
        shown = g.changes[:MAX_MARKDOWN_ROWS]
        for c in shown:
            was, now = observed(c.base), observed(c.head)
            lines.append(
                f"| {_md(c.where)} | {_md(c.descriptor.type)} "
                f"| {_md_arrow(was['rule'], now['rule'])} "
                f"| {_md_arrow(was['effect'], now['effect'])} "
                f"| {_md_arrow(was['action'], now['action'])} | {c.count} |"
            )
        if g.distinct > len(shown):
            lines.append(f"| … and {g.distinct - len(shown)} more | | | | | |")
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
        "changed_distinct": d.changed_distinct,
        "version_bumped": d.version_bumped,
        "groups": [
            {
                "from": g.old,
                "to": g.new,
                "count": g.count,
                "distinct": g.distinct,
                "by_rule": [
                    {
                        "base_rule": t.base.rule_id,
                        "head_rule": t.head.rule_id,
                        "count": t.count,
                        "distinct": t.distinct,
                        "fields": list(t.fields),
                        "base": observed(t.base),
                        "head": observed(t.head),
                    }
                    for t in g.transitions
                ],
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
                    for c in g.changes
                ],
            }
            for g in d.groups()
        ],
    }
    return json.dumps(data, indent=2)


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
