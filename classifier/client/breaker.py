"""A circuit breaker: stop calling a service that keeps failing, and probe it again later.

The classifier sits on a run's failure path, so a dead or hung service must not
make every failed run wait for a deadline. The breaker opens after
`failures` consecutive failures of the service (UNAVAILABLE, RESOURCE_EXHAUSTED,
INTERNAL, UNKNOWN), or at once on DEADLINE_EXCEEDED (a hung server: one wait for
the deadline is the most a caller pays). While it is open, calls fail at once
(or go to the client's fallback) without touching the network; a probe, on a
thread of its own so that no caller waits for it, asks the service again after
`reset_after` seconds (doubling up to `max_reset_after` while it stays down),
and the first probe that succeeds closes the breaker.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import grpc

TRIPPING = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
    }
)
"""Statuses that say the service, not the request, is the problem."""
DEFAULT_FAILURES = 3
DEFAULT_RESET_SECONDS = 2.0
MAX_RESET_SECONDS = 30.0


class Breaker:
    """closed (calls go through) -> open (calls fail fast; a probe runs later) -> closed."""

    def __init__(
        self,
        probe: Callable[[], bool],
        *,
        failures: int = DEFAULT_FAILURES,
        reset_after: float = DEFAULT_RESET_SECONDS,
        max_reset_after: float = MAX_RESET_SECONDS,
    ) -> None:
        if failures < 1:
            raise ValueError("failures must be at least 1")
        self._probe = probe
        self.threshold = failures
        self.reset_after = reset_after
        self.max_reset_after = max_reset_after
        self._lock = threading.Lock()
        self._consecutive = 0
        self._open = False
        self._opened_at = 0.0
        self._wait = reset_after
        self._closed = threading.Event()
        self.opened = 0
        """How many times the breaker has opened."""
        self.probes = 0

    @property
    def is_open(self) -> bool:
        return self._open

    def allow(self) -> bool:
        """Whether a call may go to the service now."""
        return not self._open

    def succeeded(self) -> None:
        with self._lock:
            self._consecutive = 0

    def failed(self, code: grpc.StatusCode) -> None:
        """A call failed with `code`; opens the breaker when it should."""
        if code not in TRIPPING:
            return
        with self._lock:
            self._consecutive += 1
            trip = code is grpc.StatusCode.DEADLINE_EXCEEDED or self._consecutive >= self.threshold
            if not trip or self._open:
                return
            self._open = True
            self._opened_at = time.monotonic()
            self._wait = self.reset_after
            self.opened += 1
        threading.Thread(target=self._probing, name="classifier-breaker", daemon=True).start()

    def close(self) -> None:
        """Stop probing (the client is closing)."""
        self._closed.set()

    def _probing(self) -> None:
        for _ in range(10_000):  # bounded; each round waits at least reset_after
            if self._closed.wait(self._wait):
                return
            self.probes += 1
            ok = False
            try:
                ok = self._probe()
            except Exception:
                ok = False
            if ok:
                with self._lock:
                    self._open = False
                    self._consecutive = 0
                return
            self._wait = min(self._wait * 2, self.max_reset_after)
