"""Classify a pyarrow Table or RecordBatch of descriptors and add the answer's columns.

The work is split along its jobs, each run once, one way: the mappings
(`classifier.batch.mappings`: `StructColumn`, `FlatColumns` and `JsonColumn`, with
docs/batch.md's schema) say where the descriptors are; `classifier.batch.decode`
validates and builds each distinct descriptor once, reading each column with its
kind's reader (`classifier.batch.readers`), the limits on names checked a whole
column at a time by the kinds' column checks (`classifier.batch.checks`);
`classifier.batch.distinct` finds the distinct rows with Arrow's hash
kernels first (unless a sample of the rows has no repeat); and
`classifier.batch.answers` holds the ruleset's prebuilt answers (one per rule
and Unknown reason) as Arrow columns, so the answer columns are `take`s from
them. This module classifies each distinct descriptor and puts them
together; a bad row gets the `error` column, naming each bad field as the
service names it, and null answer columns; it is never classified and
never dropped.
"""

from __future__ import annotations

import pyarrow as pa

from classifier.batch.answers import (
    ANSWER_COLUMNS,
    ANSWER_TYPES,
    AnswerTable,
    B,
    Coded,
    answer_schema,
    append_answers,
)
from classifier.batch.arrays import Batch
from classifier.batch.decode import PREFIX, Decoded, collector_paused, decode
from classifier.batch.mappings import (
    BatchSchemaError,
    ColumnMapping,
    FlatColumns,
    JsonColumn,
    NoDescriptorColumnError,
    StructColumn,
    infer_mapping,
)
from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset

__all__ = [
    "ANSWER_COLUMNS",
    "ANSWER_TYPES",
    "PREFIX",
    "AnswerTable",
    "Batch",
    "BatchSchemaError",
    "Coded",
    "ColumnMapping",
    "Decoded",
    "FlatColumns",
    "JsonColumn",
    "NoDescriptorColumnError",
    "StructColumn",
    "answer_codes",
    "answer_schema",
    "append_answers",
    "classify_batch",
    "decode",
    "infer_mapping",
]


def answer_codes(decoded: Decoded, table: AnswerTable) -> Coded:
    """Classify each distinct descriptor once; spread the codes and errors over the rows."""
    ruleset, code = table.ruleset, table.code
    n = len(decoded.distinct)
    codes: list[int | None] = [None] * n
    errors: list[str | None] = [None] * n
    for i, d in enumerate(decoded.distinct):
        if isinstance(d, Descriptor):
            codes[i] = code(classify(ruleset, d))
        else:
            errors[i] = str(d)
    rows = pa.array(decoded.rows, pa.int32())
    return Coded(pa.array(codes, pa.int32()).take(rows), pa.array(errors, pa.string()).take(rows))


def classify_batch(
    data: B,
    ruleset: Ruleset | AnswerTable,
    mapping: ColumnMapping | None = None,
    *,
    prefix: str = "",
) -> B:
    """data with the answer columns appended (`ANSWER_COLUMNS`, each name after prefix).

    A bad row keeps its place: its answer columns are null, its `error`
    names each bad field. Raises BatchSchemaError when the columns do not
    fit the mapping, or an answer column's name is taken.
    """
    table = ruleset if isinstance(ruleset, AnswerTable) else AnswerTable(ruleset)
    taken = [f"{prefix}{n}" for n in ANSWER_COLUMNS if f"{prefix}{n}" in data.schema.names]
    if taken:
        raise BatchSchemaError(
            f"the batch already has a column {taken[0]!r}; give the answer columns a prefix"
        )
    with collector_paused():
        coded = answer_codes(decode(data, mapping), table)
    return append_answers(data, table, coded, prefix)
