"""The server's explain budget: one explanation at a time, and a bounded share of a core.

An explanation costs about a hundred answers, all of it Python holding the
interpreter, so explain calls are what a client can flood to take the server
from everybody else. One slot bounds them to one core; the CPU share bounds
them further, on average, to a fraction of one (`limits.EXPLAIN_CPU_SHARE`):
a token bucket in CPU seconds, refilled at that share of wall time and
charged with the thread CPU time each explanation really took. A call that
finds the slot taken, or the bucket spent, is refused at once with a reason
saying which and when to retry; nothing waits here, but the server holds
back that connection's next calls until then (`rpc.holdback`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from classifier import limits
from classifier.server.explain.refusal import ExplainRefusedError, Why
from classifier.server.shared.token_bucket import TokenBucket

BUSY = (
    "explain is served {n} call at a time (its budget: an explanation costs about a hundred "
    "answers) and another is being explained; retry, or ask without explain"
)
SPENT = (
    "explain has used its share of the server's CPU ({share:.0%} of a core, on average); "
    "retry in {wait:.1f} s, or ask without explain"
)


class ExplainBudget:
    """Take a slot with `take()` (ExplainRefusedError when there is none), give it back with
    `give()` from the same thread: what the thread spent in between is charged, with what
    `charge()` added (CPU spent for it in the explaining process). `slot()` is the pair."""

    def __init__(
        self,
        at_once: int = limits.EXPLAIN_AT_ONCE,
        share: float = limits.EXPLAIN_CPU_SHARE,
        burst: float = limits.EXPLAIN_CPU_BURST_SECONDS,
    ) -> None:
        self.at_once = at_once
        self.share = share
        self.burst = burst
        self._slots = threading.BoundedSemaphore(at_once)
        self._cpu = TokenBucket(share, burst)
        """CPU seconds, refilled at `share` of wall time."""
        self._started = threading.local()

    def take(self) -> None:
        if self._cpu.level <= 0:
            wait = self._cpu.wait()
            raise ExplainRefusedError(Why.SPENT, SPENT.format(share=self.share, wait=wait), wait)
        if not self._slots.acquire(blocking=False):
            raise ExplainRefusedError(
                Why.BUSY, BUSY.format(n=self.at_once), limits.HOLD_MIN_SECONDS
            )
        self._started.cpu = time.thread_time()
        self._started.extra = 0.0

    def charge(self, cpu_seconds: float) -> None:
        """Add CPU spent for this thread's explanation elsewhere (the explaining process)."""
        self._started.extra = getattr(self._started, "extra", 0.0) + cpu_seconds

    def give(self) -> None:
        spent = time.thread_time() - getattr(self._started, "cpu", time.thread_time())
        spent += getattr(self._started, "extra", 0.0)
        self._started.extra = 0.0
        self._cpu.charge(spent)
        self._slots.release()

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """`take()` (raising ExplainRefusedError before the block runs), then `give()`."""
        self.take()
        try:
            yield
        finally:
            self.give()

    @property
    def credit(self) -> float:
        """CPU seconds explanations may still spend now (negative: in debt, refusing)."""
        return self._cpu.level
