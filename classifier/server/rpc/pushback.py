"""Pushback: the connections the server told to wait (grpc-retry-pushback-ms), and until when.

A connection is gRPC's only notion of a client: `context.peer()` in a
handler, `call.peer()` where a lane takes the call. A connection refused an
explanation is told when to retry and held until then: its calls wait in
their lane's queue, holding no thread, so a client that keeps asking for
what it was refused is slowed to the pace it was told, and the server's
time goes to everybody else.
"""

from __future__ import annotations

import threading
import time

from classifier.limits import HOLD_MAX_SECONDS, HOLD_MIN_SECONDS, MAX_HELD_CALLS


class Pushback:
    """Each connection told to wait, with the end of its hold (monotonic seconds), and the
    count of its calls held back now, over every lane. Built with the lanes
    (rpc.app.ServerParts), shared by the servicer, which tells connections to wait, and
    the lanes, which hold their calls back."""

    PRUNE_AT = 10_000

    def __init__(self, cap: int = MAX_HELD_CALLS) -> None:
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()
        self.enabled = True
        self.cap = cap
        self.held = 0
        """Calls held now, over every lane; past `cap`, a held connection's call is queued."""

    def hold(self, connection: str, seconds: float) -> float:
        """Hold `connection` for `seconds`, clamped to the limits' range; the seconds held."""
        seconds = min(HOLD_MAX_SECONDS, max(HOLD_MIN_SECONDS, seconds))
        now = time.monotonic()
        with self._lock:
            if not self.enabled:
                return 0.0
            if len(self._until) >= self.PRUNE_AT:
                self._until = {k: v for k, v in self._until.items() if v > now}
            self._until[connection] = max(self._until.get(connection, 0.0), now + seconds)
        return seconds

    def any(self) -> bool:
        """Whether any connection is, or was lately, held (else no call's peer is looked up)."""
        return bool(self._until)

    def until(self, connection: str | None) -> float:
        if connection is None:
            return 0.0
        with self._lock:
            return self._until.get(connection, 0.0)

    def admit(self) -> bool:
        """Room to hold one more call."""
        with self._lock:
            if self.held >= self.cap:
                return False
            self.held += 1
            return True

    def released(self) -> None:
        with self._lock:
            self.held -= 1

    def release_all(self) -> None:
        """Hold nobody from now on (the server is stopping: every call is answered)."""
        with self._lock:
            self.enabled = False
            self._until.clear()
