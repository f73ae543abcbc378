"""Print the corpus figures at the end of the run, where a reviewer sees them."""

from __future__ import annotations

from _pytest.terminal import TerminalReporter

from tests.rules.corpus import FIGURES


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    if sum(FIGURES.unambiguous.values()) + sum(FIGURES.ambiguous.values()) == 0:
        return
    terminalreporter.section("real-descriptor corpus (bundled rules, over gRPC)")
    for line in FIGURES.lines():
        terminalreporter.write_line(line)
    for line in FIGURES.wrong:
        terminalreporter.write_line(f"  not as expected: {line}")
