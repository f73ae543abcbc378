"""The portable RE2 subset: what every client's RE2 reads as the service's does is accepted,
each construct measured to differ is refused with its reason, and the compiler refuses such
a pattern with a located `non_portable_pattern`."""

from __future__ import annotations

import pytest

from classifier.engine.compiler import load_ruleset
from classifier.engine.portable import MAX_DEPTH, problem
from classifier.errors import RulesetError
from classifier.source.library import bundled_library
from tests.support import MakeRuleset

PORTABLE = [
    r"(?i)rate.?limit",
    "café \U0001f600",
    r"(?i:quota) café",
    r"(?i)quota(?-i) café",
    r"(?s-i:é)",
    r"\Q(?i)é\E",
    r"[[:alpha:]é]\d\s\w\b",
    r"(?P<code>\d+)|(?<name>x)",
    r"\x{1F600}\351",
    r"(é)(?i)x",
    "(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH,
]
REFUSED = [
    (r"\pL+", "Unicode class"),
    (r"[\p{Greek}]", "Unicode class"),
    (r"\PN", "Unicode class"),
    (r"(?i)café", "case-insensitively"),
    (r"(?i)[é]", "case-insensitively"),
    (r"(?i)\x{E9}", "case-insensitively"),
    (r"(?i)\351", "case-insensitively"),
    (r"(?i)\Qé\E", "case-insensitively"),
    (r"(?i)(é)", "case-insensitively"),
    (r"\C", "C++ RE2's alone"),
    (r"(?P<n>a)(?P<n>b)", "used twice"),
    ("(?P<名>a)", "other than ASCII"),
    (r"\x{D800}", "surrogate"),
    ("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1), "nest more than"),
]


@pytest.mark.parametrize("pattern", PORTABLE)
def test_what_every_re2_reads_alike_is_portable(pattern: str) -> None:
    assert problem(pattern) is None


@pytest.mark.parametrize(("pattern", "why"), REFUSED)
def test_what_the_re2s_read_differently_is_refused_with_its_reason(pattern: str, why: str) -> None:
    found = problem(pattern)
    assert found is not None
    assert why in found


def test_the_compiler_refuses_a_non_portable_pattern_where_it_is(
    make_ruleset: MakeRuleset,
) -> None:
    root = make_ruleset(
        "rules:\n  - id: ticket\n    when: {type: app.E, message: '\\p{Lu}{3}'}\n    class: ToolError\n"
    )
    with pytest.raises(RulesetError) as raised:
        load_ruleset(root)
    [d] = raised.value.diagnostics
    assert (d.code, d.location.line, d.rule_id) == ("non_portable_pattern", 3, "ticket")
    assert "docs/rules.md#non_portable_pattern" in d.message


def test_the_bundled_library_is_portable() -> None:
    assert len(load_ruleset(bundled_library()).rules) > 0
