"""Paths and types the tests share (fixtures live in conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_RULES = ROOT / "rules"
MANIFEST = "name: test\nversion: 1.0.0\n"

MakeRuleset = Callable[..., Path]
"""make_ruleset(files, *, manifest=..., name=...) -> the ruleset folder it wrote."""
