"""Run the drift check: the Python walk in a subprocess, or given entry files, against rules/."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.conformance.drift.entries import (
    Entry,
    Report,
    check,
    read_allowlist,
    read_entries,
    read_rules,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
RULES = ROOT / "rules"
ALLOWLIST = HERE / "deliberately-unknown.yaml"
WALK_TIMEOUT_S = 300


def walk_python(sdks: Sequence[str] = (), *, extra_path: Sequence[Path] = ()) -> list[Entry]:
    """The pinned Python SDKs' entries, from `python_sdks` run in a fresh interpreter."""
    env_path = [str(ROOT), *map(str, extra_path)]
    code = (
        "import sys; sys.path[:0] = " + repr(env_path) + "; "
        "from tests.conformance.drift.python_sdks import main; main(sys.argv[1:])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *sdks],
        capture_output=True,
        text=True,
        timeout=WALK_TIMEOUT_S,
        check=True,
        cwd=ROOT,
    )
    return [Entry.from_data(raw) for raw in json.loads(done.stdout)]


def run_check(
    entry_files: Sequence[Path] | None = None,
    *,
    rules: Path = RULES,
    allow: Path = ALLOWLIST,
) -> Report:
    entries = [e for f in entry_files for e in read_entries(f)] if entry_files else walk_python()
    return check(entries, read_rules(rules), read_allowlist(allow))
