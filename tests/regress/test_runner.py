"""The runner judges each case through the production loader and engine."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from classifier.regress.cases import find_case_files
from classifier.regress.report import result_text
from classifier.regress.runner import Status, run_cases
from classifier.source.display import display_path
from tests.support import MakeRuleset


def _cases(root: Path, text: str, name: str = "more.cases.yaml") -> Path:
    path = root / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_passing_file_passes_and_reports_coverage(small: Path) -> None:
    """Two of three rules decided a case; the unexercised one is named with its location."""
    report = run_cases(find_case_files([small]))
    assert [r.status for r in report.results] == [Status.passed] * 3
    assert report.ok
    assert report.ran == 3
    (cov,) = report.coverage()
    assert cov.covered == {"http.429", "dotnet.timeout"}
    assert cov.uncovered == ["tool.any"]
    assert round(cov.percent, 1) == 66.7
    assert str(cov.locations["tool.any"]).endswith("rules.yaml:10:5")
    assert report.confusion() == {
        ("RateLimited", "RateLimited"): 1,
        ("Timeout", "Timeout"): 1,
        ("Unknown", "Unknown"): 1,
    }


def test_a_wrong_class_fails_with_want_got_and_the_deciding_rule(small: Path) -> None:
    """The failure names the case's file:line, each differing field, and who decided."""
    path = _cases(
        small,
        """\
        cases:
          - note: a tool's 429 is the tool's error
            descriptor: {type: requests.HTTPError, http_status: 429, origin: tool}
            want: {class: RateLimited, rule: http.429}
        """,
    )
    report = run_cases([path])
    (r,) = report.results
    assert r.status is Status.failed
    assert not report.ok
    shown = display_path(small)
    assert result_text(r) == "\n".join(
        [
            f"{shown}/more.cases.yaml:2:5: FAIL: a tool's 429 is the tool's error",
            "    class: want RateLimited, got ToolError",
            "    rule:  want http.429, got tool.any",
            f"    decided by: tool.any -> ToolError, continue, tool.investigate ({shown}/rules.yaml:10:5)",
            f"    wanted rule http.429 -> RateLimited  {shown}/rules.yaml:2:5",
            "      did not match: 1 of 2 conditions failed",
            "         held:   http_status: 429",
            "         failed: origin: provider  (origin is tool)",
        ]
    )
    assert report.confusion() == {("RateLimited", "ToolError"): 1}


def test_the_wanted_rule_says_which_of_its_conditions_failed(make_ruleset: MakeRuleset) -> None:
    """A misspelt value in the wanted rule: the failure names the condition and what the
    descriptor has there, though the rule is no near miss (its type is generic), as
    `classifier explain --rule` says it."""
    root = make_ruleset(
        {
            "rules.yaml": """\
            rules:
              - {id: py.value, when: {type: ValueError, language: pyhton}, class: ToolError}
            """,
            "c.cases.yaml": """\
            cases:
              - note: a ValueError is the tool's
                descriptor: {type: ValueError, language: python}
                want: {class: ToolError, rule: py.value}
            """,
        }
    )
    (r,) = run_cases(find_case_files([root])).results
    assert r.status is Status.failed
    assert r.details.splitlines()[2:] == [
        "no rule matched, and no rule came close",
        f"wanted rule py.value -> ToolError  {display_path(root)}/rules.yaml:2:5",
        "  did not match: 1 of 2 conditions failed",
        "     held:   type: ValueError",
        "     failed: language: pyhton  (language is 'python')",
    ]


def test_the_wanted_rule_says_at_which_step_it_lost(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        {
            "rules.yaml": """\
            rules:
              - {id: any-429, when: {http_status: 429}, class: RateLimited}
              - {id: tool-429, when: {http_status: 429, origin: tool}, class: ToolError}
            """,
            "c.cases.yaml": """\
            cases:
              - note: a 429 is rate limited, whoever said it
                descriptor: {type: x.E, http_status: 429, origin: tool}
                want: {class: RateLimited, rule: any-429}
            """,
        }
    )
    (r,) = run_cases(find_case_files([root])).results
    lines = r.details.splitlines()
    assert lines[2].startswith("decided by: tool-429 -> ToolError")
    assert lines[3] == f"wanted rule any-429 -> RateLimited  {display_path(root)}/rules.yaml:2:5"
    assert lines[4].startswith("  matched, but lost at step 4, condition count, to tool-429: ")
    assert lines[5] == "     held:   http_status: 429"


def test_an_unexpected_unknown_shows_the_near_misses(small: Path) -> None:
    """When nothing matched, the rules that came closest say which condition failed."""
    path = _cases(
        small,
        """\
        cases:
          - note: a 429 whose origin was not sent should be rate limited
            descriptor: {type: x.Throttled, http_status: 429}
            want: {class: RateLimited}
        """,
    )
    (r,) = run_cases([path]).results
    lines = r.details.splitlines()
    assert lines[0] == "class: want RateLimited, got Unknown"
    assert lines[1] == "no rule matched; near misses:"
    assert lines[2].startswith("  http.429 -> RateLimited  ")
    assert lines[3] == "     held:   http_status: 429"
    assert lines[4] == "     failed: origin: provider  (origin is not set)"


def test_a_conflict_is_explained(make_ruleset: MakeRuleset) -> None:
    """Equally specific rules that disagree give Unknown/conflict, and the failure says so."""
    root = make_ruleset(
        {
            "rules.yaml": """\
            rules:
              - {id: a, when: {origin: tool}, class: ToolError}
              - {id: b, when: {http_status: 500}, class: ProviderError}
            """,
            "c.cases.yaml": """\
            cases:
              - note: a tool's 500
                descriptor: {type: x.E, origin: tool, http_status: 500}
                want: {class: ToolError}
              - note: the conflict itself is wanted
                descriptor: {type: x.E, origin: tool, http_status: 500}
                want: {class: Unknown, unknown_reason: conflict}
            """,
        }
    )
    failed, passed = run_cases(find_case_files([root])).results
    assert passed.status is Status.passed
    assert failed.details.splitlines()[:2] == [
        "class: want ToolError, got Unknown",
        "conflict: equally specific rules disagree:",
    ]
    assert "a (ToolError, continue) ties with the other top rules" in failed.details


def test_every_wanted_field_is_checked(small: Path) -> None:
    """effect, action, retryable, rule and unknown_reason each fail the case when they differ."""
    path = _cases(
        small,
        """\
        cases:
          - note: every field wrong but the class
            descriptor: {type: openai.RateLimitError, http_status: 429, origin: provider}
            want: {class: RateLimited, rule: other, effect: pause, action: x.y, retryable: false, unknown_reason: conflict}
        """,
    )
    (r,) = run_cases([path]).results
    assert [(m.field, m.want, m.got) for m in r.mismatches] == [
        ("rule", "other", "http.429"),
        ("effect", "pause", "fail"),
        ("action", "x.y", "provider.backoff"),
        ("retryable", False, True),
        ("unknown_reason", "conflict", "none"),
    ]
    assert "note: the ruleset has no rule 'other'" in r.details


def test_todo_cases_are_expected_to_fail_and_fail_the_run_once_they_pass(small: Path) -> None:
    """A failing todo is fine; a passing todo must be promoted, so it fails the run."""
    path = _cases(
        small,
        """\
        cases:
          - note: still broken
            descriptor: {type: x.E, origin: provider, http_status: 503}
            want: {class: ProviderError}
            todo: no 5xx rule yet
        """,
    )
    report = run_cases([path])
    (r,) = report.results
    assert r.status is Status.todo
    assert report.ok
    fixed = _cases(
        small,
        """\
        cases:
          - note: already works
            descriptor: {type: x.E, origin: tool}
            want: {class: ToolError}
            todo: thought it was broken
        """,
        name="fixed.cases.yaml",
    )
    report = run_cases([fixed])
    (r,) = report.results
    assert r.status is Status.fixed
    assert not report.ok
    assert "remove `todo:`" in r.details


def test_run_filters_cases_by_note(small: Path) -> None:
    report = run_cases(find_case_files([small]), run=re.compile("Timeout|teapot"))
    assert [r.name for r in report.results] == [
        "HttpClient timeout is a Timeout",
        "a teapot is not classified",
    ]
    assert not run_cases(find_case_files([small]), run=re.compile("nothing")).ok


def test_an_invalid_ruleset_stops_its_cases_and_is_reported_once(make_ruleset: MakeRuleset) -> None:
    """Two case files on one broken ruleset: the diagnostics appear once, both files are problems."""
    root = make_ruleset(
        {
            "rules.yaml": "rules:\n  - {id: a, when: {message: '(x'}, class: Timeout}\n",
            "a.cases.yaml": "cases: []\n",
            "b.cases.yaml": "cases: []\n",
        }
    )
    report = run_cases(find_case_files([root]))
    first, second = report.problems
    assert [d.code for d in first.diagnostics] == ["invalid_pattern"]
    assert "is invalid" in first.summary
    assert second.diagnostics == ()
    assert second.summary.endswith("(see above)")
    assert not report.ok
    assert report.ran == 0


def test_the_rules_option_serves_case_files_outside_any_ruleset(
    small: Path, tmp_path: Path
) -> None:
    """Without `rules:` and outside a ruleset folder, --rules decides; with neither, no_ruleset."""
    lone = tmp_path / "lone" / "x.cases.yaml"
    lone.parent.mkdir()
    lone.write_text(
        "cases:\n  - note: n\n    descriptor: {type: x.E, origin: tool}\n    want: {class: ToolError}\n"
    )
    assert run_cases([lone], rules=small).ok
    report = run_cases([lone])
    (problem,) = report.problems
    assert [d.code for d in problem.diagnostics] == ["no_ruleset"]


def test_a_ruleset_folder_keeps_its_own_cases_even_when_rules_is_given(
    small: Path, make_ruleset: MakeRuleset
) -> None:
    """The nearest ruleset.yaml wins over --rules (which is only the fallback)."""
    other = make_ruleset("rules: []\n", name="empty")
    report = run_cases(find_case_files([small]), rules=other)
    assert report.ok
    assert list(report.rulesets) == [display_path(small)]
