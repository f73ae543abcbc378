"""The per-kind readers: each turns one Arrow column into a list of Python values, one per
row, hashable, in the form `descriptor_from_row` takes (or a `Bad` saying why a value
cannot be one), checking the column's type for its field first.

Each column is taken into Python once; a text column's repeated values become one
shared str each (`_strings`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc
from pydantic_core import PydanticCustomError

from classifier.batch.arrays import (
    KERNEL_ERRORS,
    Array,
    is_list,
    is_text,
    list_offsets,
    list_spans,
)
from classifier.batch.arrays import kernels as _kernels
from classifier.batch.checks import longer, rows_of
from classifier.batch.mappings import BatchSchemaError, known
from classifier.descriptor import CAUSE_FIELD_NAMES, CAUSE_FIELDS
from classifier.field_kinds import FieldKind
from classifier.source.documents import parse_grpc_code, parse_origin
from classifier.taxonomy import Origin


@dataclass(frozen=True, slots=True)
class Bad:
    """A value that cannot be a descriptor field's: the row fails with this message."""

    message: str
    sub: str = ""
    """A suffix to the field's path: `['key']` for an attribute."""


def _wrong(label: str, t: pa.DataType, expected: str) -> BatchSchemaError:
    return BatchSchemaError(f"{label} is {t}: {expected} expected")


Read = tuple[list[Any], bool]
"""A column's values, and whether any of them is a Bad."""


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
        return values, any(type(v) is Bad for v in values)
    raise _wrong(label, t, "an integer")


def _whole(v: float | None) -> int | Bad | None:
    if v is None:
        return None
    if math.isfinite(v) and v.is_integer():
        return int(v)
    return Bad(f"{v} is not a whole number")


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
            parsed[v] = Bad(exc.message())
    return list(map(parsed.__getitem__, values)), any(type(v) is Bad for v in parsed.values())


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
    """Key/value pairs per row; a null key or value, or a key twice, makes the row a Bad.

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


def _pair_problem(pairs: tuple[tuple[str | None, str | None], ...]) -> Bad | None:
    seen: set[str] = set()
    for k, v in pairs:
        if k is None:
            return Bad("an attribute key must not be null")
        if v is None:
            return Bad("must not be null", f"[{k!r}]")
        if k in seen:
            return Bad(f"the key {k!r} appears twice")
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
    known(names, CAUSE_FIELD_NAMES, f"{label} (a cause)")
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
        values, unreadable = READERS[f.kind](children[f.name], f"{label} cause field {f.name!r}")
        fields.append(values)
        bad |= unreadable
    causes: list[Any] = list(zip(*fields, strict=True))
    if flat.null_count:
        nulls = flat.is_null().to_pylist()
        causes = [Bad("is null") if null else c for c, null in zip(causes, nulls, strict=True)]
        bad = True
    return _per_row(arr, offsets, causes), bad


READERS: dict[FieldKind, Callable[[Array, str], Read]] = {
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

MAY_BE_BAD: frozenset[FieldKind] = frozenset({"http_status", "grpc_status", "origin", "attributes"})
"""The kinds whose readers may give a Bad (a cause may hold one too, looked into cause by
cause)."""
