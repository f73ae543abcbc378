"""The pytest plugin: installing the package is enough for pytest to run case files.

Each test runs a real `python -m pytest` in a folder of its own, the way a
rule author's CI would, with the plugin found through its entry point.
"""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import xmlschema

from classifier.regress.cases import read_case_file
from classifier.regress.report import result_text
from classifier.regress.runner import run_cases
from tests.regress.fixtures import CASES, RULES, run_pytest
from tests.support import BUNDLED_RULES

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))

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


def _project(tmp_path: Path) -> Path:
    """A rule author's repository: a ruleset folder with its case files, and a pytest.ini."""
    root = tmp_path / "project"
    rules = root / "rules"
    rules.mkdir(parents=True)
    (rules / "actions.yaml").write_text((BUNDLED_RULES / "actions.yaml").read_text())
    (rules / "ruleset.yaml").write_text("name: mine\nversion: 1.0.0\n")
    (rules / "rules.yaml").write_text(RULES)
    (rules / "rules.cases.yaml").write_text(CASES)
    (root / "pytest.ini").write_text("[pytest]\n")
    return root


def test_one_item_per_case_named_by_its_note(tmp_path: Path) -> None:
    root = _project(tmp_path)
    run = run_pytest(root, "--collect-only", "-q", "rules")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[:3] == [
        "rules/rules.cases.yaml::a provider 429 is RateLimited",
        "rules/rules.cases.yaml::HttpClient timeout is a Timeout",
        "rules/rules.cases.yaml::a teapot is not classified",
    ]


def test_failures_read_as_the_cli_writes_them(tmp_path: Path) -> None:
    """Same text as `classifier test`; todo is xfail; a passing todo and a bad case fail."""
    root = _project(tmp_path)
    (root / "rules" / "more.cases.yaml").write_text(MORE)
    run = run_pytest(root, "-rA", "rules")
    assert run.returncode == 1
    assert "3 failed, 3 passed, 1 xfailed" in run.stdout
    case_file = read_case_file(root / "rules" / "more.cases.yaml")
    report = run_cases([case_file.path])
    failing = [r for r in report.results if not r.status.ok]
    assert len(failing) == 3
    for result in failing:
        text = result_text(result).replace(str(root) + "/", "")
        assert text in run.stdout, text
    assert (
        "XFAIL rules/more.cases.yaml::waiting for a 5xx rule - todo: no 5xx rule yet" in run.stdout
    )


def test_k_selects_cases_by_note(tmp_path: Path) -> None:
    root = _project(tmp_path)
    run = run_pytest(root, "-q", "-k", "teapot or Timeout", "rules")
    assert run.returncode == 0
    assert "2 passed, 1 deselected" in run.stdout


def test_junitxml_has_a_testcase_per_case(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "rules" / "more.cases.yaml").write_text(MORE)
    out = tmp_path / "junit.xml"
    run_pytest(root, "-q", "-o", "junit_family=xunit1", f"--junitxml={out}", "rules")
    SCHEMA.validate(str(out))
    names = [c.get("name") for c in ET.parse(out).getroot().iter("testcase")]
    assert names[:3] == [
        "a tool's 429 is RateLimited",
        "waiting for a 5xx rule",
        "a todo that already passes",
    ]
    assert len(names) == 7


def test_xdist_runs_the_cases_on_workers_with_the_same_outcome(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "rules" / "more.cases.yaml").write_text(MORE)
    run = run_pytest(root, "-n", "2", "rules")
    assert run.returncode == 1
    assert "3 failed, 3 passed, 1 xfailed" in run.stdout
    assert "class: want RateLimited, got ToolError" in run.stdout


def test_a_broken_case_file_or_ruleset_is_a_collection_error(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "rules" / "broken.cases.yaml").write_text("cases: [\n")
    run = run_pytest(root, "rules")
    assert run.returncode == 2
    assert "rules/broken.cases.yaml: invalid case file" in run.stdout
    assert "yaml_syntax_error" in run.stdout
    (root / "rules" / "broken.cases.yaml").unlink()
    (root / "rules" / "rules.yaml").write_text(
        "rules:\n  - {id: a, when: {message: '(x'}, class: Timeout}\n"
    )
    run = run_pytest(root, "rules")
    assert run.returncode == 2
    assert "invalid_pattern" in run.stdout


def test_patterns_and_the_fallback_ruleset_are_configurable(tmp_path: Path) -> None:
    """`classifier_cases` names other files; --classifier-rules serves files outside a ruleset."""
    root = _project(tmp_path)
    specs = root / "specs"
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
    (root / "pytest.ini").write_text("[pytest]\nclassifier_cases = tools.yaml\n")
    run = run_pytest(root, "-q", "--classifier-rules", "rules", "specs", "rules")
    assert run.returncode == 0, run.stdout
    assert "1 passed" in run.stdout
    run = run_pytest(root, "-q", "specs")
    assert run.returncode == 2
    assert "no_ruleset" in run.stdout
