"""A circuit breaker: stop calling a service that keeps failing, and probe it again later.

The classifier sits on a run's failure path, so a dead or hung service must not make
every failed run wait for a deadline. The numbers are every client's (facts.json
`defaults.breaker`): the breaker opens after BREAKER_FAILURES consecutive failures of
the service (BREAKER_TRIPPING: UNAVAILABLE, RESOURCE_EXHAUSTED, INTERNAL, UNKNOWN), or at
once on DEADLINE_EXCEEDED (a hung server: one wait for the deadline is the most a caller
pays). While it is open, calls fail at once without touching the network; a probe asks
the service again after BREAKER_RESET_MS (doubling up to BREAKER_MAX_RESET_MS while it
stays down), and the first probe that succeeds closes the breaker.

`BreakerState` is those decisions alone, driven by events with no clock and no thread
(clients/spec/vectors/breaker.json drives it in every language); `Breaker` runs it for a
client, with the probe on a thread of its own so that no caller waits for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Literal

import grpc

from errorclass_client import facts

TRIPPING = frozenset(facts.BREAKER_TRIPPING)
"""Status names that say the service, not the request, is the problem."""
OPENS_AT_ONCE = frozenset(facts.BREAKER_OPENS_AT_ONCE)
State = Literal["closed", "open"]


class BreakerState:
    """closed (calls go through) -> open (calls fail fast; probes run) -> closed."""

    def __init__(
        self,
        failures: int = facts.BREAKER_FAILURES,
        reset_ms: int = facts.BREAKER_RESET_MS,
        max_reset_ms: int = facts.BREAKER_MAX_RESET_MS,
    ) -> None:
        if failures < 1:
            raise ValueError("failures must be at least 1")
        self.failures = failures
        self.reset_ms = reset_ms
        self.max_reset_ms = max_reset_ms
        self.state: State = "closed"
        self.consecutive = 0
        self.probe_wait_ms = reset_ms
        """How long to wait before the next probe, while open."""
        self.opened = 0
        """How many times the breaker has opened."""

    def allow(self) -> bool:
        """Whether a call may go to the service now."""
        return self.state == "closed"

    def result(self, outcome: str) -> bool:
        """A call the breaker let through ended: `ok` or a gRPC status name. True when
        this opened the breaker (the caller starts probing)."""
        if outcome == "ok":
            self.consecutive = 0
            return False
        if outcome not in TRIPPING:
            return False  # the request's fault: neither a failure of the service nor a success
        self.consecutive += 1
        if self.state == "open":
            return False
        if outcome in OPENS_AT_ONCE or self.consecutive >= self.failures:
            self.state = "open"
            self.probe_wait_ms = self.reset_ms
            self.opened += 1
            return True
        return False

    def probe(self, ok: bool) -> None:
        """A probe ended: a success closes the breaker, a failure doubles the next wait."""
        if ok:
            self.state = "closed"
            self.consecutive = 0
        else:
            self.probe_wait_ms = min(self.probe_wait_ms * 2, self.max_reset_ms)


class Breaker:
    """A BreakerState for a client: thread-safe, with a probing thread while open."""

    def __init__(
        self,
        probe: Callable[[], bool],
        *,
        failures: int = facts.BREAKER_FAILURES,
        reset_after: float = facts.BREAKER_RESET_MS / 1000,
        max_reset_after: float = facts.BREAKER_MAX_RESET_MS / 1000,
    ) -> None:
        self._probe = probe
        self._state = BreakerState(
            failures, round(reset_after * 1000), round(max_reset_after * 1000)
        )
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self.probes = 0

    @property
    def is_open(self) -> bool:
        return self._state.state == "open"

    @property
    def opened(self) -> int:
        """How many times the breaker has opened."""
        return self._state.opened

    @property
    def reset_after(self) -> float:
        """Seconds before the first probe once open."""
        return self._state.reset_ms / 1000

    @reset_after.setter
    def reset_after(self, seconds: float) -> None:
        with self._lock:
            self._state.reset_ms = round(seconds * 1000)

    def allow(self) -> bool:
        """Whether a call may go to the service now."""
        return self._state.allow()

    def succeeded(self) -> None:
        with self._lock:
            self._state.result("ok")

    def failed(self, code: grpc.StatusCode) -> None:
        """A call failed with `code`; opens the breaker (and starts probing) when it should."""
        with self._lock:
            opened = self._state.result(code.name)
        if opened:
            threading.Thread(target=self._probing, name="errorclass-breaker", daemon=True).start()

    def close(self) -> None:
        """Stop probing (the client is closing)."""
        self._closed.set()

    def _probing(self) -> None:
        for _ in range(10_000):  # bounded; each round waits at least reset_ms
            if self._closed.wait(self._state.probe_wait_ms / 1000):
                return
            self.probes += 1
            try:
                ok = self._probe()
            except Exception:
                ok = False
            with self._lock:
                self._state.probe(ok)
            if ok:
                return
