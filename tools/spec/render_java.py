"""The java client's constants, rendered from clients/spec/facts.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def render(facts: dict[str, Any]) -> dict[Path, str]:
    """The java client's generated files (relative to the repository) and their text."""
    return {}
