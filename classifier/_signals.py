"""Signals that arrive before the server is ready: remembered, never fatal.

A SIGHUP's default action ends the process, and a process manager or a
ConfigMap change can send one while `classifier serve` is still importing and
loading its rules. The command's entry point (`classifier.__main__`) installs
`catch_early` before it imports anything heavy; `serve` takes what was caught
(`take`) once its own handlers are in place, and acts on it (a reload).
Only the interpreter's own start-up, before any of this package runs, is left.
"""

from __future__ import annotations

import signal
from types import FrameType

EARLY = (signal.SIGHUP,)
_pending: list[int] = []


def _remember(signum: int, _frame: FrameType | None) -> None:
    _pending.append(signum)


def catch_early() -> None:
    """Remember SIGHUP instead of dying of it, until the server installs its handlers."""
    for signum in EARLY:
        if signal.getsignal(signum) in (signal.SIG_DFL, None):
            signal.signal(signum, _remember)


def remember(signum: int, frame: FrameType | None) -> None:
    """A handler that only remembers (for a forked worker, until it serves)."""
    _remember(signum, frame)


def take() -> list[int]:
    """The signals remembered since start (or the last take), oldest first."""
    out = list(_pending)
    del _pending[: len(out)]
    return out
