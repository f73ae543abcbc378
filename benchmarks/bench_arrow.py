"""How fast the Arrow batch path and Spark classify a table (a benchmark, not a test).

    make bench
    .venv/bin/python -m benchmarks.bench_arrow [--rows 200000] [--quick]

The descriptors are the public corpus (tests/corpus) and every case of the
bundled rules, classified by the bundled ruleset, in three shapes of table:

    distinct   every row a different descriptor (an attribute no rule reads makes each
               one distinct, as in bench_regress): the worst case, nothing deduplicated
    10%        each distinct descriptor on ten rows
    repeats    the ~600 seeds over and over, as a failure history repeats itself

For each: the engine's own speed (`classify` over the same descriptors,
built beforehand), and `classify_batch` over the same rows as a struct
column and as JSON text, on one core, as rows/s and as a ratio to the
engine, measured in alternation (median of the rounds). Then `classifier
reclassify` on every core (a process pool, Parquet in and out), and Spark
in local mode on 2 cores: rows/s over a Parquet table (the job's output
discarded through the `noop` writer), and the per-task overhead (the same
rows in 64 tasks against 2). These machines are shared: compare ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import RecordBatch
from pyspark.sql import DataFrame

from classifier import load_ruleset
from classifier.batch.arrow import AnswerTable, JsonColumn, StructColumn, classify_batch
from classifier.batch.files import reclassify_files
from classifier.batch.pin import pin_ruleset
from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset
from classifier.regress.cases import find_case_files, read_case_file
from classifier.source.descriptor_file import descriptor_dict, descriptor_from_data
from tests.batch.tables import struct_table
from tests.rules.corpus import load_corpus

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"


def seeds() -> list[Descriptor]:
    cases = [c.descriptor for f in find_case_files([RULES]) for c in read_case_file(f).cases]
    return [c.descriptor for c in load_corpus()] + cases


def shaped(base: list[Descriptor], rows: int, repeat: int | None) -> list[Descriptor]:
    """rows descriptors: each distinct one `repeat` times (None: the seeds cycled)."""
    if repeat is None:
        return [base[i % len(base)] for i in range(rows)]
    out = []
    for i in range(rows // repeat):
        data = descriptor_dict(base[i % len(base)])
        data["attributes"] = {**data.get("attributes", {}), "bench.n": str(i)}
        d = descriptor_from_data(data)
        out += [d] * repeat
    return out


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _engine(ruleset: Ruleset, ds: list[Descriptor]) -> None:
    for d in ds:
        classify(ruleset, d)


def _json(ds: list[Descriptor]) -> pa.Table:
    return pa.table({"descriptor": [json.dumps(descriptor_dict(d)) for d in ds]})


def in_process(ruleset: Ruleset, rows: int, rounds: int) -> dict[tuple[str, str], float]:
    print(f"Arrow batch path vs the engine, one core, {rows:,} rows, bundled ruleset", flush=True)
    base = seeds()
    table = AnswerTable(ruleset)
    figures: dict[tuple[str, str], float] = {}
    for name, repeat in (("distinct", 1), ("10%", 10), ("repeats", None)):
        ds = shaped(base, rows, repeat)
        struct = struct_table(ds)
        json_ = _json(ds)
        engine: list[float] = []
        arrow: list[float] = []
        text: list[float] = []
        for _ in range(rounds):
            engine.append(timed(partial(_engine, ruleset, ds)))
            arrow.append(timed(partial(classify_batch, struct, table, StructColumn())))
            text.append(timed(partial(classify_batch, json_, table, JsonColumn())))
        e, a, j = (statistics.median(x) for x in (engine, arrow, text))
        n = len(ds)
        distinct = len({id(d) for d in ds})
        figures[name, "struct"] = n / a
        figures[name, "JSON"] = n / j
        print(
            f"  {name:>8} ({distinct:,} distinct): engine {n / e:>9,.0f} rows/s "
            f"({e / n * 1e6:.2f} µs) | struct column {n / a:>9,.0f} rows/s, "
            f"{e / a:.2f}x the engine | JSON column {n / j:>9,.0f} rows/s, {e / j:.2f}x",
            flush=True,
        )
    return figures


def pool(rows: int, tmp: Path) -> None:
    workers = len(os.sched_getaffinity(0))
    print(f"classifier reclassify on {workers} cores (process pool, Parquet in and out)")
    pin, ruleset = pin_ruleset(RULES)
    tiny = tmp / "pool-tiny.parquet"
    pq.write_table(struct_table(seeds()[:100]), tiny)
    start = timed(
        partial(
            reclassify_files, [tiny], pin, AnswerTable(ruleset), tmp / "t.parquet", workers=workers
        )
    )
    print(f"  pool start-up (spawn, import, compile), measured on 100 rows: {start:.2f} s")
    for name, repeat in (("distinct", 1), ("repeats", None)):
        src = tmp / f"pool-{name}.parquet"
        pq.write_table(struct_table(shaped(seeds(), rows, repeat)), src, row_group_size=65_536)
        job = partial(reclassify_files, [src], pin, AnswerTable(ruleset))
        one = timed(partial(job, tmp / "1.parquet"))
        many = timed(partial(job, tmp / "n.parquet", workers=workers))
        steady = max(many - start, 1e-9)
        print(
            f"  {name:>8}: 1 process {rows / one:>9,.0f} rows/s; {workers} workers "
            f"{rows / many:>9,.0f} rows/s, {rows / steady:,.0f} rows/s after start-up "
            f"({one / steady:.2f}x one process)",
            flush=True,
        )


def spark_section(rows: int, tmp: Path, per_core: dict[tuple[str, str], float]) -> None:
    from classifier.spark import classify_dataframe, java_home, session

    if java_home() is None:
        print("Spark: skipped (no Java runtime)")
        return
    cores = 2
    print(f"Spark local[{cores}], {rows:,} rows (Parquet in, the noop writer out)", flush=True)
    spark = session(
        f"local[{cores}]",
        app_name="bench_arrow",
        conf={
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    rates: dict[str, float] = {}
    try:
        pin, _ = pin_ruleset(RULES)
        for name, repeat in (("distinct", 1), ("repeats", None)):
            ds = shaped(seeds(), rows, repeat)
            for shape, table in (("struct", struct_table(ds)), ("JSON", _json(ds))):
                src = tmp / f"spark-{name}-{shape}.parquet"
                pq.write_table(table, src, row_group_size=10_000)
                # About eight tasks, so both cores stay busy.
                split = max(src.stat().st_size // 8, 64 * 1024)
                spark.conf.set("spark.sql.files.maxPartitionBytes", str(split))
                df = spark.read.parquet(str(src))
                tasks = df.rdd.getNumPartitions()
                run(classify_dataframe(df, pin))  # warm: workers started, ruleset compiled
                passthrough = min(run(df.mapInArrow(_identity, df.schema)) for _ in range(2))
                seconds = min(run(classify_dataframe(df, pin)) for _ in range(2))
                rate = rows / seconds
                print(
                    f"  {name:>8}, {shape:>6} column: {rate:>9,.0f} rows/s on {cores} cores "
                    f"({rate / cores:,.0f} per core; in process, one core: "
                    f"{per_core[name, shape]:,.0f}) in {tasks} tasks; the same job passing "
                    f"rows through unclassified {rows / passthrough:,.0f} rows/s",
                    flush=True,
                )
                rates[f"{name}, {shape} column"] = rate / cores
        small = spark.createDataFrame(struct_table(seeds()[:256])).cache()
        small.count()
        few = min(run(classify_dataframe(small.coalesce(2), pin)) for _ in range(3))
        many = min(run(classify_dataframe(small.repartition(64), pin)) for _ in range(3))
        overhead = max((many - few) / 62, 0.0)
        print(
            f"  per-task overhead: {overhead * 1000:.1f} ms "
            f"(256 rows in 64 tasks {many:.2f} s, in 2 tasks {few:.2f} s)",
            flush=True,
        )
        billion(rates, overhead)
    finally:
        spark.stop()


def run(frame: DataFrame) -> float:
    """Seconds to compute every row of frame, the output discarded."""
    return timed(lambda: frame.write.format("noop").mode("overwrite").save())


def _identity(batches: Iterator[RecordBatch]) -> Iterator[RecordBatch]:
    yield from batches


ROWS_PER_TASK = 1_000_000
"""About a 128 MiB Parquet split of descriptors (Spark's default maxPartitionBytes)."""


def billion(rates: dict[str, float], overhead: float) -> None:
    """What a billion-row backfill costs at these per-core rates, task overhead included."""
    rows = 1_000_000_000
    tasks = rows // ROWS_PER_TASK
    for name, per_core in rates.items():
        core_hours = (rows / per_core + tasks * overhead) / 3600
        print(
            f"  a billion rows ({name}): {core_hours:,.1f} core-hours "
            f"({core_hours * 60 / 64:,.0f} min on 64 cores, {tasks:,} tasks of "
            f"{ROWS_PER_TASK:,} rows)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer rows and rounds")
    args = parser.parse_args()
    rows = 20_000 if args.quick else args.rows
    rounds = 3 if args.quick else 5
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    ruleset = load_ruleset(RULES)
    per_core = in_process(ruleset, rows, rounds)
    with tempfile.TemporaryDirectory(prefix="bench-arrow-") as tmp:
        pool(rows, Path(tmp))
        spark_section(rows * (1 if args.quick else 2), Path(tmp), per_core)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
