"""`classifier init`: a ruleset on the library that passes the CI gate as written, the files
the README shows, and a refusal to overwrite anything."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from classifier.cli import main
from classifier.cli.init import SCHEMA_FOLDER, scaffold
from tests.golden_files import assert_golden
from tests.support import ROOT

GOLDEN = ROOT / "tests" / "golden" / "init"
README = (ROOT / "README.md").read_text(encoding="utf-8")
MODELINE = re.compile(r"\A# yaml-language-server: \$schema=(\S+)\n")


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory, so paths print as a user typed them."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_golden_init_writes_the_ruleset_and_says_what_next(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "acme"]) == 0
    assert_golden(GOLDEN / "init.txt", capsys.readouterr().out)
    written = {p.relative_to(here / "acme").as_posix() for p in (here / "acme").rglob("*")}
    assert {name for name in written if not name.startswith(SCHEMA_FOLDER)} == set(scaffold("acme"))


def test_what_init_writes_passes_check_strict_and_full_coverage(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CI gate of the README, at once: no error, no lint warning, every rule (the one
    example) decides a case, and the library is the base."""
    assert main(["init", "acme"]) == 0
    capsys.readouterr()
    assert main(["check", "--strict", "acme"]) == 0
    checked = capsys.readouterr().out
    assert "ok: acme 0.1.0: " in checked
    assert "base: default " in checked
    assert main(["test", "--coverage", "--min-coverage", "100", "acme"]) == 0
    tested = capsys.readouterr().out
    assert "1 case: 1 passed, 0 failed" in tested


def test_the_example_rule_decides_what_the_library_leaves_unknown(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its description says so; the same descriptor is Unknown on the library alone."""
    assert main(["init", "acme"]) == 0
    case = yaml.safe_load((here / "acme" / "rules.cases.yaml").read_text())["cases"][0]
    (here / "d.yaml").write_text(yaml.safe_dump(case["descriptor"]))
    capsys.readouterr()
    assert main(["classify", "--format", "json", "d.yaml"]) == 0
    assert json.loads(capsys.readouterr().out)["class"] == "Unknown"
    assert main(["classify", "--rules", "acme", "--format", "json", "d.yaml"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["class"], got["rule"]) == ("BudgetExceeded", "acme.budget-exhausted")


def test_each_file_names_a_schema_that_is_there_and_accepts_it(here: Path) -> None:
    """The modeline resolves, relative to the file, to a copied schema the file satisfies."""
    assert main(["init", "acme"]) == 0
    for name in scaffold("acme"):
        path = here / "acme" / name
        text = path.read_text()
        modeline = MODELINE.match(text)
        assert modeline, f"{name} starts with no yaml-language-server modeline"
        schema = json.loads((path.parent / modeline.group(1)).read_text())
        jsonschema.validate(yaml.safe_load(text), schema)


def test_name_gives_the_ruleset_and_rule_ids_their_prefix(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--name", "payments", "rules"]) == 0
    capsys.readouterr()
    assert main(["test", "--coverage", "--min-coverage", "100", "rules"]) == 0
    assert "payments.budget-exhausted" in (here / "rules" / "rules.yaml").read_text()


def test_init_overwrites_nothing(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One file in the way: exit 2 naming it, that file unchanged and nothing else written."""
    (here / "acme").mkdir()
    (here / "acme" / "rules.yaml").write_text("rules: []\n")
    assert main(["init", "acme"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert_golden(GOLDEN / "exists.txt", captured.err)
    assert [p.name for p in (here / "acme").iterdir()] == ["rules.yaml"]
    assert (here / "acme" / "rules.yaml").read_text() == "rules: []\n"


def test_a_folder_name_that_is_no_ruleset_name_asks_for_one(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "my rules"]) == 2
    assert "give one with --name" in capsys.readouterr().err
    assert not (here / "my rules").exists()


_SHOWN = re.compile(r"^<!-- classifier init acme: (\S+) -->\n```yaml\n(.*?)^```$", re.S | re.M)


def test_the_readme_shows_the_files_init_writes_word_for_word(here: Path) -> None:
    """The README's "Your own rules on top of the library" shows what `classifier init acme` writes."""
    section = README.split("\n## Your own rules on top of the library\n", 1)[1].split("\n## ", 1)[0]
    shown = dict(_SHOWN.findall(section))
    assert main(["init", "acme"]) == 0
    assert set(shown) == set(scaffold("acme"))
    for name, text in shown.items():
        assert (here / "acme" / name).read_text() == text, name
    assert "classifier init acme" in section
    assert "classifier check --strict acme" in section
    assert "classifier test --coverage --min-coverage 100 acme" in section
