"""The answer columns a batch gets: a ruleset's prebuilt answers as Arrow columns, and
each row's answer taken from them by its code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import pyarrow as pa

from classifier.answer import Classification
from classifier.batch.arrays import Array
from classifier.engine.ruleset import Ruleset
from classifier.taxonomy import UnknownReason

B = TypeVar("B", pa.Table, pa.RecordBatch)

ANSWER_COLUMNS = (
    "error_class",
    "class_name",
    "effect",
    "retryable",
    "action_id",
    "rule_id",
    "unknown_reason",
    "ruleset_version",
    "ruleset_digest",
    "error",
)
"""The columns `classify_batch` adds, in order (each under the caller's prefix)."""
ANSWER_TYPES: dict[str, pa.DataType] = {
    "error_class": pa.int32(),
    "class_name": pa.string(),
    "effect": pa.string(),
    "retryable": pa.bool_(),
    "action_id": pa.string(),
    "rule_id": pa.string(),
    "unknown_reason": pa.string(),
    "ruleset_version": pa.string(),
    "ruleset_digest": pa.string(),
    "error": pa.string(),
}


class AnswerTable:
    """A ruleset's prebuilt answers as Arrow columns, one row per answer.

    A ruleset answers with one of a fixed set of Classifications (one per
    rule, one per Unknown reason), so a batch's answer columns are `take`s
    from these by each row's answer code. Codes are positions in
    `answers`: the rules in ruleset order, then Unknown by no match and by
    conflict, the same on every worker that loads the same digest.
    """

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self.answers: list[Classification] = [ruleset.answers[r] for r in ruleset.rules]
        self.answers += [ruleset.unknown[UnknownReason.no_match]]
        self.answers += [ruleset.unknown[UnknownReason.conflict]]
        self._codes = {id(a): i for i, a in enumerate(self.answers)}
        self._by_rule = {a.rule_id: i for i, a in enumerate(self.answers) if a.rule_id}
        a = self.answers
        self._columns: dict[str, Array] = {
            "error_class": pa.array([int(c.error_class) for c in a], pa.int32()),
            "class_name": pa.array([c.error_class.name for c in a], pa.string()),
            "effect": pa.array([c.effect.label for c in a], pa.string()),
            "retryable": pa.array([c.retryable for c in a], pa.bool_()),
            "action_id": pa.array([c.action.id for c in a], pa.string()),
            "rule_id": pa.array([c.rule_id for c in a], pa.string()),
            "unknown_reason": pa.array([c.unknown_reason.name for c in a], pa.string()),
        }

    def code(self, c: Classification) -> int:
        """The code of an answer the engine gave under this ruleset.

        An answer that advises a wait (`retry_after`, from the descriptor's retry headers) is
        its rule's answer: the wait is advice for a live retry, read against the clock of
        the moment, and no answer column of a replay.
        """
        i = self._codes.get(id(c))
        if i is not None and self.answers[i] is c:
            return i
        if c.retry_after is not None:
            return self._by_rule[c.rule_id]
        return self.answers.index(c)  # an equal answer built some other way; ValueError if none

    def columns(self, codes: Array, errors: Array, prefix: str = "") -> list[tuple[str, Array]]:
        """The answer columns for rows with these codes (null for a bad row) and errors."""
        n = len(codes)
        out = [self._columns[name].take(codes) for name in ANSWER_COLUMNS[:7]]
        out.append(pa.repeat(pa.scalar(self.ruleset.version, pa.string()), n))
        out.append(pa.repeat(pa.scalar(self.ruleset.digest, pa.string()), n))
        out.append(errors)
        return [
            (f"{prefix}{name}", column) for name, column in zip(ANSWER_COLUMNS, out, strict=True)
        ]


def answer_schema(prefix: str = "") -> pa.Schema:
    """The schema of the columns `classify_batch` adds."""
    return pa.schema([pa.field(f"{prefix}{n}", ANSWER_TYPES[n]) for n in ANSWER_COLUMNS])


@dataclass
class Coded:
    """Each row's answer code (null for a bad row) and error (null for a good one)."""

    codes: Array
    errors: Array

    @property
    def bad(self) -> int:
        return int(self.codes.null_count)


def append_answers(data: B, table: AnswerTable, coded: Coded, prefix: str = "") -> B:
    """data with the answer columns for these codes appended."""
    for name, column in table.columns(coded.codes, coded.errors, prefix):
        data = data.append_column(pa.field(name, column.type), column)
    return data
