"""What the regress tests share: a real pytest run, and the JUnit schema reports validate against."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import xmlschema

JUNIT_SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("junit.xsd"))
"""The JUnit XML dialect CI systems read (`classifier test --junit` and pytest both write it)."""


def run_pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A real `python -m pytest` in cwd, the case-file plugin found through its entry point.

    Hypothesis's plugin (a dev dependency of this project, not of a rule
    author's) is left out: it doubles the start-up time of each run.
    """
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:hypothesispytest",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
