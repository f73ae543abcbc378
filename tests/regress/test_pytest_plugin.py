"""The pytest plugin: installing the package is enough for pytest to run case files.

Each test runs a real `python -m pytest` in a folder of its own, the way a
rule author's CI would, with the plugin found through its entry point.
"""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from classifier.regress.cases import read_case_file
from classifier.regress.report import result_text
from classifier.regress.runner import run_cases
from tests.regress.fixtures import JUNIT_SCHEMA, run_pytest
from tests.support import SMALL_FILES, MakeRuleset

MORE = """\
cases:
  - note: a tool's 429 is RateLimited
    descriptor: {type: requests.HTTPError, http_status: 429, origin: tool}
    want: {class: RateLimited}
  - note: waiting for a 5xx rule
    descriptor: {type: x.E, http_status: 503, origin: provider}
    want: {class: ProviderError}
    todo: no 5xx rule yet
  - note: a todo that already passes
    descriptor: {type: x.E, origin: tool}
    want: {class: ToolError}
    todo: forgot to promote it
  - note: a bad origin
    descriptor: {type: x.E, origin: martian}
    want: {class: ToolError}
"""


@pytest.fixture
def project(make_ruleset: MakeRuleset) -> Path:
    """A rule author's repository: the small ruleset as its rules/ folder, and a pytest.ini."""
    rules = make_ruleset(SMALL_FILES, name="project/rules")
    (rules.parent / "pytest.ini").write_text("[pytest]\n")
    return rules.parent


def test_one_item_per_case_named_by_its_note(project: Path) -> None:
    run = run_pytest(project, "--collect-only", "-q", "rules")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[:3] == [
        "rules/rules.cases.yaml::a provider 429 is RateLimited",
        "rules/rules.cases.yaml::HttpClient timeout is a Timeout",
        "rules/rules.cases.yaml::a teapot is not classified",
    ]


def test_failures_read_as_the_cli_writes_them(project: Path) -> None:
    """Same text as `classifier test`; todo is xfail; a passing todo and a bad case fail."""
    (project / "rules" / "more.cases.yaml").write_text(MORE)
    run = run_pytest(project, "-rA", "rules")
    assert run.returncode == 1
    assert "3 failed, 3 passed, 1 xfailed" in run.stdout
    case_file = read_case_file(project / "rules" / "more.cases.yaml")
    report = run_cases([case_file.path])
    failing = [r for r in report.results if not r.status.ok]
    assert len(failing) == 3
    for result in failing:
        text = result_text(result).replace(str(project) + "/", "")
        assert text in run.stdout, text
    assert (
        "XFAIL rules/more.cases.yaml::waiting for a 5xx rule - todo: no 5xx rule yet" in run.stdout
    )


def test_a_failure_names_the_wanted_rules_failed_conditions(project: Path) -> None:
    (project / "rules" / "typo.yaml").write_text(
        "rules:\n  - {id: py.value, when: {type: ValueError, language: pyhton}, class: ToolError}\n"
    )
    (project / "rules" / "typo.cases.yaml").write_text(
        "cases:\n  - note: a ValueError is the tool's\n"
        "    descriptor: {type: ValueError, language: python}\n"
        "    want: {class: ToolError, rule: py.value}\n"
    )
    run = run_pytest(project, "rules/typo.cases.yaml")
    assert run.returncode == 1
    assert "    wanted rule py.value -> ToolError  rules/typo.yaml:2:5" in run.stdout
    assert "         failed: language: pyhton  (language is 'python')" in run.stdout


def test_a_ruleset_folder_without_case_files_gets_a_hint(project: Path) -> None:
    """pytest's `no tests ran` (exit 5) alone does not say that no file is a case file."""
    (project / "rules" / "rules.cases.yaml").rename(project / "rules" / "cases.yaml.txt")
    run = run_pytest(project, "rules")
    assert run.returncode == 5
    assert (
        "classifier: rules is a ruleset folder, and no file under it is named as a case file "
        "is (*.cases.yaml, the classifier_cases ini option)"
    ) in run.stdout
    (project / "rules" / "cases.yaml.txt").rename(project / "rules" / "rules.cases.yaml")
    run = run_pytest(project, "-k", "no-such-note", "rules")
    assert run.returncode == 5  # every case deselected: the folder has cases, no hint
    assert "classifier:" not in run.stdout


def test_k_selects_cases_by_note(project: Path) -> None:
    run = run_pytest(project, "-q", "-k", "teapot or Timeout", "rules")
    assert run.returncode == 0
    assert "2 passed, 1 deselected" in run.stdout


def test_junitxml_has_a_testcase_per_case(project: Path, tmp_path: Path) -> None:
    (project / "rules" / "more.cases.yaml").write_text(MORE)
    out = tmp_path / "junit.xml"
    run_pytest(project, "-q", "-o", "junit_family=xunit1", f"--junitxml={out}", "rules")
    JUNIT_SCHEMA.validate(str(out))
    names = [c.get("name") for c in ET.parse(out).getroot().iter("testcase")]
    assert names[:3] == [
        "a tool's 429 is RateLimited",
        "waiting for a 5xx rule",
        "a todo that already passes",
    ]
    assert len(names) == 7


def test_xdist_runs_the_cases_on_workers_with_the_same_outcome(project: Path) -> None:
    (project / "rules" / "more.cases.yaml").write_text(MORE)
    run = run_pytest(project, "-n", "2", "rules")
    assert run.returncode == 1
    assert "3 failed, 3 passed, 1 xfailed" in run.stdout
    assert "class: want RateLimited, got ToolError" in run.stdout


def test_a_broken_case_file_or_ruleset_is_a_collection_error(project: Path) -> None:
    (project / "rules" / "broken.cases.yaml").write_text("cases: [\n")
    run = run_pytest(project, "rules")
    assert run.returncode == 2
    assert "rules/broken.cases.yaml: invalid case file" in run.stdout
    assert "yaml_syntax_error" in run.stdout
    (project / "rules" / "broken.cases.yaml").unlink()
    (project / "rules" / "rules.yaml").write_text(
        "rules:\n  - {id: a, when: {message: '(x'}, class: Timeout}\n"
    )
    run = run_pytest(project, "rules")
    assert run.returncode == 2
    assert "invalid_pattern" in run.stdout


def test_patterns_and_the_fallback_ruleset_are_configurable(project: Path) -> None:
    """`classifier_cases` names other files; --classifier-rules serves files outside a ruleset."""
    specs = project / "specs"
    specs.mkdir()
    (specs / "tools.yaml").write_text(
        textwrap.dedent(
            """\
            cases:
              - note: any tool error
                descriptor: {type: x.E, origin: tool}
                want: {class: ToolError}
            """
        )
    )
    (project / "pytest.ini").write_text("[pytest]\nclassifier_cases = tools.yaml\n")
    run = run_pytest(project, "-q", "--classifier-rules", "rules", "specs", "rules")
    assert run.returncode == 0, run.stdout
    assert "1 passed" in run.stdout
    run = run_pytest(project, "-q", "specs")
    assert run.returncode == 2
    assert "no_ruleset" in run.stdout
