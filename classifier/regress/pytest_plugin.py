"""The pytest plugin: case files become test items, one per case, named by its note.

Registered through the `pytest11` entry point, so installing the package (and pytest,
the `[pytest]` extra, in the same environment) is enough for `pytest rules/` to run a
ruleset's cases. This module only holds the hooks; the collectors (and the classifier
itself) are imported when a case file is actually found, so unrelated test suites pay
nothing.
"""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

import pytest

DEFAULT_PATTERNS = ("*.cases.yaml",)
MANIFEST = "ruleset.yaml"
"""A ruleset folder's manifest (`classifier.source.loader.MANIFEST`, not imported: this
module stays light)."""
MAX_HINT_FILES = 10_000
"""Files looked at under a folder pytest found nothing in, at most, before saying why."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "classifier_cases",
        type="args",
        default=list(DEFAULT_PATTERNS),
        help="file-name patterns of classifier case files (default: *.cases.yaml)",
    )
    group = parser.getgroup("classifier", "classifier case files")
    group.addoption(
        "--classifier-rules",
        metavar="DIR",
        help="ruleset for case files that name none and sit in no ruleset folder",
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    patterns: list[str] = parent.config.getini("classifier_cases")
    if not any(fnmatch(file_path.name, p) for p in patterns):
        return None
    from classifier.regress.pytest_items import CaseFileCollector

    collector: pytest.Collector = CaseFileCollector.from_parent(parent, path=file_path)
    return collector


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """When nothing was collected from a ruleset folder, say why: pytest's own `no tests
    ran` (exit 5) does not say that the plugin found no case file there."""
    if exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED:
        return
    patterns: list[str] = config.getini("classifier_cases")
    for arg in config.args:
        folder = Path(arg.split("::", 1)[0])
        if not (folder / MANIFEST).is_file() or _has_case_file(folder, patterns):
            continue
        terminalreporter.write_line(
            f"classifier: {arg} is a ruleset folder, and no file under it is named as a case "
            f"file is ({' '.join(patterns)}, the classifier_cases ini option): add one "
            "(`classifier init` writes rules.cases.yaml), or run `classifier test` "
            "(docs/testing.md)",
            yellow=True,
        )


def _has_case_file(folder: Path, patterns: list[str]) -> bool:
    """Whether a file under folder (hidden folders aside, as pytest does) is a case file;
    True when there are too many files to tell."""
    for i, path in enumerate(folder.rglob("*")):
        if i >= MAX_HINT_FILES:
            return True
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        if any(fnmatch(path.name, p) for p in patterns):
            return True
    return False
