"""Reclassify a table, or replay two rulesets over one, on either engine.

    pin, ruleset = pin_for("rules/", engine="spark")
    summary = reclassify(["runs/"], "runs-classified.parquet", pin, engine="spark")

`local` reads Parquet and JSON Lines files on every core of this machine
(`classifier.batch.files`); `spark` reads any path Spark can read and runs
`classifier.batch.spark` (a job pinned to the ruleset's digest either way).
Both write the same answer columns for the same rows: this is the one
entry point `classifier reclassify` calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from classifier.batch.arrow import (
    BatchSchemaError,
    ColumnMapping,
    FlatColumns,
    JsonColumn,
    StructColumn,
)
from classifier.batch.files import (
    BATCH_ROWS,
    MAX_SHOWN_ERRORS,
    PARQUET_SUFFIXES,
    Summary,
    default_mapping,
    default_workers,
    input_files,
    input_schema,
    reclassify_files,
    replay_files,
)
from classifier.batch.pin import RulesetPin, pin_ruleset, pinned_table
from classifier.batch.replay import Where, diff_of
from classifier.engine.ruleset import Ruleset
from classifier.regress.corpus import JSON_LINES_SUFFIXES
from classifier.regress.diff import RuleDiff

Engine = Literal["local", "spark"]
ENGINES: tuple[Engine, ...] = ("local", "spark")


@dataclass(frozen=True)
class Columns:
    """Where a table keeps its descriptors, as a person says it (nothing: inferred)."""

    descriptor: str | None = None
    """A struct column of descriptor fields, or a column of JSON text."""
    json: str | None = None
    """A column of JSON descriptors."""
    flat: bool = False
    """A column per field, named as the field unless `fields` names another."""
    fields: Mapping[str, str] = field(default_factory=dict)

    def mapping(self, schema: pa.Schema) -> ColumnMapping | None:
        """The mapping for a table of this schema (None: infer it)."""
        if self.json:
            return JsonColumn(self.json)
        if self.flat:
            return FlatColumns(dict(self.fields))
        name = self.descriptor
        if name is None:
            return None
        if name not in schema.names:
            raise BatchSchemaError(f"no column {name!r}; the columns are {', '.join(schema.names)}")
        if pa.types.is_struct(schema.field(name).type):
            return StructColumn(name)
        return JsonColumn(name)


@dataclass(frozen=True)
class Run:
    """How to run: the engine and its settings (workers for local; master and conf for Spark)."""

    engine: Engine = "local"
    workers: int | None = None
    """local: worker processes (None: every core)."""
    batch_rows: int = BATCH_ROWS
    master: str | None = None
    """spark: the master URL (None: spark-submit's, else local[*])."""
    conf: Mapping[str, str] = field(default_factory=dict)
    app_name: str = "classifier reclassify"


@dataclass(frozen=True)
class Replay:
    """A replay's report and its bad rows (how many, and the first few as `where: error`)."""

    diff: RuleDiff
    bad: int
    errors: list[str]


def pin_for(
    folder: str | Path, run: Run = Run(), *, digest: str | None = None, label: str = ""
) -> tuple[RulesetPin, Ruleset]:
    """The ruleset pinned as the engine needs it: Spark's workers get every layer shipped
    with the job; local workers read the folder."""
    return pin_ruleset(folder, ship=run.engine == "spark", digest=digest, label=label)


def reclassify(
    inputs: Sequence[str],
    output: str | Path,
    pin: RulesetPin,
    *,
    run: Run = Run(),
    columns: Columns = Columns(),
    prefix: str = "",
    where_column: str | None = None,
) -> Summary:
    """Classify every row of the inputs and write them with the answer columns: one file
    (local), or a folder of part files (Spark)."""
    if run.engine == "spark":
        return _reclassify_spark(inputs, str(output), pin, run, columns, prefix)
    files = input_files(inputs)
    schema = input_schema(files)
    return reclassify_files(
        files,
        pin,
        pinned_table(pin),
        Path(output),
        mapping=columns.mapping(schema) or default_mapping(files, schema),
        workers=run.workers or default_workers(),
        batch_rows=run.batch_rows,
        prefix=prefix,
        where=Where(column=where_column) if where_column else None,
    )


def replay(
    inputs: Sequence[str],
    base: RulesetPin,
    head: RulesetPin,
    *,
    base_label: str,
    head_label: str,
    run: Run = Run(),
    columns: Columns = Columns(),
    examples: int | None = 5,
    where_column: str | None = None,
) -> Replay:
    """Every row classified under both rulesets, and what changes, as `classifier diff`
    reports it."""
    labels = {"base_label": base_label, "head_label": head_label}
    if run.engine == "spark":
        from classifier.batch.spark import arrow_schema, replay_dataframe

        df = _spark_inputs(inputs, _session(run))
        result = replay_dataframe(
            df,
            base,
            head,
            columns.mapping(arrow_schema(df)),
            examples=examples,
            where_column=where_column,
            **labels,
        )
        return Replay(result.diff, result.bad, result.errors)
    files = input_files(inputs)
    schema = input_schema(files)
    part = replay_files(
        files,
        base,
        head,
        mapping=columns.mapping(schema) or default_mapping(files, schema),
        workers=run.workers or default_workers(),
        batch_rows=run.batch_rows,
        where=Where(column=where_column) if where_column else None,
    )
    diff = diff_of(part, pinned_table(base), pinned_table(head), examples=examples, **labels)
    return Replay(diff, part.bad, [e for _, e in part.errors])


# ---------------------------------------------------------------- spark


def _session(run: Run) -> Any:
    from classifier.batch.spark import session

    return session(run.master, app_name=run.app_name, conf=run.conf)


def _spark_inputs(inputs: Sequence[str], spark: Any) -> Any:
    """The inputs as Spark reads them: any path Spark can read (HDFS, S3, ...), Parquet unless
    every path ends as JSON Lines do."""
    if all(str(p).rstrip("/").endswith(JSON_LINES_SUFFIXES) for p in inputs):
        return spark.read.text(*inputs).withColumnRenamed("value", "descriptor")
    return spark.read.parquet(*inputs)


def _reclassify_spark(
    inputs: Sequence[str], output: str, pin: RulesetPin, run: Run, columns: Columns, prefix: str
) -> Summary:
    from pyspark.sql import functions as sf

    from classifier.batch.spark import arrow_schema, classify_dataframe

    spark = _session(run)
    df = _spark_inputs(inputs, spark)
    out = classify_dataframe(df, pin, columns.mapping(arrow_schema(df)), prefix=prefix)
    parquet = output.rstrip("/").endswith(PARQUET_SUFFIXES)
    writer = out.write.mode("errorifexists")
    if parquet:
        writer.parquet(output)
    else:
        writer.json(output)
    # Count from what was written: a column read back, not the job run again.
    written = spark.read.parquet(output) if parquet else spark.read.json(output)
    error = sf.col(f"{prefix}error")
    bad = written.select(error).filter(error.isNotNull())
    shown = [str(r[0]) for r in bad.limit(MAX_SHOWN_ERRORS).collect()]
    return Summary(rows=written.count(), bad=bad.count(), errors=shown)
