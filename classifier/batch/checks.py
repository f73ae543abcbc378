"""The column checks: what the descriptor's fast path checks of each name, done for a whole
column at once by Arrow's kernels.

A row they prove good is built with `descriptor_from_row(..., proven=True)`, which skips
those checks; a row they do not prove is built the ordinary way, so they need only be
conservative: a row they pass must be one the ordinary path accepts unchanged.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any, cast

import pyarrow as pa

from classifier import limits
from classifier.batch.arrays import KERNEL_ERRORS, Array, list_offsets, list_spans, without_views
from classifier.batch.arrays import kernels as _kernels
from classifier.descriptor import FIELDS, NAME_LIMITS

_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""The characters `str.strip()` removes (those `str.isspace()` is true of)."""

_SINGLE_NAMES = frozenset({"type", "code", "label"})
"""The kinds of field that hold one name (type, code, language, provider)."""


def unproven(columns: Mapping[str, Array], n: int) -> set[int] | None:
    """The rows whose names the column checks do not prove good (None: no row is proven).

    Proven means: type, each supertype, code, language and provider need no
    stripping and are within their limits, type and the supertypes are not
    empty, there are not too many supertypes or attributes, and every
    attribute key and value is within its limit; language and provider are
    ASCII and lower case already (Python's `lower` and Arrow's agree only on
    ASCII), and the message needs no cutting (text read from Arrow is valid
    UTF-8, so it holds no lone surrogate). Statuses, origin and causes are
    left to `descriptor_from_row(..., proven=True)`.
    """
    try:
        rows: set[int] = set()
        for f in FIELDS:
            arr = columns.get(f.name)
            if arr is None or pa.types.is_null(arr.type):
                if f.kind == "type":
                    return None
            elif f.kind in _SINGLE_NAMES:
                if pa.types.is_integer(arr.type):  # a numeric code: digits, never too long
                    continue
                rows |= rows_of(_bad_text(arr, NAME_LIMITS[f.kind], required=f.kind == "type"))
                if f.kind == "label":
                    rows |= rows_of(_not_lower_ascii(arr))
            elif f.kind == "message":
                rows |= rows_of(_too_long(arr, limits.MAX_MESSAGE_CHARS))
            elif f.kind == "type_names":
                rows |= rows_of(longer(arr, limits.MAX_SUPERTYPES))
                offsets, flat = list_spans(arr)
                bad = _bad_text(flat, NAME_LIMITS[f.kind], required=True)
                rows |= _rows_of_items(bad, offsets)
            elif f.kind == "attributes":
                rows |= _unproven_attributes(arr)
    except KERNEL_ERRORS:
        return None
    return rows


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
            rows |= rows_of(_too_long(values, limits.MAX_ATTRIBUTE_VALUE_CHARS))
        return rows
    offsets, start = list_offsets(arr)
    if pa.types.is_map(t):
        maps = cast("pa.MapArray[Any, Any]", arr)
        key, value = (a.slice(start, offsets[-1]) for a in (maps.keys, maps.items))
    else:  # a list of key/value structs
        pairs = cast(pa.StructArray, cast("pa.ListArray[Any]", arr).values)
        key, value = (pairs.field(f).slice(start, offsets[-1]) for f in ("key", "value"))
    rows = rows_of(longer(arr, limits.MAX_ATTRIBUTES))
    bad_key = _kernels.or_(
        _too_long(key, limits.MAX_ATTRIBUTE_KEY_CHARS), _kernels.equal(_kernels.utf8_length(key), 0)
    )
    rows |= _rows_of_items(_kernels.fill_null(bad_key, False), offsets)
    rows |= _rows_of_items(_too_long(value, limits.MAX_ATTRIBUTE_VALUE_CHARS), offsets)
    return rows


def _too_long(arr: Array, limit: int) -> Array:
    arr = without_views(arr)
    return cast(
        Array, _kernels.fill_null(_kernels.greater(_kernels.utf8_length(arr), limit), False)
    )
