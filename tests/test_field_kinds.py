"""The kinds' table owns validation: the fast path, tested field by field against it, the
column checks one per kind, the proof only they make, and every list of fields read
from the field table."""

from __future__ import annotations

import ast
from typing import Any, get_args

import pytest

from classifier.batch import checks
from classifier.descriptor import (
    CAUSE_FIELDS,
    FIELDS,
    CauseInput,
    DescriptorField,
    build_descriptor,
    descriptor_from_row,
    text_weight,
    well_formed,
)
from classifier.errors import DescriptorError
from classifier.field_kinds import ITEM_KIND, KINDS, FieldKind, Kind, attribute_problem
from classifier.server.observers.decisions import LINE_OVERHEAD, line_weight
from classifier.taxonomy import Origin
from classifier.unknowns.structure import KEY_FIELDS, SHOWN_FIELDS
from tests.support import ROOT

GOOD: dict[str, Any] = {
    "type": "a.B",
    "supertypes": (),
    "http_status": None,
    "grpc_status": None,
    "origin": Origin.unspecified,
    "code": "",
    "message": "",
    "causes": (),
    "language": "",
    "provider": "",
    "attributes": None,
}
"""A row with nothing wrong, each field's probes set one at a time."""


def _limit(kind: Kind) -> int:
    assert kind.limit is not None
    return kind.limit


def _probes(kind: Kind) -> list[Any]:
    """Values of a kind at and past each edge its table entry states."""
    if kind.shape == "one" and kind.limit is not None:
        n = _limit(kind)
        return ["a", " a ", "", "  ", "x" * n, "x" * (n + 1), f" {'x' * n} ", "\u0130" * n, "Ab"]
    if kind.shape == "names":
        n = _limit(kind)
        long = "x" * (_limit(ITEM_KIND) + 1)
        return [(), ("a",), ("a",) * n, ("a",) * (n + 1), (" a ",), ("",), ("a", " "), (long,)]
    if kind.shape == "causes":
        n = _limit(kind)
        return [(), (CauseInput("c"),) * n, (CauseInput("c"),) * (n + 1)]
    if kind.shape == "pairs":
        n = _limit(kind)
        key, value = kind.entry_limits
        return [
            None,
            {"k": "v"},
            {f"k{i}": "v" for i in range(n)},
            {f"k{i}": "v" for i in range(n + 1)},
            {"": "v"},
            {"k" * key: "v" * value},
            {"k" * (key + 1): "v"},
            {"k": "v" * (value + 1)},
        ]
    return [None, -1, 0, 1, 16, 17, 99, 100, 429, 599, 600, max(Origin), max(Origin) + 1]


def _violations(kind: Kind, value: Any) -> list[str]:
    """What the table says is wrong with a value of the kind (entries included)."""
    normal = kind.normalise(value)
    found = [] if (v := kind.violation(normal)) is None else [v]
    if kind.too_many(len(normal) if kind.limit is not None else 0) is not None:
        return found
    if kind.shape == "names":
        found += [v for n in normal if (v := ITEM_KIND.violation(ITEM_KIND.normalise(n)))]
    if kind.shape == "pairs":
        found += [p[1] for k, v in normal.items() if (p := attribute_problem(k, v))]
    return found


def _expected(kind: Kind, value: Any) -> Any:
    """The table's normalised value of an accepted value."""
    normal = kind.normalise(value)
    if kind.shape == "names":
        return tuple(ITEM_KIND.normalise(n) for n in normal)
    return kind.finish(normal)


def _cases(fields: tuple[DescriptorField, ...]) -> list[tuple[DescriptorField, Any]]:
    return [(f, value) for f in fields for value in _probes(KINDS[f.kind]) if f.kind != "causes"]


@pytest.mark.parametrize(("field", "value"), _cases(FIELDS), ids=repr)
def test_the_fast_path_accepts_a_field_exactly_as_its_kind_says(
    field: DescriptorField, value: Any
) -> None:
    """Field by field, at and past every edge of its kind: the hand-tuned fast path accepts
    the value exactly when the table finds nothing wrong, and keeps the table's normalised
    value; the row constructor names the field with the table's words when it refuses."""
    kind = KINDS[field.kind]
    row = [*GOOD.values()]
    row[FIELDS.index(field)] = value
    wrong = _violations(kind, value)
    built = well_formed(row)
    assert (built is not None) == (not wrong)
    if built is not None:
        assert getattr(built, field.name) == _expected(kind, value)
        return
    with pytest.raises(DescriptorError) as caught:
        descriptor_from_row(row)
    said = caught.value.violations
    assert [v.message for v in said] == wrong
    assert all(v.field.startswith(f"descriptor.{field.name}") for v in said)


@pytest.mark.parametrize(("field", "value"), _cases(CAUSE_FIELDS), ids=repr)
def test_the_fast_path_accepts_a_cause_field_exactly_as_its_kind_says(
    field: DescriptorField, value: Any
) -> None:
    kind = KINDS[field.kind]
    cause = list(CauseInput("c"))
    cause[CAUSE_FIELDS.index(field)] = value
    row = [*GOOD.values()]
    row[FIELDS.index(next(f for f in FIELDS if f.kind == "causes"))] = (tuple(cause),)
    wrong = _violations(kind, value)
    built = well_formed(row)
    assert (built is not None) == (not wrong)
    if built is not None:
        assert getattr(built.causes[0], field.name) == _expected(kind, value)
        return
    with pytest.raises(DescriptorError) as caught:
        descriptor_from_row(row)
    said = caught.value.violations
    assert [v.message for v in said] == wrong
    assert all(v.field.startswith(f"descriptor.causes[0].{field.name}") for v in said)


@pytest.mark.parametrize("count", [0, 1, 4, 5, 6])
def test_the_causes_limit_is_the_tables(count: int) -> None:
    kind = KINDS["causes"]
    causes = [CauseInput("c")] * count
    if count <= _limit(kind):
        assert len(build_descriptor(type="a", causes=causes).causes) == count
        return
    with pytest.raises(DescriptorError) as caught:
        build_descriptor(type="a", causes=causes)
    assert [v.message for v in caught.value.violations] == [kind.too_many(count)]


def test_every_kind_has_an_entry_and_a_column_check() -> None:
    """The table, the column checks and the field table name the same kinds; a kind the
    fast path skips for a proven row has a check that proves something."""
    kinds = set(get_args(FieldKind))
    assert set(KINDS) == kinds
    assert set(checks.COLUMN_CHECKS) == kinds
    assert {f.kind for f in FIELDS} == kinds
    for name, kind in KINDS.items():
        idle = checks.COLUMN_CHECKS[name] is checks._checked_in_every_row
        assert idle == (not kind.proven_by_columns), name


def _calls(path: Any, name: str) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == name)
            or (isinstance(node.func, ast.Attribute) and node.func.attr == name)
        )
    ]


def test_only_the_column_checks_make_a_proof() -> None:
    """`Proven` is made in one place, from columns the checks looked at: no other module
    (and no test) builds one to let a row skip its checks."""
    makers = [
        str(path.relative_to(ROOT))
        for folder in ("classifier", "tests", "benchmarks", "tools")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if _calls(path, "Proven")
    ]
    assert makers == ["classifier/batch/checks.py"]
    assert len(_calls(ROOT / "classifier/batch/checks.py", "Proven")) == 1


def test_the_fields_reports_show_are_every_single_valued_field_of_the_key() -> None:
    """SHOWN_FIELDS reads the field table: every single-valued field of the structural key
    but the type (which comes first), in the order the table's `shown` gives."""
    single = {f.name for f in KEY_FIELDS if KINDS[f.kind].shape == "one" and f.kind != "type"}
    assert set(SHOWN_FIELDS) == single
    assert len(SHOWN_FIELDS) == len(single)
    shown = {f.name: f.shown for f in FIELDS}
    assert [shown[n] for n in SHOWN_FIELDS] == sorted(shown[n] for n in SHOWN_FIELDS)
    assert SHOWN_FIELDS[0] == "language"


_TEXT: dict[str, Any] = {
    "type": "t" + "T" * 50,
    "supertypes": ("S" * 50,),
    "code": "C" * 50,
    "message": "M" * 50,
    "causes": (CauseInput("c" * 50),),
    "language": "l" * 50,
    "provider": "p" * 50,
    "attributes": {"k" * 25: "v" * 25},
}


@pytest.mark.parametrize("name", sorted(_TEXT))
def test_a_decisions_line_weight_counts_every_field_of_text(name: str) -> None:
    """Each field that holds text adds at least its length to the weight the decision log
    budgets for (before, `line_weight` left out the language)."""
    bare = build_descriptor(type="t")
    kw = {"type": "t", name: _TEXT[name]}
    full = build_descriptor(**kw)
    assert text_weight(full) - text_weight(bare) >= 50
    assert line_weight(full) == LINE_OVERHEAD + text_weight(full)
