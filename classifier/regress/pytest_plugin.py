"""The pytest plugin: case files become test items, one per case, named by its note.

Registered through the `pytest11` entry point, so installing the package is
enough for `pytest rules/` to run a ruleset's cases. This module only holds
the hooks; the collectors (and the classifier itself) are imported when a
case file is actually found, so unrelated test suites pay nothing.
"""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

import pytest

DEFAULT_PATTERNS = ("*.cases.yaml",)


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
