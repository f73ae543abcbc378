"""Classify a Spark DataFrame of descriptors, and replay two rulesets over one.

    from classifier.batch.pin import pin_ruleset
    from classifier.batch.spark import classify_dataframe

    pin, _ = pin_ruleset("rules/")                  # on the driver: load, digest, ship
    out = classify_dataframe(spark.read.parquet("runs/"), pin)
    out.write.parquet("runs-reclassified/")

`classify_dataframe` runs `classifier.batch.arrow` in `mapInArrow`: the
DataFrame's columns pass through and the answer columns are appended. Each
Python worker compiles the pinned ruleset once (`classifier.batch.pin`) and
fails its task if what it loads has another digest, so one output never
mixes two rulesets. `replay_dataframe` classifies under two rulesets and
aggregates the changes in Spark (by distinct descriptor, then by rule to
rule), bringing only the totals and a few examples per change to the driver,
where they become the `RuleDiff` that `classifier diff` renders.

Needs the `spark` extra (pyspark, with pandas and pyarrow) and a Java
runtime: `JAVA_HOME`, or `java` on the PATH.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as sf
from pyspark.sql import types as st
from pyspark.sql.pandas.types import to_arrow_schema

from classifier.batch.arrow import (
    ANSWER_COLUMNS,
    AnswerTable,
    BatchSchemaError,
    ColumnMapping,
    answer_codes,
    append_answers,
    decode,
    infer_mapping,
)
from classifier.batch.pin import RulesetPin, pinned_table
from classifier.batch.replay import MAX_ERRORS, Seen, assemble, descriptor_hash
from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.errors import ClassifierError
from classifier.regress.diff import RuleDiff, changed_fields
from classifier.source.descriptor_file import descriptor_dict, descriptor_from_data

ANSWER_SPARK_TYPES: dict[str, st.DataType] = {
    "error_class": st.IntegerType(),
    "class_name": st.StringType(),
    "effect": st.StringType(),
    "retryable": st.BooleanType(),
    "action_id": st.StringType(),
    "rule_id": st.StringType(),
    "unknown_reason": st.StringType(),
    "ruleset_version": st.StringType(),
    "ruleset_digest": st.StringType(),
    "error": st.StringType(),
}
POSITION = "__classifier_position"


class SparkSetupError(ClassifierError):
    """Spark cannot start here: no Java runtime was found."""


def java_home() -> str | None:
    """JAVA_HOME, else the home of the `java` on the PATH (None when there is neither)."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    if java is None:
        return None
    return str(os.path.dirname(os.path.dirname(os.path.realpath(java))))


def session(
    master: str | None = None, *, app_name: str = "classifier", conf: Mapping[str, str] = {}
) -> SparkSession:
    """A SparkSession on `master` (any master URL).

    Without one: the master spark-submit was given, when this process runs
    under spark-submit, else `local[*]`. On a local master the driver binds
    to the loopback address and the workers run this Python.
    """
    home = java_home()
    if home is None:
        raise SparkSetupError(
            "Spark needs a Java runtime (17 or later): set JAVA_HOME or put `java` on the PATH"
        )
    os.environ.setdefault("JAVA_HOME", home)
    builder = SparkSession.builder.appName(app_name)
    if master is None and "PYSPARK_GATEWAY_PORT" not in os.environ:  # not under spark-submit
        master = "local[*]"
    if master is not None:
        builder = builder.master(master)
    if master is not None and master.startswith("local"):
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config(
            "spark.driver.host", "127.0.0.1"
        )
        # The workers are started by this process's SparkContext, which reads the variable.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def answer_fields(prefix: str = "") -> list[st.StructField]:
    return [st.StructField(f"{prefix}{n}", ANSWER_SPARK_TYPES[n], True) for n in ANSWER_COLUMNS]


def arrow_schema(df: DataFrame) -> pa.Schema:
    return to_arrow_schema(df.schema)


# ---------------------------------------------------------------- classify


def classify_dataframe(
    df: DataFrame, pin: RulesetPin, mapping: ColumnMapping | None = None, *, prefix: str = ""
) -> DataFrame:
    """df with the answer columns appended (`classifier.batch.arrow.ANSWER_COLUMNS`).

    Lazy, as Spark is: the ruleset is loaded, and its digest checked, by
    each worker when the result is computed.
    """
    mapping = mapping if mapping is not None else infer_mapping(arrow_schema(df))
    taken = [n for n in df.columns if n in {f"{prefix}{a}" for a in ANSWER_COLUMNS}]
    if taken:
        raise BatchSchemaError(
            f"the DataFrame already has a column {taken[0]!r}; give the answer columns a prefix"
        )
    decode(pa.RecordBatch.from_pylist([], schema=arrow_schema(df)), mapping)  # fail early
    schema = st.StructType([*df.schema.fields, *answer_fields(prefix)])
    return df.mapInArrow(functools.partial(_classify_batches, pin, mapping, prefix), schema)


def _classify_batches(
    pin: RulesetPin, mapping: ColumnMapping, prefix: str, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    table = pinned_table(pin)
    for batch in batches:
        coded = answer_codes(decode(batch, mapping), table)
        yield append_answers(batch, table, coded, prefix)


# ---------------------------------------------------------------- replay


_TALLY = st.StructType(
    [
        st.StructField("key", st.BinaryType(), False),
        st.StructField("rows", st.LongType(), False),
        st.StructField("pos", st.LongType(), False),
        st.StructField("where", st.StringType(), True),
        st.StructField("base", st.IntegerType(), True),
        st.StructField("head", st.IntegerType(), True),
        st.StructField("changed", st.BooleanType(), False),
        st.StructField("descriptor", st.StringType(), True),
        st.StructField("error", st.StringType(), True),
    ]
)
"""A batch's rows reduced to one row per distinct descriptor (or per distinct error)."""


@dataclass(frozen=True)
class SparkReplay:
    """A replay's report, and the bad rows: how many, and the first few (`where: error`)."""

    diff: RuleDiff
    bad: int
    errors: list[str]


def replay_dataframe(
    df: DataFrame,
    base: RulesetPin,
    head: RulesetPin,
    mapping: ColumnMapping | None = None,
    *,
    base_label: str,
    head_label: str,
    examples: int | None = 5,
    where_column: str | None = None,
    position_column: str | None = None,
) -> SparkReplay:
    """Classify every row under both rulesets and aggregate what changes, in Spark.

    A change is listed as its first row (by `position_column`, else by the
    order Spark reads the rows in) and named by `where_column` (else `row id
    N`); `examples` changed descriptors are listed per rule-to-rule change
    (None: all), and every one is counted.
    """
    mapping = mapping if mapping is not None else infer_mapping(arrow_schema(df))
    position: Column = (
        sf.col(position_column).cast("long")
        if position_column is not None
        else sf.monotonically_increasing_id()
    )
    source = df.withColumn(POSITION, position)
    tallies = source.mapInArrow(
        functools.partial(_replay_batches, base, head, mapping, where_column), _TALLY
    )
    distinct = (
        tallies.groupBy("key")
        .agg(
            sf.sum("rows").alias("rows"),
            sf.min("pos").alias("pos"),
            sf.min_by("where", "pos").alias("where"),
            sf.first("base").alias("base"),
            sf.first("head").alias("head"),
            sf.first("changed").alias("changed"),
            sf.first("descriptor").alias("descriptor"),
            sf.first("error").alias("error"),
        )
        .persist()
    )
    try:
        return _report(distinct, base, head, base_label, head_label, examples)
    finally:
        distinct.unpersist()


def _report(
    distinct: DataFrame,
    base_pin: RulesetPin,
    head_pin: RulesetPin,
    base_label: str,
    head_label: str,
    examples: int | None,
) -> SparkReplay:
    bad = sf.col("error").isNotNull()
    totals = (
        distinct.groupBy(bad.alias("bad"), "changed", "base", "head")
        .agg(sf.sum("rows").alias("rows"), sf.count("*").alias("distinct"))
        .collect()
    )
    changed = distinct.filter(sf.col("changed"))
    if examples is not None:
        rank = sf.row_number().over(Window.partitionBy("base", "head").orderBy("pos"))
        changed = changed.withColumn("n", rank).filter(sf.col("n") <= examples)
    listed = changed.collect()
    errors = distinct.filter(bad).orderBy("pos").limit(MAX_ERRORS).collect()
    base, head = pinned_table(base_pin), pinned_table(head_pin)
    good = [t for t in totals if not t["bad"]]
    diff = assemble(
        base,
        head,
        base_label=base_label,
        head_label=head_label,
        total=sum(t["rows"] for t in good),
        distinct=sum(t["distinct"] for t in good),
        transitions=[
            (t["base"], t["head"], t["rows"], t["distinct"]) for t in good if t["changed"]
        ],
        examples=[
            Seen(
                r["pos"],
                _where(r["where"], r["pos"]),
                r["rows"],
                descriptor_from_data(json.loads(r["descriptor"])),
                r["base"],
                r["head"],
            )
            for r in listed
        ],
    )
    shown = [
        f"{_where(r['where'], r['pos'])}: {r['error']}"
        + (f" (x{r['rows']})" if r["rows"] > 1 else "")
        for r in errors
    ]
    return SparkReplay(diff, sum(t["rows"] for t in totals if t["bad"]), shown)


def _where(where: str | None, pos: int) -> str:
    return where if where is not None else f"row id {pos}"


def _replay_batches(
    base_pin: RulesetPin,
    head_pin: RulesetPin,
    mapping: ColumnMapping,
    where_column: str | None,
    batches: Iterator[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    base, head = pinned_table(base_pin), pinned_table(head_pin)
    for batch in batches:
        yield _tally(batch, base, head, mapping, where_column)


def _tally(
    batch: pa.RecordBatch,
    base: AnswerTable,
    head: AnswerTable,
    mapping: ColumnMapping,
    where_column: str | None,
) -> pa.RecordBatch:
    decoded = decode(batch, mapping)
    positions: list[int] = batch.column(POSITION).to_pylist()  # type: ignore[assignment]
    wheres = batch.column(where_column).to_pylist() if where_column is not None else None
    keys: list[bytes] = []
    info: list[tuple[int | None, int | None, bool, str | None, str | None]] = []
    for d in decoded.distinct:
        if isinstance(d, Descriptor):
            old, new = classify(base.ruleset, d), classify(head.ruleset, d)
            change = bool(changed_fields(old, new))
            keys.append(descriptor_hash(d))
            text = json.dumps(descriptor_dict(d), sort_keys=True) if change else None
            info.append((base.code(old), head.code(new), change, text, None))
        else:
            error = str(d)
            keys.append(b"\0" + hashlib.blake2b(error.encode(), digest_size=16).digest())
            info.append((None, None, False, None, error))
    counts: dict[bytes, int] = {}
    first: dict[bytes, int] = {}
    """The row of each key with the smallest position."""
    for i, j in enumerate(decoded.rows):
        key = keys[j]
        if key in counts:
            counts[key] += 1
            if positions[i] < positions[first[key]]:
                first[key] = i
        else:
            counts[key] = 1
            first[key] = i
    out: list[list[object]] = [[] for _ in _TALLY.fields]
    for key, n in counts.items():
        i = first[key]
        values = (key, n, positions[i], None if wheres is None else _text(wheres[i]))
        for column, value in zip(out, (*values, *info[decoded.rows[i]]), strict=True):
            column.append(value)
    return pa.RecordBatch.from_arrays(
        [pa.array(c, f.type) for c, f in zip(out, _ARROW_TALLY, strict=True)],
        schema=_ARROW_TALLY,
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


_ARROW_TALLY = to_arrow_schema(_TALLY)
