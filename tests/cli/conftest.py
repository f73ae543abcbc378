"""Fixtures for the regression-testing tests (defined in tests/regress/fixtures.py)."""

from tests.regress.fixtures import small

__all__ = ["small"]
