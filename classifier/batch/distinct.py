"""Finding a batch's distinct rows in Arrow: one key string per row, made by Arrow's
kernels alone, so identical rows are found in C++ and only the first of each is read
into Python (unless a sample of the rows has no repeat)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc

from classifier.batch.arrays import Array, is_list, list_offsets, list_spans, without_views
from classifier.descriptor import FIELD_NAMES

SAMPLE_ROWS = 1024
"""How many rows `looks_distinct` compares: runs of consecutive rows spread over the batch,
so a failure repeated in a burst and one repeated all through the batch are both seen."""
SAMPLE_RUNS = 8


def looks_distinct(columns: Mapping[str, Array], nulls: Array | None, n: int) -> bool:
    """Whether no two rows of a sample are equal: then the batch is read straight into
    Python without hashing every row first (which saves work only where rows repeat, and
    costs as much as reading them where none do); a repeat the sample misses is built twice."""
    if n < 4 * SAMPLE_ROWS:
        return False
    run, step = SAMPLE_ROWS // SAMPLE_RUNS, n // SAMPLE_RUNS
    picks = pa.array([r * step + i for r in range(SAMPLE_RUNS) for i in range(run)], pa.int64())
    sample = {name: column.take(picks) for name, column in columns.items()}
    keys = row_keys(sample, None if nulls is None else nulls.take(picks))
    return keys is not None and len(pc.unique(keys)) == len(picks)


def row_keys(columns: Mapping[str, Array], nulls: Array | None) -> Array | None:
    """One string per row, equal for two rows exactly when all their values are equal.

    Made by Arrow's kernels alone: each leaf column dictionary-encoded to
    numbers (nulls included), lists and structs joined with a separator of
    their own nesting level, so the string parses back one way only. None
    when a column's type is one the kernels do not take: then every row is
    read in Python.
    """
    try:
        pieces = [_key(columns[name], 1) for name in FIELD_NAMES if name in columns]
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
        offsets, start = list_offsets(arr)
        entries = _join_columns(
            [
                _key(maps.keys.slice(start, offsets[-1]), depth + 2),
                _key(maps.items.slice(start, offsets[-1]), depth + 2),
            ],
            _SEPARATORS[depth + 1],
        )
        return _joined(arr, offsets, entries, sep)
    if is_list(t):
        offsets, flat = list_spans(arr)
        return _joined(arr, offsets, _key(flat, depth + 1), sep)
    if pa.types.is_struct(t):
        children = cast(pa.StructArray, arr).flatten()
        pieces = [_key(c, depth + 1) for c in children]
        pieces.append(pc.cast(arr.is_null(), pa.string()))
        return _join_columns(pieces, sep)
    arr = without_views(arr)
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
