"""Descriptors as Arrow tables in each column mapping, and the answers the engine gives them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from classifier.answer import Classification
from classifier.batch.arrow import ANSWER_COLUMNS
from classifier.descriptor import Cause, Descriptor
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset
from classifier.source.descriptor_file import descriptor_dict
from classifier.taxonomy import GRPC_CODE_NAMES

NAMES = pa.list_(pa.string())
CAUSE = pa.struct(
    [
        ("type", pa.string()),
        ("supertypes", NAMES),
        ("http_status", pa.int32()),
        ("grpc_status", pa.string()),
        ("code", pa.string()),
        ("message", pa.string()),
    ]
)
DESCRIPTOR = pa.struct(
    [
        ("type", pa.string()),
        ("supertypes", NAMES),
        ("http_status", pa.int64()),
        ("grpc_status", pa.string()),
        ("origin", pa.string()),
        ("code", pa.string()),
        ("message", pa.string()),
        ("causes", pa.list_(CAUSE)),
        ("language", pa.string()),
        ("provider", pa.string()),
        ("attributes", pa.map_(pa.string(), pa.string())),
    ]
)
"""The descriptor-file shape as a struct: origin and gRPC codes by name."""


def _cause(c: Cause) -> dict[str, Any]:
    return {
        "type": c.type,
        "supertypes": list(c.supertypes),
        "http_status": c.http_status,
        "grpc_status": None if c.grpc_status is None else GRPC_CODE_NAMES[c.grpc_status],
        "code": c.code,
        "message": c.message,
    }


def struct_row(d: Descriptor) -> dict[str, Any]:
    return {
        "type": d.type,
        "supertypes": list(d.supertypes),
        "http_status": d.http_status,
        "grpc_status": None if d.grpc_status is None else GRPC_CODE_NAMES[d.grpc_status],
        "origin": d.origin.name,
        "code": d.code,
        "message": d.message,
        "causes": [_cause(c) for c in d.causes],
        "language": d.language,
        "provider": d.provider,
        "attributes": list(d.attributes.items()),
    }


def struct_table(ds: Sequence[Descriptor], **extra: Sequence[Any]) -> pa.Table:
    """A `descriptor` struct column (and any extra columns)."""
    columns = {**extra, "descriptor": pa.array([struct_row(d) for d in ds], DESCRIPTOR)}
    return pa.table(columns)


FLAT_NAMES = {"type": "exc_type", "http_status": "status", "causes": "inner"}
"""Three fields under other names; the rest under their own."""


def flat_table(ds: Sequence[Descriptor]) -> pa.Table:
    """A column per field, origin and gRPC codes by number, attributes a struct of strings."""
    keys = sorted({k for d in ds for k in d.attributes})
    attributes = pa.struct([(k, pa.string()) for k in keys])
    numbered_cause = pa.struct(
        [f if f.name != "grpc_status" else ("grpc_status", pa.int8()) for f in CAUSE]
    )
    return pa.table(
        {
            "run_id": pa.array(range(len(ds)), pa.int64()),
            "exc_type": pa.array([d.type for d in ds], pa.string()),
            "supertypes": pa.array([list(d.supertypes) for d in ds], pa.large_list(pa.string())),
            "status": pa.array([d.http_status for d in ds], pa.int16()),
            "grpc_status": pa.array([d.grpc_status for d in ds], pa.int32()),
            "origin": pa.array([int(d.origin) for d in ds], pa.int8()),
            "code": pa.array([d.code for d in ds], pa.large_string()),
            "message": pa.array([d.message for d in ds], pa.string()),
            "inner": pa.array(
                [[{**_cause(c), "grpc_status": c.grpc_status} for c in d.causes] for d in ds],
                pa.list_(numbered_cause),
            ),
            "language": pa.array([d.language for d in ds], pa.string()).dictionary_encode(),
            "provider": pa.array([d.provider for d in ds], pa.string()),
            "attributes": pa.array(
                [{k: d.attributes.get(k) for k in keys} for d in ds], attributes
            ),
        }
    )


def json_table(ds: Sequence[Descriptor]) -> pa.Table:
    """JSON text in the descriptor-file shape, every other line as a decision-log line."""
    texts = [
        json.dumps(descriptor_dict(d) if i % 2 else {"descriptor": descriptor_dict(d), "ts": i})
        for i, d in enumerate(ds)
    ]
    return pa.table({"descriptor": pa.array(texts, pa.string())})


def expected(c: Classification) -> dict[str, Any]:
    """The answer columns a row classified as c must have."""
    return {
        "error_class": int(c.error_class),
        "class_name": c.error_class.name,
        "effect": c.effect.label,
        "retryable": c.retryable,
        "action_id": c.action.id,
        "rule_id": c.rule_id,
        "unknown_reason": c.unknown_reason.name,
        "ruleset_version": c.ruleset_version,
        "ruleset_digest": c.ruleset_digest,
        "error": None,
    }


def engine_answers(ruleset: Ruleset, ds: Sequence[Descriptor]) -> list[dict[str, Any]]:
    return [expected(classify(ruleset, d)) for d in ds]


def answers(table: pa.Table | pa.RecordBatch, prefix: str = "") -> list[dict[str, Any]]:
    """The answer columns of every row, without the prefix."""
    names = [f"{prefix}{n}" for n in ANSWER_COLUMNS]
    rows = table.select(names).to_pylist()
    return [{n: row[f"{prefix}{n}"] for n in ANSWER_COLUMNS} for row in rows]


def bad(ruleset: Ruleset, error: str) -> dict[str, Any]:
    """The answer columns of a bad row."""
    out: dict[str, Any] = dict.fromkeys(ANSWER_COLUMNS)
    out.update(ruleset_version=ruleset.version, ruleset_digest=ruleset.digest, error=error)
    return out
