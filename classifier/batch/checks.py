"""The kinds' column checks: what the descriptor's fast path checks of each kind of field,
done for a whole column at once by Arrow's kernels (`COLUMN_CHECKS`, one per kind of
`classifier.field_kinds.KINDS`, each reading its kind's limits).

A row they prove good is handed a `Proven` (`proofs`: the only maker of one) and built
by `descriptor_from_row(..., proven=...)`, which skips those checks; a row they do not
prove is built the ordinary way, so they need only be conservative: a row they pass must
be one the ordinary path accepts unchanged.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from typing import Any, cast

import pyarrow as pa

from classifier.batch.arrays import KERNEL_ERRORS, Array, list_offsets, list_spans, without_views
from classifier.batch.arrays import kernels as _kernels
from classifier.descriptor import FIELDS, Proven
from classifier.field_kinds import KINDS, FieldKind

_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""The characters `str.strip()` removes (those `str.isspace()` is true of)."""

ColumnCheck = Callable[[Array], set[int]]
"""A kind's column check: the rows of a (non-null) column whose values it does not prove
good (need no normalising and are within their kind's limits)."""

_PROVEN = Proven()
"""The one proof, handed only to rows the column checks passed (`proofs`)."""


def proofs(columns: Mapping[str, Array], n: int, rows: list[int]) -> list[Proven | None]:
    """For each of `rows` (places in the batch of n rows), the proof that the column checks
    passed its names, or None: the only way a row gets one."""
    refused = unproven(columns, n)
    if refused is None:
        return [None] * len(rows)
    if not refused:
        return [_PROVEN] * len(rows)
    return [None if i in refused else _PROVEN for i in rows]


def unproven(columns: Mapping[str, Array], n: int) -> set[int] | None:
    """The rows whose names the column checks do not prove good (None: no row is proven).

    Each field's column goes through its kind's check (`COLUMN_CHECKS`); a field without
    a column (or with a null one) holds its default, which is good, unless it is the
    type, which is required. Statuses, origin and causes are left to
    `descriptor_from_row`, which checks them in every row, proven or not.
    """
    try:
        rows: set[int] = set()
        for f in FIELDS:
            arr = columns.get(f.name)
            if arr is None or pa.types.is_null(arr.type):
                if KINDS[f.kind].required:
                    return None
            else:
                rows |= COLUMN_CHECKS[f.kind](arr)
    except KERNEL_ERRORS:
        return None
    return rows


def _type_column(arr: Array) -> set[int]:
    """Names that need no stripping, within their limit, and (if required) not empty."""
    kind = KINDS["type"]
    return rows_of(_bad_text(arr, kind.limit or 0, required=kind.required))


def _code_column(arr: Array) -> set[int]:
    """As a name; a numeric code (digits, never too long) is good as it is."""
    if pa.types.is_integer(arr.type):
        return set()
    return rows_of(_bad_text(arr, KINDS["code"].limit or 0, required=KINDS["code"].required))


def _label_column(arr: Array) -> set[int]:
    """As a name, and ASCII lower case already (Python's `lower` and Arrow's agree only on
    ASCII, and the label's normalising lower-cases it)."""
    kind = KINDS["label"]
    return rows_of(_bad_text(arr, kind.limit or 0, required=kind.required)) | rows_of(
        _not_lower_ascii(arr)
    )


def _message_column(arr: Array) -> set[int]:
    """Within the length a message is cut to (text read from Arrow is valid UTF-8, so it
    holds no lone surrogate)."""
    return rows_of(_too_long(arr, KINDS["message"].limit or 0))


def _names_column(arr: Array) -> set[int]:
    """Not too many names, each as a type's."""
    item = KINDS["type"]
    rows = rows_of(longer(arr, KINDS["type_names"].limit or 0))
    offsets, flat = list_spans(arr)
    bad = _bad_text(flat, item.limit or 0, required=item.required)
    return rows | _rows_of_items(bad, offsets)


def _checked_in_every_row(arr: Array) -> set[int]:
    """Nothing to prove: the row constructor checks these (statuses, origin, causes) in
    every row, proven or not."""
    return set()


def _bad_text(arr: Array, limit: int, *, required: bool) -> Array:
    """True where a string is too long or would be stripped (or, if required, is empty)."""
    if pa.types.is_null(arr.type):
        return pa.repeat(pa.scalar(required), len(arr))
    arr = without_views(arr)
    length = _kernels.utf8_length(arr)
    bad = _kernels.or_(
        _kernels.greater(length, limit),
        _kernels.not_equal(_kernels.utf8_trim(arr, _WHITESPACE), arr),
    )
    if required:
        bad = _kernels.or_(bad, _kernels.equal(length, 0))
    return cast(Array, _kernels.fill_null(bad, required))


def _not_lower_ascii(arr: Array) -> Array:
    """True where a label is not ASCII or not lower case (a null one is neither)."""
    arr = without_views(arr)
    bad = _kernels.or_(
        _kernels.invert(_kernels.string_is_ascii(arr)),
        _kernels.not_equal(_kernels.ascii_lower(arr), arr),
    )
    return cast(Array, _kernels.fill_null(bad, False))


def longer(arr: Array, limit: int) -> Array:
    """True where a list (or map) has more than limit entries (a null one's, if any, too)."""
    offsets = cast("pa.ListArray[Any]", arr).offsets
    n = len(offsets) - 1
    lengths = _kernels.subtract(offsets.slice(1, n), offsets.slice(0, n))
    return cast(Array, _kernels.greater(lengths, limit))


def rows_of(bad: Array) -> set[int]:
    return set(cast(list[int], _kernels.indices_nonzero(bad).to_pylist()))


def _rows_of_items(bad: Array, offsets: list[int]) -> set[int]:
    """The rows (by list offsets) holding an item that is bad."""
    items = cast(list[int], _kernels.indices_nonzero(bad).to_pylist())
    return {bisect.bisect_right(offsets, i) - 1 for i in items}


def _attributes_column(arr: Array) -> set[int]:
    """The rows with too many attributes, an empty or over-long key, or an over-long value."""
    kind = KINDS["attributes"]
    count = kind.limit or 0
    key_chars, value_chars = kind.entry_limits
    t = arr.type
    if pa.types.is_struct(t):  # a field per key, a null field absent
        keys = [t.field(i).name for i in range(t.num_fields)]
        if len(keys) > count or not all(0 < len(k) <= key_chars for k in keys):
            return set(range(len(arr)))
        rows: set[int] = set()
        for values in cast(pa.StructArray, arr).flatten():
            rows |= rows_of(_too_long(values, value_chars))
        return rows
    offsets, start = list_offsets(arr)
    if pa.types.is_map(t):
        maps = cast("pa.MapArray[Any, Any]", arr)
        key, value = (a.slice(start, offsets[-1]) for a in (maps.keys, maps.items))
    else:  # a list of key/value structs
        pairs = cast(pa.StructArray, cast("pa.ListArray[Any]", arr).values)
        key, value = (pairs.field(f).slice(start, offsets[-1]) for f in ("key", "value"))
    rows = rows_of(longer(arr, count))
    bad_key = _kernels.or_(_too_long(key, key_chars), _kernels.equal(_kernels.utf8_length(key), 0))
    rows |= _rows_of_items(_kernels.fill_null(bad_key, False), offsets)
    rows |= _rows_of_items(_too_long(value, value_chars), offsets)
    return rows


def _too_long(arr: Array, limit: int) -> Array:
    arr = without_views(arr)
    return cast(
        Array, _kernels.fill_null(_kernels.greater(_kernels.utf8_length(arr), limit), False)
    )


COLUMN_CHECKS: dict[FieldKind, ColumnCheck] = {
    "type": _type_column,
    "type_names": _names_column,
    "http_status": _checked_in_every_row,
    "grpc_status": _checked_in_every_row,
    "origin": _checked_in_every_row,
    "code": _code_column,
    "message": _message_column,
    "causes": _checked_in_every_row,
    "label": _label_column,
    "attributes": _attributes_column,
}
"""Each kind's column check: those the fast path skips for a proven row
(`Kind.proven_by_columns`) prove something; the rest prove nothing, and need not."""
