"""Condition text: the shortcut for plain names and numbers writes what the YAML emitter writes."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from classifier.engine.compiler import _text, _unwrap

TRICKY = ["yes", "No", "null", "on", "OFF", "true", "y", "~", "1e3", "0x1F", "1_000", "2001-12-14",
          ".inf", "a-b", "java.io.IOException", "*v1.Foo", "@v1/sdk.X", "E42", "<<", "=", "a: b",
          "a #b", "a:b", "a#b", "-x", "_", "x,y", "[x]", "K\u212a", "caf\u00e9", "a\nb", " a", "a "]  # fmt: skip
scalars = st.one_of(
    st.sampled_from(TRICKY),
    st.text(alphabet="abyesnotruflNUL_.$/@*+-019:#, '\"!&", max_size=8),
    st.text(max_size=6),
    st.integers(),
    st.booleans(),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.dictionaries(st.sampled_from(["type", "code"]), st.lists(scalars, max_size=2), max_size=2),
)


def _emitted(key: str, value: Any) -> str:
    """What the pure-Python emitter writes for a condition: the reference."""
    rendered = yaml.dump(
        _unwrap(value),
        Dumper=yaml.SafeDumper,
        default_flow_style=True,
        width=10**9,
        allow_unicode=True,
        sort_keys=False,
    ).strip()
    return f"{key}: {rendered.removesuffix(chr(10) + '...').removesuffix('...').strip()}"


@settings(max_examples=800, deadline=None)
@given(values)
def test_condition_text_is_what_yaml_writes(value: Any) -> None:
    """Type names, codes, statuses and lists of them read exactly as the emitter would write them."""
    assert _text("type", value) == _emitted("type", value)


def test_common_conditions_read_as_written() -> None:
    """The everyday cases, spelled out."""
    assert _text("type", ["java.io.IOException"]) == "type: java.io.IOException"
    assert _text("http_status", [429, "5xx"]) == "http_status: [429, 5xx]"
    assert _text("code", ["yes"]) == "code: 'yes'"
    assert _text("cause", {"type": ["x.Y"]}) == "cause: {type: x.Y}"
    assert _text("code", ["a:b", "c"]) == "code: ['a:b', c]"
    for word in TRICKY:
        for value in (word, [word, "x"]):
            assert _text("code", value) == _emitted("code", value)
