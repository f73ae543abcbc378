"""A small ruleset with case files beside its rules, shared by the regress and CLI tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import MakeRuleset

RULES = """\
rules:
  - id: http.429
    when: {origin: provider, http_status: 429}
    class: RateLimited
  - id: dotnet.timeout
    when:
      type: System.Threading.Tasks.TaskCanceledException
      cause: {type: System.TimeoutException}
    class: Timeout
  - id: tool.any
    when: {origin: tool}
    class: ToolError
"""

CASES = """\
cases:
  - note: a provider 429 is RateLimited
    descriptor: {type: openai.RateLimitError, http_status: 429, origin: provider}
    want: {class: RateLimited, rule: http.429, effect: fail, action: provider.backoff, retryable: true}
  - note: HttpClient timeout is a Timeout
    descriptor:
      type: System.Threading.Tasks.TaskCanceledException
      causes: [{type: System.TimeoutException}]
    want: {class: Timeout, rule: dotnet.timeout}
  - note: a teapot is not classified
    descriptor: {type: teapot.Error, http_status: 418, origin: provider}
    want: {class: Unknown, unknown_reason: no_match}
"""


@pytest.fixture
def small(make_ruleset: MakeRuleset) -> Path:
    """A three-rule ruleset whose `rules.cases.yaml` passes, two rules covered of three."""
    return make_ruleset({"rules.yaml": RULES, "rules.cases.yaml": CASES}, name="small")


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
