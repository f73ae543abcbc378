"""Record the corpus figures for the run's last screen, where a reviewer sees them."""

from __future__ import annotations

import pytest

from tests import summary
from tests.rules.corpus import FIGURES


def pytest_sessionfinish(session: pytest.Session) -> None:
    if sum(FIGURES.unambiguous.values()) + sum(FIGURES.ambiguous.values()) == 0:
        return
    lines = FIGURES.lines() + [f"  not as expected: {line}" for line in FIGURES.wrong]
    summary.record(session.config, "real-descriptor corpus (bundled rules, over gRPC)", lines)
