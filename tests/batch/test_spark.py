"""classifier.spark on a real local Spark: the engine's answers, the digest pin, replays."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.errors import PythonException
from pyspark.sql import DataFrame, SparkSession

from classifier import Ruleset, descriptor_from_data, load_ruleset
from classifier.batch.arrow import ANSWER_COLUMNS, FlatColumns
from classifier.batch.pin import pin_ruleset
from classifier.cli import main
from classifier.descriptor import Descriptor
from classifier.regress.diff import render_json, render_text
from classifier.spark import classify_dataframe, replay_dataframe
from tests import strategies
from tests.batch.tables import (
    FLAT_NAMES,
    answers,
    bad,
    engine_answers,
    flat_table,
    struct_table,
)
from tests.batch.test_arrow import public_descriptors
from tests.regress.test_diff import JSON_LINES, _edit
from tests.support import BUNDLED_RULES


def _sorted(df: DataFrame, by: str) -> pa.Table:
    return df.drop("descriptor").toArrow().sort_by(by)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every public descriptor, three times over, in a Parquet file Spark splits into tasks."""
    ds = public_descriptors() * 3
    path = tmp_path_factory.mktemp("spark") / "runs.parquet"
    pq.write_table(struct_table(ds, run_id=list(range(len(ds)))), path, row_group_size=200)
    return path


def test_a_dataframe_gets_the_engines_answers_in_several_tasks(
    spark: SparkSession, runs: Path, bundled: Ruleset
) -> None:
    df = spark.read.parquet(str(runs))
    assert df.rdd.getNumPartitions() >= 4
    pin, _ = pin_ruleset(BUNDLED_RULES)
    out = classify_dataframe(df, pin)
    assert out.columns == [*df.columns, *ANSWER_COLUMNS]
    assert answers(_sorted(out, "run_id")) == engine_answers(bundled, public_descriptors() * 3)


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(strategies.rulesets(), st.lists(strategies.descriptors(), min_size=50, max_size=150))
def test_generated_descriptors_get_the_engines_answers_on_spark(
    spark: SparkSession, rules: list[Any], ds: list[Descriptor]
) -> None:
    """Flat columns under other names; the ruleset shipped to the workers with the job."""
    with strategies.compiled(rules) as ruleset:
        pin, _ = pin_ruleset(ruleset.source)
        df = spark.createDataFrame(flat_table(ds)).repartition(3)
        out = classify_dataframe(df, pin, FlatColumns(FLAT_NAMES))
        got = out.drop("inner", "attributes", "supertypes").toArrow().sort_by("run_id")
        assert answers(got) == engine_answers(ruleset, ds)


def test_bad_rows_are_reported_not_dropped(spark: SparkSession, bundled: Ruleset) -> None:
    texts = ['{"type": "tools.Boom", "origin": "tool"}', "not json", '{"type": ""}'] * 100
    df = spark.createDataFrame(pa.table({"n": list(range(300)), "descriptor": texts}))
    pin, _ = pin_ruleset(BUNDLED_RULES)
    got = answers(_sorted(classify_dataframe(df.repartition(4), pin), "n"))
    assert len(got) == 300
    assert got[1] == bad(bundled, "descriptor: not JSON: Expecting value (column 1)")
    assert got[2] == bad(bundled, "descriptor.type: must not be empty")
    assert {g["class_name"] for g in got[::3]} == {"ToolError"}


@pytest.fixture
def unique_rules(small: Path, tmp_path: Path) -> Path:
    """A ruleset no worker has compiled yet (a unique comment gives it its own digest)."""
    folder = tmp_path / "unique"
    shutil.copytree(small, folder)
    rules = folder / "rules.yaml"
    rules.write_text(rules.read_text() + f"# {uuid.uuid4()}\n")
    return folder


def test_a_worker_that_would_load_another_digest_fails_the_job(
    spark: SparkSession, runs: Path, unique_rules: Path
) -> None:
    pin, ruleset = pin_ruleset(unique_rules, ship=False)  # workers read the folder
    rules = unique_rules / "rules.yaml"
    rules.write_text(rules.read_text() + "# edited after the job was planned\n")
    out = classify_dataframe(spark.read.parquet(str(runs)), pin)
    with pytest.raises(PythonException, match=f"is pinned to {ruleset.digest}"):
        out.count()


def test_each_worker_compiles_the_ruleset_once(
    spark: SparkSession, runs: Path, unique_rules: Path
) -> None:
    pin, ruleset = pin_ruleset(unique_rules)
    df = spark.read.parquet(str(runs))
    tasks = df.rdd.getNumPartitions()
    assert classify_dataframe(df, pin).count() == len(public_descriptors()) * 3
    digest = ruleset.digest

    def probe(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from classifier.batch.pin import LOADS

        for _ in batches:
            yield pa.record_batch({"pid": [os.getpid()], "loads": [LOADS[digest]]})

    seen = spark.range(4, numPartitions=4).mapInArrow(probe, "pid long, loads long").collect()
    loads = {r["pid"]: r["loads"] for r in seen}
    assert set(loads.values()) <= {0, 1}, loads
    assert 1 <= sum(loads.values()) < tasks


@pytest.fixture
def replay_rows(small: Path, tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """Base and head rulesets, a decision log, and its rows as Parquet (source, line)."""
    head = tmp_path / "head"
    shutil.copytree(small, head)
    _edit(head)
    log = tmp_path / "log.jsonl"
    lines = [json.dumps(line) for line in [*JSON_LINES, *JSON_LINES[::-1]] * 40]
    log.write_text("\n".join(lines) + "\n")
    table = pa.table(
        {
            "source": [f"{log}:{i}" for i in range(1, len(lines) + 1)],
            "line": list(range(1, len(lines) + 1)),
            "descriptor": lines,
        }
    )
    parquet = tmp_path / "log.parquet"
    pq.write_table(table, parquet, row_group_size=40)
    return small, head, log, parquet


def test_a_spark_replay_agrees_with_classifier_diff(
    spark: SparkSession,
    replay_rows: tuple[Path, Path, Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    base, head, log, parquet = replay_rows
    assert (
        main(["diff", "--base", str(base), "--head", str(head), "--format", "json", str(log)]) == 0
    )
    want = json.loads(capsys.readouterr().out)
    df = spark.read.parquet(str(parquet))
    assert df.rdd.getNumPartitions() >= 2
    base_pin, _ = pin_ruleset(base, label=str(base))
    head_pin, _ = pin_ruleset(head, label=str(head))
    result = replay_dataframe(
        df,
        base_pin,
        head_pin,
        base_label=str(base),
        head_label=str(head),
        examples=None,
        where_column="source",
        position_column="line",
    )
    assert json.loads(render_json(result.diff)) == want
    assert (result.bad, result.errors) == (0, [])
    assert render_text(result.diff).splitlines()[2] == (
        "240 of 400 descriptors (2 of 4 distinct) change class, effect, action or rule"
    )


def test_reclassify_on_spark(
    spark: SparkSession,
    replay_rows: tuple[Path, Path, Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The command on the session's master: a folder of Parquet parts, and a replay's report."""
    base, head, log, parquet = replay_rows
    out = tmp_path / "out.parquet"
    spark_args = ["--engine", "spark", "--master", "local[2]"]
    args = ["reclassify", *spark_args, "--rules", str(head), str(parquet), "-o", str(out)]
    assert main(args) == 0
    assert out.is_dir()
    got = pq.read_table(out).sort_by("line")
    descriptors = [
        descriptor_from_data(_unwrapped(t)) for t in got.column("descriptor").to_pylist()
    ]
    assert answers(got) == engine_answers(load_ruleset(head), descriptors)
    capsys.readouterr()
    sides = ["--base", str(base), "--head", str(head)]
    assert main(["diff", *sides, str(log)]) == 0
    want = capsys.readouterr().out
    replay = ["reclassify", *spark_args, *sides, "--examples", "100", "--where", "source"]
    assert main([*replay, str(parquet)]) == 0
    assert capsys.readouterr().out == want


def _unwrapped(text: object) -> Any:
    data = json.loads(str(text))
    return data.get("descriptor", data)
