"""The bundled ruleset's own cases: `classifier test rules/` and `pytest rules/` agree."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from classifier.cli import main
from tests.regress.fixtures import run_pytest
from tests.support import BUNDLED_RULES, ROOT


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "classifier", "test", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_every_bundled_rule_is_covered_and_every_case_passes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`classifier test --coverage --min-coverage 100 rules/` passes on the bundled rules."""
    assert main(["test", "--coverage", "--min-coverage", "100", str(BUNDLED_RULES)]) == 0
    out = capsys.readouterr().out
    assert "rules decided a case (100.0%)" in out
    assert " 0 failed" in out


def test_the_cli_and_pytest_run_the_same_cases_with_the_same_results(tmp_path: Path) -> None:
    cli = _cli(ROOT, "--format", "json", "rules")
    assert cli.returncode == 0, cli.stdout + cli.stderr
    by_cli = {(c["file"], c["name"]): c["status"] for c in json.loads(cli.stdout)["cases"]}
    junit = tmp_path / "junit.xml"
    run = run_pytest(ROOT, "-q", "-o", "junit_family=xunit1", f"--junitxml={junit}", "rules")
    assert run.returncode == 0, run.stdout
    by_pytest = {
        (c.get("file"), c.get("name")): "passed" if len(c) == 0 else c[0].tag
        for c in ET.parse(junit).getroot().iter("testcase")
    }
    assert len(by_cli) >= 10
    assert by_pytest == by_cli


def test_a_broken_case_fails_both_with_the_same_message(tmp_path: Path) -> None:
    """Break one bundled case: both runners fail, and print the same failure text."""
    rules = tmp_path / "rules"
    shutil.copytree(BUNDLED_RULES, rules)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    cases = sorted(rules.rglob("*.cases.yaml"))[0]
    doc = yaml.safe_load(cases.read_text())
    doc["cases"][0]["want"]["class"] = "BudgetExceeded"
    cases.write_text(yaml.safe_dump(doc, sort_keys=False))
    cli = _cli(tmp_path, "rules")
    assert cli.returncode == 1
    failure = cli.stdout.split("\n\n")[0]
    assert ": FAIL: " in failure
    assert "class: want BudgetExceeded, got " in failure
    run = run_pytest(tmp_path, "rules")
    assert run.returncode == 1
    assert failure in run.stdout
    assert "1 failed" in run.stdout
