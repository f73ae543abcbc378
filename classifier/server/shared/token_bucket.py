"""The server's one token bucket: a rate on average, a burst at most at once.

Two of the server's limits are token buckets: the console's pages (one token
a page) and the explain budget's CPU share (tokens are CPU seconds, charged
after the fact with what an explanation really spent, so the bucket may go
into debt). Both read the bucket here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class TokenBucket:
    """`rate` tokens a second, at most `burst` held; full at the start.

    `take(n)` spends n tokens only when there are n (a page); `charge(n)` spends
    them whatever there is, into debt (CPU already spent); `wait()` is how long
    until the bucket holds anything again.
    """

    def __init__(
        self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._tokens = float(burst)
        self._at = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now

    def take(self, tokens: float = 1.0) -> bool:
        """Spend `tokens` if the bucket holds them (True), else spend nothing (False)."""
        with self._lock:
            self._refill()
            if self._tokens < tokens:
                return False
            self._tokens -= tokens
            return True

    def charge(self, tokens: float) -> None:
        """Spend `tokens` whatever the bucket holds: below zero is a debt to refill first."""
        with self._lock:
            self._refill()
            self._tokens -= tokens

    @property
    def level(self) -> float:
        """The tokens held now (negative: in debt)."""
        with self._lock:
            self._refill()
            return self._tokens

    def wait(self) -> float:
        """Seconds until the bucket is out of debt: 0 when it is not in debt now, infinite
        when it never refills."""
        level = self.level
        if level >= 0:
            return 0.0
        return -level / self.rate if self.rate > 0 else float("inf")
