"""Where a batch keeps its descriptors: the *mappings* (docs/batch.md has the schema in
full), and the errors of a batch whose columns do not fit one.

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
file. A column of the wrong type for its field is a `BatchSchemaError`
naming it, before any row is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import pyarrow as pa

from classifier.batch.arrays import Array, Batch, is_text
from classifier.errors import ClassifierError


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


def column(data: Batch, name: str) -> Array:
    if name not in data.schema.names:
        raise BatchSchemaError(
            f"no column {name!r}; the columns are {', '.join(data.schema.names)}"
        )
    col = data.column(name)
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


def known(names: Iterable[str], allowed: Sequence[str], where: str) -> None:
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise BatchSchemaError(
            f"{where}: unknown field {unknown[0]!r}; the fields are {', '.join(allowed)}"
        )
