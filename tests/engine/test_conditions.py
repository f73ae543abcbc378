"""Conditions are a closed union: a new kind that an analysis does not handle fails mypy there."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support import ROOT

NEW_KIND = '''

@dataclass(frozen=True, slots=True, eq=False)
class LanguageKnown(_Compiled):
    """A kind added without teaching any analysis about it."""

    text: str
'''


def test_a_new_condition_kind_fails_mypy_wherever_it_is_not_handled(tmp_path: Path) -> None:
    """The predicate, weight, cost order, index key, observed, lint and witness all notice."""
    shutil.copytree(ROOT / "classifier", tmp_path / "classifier")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    conditions = tmp_path / "classifier" / "engine" / "conditions.py"
    text = conditions.read_text(encoding="utf-8")
    union = "Condition = TypeIs | FieldIn | MessageMatches | AttributeIs | CauseMatches"
    assert union in text
    text = text.replace(union, NEW_KIND + "\n\n" + union + " | LanguageKnown")
    conditions.write_text(text, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / ".mypy_cache"), "classifier"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    files = set(re.findall(r"^(classifier/\S+\.py):\d+: error", run.stdout, flags=re.M))
    assert files == {
        "classifier/engine/conditions.py",
        "classifier/engine/compiler.py",
        "classifier/engine/index.py",
        "classifier/engine/trace.py",
        "classifier/lint/checks.py",
        "classifier/lint/witness.py",
    }, run.stdout
    assert "assert_never" in run.stdout or "Never" in run.stdout
