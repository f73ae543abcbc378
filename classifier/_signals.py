"""Signals that arrive before the server is ready: remembered, never fatal.

A SIGHUP's default action ends the process, and a process manager or a
ConfigMap change can send one while `classifier serve` is still importing and
loading its rules. The command's entry point (`classifier.__main__`) installs
`catch_early` before it imports anything heavy; `serve` takes what was caught
(`take`) once its own handlers are in place, and acts on it (a reload).

Before this package runs, the interpreter's own start-up does (15-25 ms after
exec), and no program can catch a signal before its first instruction. A
launcher that must be safe from exec on blocks SIGHUP across the exec
(`env --block-signal=HUP classifier serve`, as the container image does, or a
sigprocmask before spawning): the kernel then holds the signal, and
`catch_early` unblocks it once it can take it, so it becomes a reload.
"""

from __future__ import annotations

import signal
from types import FrameType

EARLY = (signal.SIGHUP,)
_pending: list[int] = []


def _remember(signum: int, _frame: FrameType | None) -> None:
    _pending.append(signum)


def catch_early() -> None:
    """Remember SIGHUP instead of dying of it, until the server installs its handlers; and
    take the ones a launcher held back for us (blocked across exec)."""
    for signum in EARLY:
        if signal.getsignal(signum) in (signal.SIG_DFL, signal.SIG_IGN, None):
            signal.signal(signum, _remember)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, EARLY)


def remember(signum: int, frame: FrameType | None) -> None:
    """A handler that only remembers (for a forked worker, until it serves)."""
    _remember(signum, frame)


def take() -> list[int]:
    """The signals remembered since start (or the last take), oldest first."""
    out = list(_pending)
    del _pending[: len(out)]
    return out
