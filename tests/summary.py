"""Figures a run prints on its last screen, where a reviewer sees them, with or without
pytest-xdist.

A folder's conftest records its sections at the session's end (`record`); the run's
terminal summary prints them. Under xdist the tests run in worker processes whose own
terminal summary nobody sees, so each worker hands its sections to the controller
(`workeroutput`), which prints them all: a figure is never lost because a worker
measured it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

Section = tuple[str, list[str]]
"""A title ("" for lines printed without a section header) and its lines."""

SECTIONS = pytest.StashKey[list[Section]]()
_KEY = "errorclass_summary"


def record(config: pytest.Config, title: str, lines: list[str]) -> None:
    """Add a section to the run's summary (nothing when it has no lines)."""
    if lines:
        config.stash.setdefault(SECTIONS, []).append((title, list(lines)))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker hands its sections to the controller (after every folder recorded its own)."""
    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[_KEY] = json.dumps(session.config.stash.get(SECTIONS, []))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """The controller keeps what a finished worker measured."""
    handed = getattr(node, "workeroutput", {}).get(_KEY)
    if handed:
        for title, lines in json.loads(handed):
            record(node.config, title, lines)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for title, lines in terminalreporter.config.stash.get(SECTIONS, []):
        if title:
            terminalreporter.section(title)
        for line in lines:
            terminalreporter.write_line(line)
