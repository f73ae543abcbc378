"""Reclassify Parquet and JSON Lines files on one machine, on every core.

The parent process reads the input a batch at a time and hands the
batches to a pool of worker processes (spawned, each compiling the pinned
ruleset on its first batch and keeping it); a worker returns each row's
answer code and error, and the parent, which loaded the same pinned
ruleset, appends the answer columns and writes the batches in input order.
With one worker everything runs in this process. A replay is the same loop
returning `ReplayPart`s, merged in input order.

JSON Lines input is read as `classifier diff` reads a corpus: each
non-blank line is a descriptor or an object with a `descriptor` key; it
becomes the columns `line` (its number in the file) and `descriptor` (the
line's text without its line ending), classified through the JSON column mapping.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar, cast

import pyarrow as pa
import pyarrow.parquet as pq

from classifier.batch.arrays import Array
from classifier.batch.arrow import (
    ANSWER_COLUMNS,
    AnswerTable,
    BatchSchemaError,
    Coded,
    ColumnMapping,
    JsonColumn,
    answer_codes,
    append_answers,
    decode,
    infer_mapping,
)
from classifier.batch.pin import RulesetPin, pinned_table
from classifier.batch.replay import ReplayPart, Where, replay_part
from classifier.errors import ClassifierError
from classifier.regress.corpus import JSON_LINES_SUFFIXES
from classifier.source.display import display_path

PARQUET_SUFFIXES = (".parquet", ".pq")
BATCH_ROWS = 65_536
LINE_COLUMN = "line"
JSON_LINES_SCHEMA = pa.schema(
    {LINE_COLUMN: cast(pa.DataType, pa.int64()), "descriptor": pa.string()}
)
MAX_SHOWN_ERRORS = 20


class InputError(ClassifierError):
    """A file cannot be read or written: missing, of an unknown kind, or of another schema."""


def input_files(paths: Sequence[str]) -> list[Path]:
    """The files to read: each path, or a folder's Parquet and JSON Lines files, sorted."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and _kind(p) and not p.name.startswith((".", "_"))
            )
            if not found:
                raise InputError(f"{raw}: no Parquet or JSON Lines files in this folder")
            out += found
        elif path.is_file():
            if not _kind(path):
                raise InputError(
                    f"{raw}: not Parquet ({', '.join(PARQUET_SUFFIXES)}) "
                    f"or JSON Lines ({', '.join(JSON_LINES_SUFFIXES)})"
                )
            out.append(path)
        else:
            raise InputError(f"{raw}: no such file or folder")
    kinds = {_kind(p) for p in out}
    if len(kinds) > 1:
        raise InputError("the inputs mix Parquet and JSON Lines: give one kind at a time")
    return out


def _kind(path: Path) -> str:
    if path.suffix in PARQUET_SUFFIXES:
        return "parquet"
    if path.suffix in JSON_LINES_SUFFIXES:
        return "jsonl"
    return ""


def input_schema(files: Sequence[Path]) -> pa.Schema:
    """The schema every input file has (all must have the same)."""
    schemas = [_schema(p) for p in files]
    for p, s in zip(files, schemas, strict=True):
        if not s.equals(schemas[0]):
            raise InputError(
                f"{p}: its columns differ from {files[0]}'s\n  {s}\n  vs\n  {schemas[0]}"
            )
    return schemas[0]


def _schema(path: Path) -> pa.Schema:
    if _kind(path) == "jsonl":
        return JSON_LINES_SCHEMA
    return pq.read_schema(path)


def read_batches(path: Path, batch_rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """A file's rows, a batch at a time."""
    if _kind(path) == "parquet":
        yield from pq.ParquetFile(path).iter_batches(batch_size=batch_rows)
        return
    lines: list[int] = []
    texts: list[str] = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if line.strip():
                lines.append(number)
                texts.append(line.rstrip("\r\n"))  # the line's text, not its end
                if len(lines) == batch_rows:
                    yield _lines_batch(lines, texts)
                    lines, texts = [], []
    if lines:
        yield _lines_batch(lines, texts)


def _lines_batch(lines: list[int], texts: list[str]) -> pa.RecordBatch:
    return pa.record_batch(
        [pa.array(lines, pa.int64()), pa.array(texts, pa.string())], schema=JSON_LINES_SCHEMA
    )


def default_mapping(files: Sequence[Path], schema: pa.Schema) -> ColumnMapping:
    return JsonColumn() if _kind(files[0]) == "jsonl" else infer_mapping(schema)


class Writer(Protocol):
    def write(self, batch: pa.RecordBatch) -> None: ...

    def close(self) -> None: ...


class ParquetOut:
    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self._writer = pq.ParquetWriter(path, schema)

    def write(self, batch: pa.RecordBatch) -> None:
        self._writer.write_batch(batch)

    def close(self) -> None:
        self._writer.close()


class JsonLinesOut:
    """One JSON object per row; a column of JSON text stays a string."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = open(path, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, batch: pa.RecordBatch) -> None:
        self._file.writelines(
            json.dumps(row, ensure_ascii=False, default=_jsonable) + "\n"
            for row in batch.to_pylist()
        )

    def close(self) -> None:
        self._file.close()


def _jsonable(value: object) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def open_writer(path: Path, schema: pa.Schema) -> Writer:
    """A writer for the output's kind (by its suffix)."""
    if path.suffix in PARQUET_SUFFIXES:
        return ParquetOut(path, schema)
    if path.suffix in JSON_LINES_SUFFIXES:
        return JsonLinesOut(path)
    raise InputError(
        f"{path}: write Parquet ({', '.join(PARQUET_SUFFIXES)}) "
        f"or JSON Lines ({', '.join(JSON_LINES_SUFFIXES)})"
    )


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# ---------------------------------------------------------------- the pool


def _classify_task(
    pin: RulesetPin, batch: pa.RecordBatch, mapping: ColumnMapping
) -> tuple[Array, Array]:
    coded = answer_codes(decode(batch, mapping), pinned_table(pin))
    return coded.codes, coded.errors


def _replay_task(
    base: RulesetPin,
    head: RulesetPin,
    batch: pa.RecordBatch,
    mapping: ColumnMapping,
    where: Where,
    position: int,
    offset: int,
) -> ReplayPart:
    return replay_part(
        batch,
        pinned_table(base),
        pinned_table(head),
        mapping,
        where=where,
        position=position,
        offset=offset,
    )


T = TypeVar("T")


@dataclass
class Pool:
    """Worker processes (or this process, for one worker) running tasks in input order."""

    workers: int
    _executor: ProcessPoolExecutor | None = field(default=None, init=False)

    def __enter__(self) -> Pool:
        if self.workers > 1:
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn")
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._executor is not None:
            self._executor.shutdown(cancel_futures=True)

    def ordered(
        self, tasks: Iterator[tuple[Callable[..., T], tuple[Any, ...], Any]]
    ) -> Iterator[tuple[T, Any]]:
        """Each task's result with its tag, in the order given, a few in flight per worker."""
        if self._executor is None:
            for fn, args, tag in tasks:
                yield fn(*args), tag
            return
        pending: deque[tuple[Future[T], Any]] = deque()
        for fn, args, tag in tasks:
            pending.append((self._executor.submit(fn, *args), tag))
            if len(pending) >= 2 * self.workers:
                done, done_tag = pending.popleft()
                yield done.result(), done_tag
        while pending:
            done, done_tag = pending.popleft()
            yield done.result(), done_tag


@dataclass
class Summary:
    """What a reclassification wrote: rows, bad rows, the first few errors with where."""

    rows: int = 0
    bad: int = 0
    errors: list[str] = field(default_factory=list)


def reclassify_files(
    files: Sequence[Path],
    pin: RulesetPin,
    table: AnswerTable,
    out: Path,
    *,
    mapping: ColumnMapping | None = None,
    workers: int = 1,
    batch_rows: int = BATCH_ROWS,
    prefix: str = "",
    where: Where | None = None,
) -> Summary:
    """Classify every row of the files into one output file (Parquet or JSON Lines)."""
    schema = input_schema(files)
    mapping = mapping if mapping is not None else default_mapping(files, schema)
    out_schema = _output_schema(schema, table, prefix)
    summary = Summary()

    def tasks() -> Iterator[tuple[Callable[..., Any], tuple[Any, ...], Any]]:
        for path in files:
            offset = 0
            for batch in read_batches(path, batch_rows):
                yield _classify_task, (pin, batch, mapping), (batch, path, offset)
                offset += batch.num_rows

    writer = open_writer(out, out_schema)
    try:
        with Pool(workers) as pool:
            for (codes, errors), (batch, path, offset) in pool.ordered(tasks()):
                writer.write(append_answers(batch, table, Coded(codes, errors), prefix))
                _count(summary, batch, codes, errors, _where(where, path), offset)
    finally:
        writer.close()
    return summary


def _output_schema(schema: pa.Schema, table: AnswerTable, prefix: str) -> pa.Schema:
    empty = pa.record_batch([pa.array([], f.type) for f in schema], schema=schema)
    coded = Coded(pa.array([], pa.int32()), pa.array([], pa.string()))
    taken = [n for n in schema.names if n in {f"{prefix}{a}" for a in ANSWER_COLUMNS}]
    if taken:
        raise BatchSchemaError(
            f"the input already has a column {taken[0]!r}; give the answer columns a prefix"
        )
    return append_answers(empty, table, coded, prefix).schema


def _where(where: Where | None, path: Path) -> Where:
    if where is not None and where.column is not None:
        return where
    return Where(display_path(path), line_column=LINE_COLUMN if _kind(path) == "jsonl" else None)


def _count(
    summary: Summary,
    batch: pa.RecordBatch,
    codes: Array,
    errors: Array,
    where: Where,
    offset: int,
) -> None:
    summary.rows += batch.num_rows
    bad = codes.null_count
    if not bad:
        return
    summary.bad += bad
    if len(summary.errors) < MAX_SHOWN_ERRORS:
        rows = [i for i, e in enumerate(errors.to_pylist()) if e is not None]
        rows = rows[: MAX_SHOWN_ERRORS - len(summary.errors)]
        names = where.names(batch, rows, offset)
        texts = errors.take(pa.array(rows, pa.int64())).to_pylist()
        summary.errors += [f"{n}: {t}" for n, t in zip(names, texts, strict=True)]


def replay_files(
    files: Sequence[Path],
    base: RulesetPin,
    head: RulesetPin,
    *,
    mapping: ColumnMapping | None = None,
    workers: int = 1,
    batch_rows: int = BATCH_ROWS,
    where: Where | None = None,
) -> ReplayPart:
    """Every row of the files replayed under both rulesets, merged in input order."""
    schema = input_schema(files)
    mapping = mapping if mapping is not None else default_mapping(files, schema)
    total = ReplayPart()

    def tasks() -> Iterator[tuple[Callable[..., Any], tuple[Any, ...], Any]]:
        position = 0
        for path in files:
            offset = 0
            named = _where(where, path)
            for batch in read_batches(path, batch_rows):
                # Positions run on across files, so "first seen" means first in input order.
                yield _replay_task, (base, head, batch, mapping, named, position, offset), None
                offset += batch.num_rows
                position += batch.num_rows

    with Pool(workers) as pool:
        for part, _ in pool.ordered(tasks()):
            total.merge(part)
    return total
