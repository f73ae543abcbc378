"""Hostile YAML is refused with a located diagnostic, whichever PyYAML loader parses it."""

from __future__ import annotations

import pytest
import yaml

from classifier.source import yamlsource


def _nested(levels: int) -> str:
    return "rules: " + "[" * levels + "]" * levels + "\n"


def test_pure_python_parsing_of_extreme_nesting_is_a_diagnostic_not_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without libyaml, PyYAML's composer recurses: the RecursionError becomes yaml_too_deep."""
    monkeypatch.setattr(yamlsource, "_Loader", yaml.SafeLoader)
    doc = yamlsource.parse_yaml(_nested(2_000), "deep.yaml")
    assert doc.value is None
    assert [d.render() for d in doc.diagnostics] == [
        "deep.yaml:1:1: yaml_too_deep: nesting deeper than 64 levels"
    ]


def test_libyaml_stops_extreme_nesting_itself() -> None:
    """libyaml's scanner refuses past 1,000 levels, and says where."""
    assert yaml.__with_libyaml__  # the wheels PyYAML ships on PyPI bundle libyaml
    doc = yamlsource.parse_yaml(_nested(100_000), "deep.yaml")
    assert doc.value is None
    [problem] = doc.diagnostics
    assert problem.code == "yaml_syntax_error"
    assert "exceeded maximum nesting depth" in problem.message
    assert problem.location.file == "deep.yaml"


def test_nesting_just_past_the_limit_points_at_the_level() -> None:
    """Below libyaml's own limit, our builder names the position where depth 64 is passed."""
    doc = yamlsource.parse_yaml(_nested(80), "deep.yaml")
    assert [d.render() for d in doc.diagnostics] == [
        "deep.yaml:1:72: yaml_too_deep: nesting deeper than 64 levels"
    ]


def test_a_null_key_is_kept_for_validation_to_report() -> None:
    """`~:` is a real key (null); only a key that failed to parse is dropped, with its diagnostic."""
    doc = yamlsource.parse_yaml("{~: 1, a: 2}", "k.yaml")
    assert (doc.value, doc.diagnostics) == ({None: 1, "a": 2}, [])
    assert doc.positions.keys == {(None,): (1, 2), ("a",): (1, 8)}
    bad = yamlsource.parse_yaml("{!!python/name:os.system x: 1, a: 2}", "k.yaml")
    assert [d.code for d in bad.diagnostics] == ["yaml_unsafe_tag"]


@pytest.mark.parametrize("loader", ["libyaml", "pure-python"])
@pytest.mark.parametrize(
    ("text", "at", "hint"),
    [
        (
            "rules:\n  - id: f\n    when:\n      type: [a.I, a.J\n    class: Timeout\n",
            "r.yaml:4:13",
            "a flow list `[...]` that opens at r.yaml:4:13 is missing a `,` between items or "
            "its `]`",
        ),
        (
            "rules:\n  - id: f\n    when: {type: a.I, code: x\n    class: Timeout\n",
            "r.yaml:3:11",
            "a flow mapping `{...}` that opens at r.yaml:3:11 is missing a `,` between entries "
            "or its `}`",
        ),
        (
            'rules:\n  - id: f\n    when: {type: a.I, message: "x\n',
            "r.yaml:3:32",
            "a quoted text that opens at r.yaml:3:32 is never closed",
        ),
    ],
)
def test_an_unclosed_bracket_or_quote_says_where_it_opened(
    monkeypatch: pytest.MonkeyPatch, loader: str, text: str, at: str, hint: str
) -> None:
    """The parser notices a missing `]` only at the next line's key: the diagnostic names where
    the `[` (or `{`, or quote) opened too, in its message and as its related location."""
    if loader == "pure-python":
        monkeypatch.setattr(yamlsource, "_Loader", yaml.SafeLoader)
    [problem] = yamlsource.parse_yaml(text, "r.yaml").diagnostics
    assert problem.code == "yaml_syntax_error"
    assert problem.message.startswith(hint + " (the YAML parser: ")
    assert [str(r) for r in problem.related] == [at]
    assert str(problem.location) != at
