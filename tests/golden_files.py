"""Golden files: the exact text a person reads, kept next to the input that produces it.

Tests compare output with the file. To accept new output, run `make golden`
(it sets UPDATE_GOLDEN=1, which rewrites the files instead of comparing) and
review the change with `git diff`; nothing else sets it.
"""

from __future__ import annotations

import os
from pathlib import Path

UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def assert_golden(path: Path, actual: str) -> None:
    """Fail unless actual equals the golden file (or rewrite it under UPDATE_GOLDEN=1)."""
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
        return
    assert path.is_file(), f"{path} is missing: run `make golden` to write it, then review it"
    assert actual == path.read_text(encoding="utf-8"), f"{path} differs (`make golden` rewrites it)"
