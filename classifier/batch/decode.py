"""A batch's descriptor columns decoded: validated and built into descriptors, each distinct
row once, and every bad row named.

`decode` takes a batch and its mapping (`classifier.batch.mappings`), reads each
field's column with its kind's reader (`classifier.batch.readers`), and builds the
rows. Every descriptor is validated exactly as the gRPC service validates it: the
limits on names are checked a whole column at a time by Arrow's kernels
(`classifier.batch.checks`), the rows they prove good are built by
`descriptor_from_row(..., proven=...)` (which checks the rest), and every other row
the ordinary way (the JSON column through the descriptor-file reader). A bad row
gets a DescriptorError naming each bad field as the service names it
(`descriptor.causes[1].type: must not be empty`); it is never dropped.

Each column is taken into Python once, and each distinct row built once (the
distinct rows found by `classifier.batch.distinct`).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc

from classifier.batch.arrays import Array, Batch, is_text, without_views
from classifier.batch.checks import proofs
from classifier.batch.distinct import looks_distinct, row_keys
from classifier.batch.mappings import (
    BatchSchemaError,
    ColumnMapping,
    FlatColumns,
    JsonColumn,
    StructColumn,
    column,
    infer_mapping,
    known,
)
from classifier.batch.readers import MAY_BE_BAD, READERS, Bad
from classifier.descriptor import (
    CAUSE_FIELDS,
    FIELD_NAMES,
    FIELDS,
    Descriptor,
    Proven,
    descriptor_from_row,
    well_formed,
)
from classifier.errors import DescriptorError, FieldViolation
from classifier.source.descriptor_file import descriptor_from_data

PREFIX = "descriptor"
"""What a bad field's name starts with, as the gRPC service names it."""

_NULL_ROW = (Bad("is null"),)
"""The key of a row whose struct (or JSON) is null."""


@dataclass
class Decoded:
    """A batch's rows reduced to distinct descriptors.

    `rows[i]` is the position in `distinct` of row i's descriptor (or of
    the DescriptorError naming what is wrong with it); `first[j]` is the row
    where distinct descriptor j was first seen.
    """

    rows: list[int]
    distinct: list[Descriptor | DescriptorError]
    first: list[int]

    def __len__(self) -> int:
        return len(self.rows)


def decode(data: Batch, mapping: ColumnMapping | None = None) -> Decoded:
    """Read every row's descriptor, once per distinct row."""
    mapping = mapping if mapping is not None else infer_mapping(data.schema)
    with collector_paused():
        return _decode(data, mapping)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a batch's descriptors are built (and classified).

    Every row makes a few containers that live on (its tuple, the
    descriptor, its attributes), so the collector would run over and over
    and, as they pile up, walk the whole heap: half the cost of reading a
    batch of distinct rows. Nothing built here makes a cycle, so nothing
    waits for it; it is on again (if it was on) as soon as the batch is read,
    or (`classify_batch`) classified, the engine making no cycles either.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _decode(data: Batch, mapping: ColumnMapping) -> Decoded:
    match mapping:
        case JsonColumn(name):
            return _decode_json(column(data, name), name)
        case StructColumn(name):
            arr = column(data, name)
            if not pa.types.is_struct(arr.type):
                raise BatchSchemaError(f"column {name!r} is {arr.type}: a struct expected")
            names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
            known(names, FIELD_NAMES, f"column {name!r}")
            children = dict(zip(names, cast(pa.StructArray, arr).flatten(), strict=True))
            nulls = arr.is_null() if arr.null_count else None
            return _decode_columns(children, len(arr), nulls, f"column {name!r} field ")
        case FlatColumns(columns):
            known(list(columns), FIELD_NAMES, "the column mapping")
            chosen = {f: columns.get(f, f) for f in FIELD_NAMES}
            for f, col in columns.items():
                if col not in data.schema.names:
                    raise BatchSchemaError(
                        f"field {f!r} is mapped to column {col!r}: no such column"
                    )
            found = {f: column(data, c) for f, c in chosen.items() if c in data.schema.names}
            return _decode_columns(found, data.num_rows, None, "column ", chosen)


def _decode_json(arr: Array, name: str) -> Decoded:
    if not is_text(arr.type):
        raise BatchSchemaError(f"column {name!r} is {arr.type}: JSON text expected")
    arr = without_views(arr)
    encoded = cast(
        "pa.DictionaryArray[Any, Any]",
        arr if pa.types.is_dictionary(arr.type) else pc.dictionary_encode(arr),
    )
    texts = cast(list[str], encoded.dictionary.to_pylist())
    distinct: list[Descriptor | DescriptorError] = [_from_json(t) for t in texts]
    indices = cast(list[int | None], encoded.indices.to_pylist())
    null = len(distinct)
    if arr.null_count:
        distinct.append(DescriptorError([FieldViolation(PREFIX, "is null")]))
    rows = [null if r is None else r for r in indices]
    first = [-1] * len(distinct)
    for i, r in enumerate(rows):
        if first[r] < 0:
            first[r] = i
    return Decoded(rows, distinct, first)


def _from_json(text: str) -> Descriptor | DescriptorError:
    """A descriptor from a JSON line, read as the corpus reader reads one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return DescriptorError(
            [FieldViolation(PREFIX, f"not JSON: {exc.msg} (column {exc.colno})")]
        )
    if isinstance(data, dict) and "descriptor" in data:
        data = data["descriptor"]
    try:
        return descriptor_from_data(data)
    except DescriptorError as exc:
        return exc


def _decode_columns(
    columns: Mapping[str, Array],
    n: int,
    nulls: Array | None,
    where: str,
    names: Mapping[str, str] | None = None,
) -> Decoded:
    """Rows deduplicated by Arrow's hash kernels first, then the distinct ones read in Python.

    Real tables repeat themselves: only the first row of each distinct
    combination of values is taken into Python; the rest share its code.
    """
    if n > 1 and looks_distinct(columns, nulls, n):
        return _decode_rows(columns, n, _bools(nulls), where, names, distinct=True)
    keys = row_keys(columns, nulls) if n > 1 else None
    if keys is None:
        return _decode_rows(columns, n, _bools(nulls), where, names)
    encoded = cast("pa.DictionaryArray[Any, Any]", pc.dictionary_encode(keys))
    if len(encoded.dictionary) == n:  # nothing repeats: read every row, no need to look again
        return _decode_rows(columns, n, _bools(nulls), where, names, distinct=True)
    rows = cast(list[int], encoded.indices.to_pylist())
    first = [-1] * len(encoded.dictionary)
    for i, r in enumerate(rows):
        if first[r] < 0:
            first[r] = i
    picks = pa.array(first, pa.int64())
    chosen = {name: column.take(picks) for name, column in columns.items()}
    sub = _decode_rows(
        chosen, len(first), _bools(None if nulls is None else nulls.take(picks)), where, names
    )
    distinct = [sub.distinct[r] for r in sub.rows]
    return Decoded(rows, distinct, first)


def _bools(mask: Array | None) -> list[bool | None] | None:
    return None if mask is None else mask.to_pylist()


def _decode_rows(
    columns: Mapping[str, Array],
    n: int,
    nulls: Sequence[bool | None] | None,
    where: str,
    names: Mapping[str, str] | None = None,
    *,
    distinct: bool = False,
) -> Decoded:
    """Rows of field values, deduplicated, built into descriptors.

    `distinct` says the caller found no repeats (in the whole batch, or in a
    sample of it): then each row is built as it is, a rare repeat built twice
    rather than every row hashed to find it. The rows the column checks prove
    good are built without checking their names again (with their `Proven`).
    """
    if "type" not in columns:
        raise BatchSchemaError(f"no descriptor type: the {where.strip()} 'type' is missing")
    values: list[list[Any]] = []
    unreadable = False
    for f in FIELDS:
        arr = columns.get(f.name)
        label = f"{where}{(names or {}).get(f.name, f.name)!r}"
        if arr is None:
            values.append([f.default] * n)
            continue
        column, bad = READERS[f.kind](arr, label)
        values.append(column)
        unreadable |= bad
    suspect = unreadable or nulls is not None
    if distinct and not suspect:  # the common case: no row kept as a tuple, none looked into
        everyone = list(range(n))
        straight = zip(*values, strict=True)
        built = _built(
            straight, proofs(columns, n, everyone), lambda i: tuple(c[i] for c in values)
        )
        return Decoded(everyone, built, everyone)
    keys: Iterable[tuple[Any, ...]] = zip(*values, strict=True)
    if nulls is not None:
        keys = (_NULL_ROW if null else key for key, null in zip(keys, nulls, strict=True))
    if distinct:
        unique = list(keys)
        rows = list(range(len(unique)))
        first = rows
    else:
        codes: dict[tuple[Any, ...], int] = {}
        rows = [codes.setdefault(key, len(codes)) for key in keys]
        unique = list(codes)
        first = [-1] * len(codes)
        for i, r in enumerate(rows):
            if first[r] < 0:
                first[r] = i
    proven = proofs(columns, n, first)
    if suspect:
        return Decoded(rows, _looked_into(unique, proven), first)
    return Decoded(rows, _built(unique, proven, unique.__getitem__), first)


def _built(
    rows: Iterable[tuple[Any, ...]],
    proven: list[Proven | None],
    row: Callable[[int], tuple[Any, ...]],
) -> list[Descriptor | DescriptorError]:
    """Each row's descriptor, or the DescriptorError naming what is wrong with it, for rows
    that are neither null nor hold a value that could not be read.

    Every row goes through the row constructor's fast path in one `map` (a
    batch of distinct rows is mostly this); the few it refuses are fetched
    again (`row(i)`) and named field by field.
    """
    built: list[Any] = list(map(well_formed, rows, proven))
    for i in [i for i, d in enumerate(built) if d is None]:
        try:
            built[i] = descriptor_from_row(row(i), PREFIX)
        except DescriptorError as exc:
            built[i] = exc
    return built


def _looked_into(
    rows: list[tuple[Any, ...]], proven: list[Proven | None]
) -> list[Descriptor | DescriptorError]:
    """`_built` for rows of which any may be null or hold a value that could not be read."""
    built: list[Descriptor | DescriptorError] = []
    add = built.append
    for row, ok in zip(rows, proven, strict=True):
        if row is _NULL_ROW or _unreadable(row):
            add(_checked(row))
            continue
        try:
            add(descriptor_from_row(row, PREFIX, proven=ok))
        except DescriptorError as exc:
            add(exc)
    return built


_MAY_BE_BAD = tuple(i for i, f in enumerate(FIELDS) if f.kind in MAY_BE_BAD)
_CAUSES = FIELD_NAMES.index("causes")


def _unreadable(row: tuple[Any, ...]) -> bool:
    """Whether a value of the row could not be read (the fields that can hold a Bad)."""
    if any(type(row[i]) is Bad for i in _MAY_BE_BAD):
        return True
    return any(type(c) is Bad or any(type(v) is Bad for v in c) for c in row[_CAUSES])


def _checked(row: tuple[Any, ...]) -> DescriptorError:
    """The violations of a null row, or of one with unreadable values: those values', then
    the row constructor's."""
    if row is _NULL_ROW:
        return DescriptorError([FieldViolation(PREFIX, "is null")])
    violations: list[FieldViolation] = []
    clean = list(row)
    for i, (f, value) in enumerate(zip(FIELDS, row, strict=True)):
        if isinstance(value, Bad):
            violations.append(FieldViolation(f"{PREFIX}.{f.name}{value.sub}", value.message))
            clean[i] = f.default
    causes = []
    for j, cause in enumerate(clean[_CAUSES]):
        if isinstance(cause, Bad):
            violations.append(FieldViolation(f"{PREFIX}.causes[{j}]", cause.message))
            cause = _STAND_IN_CAUSE
        fixed = list(cause)
        for k, (f, value) in enumerate(zip(CAUSE_FIELDS, cause, strict=True)):
            if isinstance(value, Bad):
                violations.append(FieldViolation(f"{PREFIX}.causes[{j}].{f.name}", value.message))
                fixed[k] = f.default
        causes.append(tuple(fixed))
    clean[_CAUSES] = causes
    try:
        descriptor_from_row(clean, PREFIX)
    except DescriptorError as exc:
        violations += exc.violations
    return DescriptorError(violations)


_STAND_IN_CAUSE = tuple("null" if f.name == "type" else f.default for f in CAUSE_FIELDS)
"""Stands in for a null cause while the rest of its row is checked, so the causes after it
keep their numbers and it is not reported twice."""
