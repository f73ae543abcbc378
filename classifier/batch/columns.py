"""The column readers: a batch's descriptor columns, validated and built into descriptors.

Where a batch keeps its descriptors is a *mapping* (docs/batch.md has the
schema in full):

    StructColumn("descriptor")   one struct column whose fields are the descriptor's
                                 (`classifier.descriptor.FIELDS`: the descriptor-file
                                 shape's names)
    FlatColumns({"type": "exc_type", ...})
                                 a column per field, named by the mapping (a field not
                                 named is read from a column of its own name, if any)
    JsonColumn("descriptor")     JSON text in the descriptor-file shape, or an object
                                 with a "descriptor" key (a decision-log line)

Causes are a list of structs with the cause fields (`CAUSE_FIELDS`);
attributes a map of strings (or a struct of strings, or a list of key/value
structs); origin and grpc_status a number or a name, as in a descriptor
file. Every descriptor is validated exactly as the gRPC service validates
it: the limits on names are checked a whole column at a time by Arrow's
kernels (`classifier.batch.checks`), the rows they prove good are built by
`descriptor_from_row(..., proven=True)` (which checks the rest), and every
other row the ordinary way (the JSON column through the descriptor-file
reader). A bad row gets a DescriptorError naming each bad field as the
service names it (`descriptor.causes[1].type: must not be empty`); it is
never dropped. A column of the wrong type for its field is a
`BatchSchemaError` naming it, before any row is read.

Each column is taken into Python once, and each distinct row built once
(the distinct rows found by `classifier.batch.distinct`).
"""

from __future__ import annotations

import gc
import itertools
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeAlias, cast

import pyarrow as pa
import pyarrow.compute as pc
from pydantic_core import PydanticCustomError

from classifier.batch.arrays import (
    KERNEL_ERRORS,
    Array,
    Batch,
    is_list,
    is_text,
    list_offsets,
    list_spans,
    without_views,
)
from classifier.batch.arrays import kernels as _kernels
from classifier.batch.checks import longer, rows_of, unproven
from classifier.batch.distinct import looks_distinct, row_keys
from classifier.descriptor import (
    CAUSE_FIELD_NAMES,
    CAUSE_FIELDS,
    FIELD_NAMES,
    FIELDS,
    Descriptor,
    FieldKind,
    descriptor_from_row,
    well_formed,
)
from classifier.errors import ClassifierError, DescriptorError, FieldViolation
from classifier.source.descriptor_file import descriptor_from_data
from classifier.source.documents import parse_grpc_code, parse_origin
from classifier.taxonomy import Origin

PREFIX = "descriptor"
"""What a bad field's name starts with, as the gRPC service names it."""


class BatchSchemaError(ClassifierError):
    """The batch's columns do not fit the mapping: a column is missing or of the wrong type."""


class NoDescriptorColumnError(BatchSchemaError):
    """No column of the schema looks like a descriptor (no `descriptor`, no `type`): the
    mapping must be given."""


@dataclass(frozen=True)
class StructColumn:
    """Descriptors in one struct column, its fields named as in a descriptor file."""

    name: str = "descriptor"


@dataclass(frozen=True)
class JsonColumn:
    """Descriptors as JSON text: the descriptor-file shape, or `{"descriptor": ...}`."""

    name: str = "descriptor"


@dataclass(frozen=True)
class FlatColumns:
    """A column per descriptor field: `columns` maps a field to its column's name.

    A field the mapping does not name is read from the column of the same
    name when the batch has one; `type` must be found one way or the other.
    """

    columns: Mapping[str, str] = field(default_factory=dict)


ColumnMapping: TypeAlias = StructColumn | JsonColumn | FlatColumns


def infer_mapping(schema: pa.Schema) -> ColumnMapping:
    """The mapping a schema suggests: a `descriptor` struct or text column, else flat columns
    named as the fields (there must be a `type` column)."""
    names = set(schema.names)
    if "descriptor" in names:
        kind = schema.field("descriptor").type
        if pa.types.is_struct(kind):
            return StructColumn()
        if is_text(kind):
            return JsonColumn()
        raise BatchSchemaError(
            f"column 'descriptor' is {kind}: a struct of descriptor fields or JSON text expected"
        )
    if "type" in names:
        return FlatColumns()
    raise NoDescriptorColumnError(
        "no descriptor found: expected a 'descriptor' column (a struct, or JSON text) "
        f"or a 'type' column (one column per field); the columns are {', '.join(schema.names)}"
    )


@dataclass(frozen=True, slots=True)
class _Bad:
    """A value that cannot be a descriptor field's: the row fails with this message."""

    message: str
    sub: str = ""
    """A suffix to the field's path: `['key']` for an attribute."""


_NULL_ROW = (_Bad("is null"),)
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
            return _decode_json(_column(data, name), name)
        case StructColumn(name):
            arr = _column(data, name)
            if not pa.types.is_struct(arr.type):
                raise BatchSchemaError(f"column {name!r} is {arr.type}: a struct expected")
            names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
            _known(names, FIELD_NAMES, f"column {name!r}")
            children = dict(zip(names, cast(pa.StructArray, arr).flatten(), strict=True))
            nulls = arr.is_null() if arr.null_count else None
            return _decode_columns(children, len(arr), nulls, f"column {name!r} field ")
        case FlatColumns(columns):
            _known(list(columns), FIELD_NAMES, "the column mapping")
            chosen = {f: columns.get(f, f) for f in FIELD_NAMES}
            for f, col in columns.items():
                if col not in data.schema.names:
                    raise BatchSchemaError(
                        f"field {f!r} is mapped to column {col!r}: no such column"
                    )
            found = {f: _column(data, c) for f, c in chosen.items() if c in data.schema.names}
            return _decode_columns(found, data.num_rows, None, "column ", chosen)


def _column(data: Batch, name: str) -> Array:
    if name not in data.schema.names:
        raise BatchSchemaError(
            f"no column {name!r}; the columns are {', '.join(data.schema.names)}"
        )
    col = data.column(name)
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


def _known(names: Iterable[str], allowed: Sequence[str], where: str) -> None:
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise BatchSchemaError(
            f"{where}: unknown field {unknown[0]!r}; the fields are {', '.join(allowed)}"
        )


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
    good are built without checking their names again (`proven=True`).
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
        column, bad = _READERS[f.kind](arr, label)
        values.append(column)
        unreadable |= bad
    suspect = unreadable or nulls is not None
    refused = unproven(columns, n)
    if distinct and not suspect:  # the common case: no row kept as a tuple, none looked into
        everyone = list(range(n))
        straight = zip(*values, strict=True)
        built = _built(straight, _proven(refused, everyone), lambda i: tuple(c[i] for c in values))
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
    proven = _proven(refused, first)
    if suspect:
        return Decoded(rows, _looked_into(unique, proven), first)
    return Decoded(rows, _built(unique, proven, unique.__getitem__), first)


def _proven(refused: set[int] | None, first: list[int]) -> list[bool]:
    """Whether the column checks proved each row's names good (`refused` the rows they did
    not, None for none proven), the rows given by their first place in the batch."""
    if refused is None or len(refused) == len(first):
        return [False] * len(first)
    return [i not in refused for i in first] if refused else [True] * len(first)


def _built(
    rows: Iterable[tuple[Any, ...]], proven: list[bool], row: Callable[[int], tuple[Any, ...]]
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
    rows: list[tuple[Any, ...]], proven: list[bool]
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


_MAY_BE_BAD_KINDS: frozenset[FieldKind] = frozenset(
    {"http_status", "grpc_status", "origin", "attributes"}
)
"""The kinds whose readers may give a _Bad; causes are looked into, cause by cause."""
_MAY_BE_BAD = tuple(i for i, f in enumerate(FIELDS) if f.kind in _MAY_BE_BAD_KINDS)
_CAUSES = FIELD_NAMES.index("causes")


def _unreadable(row: tuple[Any, ...]) -> bool:
    """Whether a value of the row could not be read (the fields that can hold a _Bad)."""
    if any(type(row[i]) is _Bad for i in _MAY_BE_BAD):
        return True
    return any(type(c) is _Bad or any(type(v) is _Bad for v in c) for c in row[_CAUSES])


def _checked(row: tuple[Any, ...]) -> DescriptorError:
    """The violations of a null row, or of one with unreadable values: those values', then
    the row constructor's."""
    if row is _NULL_ROW:
        return DescriptorError([FieldViolation(PREFIX, "is null")])
    violations: list[FieldViolation] = []
    clean = list(row)
    for i, (f, value) in enumerate(zip(FIELDS, row, strict=True)):
        if isinstance(value, _Bad):
            violations.append(FieldViolation(f"{PREFIX}.{f.name}{value.sub}", value.message))
            clean[i] = f.default
    causes = []
    for j, cause in enumerate(clean[_CAUSES]):
        if isinstance(cause, _Bad):
            violations.append(FieldViolation(f"{PREFIX}.causes[{j}]", cause.message))
            cause = _STAND_IN_CAUSE
        fixed = list(cause)
        for k, (f, value) in enumerate(zip(CAUSE_FIELDS, cause, strict=True)):
            if isinstance(value, _Bad):
                violations.append(FieldViolation(f"{PREFIX}.causes[{j}].{f.name}", value.message))
                fixed[k] = f.default
        causes.append(tuple(fixed))
    clean[_CAUSES] = causes
    try:
        descriptor_from_row(clean, PREFIX)
    except DescriptorError as exc:
        violations += exc.violations
    return DescriptorError(violations)


# Each reader turns one column into a list of Python values, one per row, hashable, in the
# form descriptor_from_row takes (or a _Bad saying why the value cannot be).


def _wrong(label: str, t: pa.DataType, expected: str) -> BatchSchemaError:
    return BatchSchemaError(f"{label} is {t}: {expected} expected")


Read = tuple[list[Any], bool]
"""A column's values, and whether any of them is a _Bad."""


def _text(arr: Array, label: str) -> Read:
    if pa.types.is_null(arr.type):
        return [""] * len(arr), False
    if not is_text(arr.type):
        raise _wrong(label, arr.type, "a string")
    return _strings(arr, ""), False


def _strings(arr: Array, null: str | None) -> list[Any]:
    """A text column's values (`null` for a null), each distinct one a single str shared by
    the rows that hold it.

    Real columns repeat their values (type names, codes, labels, messages),
    even where no two rows are equal: Arrow's hash kernel finds the distinct
    values, only those become Python strings, and a string shared is hashed
    once where the engine looks it up. A column of mostly distinct values is
    read as it is.
    """
    if len(arr) >= _SHARE_FROM:
        try:
            encoded = cast(
                "pa.DictionaryArray[Any, Any]",
                arr if pa.types.is_dictionary(arr.type) else pc.dictionary_encode(arr),
            )
        except KERNEL_ERRORS:
            encoded = None
        if encoded is not None and 2 * len(encoded.dictionary) <= len(arr):
            words: list[Any] = [*encoded.dictionary.to_pylist(), null]
            indices = encoded.indices
            if indices.null_count:
                indices = _kernels.fill_null(indices, len(words) - 1)
            return list(map(words.__getitem__, cast(list[int], indices.to_pylist())))
    values = arr.to_pylist()
    return [null if v is None else v for v in values] if arr.null_count else values


_SHARE_FROM = 64
"""The shortest column `_strings` looks for repeated values in."""


def _code(arr: Array, label: str) -> Read:
    """`code` may be a number too (a provider's numeric code), as in a descriptor file."""
    if pa.types.is_integer(arr.type):
        return ["" if v is None else str(v) for v in arr.to_pylist()], False
    return _text(arr, label)


def _per_row(arr: Array, offsets: list[int], items: list[Any]) -> list[Any]:
    """items regrouped into one tuple per row of the list array (a null list is empty).

    Sliced out of one tuple: a slice of a tuple is a tuple, made in one step, and an
    empty one is the shared `()`.
    """
    whole = tuple(items)
    out: list[Any] = [whole[a:b] for a, b in itertools.pairwise(offsets)]
    if arr.null_count:
        out = [() if null else v for v, null in zip(out, arr.is_null().to_pylist(), strict=True)]
    return out


def _names(arr: Array, label: str) -> Read:
    """A list of strings per row, as a tuple; a null list is empty, a null name empty too."""
    if pa.types.is_null(arr.type):
        return [()] * len(arr), False
    item = arr.type.value_type if is_list(arr.type) else None
    if item is None or not (is_text(item) or pa.types.is_null(item)):
        raise _wrong(label, arr.type, "a list of strings")
    offsets, flat = list_spans(arr)
    values = [""] * len(flat) if pa.types.is_null(flat.type) else _strings(flat, "")
    return _per_row(arr, offsets, values), False


def _integers(arr: Array, label: str) -> Read:
    """Whole numbers; a float column (pandas' integers with nulls) must hold whole numbers."""
    t = arr.type
    if pa.types.is_null(t):
        return [None] * len(arr), False
    if pa.types.is_integer(t):
        return arr.to_pylist(), False
    if pa.types.is_floating(t):
        values = [_whole(v) for v in arr.to_pylist()]
        return values, any(type(v) is _Bad for v in values)
    raise _wrong(label, t, "an integer")


def _whole(v: float | None) -> int | _Bad | None:
    if v is None:
        return None
    if math.isfinite(v) and v.is_integer():
        return int(v)
    return _Bad(f"{v} is not a whole number")


def _grpc(arr: Array, label: str) -> Read:
    """A gRPC status by number or by name (either spelling of CANCELLED)."""
    if not is_text(arr.type):
        return _integers(arr, label)
    return _by_name(arr, parse_grpc_code)


def _origin(arr: Array, label: str) -> Read:
    """An origin by number (the proto's) or by its lower-case name; null is unspecified."""
    values, bad = _by_name(arr, _origin_named) if is_text(arr.type) else _integers(arr, label)
    return [0 if v is None else v for v in values], bad


def _origin_named(name: str) -> Origin:
    return parse_origin(name) if name.strip() else Origin.unspecified


def _by_name(arr: Array, parse: Callable[[str], object]) -> Read:
    """Each distinct name parsed once, then looked up for every row."""
    values = arr.to_pylist()
    parsed: dict[str | None, object] = {None: None}
    for v in set(values) - {None}:
        try:
            parsed[v] = parse(cast(str, v))
        except PydanticCustomError as exc:
            parsed[v] = _Bad(exc.message())
    return list(map(parsed.__getitem__, values)), any(type(v) is _Bad for v in parsed.values())


def _attributes(arr: Array, label: str) -> Read:
    """A map of strings, a struct of strings (a null field is absent), or key/value structs."""
    t = arr.type
    if pa.types.is_null(t):
        return [()] * len(arr), False
    if pa.types.is_map(t) and is_text(t.key_type) and is_text(t.item_type):
        offsets, start = list_offsets(arr)
        maps = cast("pa.MapArray[Any, Any]", arr)
        keys = _strings(maps.keys.slice(start, offsets[-1]), None)
        items = _strings(maps.items.slice(start, offsets[-1]), None)
        nulls = bool(maps.keys.null_count or maps.items.null_count)
        return _checked_pairs(arr, offsets, list(zip(keys, items, strict=True)), nulls)
    if pa.types.is_struct(t) and all(is_text(t.field(i).type) for i in range(t.num_fields)):
        if not t.num_fields:
            return [()] * len(arr), False
        names = [t.field(i).name for i in range(t.num_fields)]
        columns = [c.to_pylist() for c in cast(pa.StructArray, arr).flatten()]
        rows = [
            tuple((k, v) for k, v in zip(names, values, strict=True) if v is not None)
            for values in zip(*columns, strict=True)
        ]
        return rows, False
    if is_list(t) and pa.types.is_struct(t.value_type):
        item = t.value_type
        kinds = {item.field(i).name: item.field(i).type for i in range(item.num_fields)}
        if set(kinds) == {"key", "value"} and all(is_text(x) for x in kinds.values()):
            offsets, flat = list_spans(arr)
            pairs = cast(pa.StructArray, flat)
            key, value = (pairs.field(name).to_pylist() for name in ("key", "value"))
            if flat.null_count:
                raise BatchSchemaError(f"{label}: an attribute is null")
            nulls = None in key or None in value
            return _checked_pairs(arr, offsets, list(zip(key, value, strict=True)), nulls)
    raise _wrong(label, t, "a map of strings to strings")


def _checked_pairs(arr: Array, offsets: list[int], pairs: list[Any], nulls: bool = True) -> Read:
    """Key/value pairs per row; a null key or value, or a key twice, makes the row a _Bad.

    Without nulls (`nulls` False) only a row of two pairs or more can be wrong.
    """
    rows = _per_row(arr, offsets, pairs)
    bad = False
    suspects = range(len(rows)) if nulls else rows_of(longer(arr, 1))
    for i in suspects:
        row = rows[i]
        if len(row) > 1 or (row and (row[0][0] is None or row[0][1] is None)):
            problem = _pair_problem(row)
            if problem is not None:
                rows[i] = problem
                bad = True
    return rows, bad


def _pair_problem(pairs: tuple[tuple[str | None, str | None], ...]) -> _Bad | None:
    seen: set[str] = set()
    for k, v in pairs:
        if k is None:
            return _Bad("an attribute key must not be null")
        if v is None:
            return _Bad("must not be null", f"[{k!r}]")
        if k in seen:
            return _Bad(f"the key {k!r} appears twice")
        seen.add(k)
    return None


def _causes(arr: Array, label: str) -> Read:
    """A list of cause structs per row, each read with the same readers as the descriptor's."""
    t = arr.type
    if pa.types.is_null(t):
        return [()] * len(arr), False
    if not (is_list(t) and pa.types.is_struct(t.value_type)):
        raise _wrong(label, t, "a list of cause structs")
    offsets, flat = list_spans(arr)
    item = flat.type
    names = [item.field(i).name for i in range(item.num_fields)]
    _known(names, CAUSE_FIELD_NAMES, f"{label} (a cause)")
    if "type" not in names:
        raise BatchSchemaError(f"{label}: a cause struct needs a 'type' field")
    children = dict(zip(names, cast(pa.StructArray, flat).flatten(), strict=True))
    m = len(flat)
    fields = []
    bad = False
    for f in CAUSE_FIELDS:
        if f.name not in children:
            fields.append([f.default] * m)
            continue
        values, unreadable = _READERS[f.kind](children[f.name], f"{label} cause field {f.name!r}")
        fields.append(values)
        bad |= unreadable
    causes: list[Any] = list(zip(*fields, strict=True))
    if flat.null_count:
        nulls = flat.is_null().to_pylist()
        causes = [_Bad("is null") if null else c for c, null in zip(causes, nulls, strict=True)]
        bad = True
    return _per_row(arr, offsets, causes), bad


_READERS: dict[FieldKind, Callable[[Array, str], Read]] = {
    "type": _text,
    "type_names": _names,
    "http_status": _integers,
    "grpc_status": _grpc,
    "origin": _origin,
    "code": _code,
    "message": _text,
    "causes": _causes,
    "label": _text,
    "attributes": _attributes,
}
"""The reader of each kind of field (`classifier.descriptor.FieldKind`)."""
_STAND_IN_CAUSE = tuple("null" if f.name == "type" else f.default for f in CAUSE_FIELDS)
"""Stands in for a null cause while the rest of its row is checked, so the causes after it
keep their numbers and it is not reported twice."""
