"""`classifier test`: exit status, output formats and coverage gates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from classifier.cli import main
from classifier.source.display import display_path

FAILING = """\
cases:
  - note: a tool's 429, wanted as RateLimited
    descriptor: {type: requests.HTTPError, http_status: 429, origin: tool}
    want: {class: RateLimited}
"""


def test_exit_zero_when_every_case_passes(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", str(small)]) == 0
    assert capsys.readouterr().out.startswith("3 cases: 3 passed, 0 failed (")


def test_exit_one_when_a_case_fails(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (small / "more.cases.yaml").write_text(FAILING)
    assert main(["test", str(small)]) == 1
    out = capsys.readouterr().out
    assert (
        f"{display_path(small)}/more.cases.yaml:2:5: FAIL: a tool's 429, wanted as RateLimited"
        in out
    )
    assert "4 cases: 3 passed, 1 failed" in out


def test_no_case_ran_is_never_a_success(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty folder, a filter that matches nothing, or an empty file all exit 2."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["test", str(empty)]) == 2
    assert "no case file found: nothing was tested" in capsys.readouterr().err
    assert main(["test", "--run", "no such note", str(small)]) == 2
    assert "no case ran: nothing was tested" in capsys.readouterr().err
    (small / "rules.cases.yaml").write_text("cases: []\n")
    assert main(["test", str(small)]) == 2


def test_bad_input_exits_two(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing path, a bad regex, an invalid case or ruleset: exit 2 with the reason."""
    assert main(["test", str(tmp_path / "nope")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["test", "--run", "(", str(small)]) == 2
    assert "--run: invalid regular expression" in capsys.readouterr().err
    (small / "rules.yaml").write_text("rules:\n  - {id: a, when: {origin: moon}, class: Timeout}\n")
    assert main(["test", str(small)]) == 2
    out = capsys.readouterr().out
    assert "the ruleset it tests" in out
    assert "unknown_origin" in out


def test_run_filters_by_note(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", "--run", "^a (provider|teapot)", str(small)]) == 0
    assert capsys.readouterr().out.startswith("2 cases: 2 passed")


def test_coverage_lists_unexercised_rules_and_the_confusion_matrix(
    small: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["test", "--coverage", str(small)]) == 0
    out = capsys.readouterr().out.splitlines()
    shown = display_path(small)
    assert out[:8] == [
        f"coverage: test 1.0.0 ({shown}): 2 of 3 rules decided a case (66.7%)",
        "  rules no case exercised:",
        f"    tool.any  {shown}/rules.yaml:10:5",
        "confusion matrix (rows: wanted class, columns: answered class):",
        "  want \\ got   Unknown  RateLimited  Timeout",
        "  Unknown            1            .        .",
        "  RateLimited        .            1        .",
        "  Timeout            .            .        1",
    ]


def test_min_coverage_fails_below_the_threshold(
    small: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["test", "--min-coverage", "60", str(small)]) == 0
    assert main(["test", "--min-coverage", "100", str(small)]) == 1
    assert "is 66.7%, below --min-coverage 100" in capsys.readouterr().err


def test_json_format_is_machine_readable(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (small / "more.cases.yaml").write_text(FAILING)
    assert main(["test", "--format", "json", "--coverage", str(small)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False
    assert data["summary"]["passed"] == 3
    assert data["summary"]["failed"] == 1
    failed = next(c for c in data["cases"] if c["status"] == "failed")
    assert failed["mismatches"] == [{"field": "class", "want": "RateLimited", "got": "ToolError"}]
    assert failed["got"]["rule"] == "tool.any"
    assert data["coverage"][0]["uncovered"] == []
    assert {"want": "RateLimited", "got": "ToolError", "count": 1} in data["confusion"]


def test_github_format_prints_annotations(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Failures become ::error annotations on the case's line; uncovered rules ::warning."""
    (small / "more.cases.yaml").write_text(FAILING)
    assert main(["test", "--format", "github", "--coverage", str(small)]) == 1
    lines = capsys.readouterr().out.splitlines()
    shown = display_path(small)
    assert lines[0] == (
        f"::error file={shown}/more.cases.yaml,line=2,col=5,"
        "title=FAIL%3A a tool's 429%2C wanted as RateLimited::"
        "class: want RateLimited, got ToolError%0A"
        f"decided by: tool.any -> ToolError, continue, tool.investigate ({shown}/rules.yaml:10:5)"
    )
    assert not any(line.startswith("::warning") for line in lines)
    (small / "more.cases.yaml").unlink()
    assert main(["test", "--format", "github", "--coverage", str(small)]) == 0
    warning = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("::"))
    assert warning.startswith(
        f"::warning file={shown}/rules.yaml,line=10,col=5,title=rule not covered%3A tool.any::"
    )


def test_todo_cases_are_listed_and_a_passing_one_fails_the_run(
    small: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (small / "todo.cases.yaml").write_text(
        "cases:\n"
        "  - note: known gap\n"
        "    descriptor: {type: x.E, http_status: 503, origin: provider}\n"
        "    want: {class: ProviderError}\n"
        "    todo: no 5xx rule yet\n"
    )
    assert main(["test", str(small)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0]
        == f"{display_path(small)}/todo.cases.yaml:2:5: todo: known gap (todo: no 5xx rule yet)"
    )
    assert out[-1].startswith("4 cases: 3 passed, 0 failed, 1 todo (")
    (small / "todo.cases.yaml").write_text(
        "cases:\n"
        "  - note: not a gap any more\n"
        "    descriptor: {type: x.E, origin: tool}\n"
        "    want: {class: ToolError}\n"
        "    todo: no tool rule yet\n"
    )
    assert main(["test", str(small)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        f"{display_path(small)}/todo.cases.yaml:2:5: FIXED: not a gap any more",
        "    marked todo (no tool rule yet) but it passes now: remove `todo:` to make it a regular case",
    ]
    assert out[-1].startswith("4 cases: 3 passed, 0 failed, 1 todo now passing (")


def test_junit_times_are_each_cases_share_of_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each <testcase> has the time the run spent on it (a file's reading and ruleset loading
    in its first case), so none of the library's cases reads 0 and together they are the
    run's time, which the JSON report gives; each suite's time is its cases'."""
    import xml.etree.ElementTree as ET

    from tests.regress.fixtures import JUNIT_SCHEMA
    from tests.support import BUNDLED_RULES

    out = tmp_path / "junit.xml"
    assert main(["test", "--junit", str(out), "--format", "json", str(BUNDLED_RULES)]) == 0
    run = json.loads(capsys.readouterr().out)
    JUNIT_SCHEMA.validate(str(out))
    root = ET.parse(out).getroot()
    suites = root.findall("testsuite")
    times = [float(c.get("time", "")) for c in root.iter("testcase")]
    assert len(times) == run["summary"]["cases"] > 100
    assert all(t > 0 for t in times)
    # The cases' times partition the run: their sum misses only the moment after the last
    # case (and the rounding), so a generous bound cannot fail on a loaded machine.
    assert sum(times) == pytest.approx(run["summary"]["seconds"], rel=0.05, abs=0.002)
    for suite in suites:
        cases = [float(c.get("time", "")) for c in suite.iter("testcase")]
        assert float(suite.get("time", "")) == pytest.approx(sum(cases), abs=1e-5)
    assert float(root.get("time", "")) == pytest.approx(sum(times), abs=1e-4)
