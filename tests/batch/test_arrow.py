"""The Arrow batch path gives exactly the engine's answers, and names every bad row's fields."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, cast

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from classifier import Ruleset
from classifier.answer import Classification
from classifier.batch import arrow, checks, distinct
from classifier.batch.arrow import (
    ANSWER_COLUMNS,
    BatchSchemaError,
    ColumnMapping,
    FlatColumns,
    JsonColumn,
    StructColumn,
    answer_schema,
    classify_batch,
    infer_mapping,
)
from classifier.descriptor import Descriptor, build_descriptor
from classifier.engine.evaluate import classify
from classifier.errors import DescriptorError
from classifier.regress.cases import find_case_files, read_case_file
from classifier.source.descriptor_file import descriptor_from_data
from tests import strategies
from tests.batch.tables import (
    DESCRIPTOR,
    FLAT_NAMES,
    answers,
    bad,
    engine_answers,
    expected,
    flat_table,
    json_table,
    struct_row,
    struct_table,
)
from tests.rules.corpus import load_corpus
from tests.support import BUNDLED_RULES
from tests.test_descriptor import inputs


def public_descriptors() -> list[Descriptor]:
    """The public corpus and every case of the bundled rules."""
    cases = [
        c.descriptor for f in find_case_files([BUNDLED_RULES]) for c in read_case_file(f).cases
    ]
    return [c.descriptor for c in load_corpus()] + cases


MAPPINGS: dict[str, tuple[Callable[[Sequence[Descriptor]], pa.Table], ColumnMapping]] = {
    "struct": (struct_table, StructColumn()),
    "flat": (flat_table, FlatColumns(FLAT_NAMES)),
    "json": (json_table, JsonColumn()),
}


@pytest.mark.parametrize("kind", list(MAPPINGS))
def test_the_whole_public_corpus_gets_the_engines_answers(bundled: Ruleset, kind: str) -> None:
    ds = public_descriptors()
    assert len(ds) > 500
    make, mapping = MAPPINGS[kind]
    table = make(ds)
    out = classify_batch(table, bundled, mapping)
    assert out.num_rows == len(ds)
    assert out.column_names == [*table.column_names, *ANSWER_COLUMNS]
    assert answers(out) == engine_answers(bundled, ds)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    strategies.rulesets(),
    st.lists(strategies.descriptors(), min_size=1, max_size=30),
    st.sampled_from(list(MAPPINGS)),
)
def test_generated_descriptors_get_the_engines_answers(
    rules: list[Any], ds: list[Descriptor], kind: str
) -> None:
    """Random rules that overlap, tie and conflict; each descriptor twice, so some repeat."""
    make, mapping = MAPPINGS[kind]
    rows = ds + ds[::-1]
    with strategies.compiled(rules) as ruleset:
        assert answers(classify_batch(make(rows), ruleset, mapping)) == engine_answers(
            ruleset, rows
        )


_ENCODABLE = st.text(max_size=8).filter(lambda t: not any(0xD800 <= ord(c) < 0xE000 for c in t))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(inputs, min_size=1, max_size=6))
def test_a_bad_row_gets_the_services_violations_and_a_good_one_its_answer(
    bundled: Ruleset, raw: list[dict[str, Any]]
) -> None:
    """Inputs near every limit: each row is what build_descriptor says, violation for violation.

    (Arrow strings are UTF-8, so messages with a lone surrogate, which the
    descriptor's own test covers, cannot be put in a batch.)
    """
    raw = [_encodable(kw) for kw in raw]
    rows = [
        {
            **kw,
            "origin": int(kw["origin"]),
            "causes": [c._asdict() for c in kw["causes"]],
            "attributes": None if kw["attributes"] is None else list(kw["attributes"].items()),
        }
        for kw in raw
    ]
    numbered = pa.struct(
        [f if f.name not in ("origin", "grpc_status") else (f.name, pa.int64()) for f in DESCRIPTOR]
    )
    numbered = _numbered_causes(numbered)
    out = classify_batch(pa.table({"descriptor": pa.array(rows, numbered)}), bundled)
    want = []
    for kw in raw:
        try:
            want.append(expected(_classify(bundled, build_descriptor(**kw))))
        except DescriptorError as exc:
            want.append(bad(bundled, str(exc)))
    assert answers(out) == want


def _encodable(kw: dict[str, Any]) -> dict[str, Any]:
    def clean(text: str) -> str:
        return "".join(c if not 0xD800 <= ord(c) < 0xE000 else "?" for c in text)

    return {
        **kw,
        "message": clean(kw["message"]),
        "causes": [c._replace(message=clean(c.message)) for c in kw["causes"]],
    }


def _numbered_causes(descriptor: pa.StructType) -> pa.StructType:
    fields = []
    for f in descriptor:
        if f.name == "causes":
            cause = f.type.value_type
            cause = pa.struct(
                [c if c.name != "grpc_status" else ("grpc_status", pa.int64()) for c in cause]
            )
            fields.append(pa.field("causes", pa.list_(cause)))
        else:
            fields.append(f)
    return pa.struct(fields)


def _classify(ruleset: Ruleset, d: Descriptor) -> Classification:
    return classify(ruleset, d)


def test_bad_rows_are_reported_in_place_and_never_classified(bundled: Ruleset) -> None:
    good = {"type": "openai.RateLimitError", "http_status": 429, "origin": "provider"}
    rows: list[dict[str, Any] | None] = [
        good,
        None,
        {"type": "a.B", "origin": "moon"},
        {"type": " ", "causes": [{"type": "x.Y"}, None, {"type": ""}]},
        {"type": "a.B", "attributes": [("k", None)]},
        {"type": "a.B", "http_status": 700, "grpc_status": "NOPE", "supertypes": ["", "x"]},
        good,
    ]
    out = classify_batch(struct_table([], id=[]).schema.empty_table(), bundled)
    assert out.num_rows == 0
    table = pa.table({"id": list(range(len(rows))), "descriptor": pa.array(rows, DESCRIPTOR)})
    got = answers(classify_batch(table, bundled))
    assert len(got) == len(rows)
    rate_limited = got[0]
    assert rate_limited["class_name"] == "RateLimited"
    assert got[-1] == rate_limited
    assert got[1:-1] == [
        bad(bundled, "descriptor: is null"),
        bad(
            bundled,
            "descriptor.origin: unknown origin 'moon'; known: provider, tool, guard, runtime, "
            "interceptor, reconciler, user",
        ),
        bad(
            bundled,
            "descriptor.causes[1]: is null; descriptor.type: must not be empty; "
            "descriptor.causes[2].type: must not be empty",
        ),
        bad(bundled, "descriptor.attributes['k']: must not be null"),
        bad(
            bundled,
            "descriptor.grpc_status: unknown gRPC status code 'NOPE'; known: OK, CANCELLED, "
            "UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS, "
            "PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE, "
            "UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED; "
            "descriptor.supertypes[0]: must not be empty; "
            "descriptor.http_status: 700 is not an HTTP status (100-599)",
        ),
    ]


def test_json_rows_are_read_as_classifier_diff_reads_a_line(bundled: Ruleset) -> None:
    texts = [
        '{"type": "a.B", "origin": "moon"}',
        "not json",
        "[1]",
        None,
        '{"descriptor": {"type": "tools.Boom", "origin": "tool"}, "answer": {}}',
        '{"type": "a.B", "colour": "red"}',
    ]
    got = answers(classify_batch(pa.table({"descriptor": texts}), bundled))
    assert [g["error"] for g in got] == [
        "descriptor.origin: unknown origin 'moon'; known: provider, tool, guard, runtime, "
        "interceptor, reconciler, user",
        "descriptor: not JSON: Expecting value (column 1)",
        "descriptor: must be a mapping",
        "descriptor: is null",
        None,
        "descriptor.colour: unknown key; valid keys: type, supertypes, http_status, grpc_status, origin, code, message, causes, language, provider, attributes",
    ]
    assert got[4]["class_name"] == "ToolError"


def test_other_shapes_of_a_value(bundled: Ruleset) -> None:
    """Attributes as key/value structs, statuses as floats (pandas' nullable integers), a
    duplicated map key, a numeric code."""
    kv = pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))
    table = pa.table(
        {
            "type": ["openai.RateLimitError", "a.B", "a.B", "a.B"],
            "http_status": pa.array([429.0, None, 429.5, None], pa.float64()),
            "origin": ["provider", "", None, "PROVIDER"],
            "code": pa.array([None, 408, None, 1], pa.int64()),
            "attributes": pa.array([[{"key": "k", "value": "v"}], [], None, None], kv),
            "pairs": pa.array(
                [[("k", "v")], [("k", "v"), ("k", "w")], None, None],
                pa.map_(pa.string(), pa.string()),
            ),
        }
    )
    got = answers(classify_batch(table.drop_columns(["pairs"]), bundled))
    assert got[0]["class_name"] == "RateLimited"
    assert got[1]["class_name"] == "Unknown"
    assert got[2]["error"] == "descriptor.http_status: 429.5 is not a whole number"
    assert got[3]["error"] is None
    dup = classify_batch(
        table.drop_columns(["attributes"]), bundled, FlatColumns({"attributes": "pairs"})
    )
    assert answers(dup)[1]["error"] == "descriptor.attributes: the key 'k' appears twice"
    want = expected(
        _classify(
            bundled,
            build_descriptor(type="a.B", code="408", attributes={}),
        )
    )
    assert got[1] == want


def test_chunked_tables_and_sliced_batches_read_the_right_rows(bundled: Ruleset) -> None:
    """Offsets into list, map and struct children are the slice's, not the buffer's."""
    ds = public_descriptors()[:300]
    table = struct_table(ds, n=list(range(len(ds))))
    chunked = pa.concat_tables([table.slice(0, 7), table.slice(7, 100), table.slice(107)])
    assert chunked.column("descriptor").num_chunks == 3
    assert answers(classify_batch(chunked, bundled)) == engine_answers(bundled, ds)
    batch = table.combine_chunks().to_batches()[0].slice(13, 150)
    out = classify_batch(batch, bundled)
    assert isinstance(out, pa.RecordBatch)
    assert out.column("n").to_pylist() == list(range(13, 163))
    assert answers(out) == engine_answers(bundled, ds[13:163])
    flat = flat_table(ds).slice(5, 200)
    assert answers(classify_batch(flat, bundled, FlatColumns(FLAT_NAMES))) == engine_answers(
        bundled, ds[5:205]
    )


def test_a_prefix_keeps_a_stored_class_column(bundled: Ruleset) -> None:
    table = struct_table(public_descriptors()[:5], error_class=[1, 2, 3, 4, 5])
    with pytest.raises(BatchSchemaError, match="already has a column 'error_class'"):
        classify_batch(table, bundled)
    out = classify_batch(table, bundled, prefix="new_")
    assert out.column("error_class").to_pylist() == [1, 2, 3, 4, 5]
    assert out.schema.field("new_error_class").type == pa.int32()
    assert out.select([f"new_{n}" for n in ANSWER_COLUMNS]).schema == answer_schema("new_")


@pytest.mark.parametrize(
    ("table", "mapping", "message"),
    [
        (pa.table({"x": [1]}), None, "no descriptor found: expected a 'descriptor' column"),
        (pa.table({"descriptor": [1]}), None, "column 'descriptor' is int64"),
        (pa.table({"type": [1]}), None, "column 'type' is int64: a string expected"),
        (pa.table({"type": ["a"], "http_status": ["429"]}), None, "'http_status' is string"),
        (
            pa.table({"descriptor": pa.array([{"type": "a", "colour": "red"}])}),
            None,
            "column 'descriptor': unknown field 'colour'",
        ),
        (
            pa.table({"descriptor": pa.array([{"message": "m"}])}),
            None,
            "'type' is missing",
        ),
        (pa.table({"t": ["a"]}), FlatColumns({"type": "exc"}), "mapped to column 'exc'"),
        (pa.table({"t": ["a"]}), FlatColumns({"colour": "t"}), "unknown field 'colour'"),
        (pa.table({"d": ["{}"]}), JsonColumn("descriptor"), "no column 'descriptor'"),
        (
            pa.table({"type": ["a"], "causes": pa.array([[{"kind": "x"}]])}),
            None,
            "unknown field 'kind'",
        ),
        (
            pa.table({"type": ["a"], "attributes": pa.array([{"n": 1}])}),
            None,
            "a map of strings to strings expected",
        ),
    ],
)
def test_columns_that_do_not_fit_are_named_before_any_row_is_read(
    bundled: Ruleset, table: pa.Table, mapping: Any, message: str
) -> None:
    with pytest.raises(BatchSchemaError, match=message.replace("(", r"\(").replace(")", r"\)")):
        classify_batch(table, bundled, mapping)


def test_the_mapping_is_inferred_from_the_schema() -> None:
    assert infer_mapping(pa.schema([("descriptor", DESCRIPTOR)])) == StructColumn()
    assert infer_mapping(pa.schema([("descriptor", pa.large_string())])) == JsonColumn()
    assert infer_mapping(pa.schema([("type", pa.string())])) == FlatColumns()
    assert json.dumps(FLAT_NAMES)


_CAUSES = st.lists(
    st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(["x.Cause", "a.A", "", None]),
                "supertypes": st.sampled_from([None, [], ["a.B"], ["a.B", None]]),
                "http_status": st.sampled_from([None, 429, 503]),
                "grpc_status": st.sampled_from([None, "UNAVAILABLE", "NOPE"]),
                "code": st.sampled_from([None, "", "c1"]),
                "message": st.sampled_from([None, "", "timeout here"]),
            }
        ),
    ),
    max_size=2,
)
_FIELD_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "type": st.sampled_from(["a.A", "a.B", " a.B", "", None]),
    "supertypes": st.sampled_from([None, [], ["a.C"], ["a.C", "a.B"], [None]]),
    "http_status": st.sampled_from([None, 429, 503, 99]),
    "grpc_status": st.sampled_from([None, "UNAVAILABLE", "14", "unavailable"]),
    "origin": st.sampled_from([None, "", "provider", "tool", "moon"]),
    "code": st.sampled_from([None, "", "c1", "c2"]),
    "message": st.sampled_from([None, "", "boom", "Rate Limit", "over quota"]),
    "causes": st.one_of(st.none(), _CAUSES),
    "language": st.sampled_from([None, "Python"]),
    "provider": st.sampled_from([None, "p1", "p2"]),
    "attributes": st.sampled_from(
        [None, [], [("k", "v1")], [("k", "v2")], [("k", None)], [("", "v")]]
    ),
}


@st.composite
def _near_rows(draw: st.DrawFn) -> list[dict[str, Any] | None]:
    """A row and variations of it, each differing in one or two fields (or null)."""
    base = draw(st.fixed_dictionaries(_FIELD_VALUES))
    rows: list[dict[str, Any] | None] = [base]
    for _ in range(draw(st.integers(1, 30))):
        if draw(st.integers(0, 15)) == 0:
            rows.append(None)
            continue
        changed = draw(st.lists(st.sampled_from(list(_FIELD_VALUES)), min_size=1, max_size=2))
        rows.append({**base, **{f: draw(_FIELD_VALUES[f]) for f in changed}})
    return draw(st.permutations(rows))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.rulesets(), _near_rows())
@example(
    [{"id": "r0", "when": {"message": "^boom"}, "class": "Timeout"}],
    [{"type": "a.B", "message": m} for m in ("boom", "x", "boom", None)],
)
def test_rows_deduplicated_by_arrow_get_what_each_row_gets_alone(
    rules: list[Any], rows: list[dict[str, Any] | None]
) -> None:
    """Rows from small pools (nulls, empty and null lists, bad values) repeat and nearly
    repeat: the batch's answers are each row's answer read on its own, so the keys Arrow's
    kernels build never merge two different rows."""
    table = pa.table({"descriptor": pa.array(rows, DESCRIPTOR)})
    with strategies.compiled(rules) as ruleset:
        together = answers(classify_batch(table, ruleset))
        alone = [answers(classify_batch(table.slice(i, 1), ruleset))[0] for i in range(len(rows))]
        assert together == alone


def test_the_column_checks_strip_what_str_strip_strips() -> None:
    """A name the column checks find unpadded is one str.strip() leaves alone."""
    spaces = "".join(chr(i) for i in range(sys.maxunicode + 1) if chr(i).isspace())
    assert spaces == checks._WHITESPACE


def _decoded_as_built(rows: list[dict[str, Any]]) -> None:
    """Every row's decoded descriptor (or violations) is build_descriptor's for the row."""
    decoded = arrow.decode(pa.table({"descriptor": pa.array(rows, DESCRIPTOR)}))
    for i, row in enumerate(rows):
        got = decoded.distinct[decoded.rows[i]]
        try:
            data = {**row, "attributes": dict(row.get("attributes") or [])}
            want: Descriptor | DescriptorError = descriptor_from_data(data)
        except DescriptorError as exc:
            want = exc
        if isinstance(want, DescriptorError):
            assert isinstance(got, DescriptorError), (row, got)
            assert got.violations == want.violations
        else:
            assert got == want, row


_PADDED = ["a.B", " a.B", "a.B\u3000", "\x1ca.B", "a.B\x85", "", "\u2028", "x" * 1024, "x" * 1025]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(_PADDED),
                "supertypes": st.lists(st.sampled_from(_PADDED), max_size=3),
                "code": st.sampled_from(["", "E1", " E1", "E1\xa0", "x" * 256, "x" * 257]),
                "language": st.sampled_from(["java", "Java", "java\u2003", "x" * 128, "x" * 129]),
                "provider": st.sampled_from(
                    ["", "openai", "OpenAI", "\topenai", "\u0130x", "\u0130" * 128]
                ),
                "message": st.sampled_from(["", "m", "\u00df \u00c9", "x" * 4096, "\u00e9" * 4097]),
                "attributes": st.dictionaries(
                    st.sampled_from(["", "k", " k", "k" * 256, "k" * 257]),
                    st.sampled_from(["", " v", "v" * 4096, "v" * 4097]),
                    max_size=3,
                ).map(lambda d: list(d.items())),
            }
        ),
        min_size=1,
        max_size=8,
    )
)
def test_names_padded_or_at_their_limits_are_built_as_build_descriptor_builds_them(
    rows: list[dict[str, Any]],
) -> None:
    """The column checks send a padded or over-long name, a label not lower-case ASCII and
    an over-long message the slow way, and prove the rest."""
    _decoded_as_built(rows)


def test_a_large_batch_of_distinct_rows_is_built_row_by_row_as_build_descriptor_builds_it() -> None:
    """Past the sample size every row distinct: read without the Arrow dedupe, bad rows
    planted among them still named as build_descriptor names them."""
    base = [struct_row(d) for d in public_descriptors()]
    rows = []
    for i in range(4 * distinct.SAMPLE_ROWS + 100):
        row = {**base[i % len(base)], "attributes": [("n", str(i))]}
        if i % 997 == 0:
            row["type"] = " padded.Type "
        if i % 1409 == 0:
            row["supertypes"] = ["ok.Super", ""]
        if i % 2003 == 0:
            row["attributes"] = [("n", "v" * 4097)]
        rows.append(row)
    table = pa.table({"descriptor": pa.array(rows, DESCRIPTOR)})
    assert distinct.looks_distinct(
        dict(
            zip(
                DESCRIPTOR.names,
                cast(pa.StructArray, table.column(0).combine_chunks()).flatten(),
                strict=True,
            )
        ),
        None,
        len(rows),
    )
    _decoded_as_built(rows)


def test_repeated_and_null_values_in_a_long_column_are_read_as_each_row_alone() -> None:
    """Past the length where a column's repeated values are read once and shared, every row
    (null names, codes, messages and attribute values among them) is read as it is alone."""
    rows: list[dict[str, Any]] = [
        {
            "type": ["a.B", " a.B", "c.D", ""][i % 4],
            "supertypes": [["x.Y", None], ["x.Y"], []][i % 3],
            "code": [None, "E1", "E1 "][i % 3],
            "message": [None, "m", f"m{i}"][i % 3],
            "language": ["Java", None][i % 2],
            "provider": "openai",
            "attributes": [[("k", "v")], [("k", None)], [("n", str(i % 7))]][i % 3],
        }
        for i in range(300)
    ]
    table = pa.table({"descriptor": pa.array(rows, DESCRIPTOR)})
    together = arrow.decode(table)
    for i in range(len(rows)):
        alone = arrow.decode(table.slice(i, 1))
        got, want = together.distinct[together.rows[i]], alone.distinct[alone.rows[0]]
        if isinstance(want, DescriptorError):
            assert isinstance(got, DescriptorError), (rows[i], got)
            assert got.violations == want.violations
        else:
            assert got == want, rows[i]
