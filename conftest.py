"""The run's last screen: the figures the test folders record (tests/summary.py), printed
once whether the tests ran in this process or on pytest-xdist workers."""

from tests.summary import pytest_sessionfinish, pytest_terminal_summary, pytest_testnodedown

__all__ = ["pytest_sessionfinish", "pytest_terminal_summary", "pytest_testnodedown"]
