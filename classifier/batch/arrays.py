"""Small helpers over Arrow arrays that the batch readers, checks and row keys share."""

from __future__ import annotations

from typing import Any, TypeAlias, cast

import pyarrow as pa
import pyarrow.compute as pc

Batch: TypeAlias = pa.Table | pa.RecordBatch
Array: TypeAlias = "pa.Array[Any]"

kernels: Any = pc
"""pyarrow.compute, untyped: its stubs take only arrays of a declared type, and these
columns' types are checked when they are read."""
KERNEL_ERRORS = (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError)
"""What a kernel raises for a column type it does not take."""


def is_text(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return is_text(t.value_type)
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t))


def without_views(arr: Array) -> Array:
    """A string-view column as plain strings (several kernels take no views); others as they are."""
    return arr.cast(pa.string()) if pa.types.is_string_view(arr.type) else arr


def is_list(t: pa.DataType) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t))


def list_offsets(arr: Array) -> tuple[list[int], int]:
    """A list (or map) array's offsets rebased to start at 0, and where they started."""
    found = cast(list[int], cast("pa.ListArray[Any]", arr).offsets.to_pylist())
    start = found[0]
    return ([o - start for o in found] if start else found), start


def list_spans(arr: Array) -> tuple[list[int], Array]:
    """A list array's offsets, rebased to start at 0, and the values they index."""
    rebased, start = list_offsets(arr)
    return rebased, cast("pa.ListArray[Any]", arr).values.slice(start, rebased[-1])
