"""The `classifier` command for people at a terminal: check and classify."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from classifier.cli import main
from classifier.source.display import display_path
from tests.support import BUNDLED_RULES, MakeRuleset


def test_check_accepts_the_bundled_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(BUNDLED_RULES)]) == 0
    assert capsys.readouterr().out.startswith("ok: default ")


def test_check_reports_a_broken_rule_file_with_file_line_col(
    make_ruleset: MakeRuleset, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_ruleset(
        "rules:\n  - id: bad\n    when: {message: '(unclosed'}\n    class: Timeout\n"
    )
    assert main(["check", str(root)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{display_path(root)}/rules.yaml:3:21: invalid_pattern: ")
    assert '(rule "bad")' in out


def test_classify_prints_the_answer_for_a_descriptor_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("type: openai.RateLimitError\nhttp_status: 429\norigin: provider\n")
    assert main(["classify", "--rules", str(BUNDLED_RULES), "--format", "json", str(path)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["class"], got["class_number"], got["effect"]) == ("RateLimited", 3, "fail")


def test_classify_reads_json_from_stdin_and_explains() -> None:
    descriptor = {
        "type": "System.Threading.Tasks.TaskCanceledException",
        "supertypes": ["System.OperationCanceledException"],
        "origin": "user",
        "causes": [{"type": "System.TimeoutException"}],
    }
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "classifier",
            "classify",
            "--rules",
            str(BUNDLED_RULES),
            "--explain",
            "-",
        ],
        input=json.dumps(descriptor),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "class:     Timeout (7)" in out
    assert "over dotnet.user-cancel at step 3, type depth" in out


def test_classify_names_a_bad_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("type: a.B\norigin: martian\ngrpc_status: SLOW\n")
    assert main(["classify", "--rules", str(BUNDLED_RULES), str(path)]) == 2
    err = capsys.readouterr().err
    assert "descriptor.grpc_status" in err
    assert "descriptor.origin" in err


def test_one_way_to_name_the_rules_folder(
    small: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--rules DIR` everywhere, the bundled library when it is left out; check also takes the
    folder as its argument, but not both at once."""
    monkeypatch.chdir(small.parent)  # nothing called rules/ here: the default is not the cwd's
    assert main(["check"]) == 0
    assert capsys.readouterr().out.startswith("ok: default ")
    assert main(["check", "--rules", str(small)]) == main(["check", str(small)]) == 0
    assert capsys.readouterr().out.count("\nok: test 1.0.0: 3 rules") == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--rules", str(small), str(small)])
    assert exit_info.value.code == 2
    assert "name the ruleset folder once" in capsys.readouterr().err
    assert main(["test", "--rules", str(small)]) == 0  # no PATH: the folder's own cases
    assert " 0 failed" in capsys.readouterr().out
    (small.parent / "d.yaml").write_text("type: acme.Nope\norigin: tool\n")
    assert main(["classify", "d.yaml"]) == 0
    assert capsys.readouterr().out.startswith("class:     ")
    assert main(["classify", "--rules", str(small), "d.yaml"]) == 0
    assert "rule:      tool.any" in capsys.readouterr().out
