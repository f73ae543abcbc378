"""Record how well `classifier unknowns` recovered the true clusters, for the run's last
screen, where a reviewer sees it."""

from __future__ import annotations

import pytest

from tests import summary
from tests.unknowns.traffic import RECOVERY


def pytest_sessionfinish(session: pytest.Session) -> None:
    for recovery in RECOVERY:
        summary.record(
            session.config,
            "classifier unknowns: cluster recovery (decision log of a real server)",
            recovery.lines(),
        )
