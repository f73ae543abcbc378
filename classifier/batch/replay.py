"""Replay a table under two rulesets: what changes, as the report `classifier diff` prints.

The comparison is `classifier diff`'s (classifier.regress.diff): a
descriptor changed when its class, effect, action, rule, retryable flag or
Unknown reason differs; identical descriptors count once among the distinct
ones; changes group by old and new class and, within a group, by rule to
rule. Here the corpus is a stream of Arrow batches, classified a batch at a
time (in process, by a pool of processes, or by Spark's workers), so each
batch makes a `ReplayPart` and the parts are merged; `assemble` turns the
totals into the same `RuleDiff` the renderers of `classifier diff` print.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from classifier.batch.arrow import AnswerTable, Batch, ColumnMapping, decode
from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.regress.diff import (
    Change,
    RuleDiff,
    Transition,
    changed_fields,
    descriptor_key,
    limit_examples,
)

MAX_ERRORS = 100
"""Bad rows a replay keeps, to show (all are counted)."""


def descriptor_hash(d: Descriptor) -> bytes:
    """16 bytes two descriptors share exactly when `classifier diff` counts them as one."""
    return hashlib.blake2b(descriptor_key(d).encode(), digest_size=16).digest()


@dataclass(frozen=True)
class Where:
    """How a row is named in a report: a column's value, or the input's name and a number.

    With `column`, the row's value there; else with `line_column` (the JSON
    Lines reader's line numbers) `label:line`, as `classifier diff` names a
    line; else `label:row N`, N counting from 0 over the whole input.
    """

    label: str = "row"
    column: str | None = None
    line_column: str | None = None

    def names(self, data: Batch, rows: Sequence[int], offset: int) -> list[str]:
        if self.column is not None:
            values = data.column(self.column).take(pa.array(rows, pa.int64())).to_pylist()
            return ["" if v is None else str(v) for v in values]
        if self.line_column is not None and self.line_column in data.schema.names:
            lines = data.column(self.line_column).take(pa.array(rows, pa.int64())).to_pylist()
            return [f"{self.label}:{line}" for line in lines]
        return [f"{self.label}:row {offset + r}" for r in rows]


@dataclass(frozen=True, slots=True)
class Seen:
    """A changed distinct descriptor: first seen at `position`, `count` rows of it."""

    position: int
    where: str
    count: int
    descriptor: Descriptor
    base: int
    head: int
    """Answer codes (AnswerTable positions) under each ruleset."""


@dataclass
class ReplayPart:
    """What some rows contribute to a replay (one batch, or several merged)."""

    rows: int = 0
    """Good rows (bad ones are in `bad`)."""
    counts: dict[bytes, int] = field(default_factory=dict)
    """Rows per distinct descriptor (by descriptor_hash)."""
    changed: dict[bytes, Seen] = field(default_factory=dict)
    """The distinct descriptors whose answer changes, each as first seen here."""
    bad: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)
    """(position, `where: error`) of the first MAX_ERRORS bad rows."""

    def merge(self, other: ReplayPart) -> None:
        """Add a later part (its positions after this one's)."""
        self.rows += other.rows
        counts = self.counts
        for key, n in other.counts.items():
            counts[key] = counts.get(key, 0) + n
        for key, seen in other.changed.items():
            mine = self.changed.get(key)
            if mine is None or seen.position < mine.position:
                self.changed[key] = seen
        self.bad += other.bad
        if len(self.errors) < MAX_ERRORS:
            self.errors = sorted([*self.errors, *other.errors])[:MAX_ERRORS]


def replay_part(
    data: Batch,
    base: AnswerTable,
    head: AnswerTable,
    mapping: ColumnMapping | None = None,
    *,
    where: Where | None = None,
    position: int = 0,
    offset: int | None = None,
) -> ReplayPart:
    """Classify a batch's distinct descriptors under both rulesets and tally them.

    `position` is the batch's first row's position in the whole input (what
    "first seen" compares), `offset` its number in its file (what `row N`
    says; position by default).
    """
    offset = position if offset is None else offset
    where = where if where is not None else Where()
    decoded = decode(data, mapping)
    part = ReplayPart()
    per_distinct = [0] * len(decoded.distinct)
    for r in decoded.rows:
        per_distinct[r] += 1
    changed_rows: list[tuple[int, bytes, Descriptor, int, int]] = []
    bad_rows: list[tuple[int, str]] = []  # the first of each distinct bad row
    for j, d in enumerate(decoded.distinct):
        if not isinstance(d, Descriptor):
            part.bad += per_distinct[j]
            bad_rows.append((decoded.first[j], str(d)))
            continue
        key = descriptor_hash(d)
        part.rows += per_distinct[j]
        part.counts[key] = part.counts.get(key, 0) + per_distinct[j]
        old, new = classify(base.ruleset, d), classify(head.ruleset, d)
        if changed_fields(old, new):
            changed_rows.append((decoded.first[j], key, d, base.code(old), head.code(new)))
    changed_rows.sort(key=lambda c: c[0])
    names = where.names(data, [c[0] for c in changed_rows], offset)
    for (row, key, d, old_code, new_code), name in zip(changed_rows, names, strict=True):
        mine = part.changed.get(key)
        if mine is None or position + row < mine.position:
            part.changed[key] = Seen(position + row, name, 0, d, old_code, new_code)
    if bad_rows:
        bad_rows = _bad_rows(decoded.rows, decoded.distinct)
        names = where.names(data, [row for row, _ in bad_rows], offset)
        part.errors = [
            (position + row, f"{name}: {error}")
            for (row, error), name in zip(bad_rows, names, strict=True)
        ]
    return part


def _bad_rows(rows: list[int], distinct: Sequence[object]) -> list[tuple[int, str]]:
    """The first MAX_ERRORS bad rows (every one, not only the first of each distinct one)."""
    bad = {j for j, d in enumerate(distinct) if not isinstance(d, Descriptor)}
    out = []
    for i, r in enumerate(rows):
        if r in bad:
            out.append((i, str(distinct[r])))
            if len(out) == MAX_ERRORS:
                break
    return out


def assemble(
    base: AnswerTable,
    head: AnswerTable,
    *,
    base_label: str,
    head_label: str,
    total: int,
    distinct: int,
    transitions: Iterable[tuple[int, int, int, int]],
    examples: Iterable[Seen],
) -> RuleDiff:
    """The RuleDiff of a replay: `transitions` are (base code, head code, rows, distinct
    descriptors) for every change; `examples` the changed descriptors to list, with their
    row counts."""
    result = RuleDiff(base.ruleset, head.ruleset, base_label, head_label, total, distinct)
    for old_code, new_code, count, n in transitions:
        old, new = base.answers[old_code], head.answers[new_code]
        result.transitions.append(Transition(old, new, changed_fields(old, new), count, n))
    result.transitions.sort(key=lambda t: (-t.count, t.base.rule_id, t.head.rule_id))
    for s in sorted(examples, key=lambda s: s.position):
        old, new = base.answers[s.base], head.answers[s.head]
        fields = changed_fields(old, new)
        result.changes.append(Change(s.where, "", s.count, s.descriptor, old, new, fields))
    return result


def diff_of(
    part: ReplayPart,
    base: AnswerTable,
    head: AnswerTable,
    *,
    base_label: str,
    head_label: str,
    examples: int | None = None,
) -> RuleDiff:
    """The RuleDiff of a whole replay's merged parts (examples: per transition; None: all)."""
    seen = [
        Seen(s.position, s.where, part.counts[key], s.descriptor, s.base, s.head)
        for key, s in part.changed.items()
    ]
    tally: dict[tuple[int, int], list[int]] = {}
    for s in seen:
        t = tally.setdefault((s.base, s.head), [0, 0])
        t[0] += s.count
        t[1] += 1
    diff = assemble(
        base,
        head,
        base_label=base_label,
        head_label=head_label,
        total=part.rows,
        distinct=len(part.counts),
        transitions=[(b, h, n, d) for (b, h), (n, d) in tally.items()],
        examples=seen,
    )
    diff.changes = limit_examples(diff.changes, examples)
    return diff
