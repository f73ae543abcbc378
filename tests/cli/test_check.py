"""`classifier check`: every error and lint warning, located, in text, JSON and GitHub form."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from classifier.cli import main
from tests.catalog import with_fixed_catalog
from tests.golden_files import assert_golden
from tests.support import BUNDLED_RULES, ROOT, MakeRuleset

CHECK = ROOT / "tests" / "golden" / "check"
WITNESS = re.compile(r"^    witness: (\{.*\})$")


@pytest.fixture
def make_ruleset(make_ruleset: MakeRuleset) -> MakeRuleset:
    """The shared fixture, with tests/catalog.yaml rather than the moving bundled catalog."""
    return with_fixed_catalog(make_ruleset)


def _check(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().out


@pytest.mark.parametrize(
    ("fmt", "golden"),
    [("text", "check.txt"), ("json", "check.json"), ("github", "check.github.txt")],
)
def test_golden_check_of_the_seeded_ruleset(
    fmt: str, golden: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One of each lint problem, in each output format; --strict makes them fatal (exit 3)."""
    monkeypatch.chdir(CHECK)
    code, out = _check(["--strict", "--format", fmt, "seeded"], capsys)
    assert code == 3
    assert_golden(CHECK / "seeded" / golden, out)


def test_golden_check_of_an_invalid_ruleset(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every error at once, sorted by file and line, each as file:line:col: code: message."""
    monkeypatch.chdir(CHECK)
    code, out = _check(["invalid"], capsys)
    assert code == 1
    assert_golden(CHECK / "invalid" / "check.txt", out)


def _run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "classifier", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=CHECK,
        check=False,
    )


def test_strict_check_reports_each_seeded_problem_and_explain_confirms_each_witness() -> None:
    """The issue's bar: each problem with its location; each witness shows the claim in explain."""
    done = _run("check", "--strict", "seeded")
    assert done.returncode == 3, done.stderr
    lines = done.stdout.splitlines()
    expected = {
        "conflicting_rules": r"seeded/problems\.yaml:10:5: warning: conflicting_rules: conflicts "
        r'with rule "openai\.rate-limited" at seeded/problems\.yaml:6:5: ',
        "shadowed_rule": r"seeded/problems\.yaml:21:5: warning: shadowed_rule: can never win: "
        r'rule "java\.any-timeout" at seeded/problems\.yaml:16:5 ',
        "catch_all_rule": r"seeded/problems\.yaml:27:12: warning: catch_all_rule: ",
        "message_only_rule": r"seeded/problems\.yaml:32:12: warning: message_only_rule: ",
        "unsatisfiable_rule": r"seeded/problems\.yaml:37:37: warning: unsatisfiable_rule: can "
        r"never match: `http_status: 507` and `lacks: http_status` contradict each other ",
        "misspelt_value": r"seeded/problems\.yaml:42:40: warning: misspelt_value: language "
        r"'pyhton' is no language a runtime reports \(did you mean 'python'\?\)",
        "overruled_rule": r"seeded/problems\.yaml:47:5: warning: overruled_rule: is ranked above "
        r'rule "tool\.own-limit" at seeded/problems\.yaml:52:5 \(on priority, 5 > 0\)',
        "unused_action": r'seeded/actions\.yaml:\d+:5: warning: unused_action: action "ops\.page-oncall"',
        "class_never_produced": r"seeded/actions\.yaml:\d+:3: warning: class_never_produced: "
        r"no rule produces class Infrastructure \(12\)",
    }
    for code, pattern in expected.items():
        found = [i for i, line in enumerate(lines) if re.match(pattern, line)]
        assert len(found) == 1, f"{code}: expected one line matching {pattern!r} in\n{done.stdout}"
    witnesses = {
        line.split(": ")[2]: WITNESS.match(lines[i + 1])
        for i, line in enumerate(lines)
        if ": warning: " in line and i + 1 < len(lines) and lines[i + 1].startswith("    witness")
    }
    assert set(witnesses) == {"conflicting_rules", "shadowed_rule", "overruled_rule"}

    conflict = witnesses["conflicting_rules"]
    assert conflict is not None
    shown = _run("explain", "--rules", "seeded", "-", stdin=conflict.group(1))
    assert shown.returncode == 0, shown.stderr
    assert "  reason:    conflict" in shown.stdout
    assert (
        "conflict: openai.rate-limited and openai.server-error tie at every precedence step"
        in shown.stdout
    )

    shadow = witnesses["shadowed_rule"]
    assert shadow is not None
    shown = _run("explain", "--rules", "seeded", "-", stdin=shadow.group(1))
    assert shown.returncode == 0, shown.stderr
    assert "why java.any-timeout decided:" in shown.stdout
    assert "  over java.socket-timeout-in-tool at step 5, priority: " in shown.stdout

    overruled = witnesses["overruled_rule"]
    assert overruled is not None
    shown = _run("explain", "--rules", "seeded", "-", stdin=overruled.group(1))
    assert shown.returncode == 0, shown.stderr
    assert "why tool.own-limit decided:" in shown.stdout
    assert "  over tool.slow-code at step 1, decisive: decided by the runtime's fact " in (
        shown.stdout
    )


def test_the_bundled_rules_pass_strict_check(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _check(["--strict", str(BUNDLED_RULES)], capsys)
    assert code == 0, out
    assert out.startswith("ok: default ")
    assert "no warnings" in out


def test_warnings_fail_only_with_strict(
    make_ruleset: MakeRuleset, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_ruleset(
        """
        rules:
          - id: anything
            when: {}
            class: ToolError
        """,
        manifest="name: t\nversion: '1'\nlint_ignore: [class_never_produced, unused_action]\n",
    )
    code, out = _check([str(root)], capsys)
    assert code == 0
    assert "warning: catch_all_rule: has no condition" in out
    assert out.rstrip().endswith("1 warning (12 silenced by lint_ignore)")
    code, out = _check(["--strict", str(root)], capsys)
    assert code == 3
    assert "fatal with --strict" in out


def test_a_clean_ruleset_passes_strict(
    make_ruleset: MakeRuleset, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_ruleset(
        "rules:\n  - {id: t, when: {type: a.Timeout}, class: Timeout}\n",
        manifest="name: t\nversion: '1'\nlint_ignore: [class_never_produced, unused_action]\n",
    )
    code, out = _check(["--strict", str(root)], capsys)
    assert (code, out.splitlines()[-1].split(": ")[0]) == (0, "ok")


def test_json_output_is_pure_json_with_the_witness_as_data(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(CHECK)
    code = main(["check", "--format", "json", "seeded"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert code == 0
    assert captured.err.startswith("ok: seeded 1.0.0: ")
    conflict = next(d for d in report["diagnostics"] if d["code"] == "conflicting_rules")
    assert conflict["witness"] == {
        "type": "openai.APIStatusError",
        "http_status": 429,
        "code": "server_error",
    }
    assert conflict["related"] == ["seeded/problems.yaml:6:5"]


def test_github_annotations_escape_newlines_and_separators(
    make_ruleset: MakeRuleset, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = make_ruleset(
        {"odd,name.yaml": "rules:\n  - {id: x, when: {message: '50%'}, class: Timeout}\n"},
        manifest="name: t\nversion: '1'\nlint_ignore: [class_never_produced, unused_action]\n",
    )
    code, out = _check(["--format", "github", str(root)], capsys)
    annotation = out.splitlines()[0]
    assert code == 0
    assert annotation.startswith("::warning file=")
    assert "odd%2Cname.yaml,line=2,col=20,title=message_only_rule::" in annotation
    assert "`message: 50%25`" in annotation
