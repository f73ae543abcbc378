"""`classifier test --junit` writes JUnit XML that validates against the dialect's schema."""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from classifier.cli import main
from tests.regress.fixtures import JUNIT_SCHEMA, run_pytest

MIXED = """\
cases:
  - note: passes
    descriptor: {type: x.E, origin: tool}
    want: {class: ToolError}
  - note: fails
    descriptor: {type: x.E, origin: tool}
    want: {class: Timeout}
  - note: still todo
    descriptor: {type: x.E, origin: tool}
    want: {class: Timeout}
    todo: waiting for a rule
  - note: invalid
    descriptor: {type: x.E, origin: martian}
    want: {class: Timeout}
"""


def test_junit_has_one_testcase_per_case_with_file_line_and_outcome(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pass, failure, todo (skipped) and invalid (error), each at its case's line."""
    (small / "mixed.cases.yaml").write_text(MIXED)
    out = tmp_path / "reports" / "junit.xml"
    assert main(["test", "--junit", str(out), str(small / "mixed.cases.yaml")]) == 2
    capsys.readouterr()
    JUNIT_SCHEMA.validate(str(out))
    root = ET.parse(out).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == (
        "4",
        "1",
        "1",
        "1",
    )
    (suite,) = root.findall("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["passes", "fails", "still todo", "invalid"]
    assert [cases[n].get("line") for n in cases] == ["2", "5", "8", "12"]
    assert all(c.get("file", "").endswith("mixed.cases.yaml") for c in cases.values())
    assert list(cases["passes"]) == []
    failure = cases["fails"].find("failure")
    assert failure is not None
    assert "class: want Timeout, got ToolError" in (failure.text or "")
    skipped = cases["still todo"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "todo: waiting for a rule"
    error = cases["invalid"].find("error")
    assert error is not None
    assert "unknown_origin" in (error.text or "")


def test_junit_reports_a_file_that_could_not_run_as_an_error(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (small / "broken.cases.yaml").write_text("cases: [\n")
    out = tmp_path / "junit.xml"
    assert main(["test", "--junit", str(out), str(small)]) == 2
    capsys.readouterr()
    JUNIT_SCHEMA.validate(str(out))
    root = ET.parse(out).getroot()
    assert root.get("errors") == "1"
    assert root.get("tests") == "4"
    assert "yaml_syntax_error" in ET.tostring(root, encoding="unicode")


def test_the_schema_rejects_what_is_not_junit(tmp_path: Path) -> None:
    """The schema is a real check: a testcase without a name, or a bad count, is refused."""
    bad = tmp_path / "bad.xml"
    bad.write_text(
        '<testsuites><testsuite name="s" tests="x" failures="0" errors="0"/></testsuites>'
    )
    assert not JUNIT_SCHEMA.is_valid(str(bad))
    bad.write_text(
        '<testsuites><testsuite name="s" tests="1" failures="0" errors="0">'
        '<testcase classname="c"/></testsuite></testsuites>'
    )
    assert not JUNIT_SCHEMA.is_valid(str(bad))


def test_the_schema_accepts_pytests_own_junit_output(tmp_path: Path) -> None:
    """An independent writer of the dialect (pytest, both families) validates against it too."""
    (tmp_path / "test_x.py").write_text(
        textwrap.dedent(
            """\
            import pytest
            def test_ok(): pass
            def test_fails(): assert 1 == 2
            @pytest.mark.skip(reason="no")
            def test_skipped(): pass
            """
        )
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    for family in ("xunit1", "xunit2"):
        out = tmp_path / f"{family}.xml"
        run = run_pytest(
            tmp_path, "-q", "-o", f"junit_family={family}", f"--junitxml={out}", "test_x.py"
        )
        assert "1 failed, 1 passed, 1 skipped" in run.stdout
        JUNIT_SCHEMA.validate(str(out))
