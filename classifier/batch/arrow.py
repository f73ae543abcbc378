"""Classify a pyarrow Table or RecordBatch of descriptors and add the answer's columns.

Where a batch keeps its descriptors is a *mapping* (docs/batch.md has the
schema in full):

    StructColumn("descriptor")   one struct column whose fields are the descriptor-file
                                 shape's: type, supertypes, http_status, grpc_status,
                                 origin, code, message, causes, language, provider,
                                 attributes
    FlatColumns({"type": "exc_type", ...})
                                 a column per field, named by the mapping (a field not
                                 named is read from a column of its own name, if any)
    JsonColumn("descriptor")     JSON text in the descriptor-file shape, or an object
                                 with a "descriptor" key (a decision-log line)

Causes are a list of structs with the cause fields (type, supertypes,
http_status, grpc_status, code, message); attributes a map of strings (or a
struct of strings, or a list of key/value structs); origin and grpc_status
a number or a name, as in a descriptor file. Every descriptor is validated
exactly as the gRPC service validates it: the limits on names are checked a
whole column at a time by Arrow's kernels, the rows they prove good are
built by `descriptor_from_proven` (which checks the rest), and every other
row goes through `build_descriptor` (the JSON column through the
descriptor-file reader). A bad row gets the `error` column, naming each bad
field as the service names it (`descriptor.causes[1].type: must not be
empty`), and null answer columns; it is never classified and never dropped.
A column of the wrong type for its field is a `BatchSchemaError` naming it,
before any row is read.

The work is done once per distinct descriptor: each column is taken into
Python once, the rows become hashable tuples, identical rows are built and
classified once (found by Arrow's hash kernels first, unless a sample of the
rows has no repeat), and the answer columns are `take`s from a small table
of the ruleset's prebuilt answers (one per rule and Unknown reason).
"""

from __future__ import annotations

import bisect
import gc
import itertools
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar, cast

import pyarrow as pa
import pyarrow.compute as pc
from pydantic_core import PydanticCustomError

from classifier import limits
from classifier.answer import Classification
from classifier.descriptor import (
    CauseInput,
    Descriptor,
    build_descriptor,
    descriptor_from_proven,
)
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset
from classifier.errors import ClassifierError, DescriptorError, FieldViolation
from classifier.source.descriptor_file import descriptor_from_data
from classifier.source.documents import parse_grpc_code, parse_origin
from classifier.taxonomy import Origin, UnknownReason

FIELDS = (
    "type",
    "supertypes",
    "http_status",
    "grpc_status",
    "origin",
    "code",
    "message",
    "causes",
    "language",
    "provider",
    "attributes",
)
"""The descriptor's fields, in the order of `build_descriptor`'s arguments."""
CAUSE_FIELDS = ("type", "supertypes", "http_status", "grpc_status", "code", "message")
PREFIX = "descriptor"
"""What a bad field's name starts with, as the gRPC service names it."""

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

Batch: TypeAlias = pa.Table | pa.RecordBatch
Array: TypeAlias = "pa.Array[Any]"
B = TypeVar("B", pa.Table, pa.RecordBatch)


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
        if _is_text(kind):
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


# ---------------------------------------------------------------- answers


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
        """The code of an answer the engine gave under this ruleset."""
        i = self._codes.get(id(c))
        if i is not None and self.answers[i] is c:
            return i
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


# ---------------------------------------------------------------- reading rows


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
    with _collector_paused():
        return _decode(data, mapping)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a batch's descriptors are built.

    Every row makes a few containers that live on (its tuple, the
    descriptor, its attributes), so the collector would run over and over
    and, as they pile up, walk the whole heap: half the cost of reading a
    batch of distinct rows. Nothing built here makes a cycle, so nothing
    waits for it; it is on again (if it was on) as soon as the batch is read.
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
            _known(names, FIELDS, f"column {name!r}")
            children = dict(zip(names, cast(pa.StructArray, arr).flatten(), strict=True))
            nulls = arr.is_null() if arr.null_count else None
            return _decode_columns(children, len(arr), nulls, f"column {name!r} field ")
        case FlatColumns(columns):
            _known(list(columns), FIELDS, "the column mapping")
            chosen = {f: columns.get(f, f) for f in FIELDS}
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
    if not _is_text(arr.type):
        raise BatchSchemaError(f"column {name!r} is {arr.type}: JSON text expected")
    if pa.types.is_string_view(arr.type):
        arr = arr.cast(pa.string())
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
    if n > 1 and _looks_distinct(columns, nulls, n):
        return _decode_rows(columns, n, _bools(nulls), where, names, distinct=True)
    keys = _row_keys(columns, nulls) if n > 1 else None
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


SAMPLE_ROWS = 1024
"""How many rows `_looks_distinct` compares: runs of consecutive rows spread over the batch,
so a failure repeated in a burst and one repeated all through the batch are both seen."""
SAMPLE_RUNS = 8


def _looks_distinct(columns: Mapping[str, Array], nulls: Array | None, n: int) -> bool:
    """Whether no two rows of a sample are equal: then the batch is read straight into
    Python without hashing every row first (which saves work only where rows repeat, and
    costs as much as reading them where none do); a repeat the sample misses is built twice."""
    if n < 4 * SAMPLE_ROWS:
        return False
    run, step = SAMPLE_ROWS // SAMPLE_RUNS, n // SAMPLE_RUNS
    picks = pa.array([r * step + i for r in range(SAMPLE_RUNS) for i in range(run)], pa.int64())
    sample = {name: column.take(picks) for name, column in columns.items()}
    keys = _row_keys(sample, None if nulls is None else nulls.take(picks))
    return keys is not None and len(pc.unique(keys)) == len(picks)


def _bools(mask: Array | None) -> list[bool | None] | None:
    return None if mask is None else mask.to_pylist()


def _row_keys(columns: Mapping[str, Array], nulls: Array | None) -> Array | None:
    """One string per row, equal for two rows exactly when all their values are equal.

    Made by Arrow's kernels alone: each leaf column dictionary-encoded to
    numbers (nulls included), lists and structs joined with a separator of
    their own nesting level, so the string parses back one way only. None
    when a column's type is one the kernels do not take: then every row is
    read in Python.
    """
    try:
        pieces = [_key(columns[name], 1) for name in FIELDS if name in columns]
        if nulls is not None:
            pieces.append(pc.cast(nulls, pa.string()))
        return _join_columns(pieces, _SEPARATORS[0])
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError, IndexError):
        return None


_SEPARATORS = "|;,:/#%&!"
"""One per nesting level; a leaf's key is digits, a null's N, so none appears in one."""


def _key(arr: Array, depth: int) -> Array:
    t = arr.type
    sep = _SEPARATORS[depth]
    if pa.types.is_map(t):
        maps = cast("pa.MapArray[Any, Any]", arr)
        offsets, start = _offsets(arr)
        entries = _join_columns(
            [
                _key(maps.keys.slice(start, offsets[-1]), depth + 2),
                _key(maps.items.slice(start, offsets[-1]), depth + 2),
            ],
            _SEPARATORS[depth + 1],
        )
        return _joined(arr, offsets, entries, sep)
    if _is_list(t):
        offsets, flat = _spans(arr)
        return _joined(arr, offsets, _key(flat, depth + 1), sep)
    if pa.types.is_struct(t):
        children = cast(pa.StructArray, arr).flatten()
        pieces = [_key(c, depth + 1) for c in children]
        pieces.append(pc.cast(arr.is_null(), pa.string()))
        return _join_columns(pieces, sep)
    if pa.types.is_string_view(t):
        arr = arr.cast(pa.string())
    encoded = cast(
        "pa.DictionaryArray[Any, Any]", pc.dictionary_encode(arr, null_encoding="encode")
    )
    return pc.cast(encoded.indices, pa.string())


def _joined(arr: Array, offsets: list[int], items: Array, sep: str) -> Array:
    """Each row's items joined by sep; a null list is N (its items, if any, ignored)."""
    lists = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), items)
    joined = cast(Array, pc.binary_join(lists, sep))
    if arr.null_count:
        joined = pc.if_else(arr.is_null(), pa.scalar("N"), joined)
    return joined


def _join_columns(pieces: Sequence[Array], sep: str) -> Array:
    """Each row's pieces joined by sep (the kernel takes the separator as its last argument)."""
    joined: Any = pc.binary_join_element_wise(*pieces, sep)  # type: ignore[call-overload]
    return cast(Array, joined)


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
    good are built without checking their names again (`descriptor_from_proven`).
    """
    if "type" not in columns:
        raise BatchSchemaError(f"no descriptor type: the {where.strip()} 'type' is missing")
    values: list[list[Any]] = []
    unreadable = False
    for name in FIELDS:
        arr = columns.get(name)
        label = f"{where}{(names or {}).get(name, name)!r}"
        if arr is None:
            values.append([_DEFAULTS[name]] * n)
            continue
        column, bad = _READERS[name](arr, label)
        values.append(column)
        unreadable |= bad
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
    unproven = _unproven(columns, n)
    if unproven is None or len(unproven) == len(unique):
        proven = [False] * len(unique)
    else:
        proven = [i not in unproven for i in first] if unproven else [True] * len(unique)
    built = [_build(key, unreadable, ok) for key, ok in zip(unique, proven, strict=True)]
    return Decoded(rows, built, first)


def _build(row: tuple[Any, ...], unreadable: bool, proven: bool) -> Descriptor | DescriptorError:
    """The row's descriptor; `unreadable` says whether any value of the batch was a _Bad,
    `proven` whether the column checks proved this row's names good (`_unproven`)."""
    if row is _NULL_ROW:
        return DescriptorError([FieldViolation(PREFIX, "is null")])
    (type_, supers, http, grpc, origin, code, message, causes, language, provider, attrs) = row
    if unreadable and _unreadable(row):
        return _checked(row)
    if proven:
        quick = descriptor_from_proven(
            type_, supers, http, grpc, origin, code, message,
            [CauseInput(*c) for c in causes] if causes else (), language, provider,
            dict(attrs) if attrs else {},
        )  # fmt: skip
        if quick is not None:
            return quick
    try:
        return build_descriptor(
            type=type_,
            supertypes=supers,
            http_status=http,
            grpc_status=grpc,
            origin=origin,
            code=code,
            message=message,
            causes=[CauseInput(*c) for c in causes],
            language=language,
            provider=provider,
            attributes=dict(attrs) if attrs else None,
        )
    except DescriptorError as exc:
        return exc


def _unreadable(row: tuple[Any, ...]) -> bool:
    """Whether a value of the row could not be read (the fields that can hold a _Bad)."""
    if any(type(row[i]) is _Bad for i in _MAY_BE_BAD):
        return True
    return any(type(c) is _Bad or any(type(v) is _Bad for v in c) for c in row[7])


_MAY_BE_BAD = (2, 3, 4, 10)
"""http_status, grpc_status, origin, attributes; causes (7) are looked into."""


def _checked(row: tuple[Any, ...]) -> DescriptorError:
    """The violations of a row that failed: its unreadable values', then build_descriptor's."""
    violations: list[FieldViolation] = []
    clean = list(row)
    for i, (name, value) in enumerate(zip(FIELDS, row, strict=True)):
        if isinstance(value, _Bad):
            violations.append(FieldViolation(f"{PREFIX}.{name}{value.sub}", value.message))
            clean[i] = _DEFAULTS[name]
    causes = []
    for j, cause in enumerate(clean[7]):
        if isinstance(cause, _Bad):
            violations.append(FieldViolation(f"{PREFIX}.causes[{j}]", cause.message))
            cause = _STAND_IN_CAUSE
        fixed = list(cause)
        for k, (name, value) in enumerate(zip(CAUSE_FIELDS, cause, strict=True)):
            if isinstance(value, _Bad):
                violations.append(FieldViolation(f"{PREFIX}.causes[{j}].{name}", value.message))
                fixed[k] = _CAUSE_DEFAULTS[name]
        causes.append(CauseInput(*fixed))
    try:
        (type_, supers, http, grpc, origin, code, message, _, language, provider, attrs) = clean
        build_descriptor(
            type=type_,
            supertypes=supers,
            http_status=http,
            grpc_status=grpc,
            origin=origin,
            code=code,
            message=message,
            causes=causes,
            language=language,
            provider=provider,
            attributes=dict(attrs) if attrs else None,
        )
    except DescriptorError as exc:
        violations += exc.violations
    return DescriptorError(violations)


# The column checks: what build_descriptor checks of each name, done for a whole column at
# once by Arrow's kernels. A row they do not prove is built the slow way, so they need only
# be conservative: a row they pass must be one build_descriptor accepts unchanged.

_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""The characters `str.strip()` removes (those `str.isspace()` is true of)."""

_NAME_LIMITS = {
    "type": limits.MAX_TYPE_NAME_CHARS,
    "code": limits.MAX_CODE_CHARS,
    "language": limits.MAX_LABEL_CHARS,
    "provider": limits.MAX_LABEL_CHARS,
}
_KERNEL_ERRORS = (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError)
_kernels: Any = pc
"""pyarrow.compute for the column checks, untyped: its stubs take only arrays of a declared
type, and these columns' types are checked when they are read."""


def _unproven(columns: Mapping[str, Array], n: int) -> set[int] | None:
    """The rows whose names the column checks do not prove good (None: no row is proven).

    Proven means: type, each supertype, code, language and provider need no
    stripping and are within their limits, type and the supertypes are not
    empty, there are not too many supertypes or attributes, and every
    attribute key and value is within its limit. Statuses, origin and
    causes are left to `descriptor_from_proven`.
    """
    try:
        rows: set[int] = set()
        for name, limit in _NAME_LIMITS.items():
            arr = columns.get(name)
            if arr is not None and not pa.types.is_null(arr.type):
                if pa.types.is_integer(arr.type):  # a numeric code: digits, never too long
                    continue
                rows |= _rows_of(_bad_text(arr, limit, required=name == "type"))
            elif name == "type":
                return None
        supers = columns.get("supertypes")
        if supers is not None and not pa.types.is_null(supers.type):
            rows |= _rows_of(_longer(supers, limits.MAX_SUPERTYPES))
            offsets, flat = _spans(supers)
            bad = _bad_text(flat, limits.MAX_TYPE_NAME_CHARS, required=True)
            rows |= _rows_of_items(bad, offsets)
        attrs = columns.get("attributes")
        if attrs is not None and not pa.types.is_null(attrs.type):
            rows |= _unproven_attributes(attrs)
    except _KERNEL_ERRORS:
        return None
    return rows


def _bad_text(arr: Array, limit: int, *, required: bool) -> Array:
    """True where a string is too long or would be stripped (or, if required, is empty)."""
    if pa.types.is_null(arr.type):
        return pa.repeat(pa.scalar(required), len(arr))
    if pa.types.is_string_view(arr.type):
        arr = arr.cast(pa.string())
    length = _kernels.utf8_length(arr)
    bad = _kernels.or_(
        _kernels.greater(length, limit),
        _kernels.not_equal(_kernels.utf8_trim(arr, _WHITESPACE), arr),
    )
    if required:
        bad = _kernels.or_(bad, _kernels.equal(length, 0))
    return cast(Array, _kernels.fill_null(bad, required))


def _longer(arr: Array, limit: int) -> Array:
    """True where a list (or map) has more than limit entries (a null one's, if any, too)."""
    offsets = cast("pa.ListArray[Any]", arr).offsets
    n = len(offsets) - 1
    lengths = _kernels.subtract(offsets.slice(1, n), offsets.slice(0, n))
    return cast(Array, _kernels.greater(lengths, limit))


def _rows_of(bad: Array) -> set[int]:
    return set(cast(list[int], _kernels.indices_nonzero(bad).to_pylist()))


def _rows_of_items(bad: Array, offsets: list[int]) -> set[int]:
    """The rows (by list offsets) holding an item that is bad."""
    items = cast(list[int], _kernels.indices_nonzero(bad).to_pylist())
    return {bisect.bisect_right(offsets, i) - 1 for i in items}


def _unproven_attributes(arr: Array) -> set[int]:
    """The rows with too many attributes, an empty or over-long key, or an over-long value."""
    t = arr.type
    if pa.types.is_struct(t):  # a field per key, a null field absent
        keys = [t.field(i).name for i in range(t.num_fields)]
        if len(keys) > limits.MAX_ATTRIBUTES or not all(
            0 < len(k) <= limits.MAX_ATTRIBUTE_KEY_CHARS for k in keys
        ):
            return set(range(len(arr)))
        rows: set[int] = set()
        for values in cast(pa.StructArray, arr).flatten():
            rows |= _rows_of(_too_long(values, limits.MAX_ATTRIBUTE_VALUE_CHARS))
        return rows
    offsets, start = _offsets(arr)
    if pa.types.is_map(t):
        maps = cast("pa.MapArray[Any, Any]", arr)
        key, value = (a.slice(start, offsets[-1]) for a in (maps.keys, maps.items))
    else:  # a list of key/value structs
        pairs = cast(pa.StructArray, cast("pa.ListArray[Any]", arr).values)
        key, value = (pairs.field(f).slice(start, offsets[-1]) for f in ("key", "value"))
    rows = _rows_of(_longer(arr, limits.MAX_ATTRIBUTES))
    bad_key = _kernels.or_(
        _too_long(key, limits.MAX_ATTRIBUTE_KEY_CHARS), _kernels.equal(_kernels.utf8_length(key), 0)
    )
    rows |= _rows_of_items(_kernels.fill_null(bad_key, False), offsets)
    rows |= _rows_of_items(_too_long(value, limits.MAX_ATTRIBUTE_VALUE_CHARS), offsets)
    return rows


def _too_long(arr: Array, limit: int) -> Array:
    if pa.types.is_string_view(arr.type):
        arr = arr.cast(pa.string())
    return cast(
        Array, _kernels.fill_null(_kernels.greater(_kernels.utf8_length(arr), limit), False)
    )


# Each reader turns one column into a list of Python values, one per row, hashable, in the
# form build_descriptor takes (or a _Bad saying why the value cannot be).


def _is_text(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return _is_text(t.value_type)
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t))


def _is_list(t: pa.DataType) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t))


def _wrong(label: str, t: pa.DataType, expected: str) -> BatchSchemaError:
    return BatchSchemaError(f"{label} is {t}: {expected} expected")


Read = tuple[list[Any], bool]
"""A column's values, and whether any of them is a _Bad."""


def _text(arr: Array, label: str) -> Read:
    if pa.types.is_null(arr.type):
        return [""] * len(arr), False
    if not _is_text(arr.type):
        raise _wrong(label, arr.type, "a string")
    values = arr.to_pylist()
    return (["" if v is None else v for v in values] if arr.null_count else values), False


def _code(arr: Array, label: str) -> Read:
    """`code` may be a number too (a provider's numeric code), as in a descriptor file."""
    if pa.types.is_integer(arr.type):
        return ["" if v is None else str(v) for v in arr.to_pylist()], False
    return _text(arr, label)


def _offsets(arr: Array) -> tuple[list[int], int]:
    """A list (or map) array's offsets rebased to start at 0, and where they started."""
    offsets = cast(list[int], cast("pa.ListArray[Any]", arr).offsets.to_pylist())
    start = offsets[0]
    return ([o - start for o in offsets] if start else offsets), start


def _spans(arr: Array) -> tuple[list[int], Array]:
    """A list array's offsets, rebased to start at 0, and the values they index."""
    offsets, start = _offsets(arr)
    return offsets, cast("pa.ListArray[Any]", arr).values.slice(start, offsets[-1])


def _per_row(arr: Array, offsets: list[int], items: list[Any]) -> list[Any]:
    """items regrouped into one tuple per row of the list array (a null list is empty)."""
    out: list[Any] = [tuple(items[a:b]) for a, b in itertools.pairwise(offsets)]
    if arr.null_count:
        out = [() if null else v for v, null in zip(out, arr.is_null().to_pylist(), strict=True)]
    return out


def _names(arr: Array, label: str) -> Read:
    """A list of strings per row, as a tuple; a null list is empty, a null name empty too."""
    if pa.types.is_null(arr.type):
        return [()] * len(arr), False
    item = arr.type.value_type if _is_list(arr.type) else None
    if item is None or not (_is_text(item) or pa.types.is_null(item)):
        raise _wrong(label, arr.type, "a list of strings")
    offsets, flat = _spans(arr)
    values = [""] * len(flat) if pa.types.is_null(flat.type) else flat.to_pylist()
    if flat.null_count:
        values = ["" if v is None else v for v in values]
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
    if not _is_text(arr.type):
        return _integers(arr, label)
    return _by_name(arr, parse_grpc_code)


def _origin(arr: Array, label: str) -> Read:
    """An origin by number (the proto's) or by its lower-case name; null is unspecified."""
    values, bad = _by_name(arr, _origin_named) if _is_text(arr.type) else _integers(arr, label)
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
    if pa.types.is_map(t) and _is_text(t.key_type) and _is_text(t.item_type):
        offsets, start = _offsets(arr)
        maps = cast("pa.MapArray[Any, Any]", arr)
        keys = maps.keys.slice(start, offsets[-1]).to_pylist()
        items = maps.items.slice(start, offsets[-1]).to_pylist()
        nulls = bool(maps.keys.null_count or maps.items.null_count)
        return _checked_pairs(arr, offsets, list(zip(keys, items, strict=True)), nulls)
    if pa.types.is_struct(t) and all(_is_text(t.field(i).type) for i in range(t.num_fields)):
        if not t.num_fields:
            return [()] * len(arr), False
        names = [t.field(i).name for i in range(t.num_fields)]
        columns = [c.to_pylist() for c in cast(pa.StructArray, arr).flatten()]
        rows = [
            tuple((k, v) for k, v in zip(names, values, strict=True) if v is not None)
            for values in zip(*columns, strict=True)
        ]
        return rows, False
    if _is_list(t) and pa.types.is_struct(t.value_type):
        item = t.value_type
        kinds = {item.field(i).name: item.field(i).type for i in range(item.num_fields)}
        if set(kinds) == {"key", "value"} and all(_is_text(x) for x in kinds.values()):
            offsets, flat = _spans(arr)
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
    suspects = range(len(rows)) if nulls else _rows_of(_longer(arr, 1))
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
    if not (_is_list(t) and pa.types.is_struct(t.value_type)):
        raise _wrong(label, t, "a list of cause structs")
    offsets, flat = _spans(arr)
    item = flat.type
    names = [item.field(i).name for i in range(item.num_fields)]
    _known(names, CAUSE_FIELDS, f"{label} (a cause)")
    if "type" not in names:
        raise BatchSchemaError(f"{label}: a cause struct needs a 'type' field")
    children = dict(zip(names, cast(pa.StructArray, flat).flatten(), strict=True))
    m = len(flat)
    fields = []
    bad = False
    for name in CAUSE_FIELDS:
        if name not in children:
            fields.append([_CAUSE_DEFAULTS[name]] * m)
            continue
        values, unreadable = _READERS[name](children[name], f"{label} cause field {name!r}")
        fields.append(values)
        bad |= unreadable
    causes: list[Any] = list(zip(*fields, strict=True))
    if flat.null_count:
        nulls = flat.is_null().to_pylist()
        causes = [_Bad("is null") if null else c for c, null in zip(causes, nulls, strict=True)]
        bad = True
    return _per_row(arr, offsets, causes), bad


_READERS: dict[str, Callable[[Array, str], Read]] = {
    "type": _text,
    "supertypes": _names,
    "http_status": _integers,
    "grpc_status": _grpc,
    "origin": _origin,
    "code": _code,
    "message": _text,
    "causes": _causes,
    "language": _text,
    "provider": _text,
    "attributes": _attributes,
}
_DEFAULTS: dict[str, Any] = {
    "type": "",
    "supertypes": (),
    "http_status": None,
    "grpc_status": None,
    "origin": 0,
    "code": "",
    "message": "",
    "causes": (),
    "language": "",
    "provider": "",
    "attributes": (),
}
_CAUSE_DEFAULTS = {name: _DEFAULTS[name] for name in CAUSE_FIELDS}
_STAND_IN_CAUSE = ("null", *tuple(_CAUSE_DEFAULTS.values())[1:])
"""Stands in for a null cause while the rest of its row is checked, so the causes after it
keep their numbers and it is not reported twice."""


# ---------------------------------------------------------------- classifying


@dataclass
class Coded:
    """Each row's answer code (null for a bad row) and error (null for a good one)."""

    codes: Array
    errors: Array

    @property
    def bad(self) -> int:
        return int(self.codes.null_count)


def answer_codes(decoded: Decoded, table: AnswerTable) -> Coded:
    """Classify each distinct descriptor once; spread the codes and errors over the rows."""
    ruleset = table.ruleset
    codes: list[int | None] = []
    errors: list[str | None] = []
    for d in decoded.distinct:
        if isinstance(d, Descriptor):
            codes.append(table.code(classify(ruleset, d)))
            errors.append(None)
        else:
            codes.append(None)
            errors.append(str(d))
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
    coded = answer_codes(decode(data, mapping), table)
    return append_answers(data, table, coded, prefix)


def append_answers(data: B, table: AnswerTable, coded: Coded, prefix: str = "") -> B:
    """data with the answer columns for these codes appended."""
    for name, column in table.columns(coded.codes, coded.errors, prefix):
        data = data.append_column(pa.field(name, column.type), column)
    return data
