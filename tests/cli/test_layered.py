"""The tools on a layered ruleset (a team's layer on the bundled library): coverage counts the
team's rules, check lists what the layer changes, explain says why a rule is gone, a base that
is not there is one error, and locations say where a rule is whatever the working directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from classifier import RulesetError, load_ruleset
from classifier.cli import main
from tests.support import ROOT, TEAM_LAYER, write_folder

CASES = """\
cases:
  - note: our gateway's quota is QuotaExceeded
    descriptor: {type: acme.GatewayQuotaError, supertypes: [Exception], language: python}
    want: {class: QuotaExceeded, rule: acme.gateway-quota}
  - note: the provider's 429 is the library's business
    descriptor: {type: openai.RateLimitError, supertypes: [openai.APIStatusError, openai.APIError, Exception], http_status: 429, language: python}
    want: {class: RateLimited, rule: python.openai.rate-limited}
"""
OVERRIDE = """\
  - id: python.openai.rate-limited
    description: The provider's 429, answered as the team wants.
    when: {type: openai.RateLimitError}
    class: RateLimited
    effect: pause
    override: true
"""
RATE_LIMITED = {
    "type": "openai.RateLimitError",
    "supertypes": ["openai.APIStatusError", "openai.APIError", "Exception"],
    "http_status": 429,
    "language": "python",
}


def team(root: Path, **more: str) -> Path:
    return write_folder(root, {**TEAM_LAYER, "acme.cases.yaml": CASES, **more})


def test_coverage_counts_only_the_layers_own_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two rules of its own, one untested; a case a base rule decides is allowed, not counted."""
    root = team(tmp_path / "acme")
    assert main(["test", "--coverage", "--min-coverage", "100", str(root)]) == 1
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[-1].startswith("2 cases: 2 passed, 0 failed")
    (line,) = [x for x in out if x.startswith("coverage:")]
    assert line.endswith(": 1 of 2 rules decided a case (50.0%)")
    listed = out[out.index(line) + 1 :]
    assert listed[0] == "  rules no case exercised:"
    assert listed[1].split() == ["acme.tool-broken", f"{root}/acme.yaml:6:5"]
    assert "python.openai" not in "\n".join(listed[1:3])
    assert "is 50.0%, below --min-coverage 100" in captured.err


def test_coverage_json_lists_only_the_layers_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = team(tmp_path / "acme")
    assert main(["test", "--format", "json", "--coverage", str(root)]) == 0
    (coverage,) = json.loads(capsys.readouterr().out)["coverage"]
    assert [u["rule"] for u in coverage["uncovered"]] == ["acme.tool-broken"]
    assert coverage["percent"] == 50.0


def test_check_lists_overrides_beside_disables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = team(tmp_path / "acme", **{"acme.yaml": TEAM_LAYER["acme.yaml"] + OVERRIDE})
    assert main(["check", str(root)]) == 0
    out = capsys.readouterr().out
    assert "disabled python.requests.retries-exhausted: our session retries" in out
    (line,) = [x for x in out.splitlines() if ": overrides " in x]
    assert line.startswith(f"{root}/acme.yaml:10:9: overrides python.openai.rate-limited")
    assert "(the base's at library:default/python/openai.yaml:28:9)" in line
    assert main(["check", "--format", "json", str(root)]) == 0
    about = json.loads(capsys.readouterr().out)["ruleset"]
    assert [o["rule"] for o in about["overridden"]] == ["python.openai.rate-limited"]


def test_explain_rule_on_a_disabled_rule_says_it_is_disabled_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = team(tmp_path / "acme")
    descriptor = tmp_path / "d.json"
    descriptor.write_text(json.dumps(RATE_LIMITED))
    rule = "python.requests.retries-exhausted"
    args = ["explain", "--rules", str(root), "--rule", rule, str(descriptor)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"rule {rule!r} is disabled by acme 1.0.0 ({root}/ruleset.yaml:6:11)" in err
    assert err.rstrip().endswith("our session retries and re-raises the last error itself")
    assert main([*args[:3], "--rule", "acme.nope", str(descriptor)]) == 2
    assert "acme 1.0.0 has no rule 'acme.nope'" in capsys.readouterr().err


def test_check_on_a_missing_folder_says_it_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(tmp_path / "nope")]) == 1
    assert f"the folder {tmp_path / 'nope'} does not exist" in capsys.readouterr().out


def test_an_unknown_base_stops_the_load_with_that_one_error(tmp_path: Path) -> None:
    """Not a cascade: the layer's disable, its rules' actions and classes all need the base."""
    manifest = TEAM_LAYER["ruleset.yaml"].replace("library: default", "library: defualt")
    root = team(tmp_path / "acme", **{"ruleset.yaml": manifest})
    with pytest.raises(RulesetError) as caught:
        load_ruleset(root)
    ((code, message),) = [(d.code.value, d.message) for d in caught.value.diagnostics]
    assert code == "unknown_base"
    assert "(did you mean 'default'?)" in message


def test_the_librarys_locations_read_library_default_from_any_working_directory(
    tmp_path: Path,
) -> None:
    """`explain` in a process whose working directory is neither the checkout nor the layer."""
    root = team(tmp_path / "acme")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    descriptor = elsewhere / "d.json"
    descriptor.write_text(json.dumps(RATE_LIMITED))
    for rules in ([], ["--rules", str(root)]):
        run = subprocess.run(
            [sys.executable, "-m", "classifier", "explain", *rules, str(descriptor)],
            cwd=elsewhere,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )
        assert "library:default/python/openai.yaml:28:5" in run.stdout, run.stdout
        assert str(ROOT) not in run.stdout
