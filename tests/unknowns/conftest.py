"""Print how well `classifier unknowns` recovered the true clusters, where a reviewer sees it."""

from __future__ import annotations

from _pytest.terminal import TerminalReporter

from tests.unknowns.traffic import RECOVERY


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    for recovery in RECOVERY:
        terminalreporter.section(
            "classifier unknowns: cluster recovery (decision log of a real server)"
        )
        for line in recovery.lines():
            terminalreporter.write_line(line)
