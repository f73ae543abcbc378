"""Descriptor normalisation: the one-pass check for well-formed input agrees with the field-by-field one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from classifier import limits
from classifier.batch import checks
from classifier.descriptor import (
    FIELD_NAMES,
    CauseInput,
    Descriptor,
    Proven,
    _validated,
    build_descriptor,
    descriptor_from_row,
    well_formed,
)
from classifier.errors import DescriptorError
from classifier.field_kinds import utf8_text
from classifier.taxonomy import Origin

# Values near every limit and edge: blank, padded, too long, out of range.
names = st.one_of(
    st.sampled_from(["a.B", " a.B ", "", "  ", "java.io.IOException", "x" * 1024, "x" * 1025]),
    st.text(max_size=6),
)
labels = st.one_of(
    st.sampled_from(["", " Java ", "DOTNET", "x" * 128, "x" * 129]), st.text(max_size=4)
)
codes = st.one_of(st.sampled_from(["", " E1 ", "x" * 256, "x" * 257]), st.text(max_size=4))
http = st.one_of(st.none(), st.sampled_from([99, 100, 429, 599, 600, -1]))
grpc = st.one_of(st.none(), st.sampled_from([-1, 0, 4, 16, 17]))
origins = st.one_of(st.sampled_from(list(Origin)), st.integers(-1, 9))
messages = st.one_of(
    st.text(max_size=8),
    st.just("m" * (limits.MAX_MESSAGE_CHARS + 5)),
    st.sampled_from(["\ud800", "a\udc00b", "\ud83d\ude00"]),
)
causes = st.builds(
    CauseInput,
    type=names,
    supertypes=st.lists(names, max_size=3),
    http_status=http,
    grpc_status=grpc,
    code=codes,
    message=messages,
)
attributes = st.one_of(
    st.none(),
    st.dictionaries(
        st.one_of(st.text(max_size=3), st.just("k" * 257)),
        st.one_of(st.text(max_size=3), st.just("v" * 4097)),
        max_size=3,
    ),
    st.just({f"k{i}": "v" for i in range(limits.MAX_ATTRIBUTES + 1)}),
)
inputs = st.fixed_dictionaries(
    {
        "type": names,
        "supertypes": st.one_of(
            st.lists(names, max_size=4), st.just(["a"] * (limits.MAX_SUPERTYPES + 1))
        ),
        "http_status": http,
        "grpc_status": grpc,
        "origin": origins,
        "code": codes,
        "message": messages,
        "causes": st.one_of(
            st.lists(causes, max_size=2),
            st.just([CauseInput("c")] * (limits.MAX_CAUSES + 1)),
        ),
        "language": labels,
        "provider": labels,
        "attributes": attributes,
    }
)


def _row(kw: dict[str, Any]) -> tuple[Any, ...]:
    """The keywords as a row, in the field table's order."""
    return tuple(kw[name] for name in FIELD_NAMES)


def _slow(kw: dict[str, Any]) -> Descriptor | DescriptorError:
    try:
        return _validated(_row(kw), "descriptor")
    except DescriptorError as exc:
        return exc


@settings(max_examples=600, deadline=None)
@given(inputs)
def test_the_quick_check_accepts_only_what_the_full_check_accepts_and_builds_the_same(
    kw: dict[str, Any],
) -> None:
    """Whatever the one-pass check builds, the field-by-field path builds too, equal and unrefused."""
    quick = well_formed(_row(kw))
    slow = _slow(kw)
    if quick is not None:
        assert isinstance(slow, Descriptor), slow
        assert quick == slow
        assert quick.chain == slow.chain


@settings(max_examples=300, deadline=None)
@given(inputs)
def test_build_descriptor_refuses_exactly_what_the_full_check_refuses(kw: dict[str, Any]) -> None:
    """build_descriptor's answer (descriptor or violations) is the full check's answer."""
    slow = _slow(kw)
    try:
        got: Descriptor | DescriptorError = build_descriptor(**kw)
    except DescriptorError as exc:
        got = exc
    if isinstance(slow, DescriptorError):
        assert isinstance(got, DescriptorError)
        assert got.violations == slow.violations
    else:
        assert got == slow


def test_a_generator_of_supertypes_is_read_once_and_kept() -> None:
    """Supertypes given as a generator survive the quick check that reads them first."""
    d = build_descriptor(type="a.B", supertypes=(s for s in [" x.Y ", "z.W"]))
    assert d.supertypes == ("x.Y", "z.W")


def test_a_blank_supertype_in_a_generator_is_still_named() -> None:
    """A bad name inside a generator is reported by its index, as for a list."""
    with pytest.raises(DescriptorError) as caught:
        build_descriptor(type="a.B", supertypes=(s for s in ["x.Y", " "]))
    assert [v.field for v in caught.value.violations] == ["descriptor.supertypes[1]"]


def test_the_chain_is_the_type_then_its_supertypes() -> None:
    """chain is computed once, at construction, from the normalised names."""
    d = build_descriptor(type=" a.B ", supertypes=[" c.D", "e.F "])
    assert d.chain == ("a.B", "c.D", "e.F")
    assert Descriptor(type="x", supertypes=("y",)).chain == ("x", "y")


@pytest.mark.parametrize("quick", [True, False])
def test_a_lone_surrogate_in_a_message_becomes_a_replacement_character(quick: bool) -> None:
    """JSON's "\\ud800" makes a message UTF-8 cannot carry; it is mended, not a crash later."""
    kw: dict[str, Any] = {
        "type": "a.B",
        "supertypes": (),
        "http_status": None,
        "grpc_status": None,
        "origin": Origin.unspecified,
        "code": "",
        "message": "x\ud800y \ud83d\ude00",
        "causes": [CauseInput("c.D", message="\udc00")],
        "language": "",
        "provider": "",
        "attributes": None,
    }
    d = build_descriptor(**kw) if quick else _validated(_row(kw), "descriptor")
    assert d.message == "x\ufffdy \U0001f600"
    assert d.causes[0].message == "\ufffd"
    assert d.message.encode() == "x\ufffdy \U0001f600".encode()


def _proven(kw: dict[str, Any]) -> bool:
    """What the Arrow column checks prove before a row is built with `proven=True`."""

    def name(s: str, limit: int, required: bool = False) -> bool:
        return s == s.strip() and len(s) <= limit and (bool(s) or not required)

    attrs = kw["attributes"] or {}
    return (
        name(kw["type"], limits.MAX_TYPE_NAME_CHARS, True)
        and len(kw["supertypes"]) <= limits.MAX_SUPERTYPES
        and all(name(s, limits.MAX_TYPE_NAME_CHARS, True) for s in kw["supertypes"])
        and name(kw["code"], limits.MAX_CODE_CHARS)
        and name(kw["language"], limits.MAX_LABEL_CHARS)
        and name(kw["provider"], limits.MAX_LABEL_CHARS)
        and all(s.isascii() and s == s.lower() for s in (kw["language"], kw["provider"]))
        and len(kw["message"]) <= limits.MAX_MESSAGE_CHARS
        and kw["message"] == utf8_text(kw["message"])  # what text decoded from UTF-8 is
        and len(attrs) <= limits.MAX_ATTRIBUTES
        and all(0 < len(k) <= limits.MAX_ATTRIBUTE_KEY_CHARS for k in attrs)
        and all(len(v) <= limits.MAX_ATTRIBUTE_VALUE_CHARS for v in attrs.values())
    )


def _proof(kw: dict[str, Any]) -> Proven | None:
    """What the column checks say of the row's names, read from a one-row Arrow table of
    them (None too for a name Arrow cannot hold: a lone surrogate)."""
    import pyarrow as pa

    names = ("type", "supertypes", "code", "language", "provider", "message")
    try:
        columns = {n: pa.array([kw[n]]) for n in names}
        columns["attributes"] = pa.array(
            [list((kw["attributes"] or {}).items())], pa.map_(pa.string(), pa.string())
        )
    except (UnicodeEncodeError, pa.ArrowException):
        return None
    if not kw["supertypes"]:
        columns["supertypes"] = pa.array([[]], pa.list_(pa.string()))
    return checks.proofs(columns, 1, [0])[0]


@settings(max_examples=600, deadline=None)
@given(inputs)
def test_the_proven_build_is_build_descriptors_answer(kw: dict[str, Any]) -> None:
    """The column checks prove a row's names only when they are good (the model above), and
    given their proof the fast path builds what build_descriptor builds, and refuses (None,
    for the field-by-field path to name why) only what it refuses; the row constructor
    with the proof gives build_descriptor's answer either way."""
    try:
        want: Descriptor | DescriptorError = build_descriptor(**kw)
    except DescriptorError as exc:
        want = exc
    proof = _proof(kw)
    if proof is not None:
        assert _proven(kw), kw
    if not _proven(kw) or not all(utf8_text(n) == n for n in _names_of(kw)):
        return
    assert proof is not None, kw
    row = _row({**kw, "supertypes": tuple(kw["supertypes"])})
    got = well_formed(row, proven=proof)
    try:
        constructed: Descriptor | DescriptorError = descriptor_from_row(row, proven=proof)
    except DescriptorError as exc:
        constructed = exc
    if isinstance(want, DescriptorError):
        assert got is None
        assert isinstance(constructed, DescriptorError)
        assert constructed.violations == want.violations
    else:
        assert got == want
        assert got is not None
        assert got.chain == want.chain
        assert constructed == want


def _names_of(kw: dict[str, Any]) -> list[str]:
    attrs = kw["attributes"] or {}
    return [kw["type"], kw["code"], kw["language"], kw["provider"], *kw["supertypes"],
            *attrs, *attrs.values()]  # fmt: skip


def test_a_true_passed_for_a_proof_proves_nothing() -> None:
    """Only the column checks' `Proven` lets the fast path skip the names' checks: a bool
    (which the type refuses too) is not one, so a padded name is still stripped."""
    row = (" a.B ", (" c.D",), None, None, 0, " E1 ", "m", (), " Python ", "", None)
    d = well_formed(row, True)  # type: ignore[arg-type]
    assert d is not None
    assert (d.type, d.supertypes, d.code, d.language) == ("a.B", ("c.D",), "E1", "python")


def test_the_field_table_is_the_order_of_every_descriptor_shape() -> None:
    """Descriptor, Cause, CauseInput and build_descriptor's keywords have the table's fields,
    in its order (a row is read by position in that order)."""
    from dataclasses import fields
    from inspect import signature

    from classifier.descriptor import CAUSE_FIELD_NAMES, Cause

    assert tuple(f.name for f in fields(Descriptor) if f.init) == FIELD_NAMES
    assert tuple(f.name for f in fields(Cause)) == CAUSE_FIELD_NAMES
    assert CauseInput._fields == CAUSE_FIELD_NAMES
    assert tuple(signature(build_descriptor).parameters)[:-1] == FIELD_NAMES


ORIGIN_SPELLINGS = [
    *(o.name for o in Origin),
    " Tool ",
    "PROVIDER",
    "caller",
    "",
]
"""How a descriptor file may write an origin: each name, in any case, padded; an alias."""


@pytest.mark.parametrize("spelt", ORIGIN_SPELLINGS)
def test_a_descriptor_built_by_hand_reads_an_origins_name_as_a_descriptor_file_does(
    spelt: str,
) -> None:
    """`Descriptor(origin="tool")` holds Origin.tool, the origin the same name means in a
    descriptor file (before, it held the string and failed on the wire)."""
    from classifier.source.descriptor_file import descriptor_from_data

    built = Descriptor(type="TimeoutError", origin=spelt)  # type: ignore[arg-type]
    in_file = descriptor_from_data({"type": "TimeoutError", "origin": spelt})
    assert type(built.origin) is Origin
    assert built.origin is in_file.origin
    assert Descriptor(type="x", origin=int(in_file.origin)).origin is in_file.origin  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("tol", "unknown origin 'tol' (did you mean 'tool'?); known: provider, tool, guard,"),
        ("cloud", "unknown origin 'cloud'; known: provider, tool"),
        (9, "unknown origin 9; known: provider"),
        (True, "unknown origin True; known:"),
        (None, "unknown origin None; known:"),
    ],
)
def test_an_origin_no_name_or_number_means_is_refused_when_built_naming_the_field(
    given: object, said: str
) -> None:
    with pytest.raises(DescriptorError) as caught:
        Descriptor(type="x", origin=given)  # type: ignore[arg-type]
    [violation] = caught.value.violations
    assert violation.field == "descriptor.origin"
    assert violation.message.startswith(said), violation.message


def test_the_row_paths_never_run_the_hand_built_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """descriptor_from_row's assembler sets the slots itself: the origin check of
    `Descriptor(...)` (its __post_init__) costs the row paths nothing, as before."""

    def refuse(self: Descriptor) -> None:
        raise AssertionError("a row path ran Descriptor.__post_init__")

    row = ("a.B", ("c.D",), 429, None, Origin.tool, "", "m", (), "python", "", None)
    proof = _proof(dict(zip(FIELD_NAMES, row, strict=True)))
    assert proof is not None
    monkeypatch.setattr(Descriptor, "__post_init__", refuse)
    built = descriptor_from_row(row)
    assert (built.origin, built.chain) == (Origin.tool, ("a.B", "c.D"))
    assert descriptor_from_row(row, proven=proof).origin is Origin.tool
