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
