"""A ruleset's total limits: bytes and rules in all, checked before anything compiles."""

from __future__ import annotations

from pathlib import Path

import pytest

from classifier.errors import RulesetError
from classifier.source import loader
from classifier.source.loader import load_source
from tests.support import ruleset_files, write_folder


def test_past_the_rule_count_nothing_is_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from classifier.engine.compiler import load_ruleset

    rules = "rules:\n" + "".join(
        f"  - {{id: r{i}, when: {{type: t.T{i}}}, class: Timeout}}\n" for i in range(30)
    )
    root = write_folder(tmp_path / "rs", {**ruleset_files("1.0.0", "Timeout"), "more.yaml": rules})
    monkeypatch.setattr(loader, "MAX_RULESET_RULES", 20)
    with pytest.raises(RulesetError) as info:
        load_ruleset(root)
    assert [d.code.value for d in info.value.diagnostics] == ["ruleset_too_large"]
    assert "exceed the limit of 20" in info.value.render()


def test_past_the_byte_total_no_rule_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_folder(tmp_path / "rs", ruleset_files("1.0.0", "Timeout"))
    monkeypatch.setattr(loader, "MAX_RULESET_BYTES", 10)
    source = load_source(root)
    assert source.rules == ()
    assert [d.code.value for d in source.diagnostics] == ["ruleset_too_large"]
