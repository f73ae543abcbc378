"""The stream reaper: closes streams idle past --stream-idle-timeout, or open past
--stream-max-age, with DEADLINE_EXCEEDED and a message saying which limit.

A stream that sends nothing holds its thread (asleep) for ever; only a call
ended from another thread frees it (classifier.server.shared.internals.cancel_call).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable

import grpc

from classifier.server.shared.internals import cancel_call

REAPER_STEP_SECONDS = 0.25


class _Open:
    """One open stream, as the reaper sees it."""

    __slots__ = ("context", "idle_limit", "last", "opened", "rpc", "waiting")

    def __init__(self, rpc: str, context: grpc.ServicerContext, idle_limit: bool) -> None:
        self.rpc = rpc
        self.context = context
        self.opened = self.last = time.monotonic()
        self.idle_limit = idle_limit
        self.waiting = False
        """True while the stream waits for the client's next message."""


class Reaper:
    """Closes streams idle past the idle timeout, or open past the maximum age."""

    def __init__(
        self, idle: float | None, max_age: float | None, closed: Callable[[str, str], None]
    ) -> None:
        self.idle = idle
        self.max_age = max_age
        self._closed = closed
        self._open: dict[int, _Open] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stream-reaper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def add(self, rpc: str, context: grpc.ServicerContext, idle_limit: bool) -> int:
        key = next(self._ids)
        entry = _Open(rpc, context, idle_limit)
        with self._lock:
            self._open[key] = entry
        return key

    def remove(self, key: int) -> None:
        with self._lock:
            self._open.pop(key, None)

    def waiting(self, key: int, waiting: bool) -> None:
        """A stream starts (True) or stops (False) waiting for the client's next message."""
        with self._lock:
            entry = self._open.get(key)
            if entry is None:
                return
            entry.waiting = waiting
            entry.last = time.monotonic()

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._open)

    def _run(self) -> None:
        while not self._stop.wait(REAPER_STEP_SECONDS):
            self.sweep()

    def sweep(self) -> None:
        now = time.monotonic()
        expired: list[tuple[_Open, str, str]] = []
        with self._lock:
            for entry in self._open.values():
                if self.max_age and now - entry.opened > self.max_age:
                    expired.append(
                        (
                            entry,
                            "max_age",
                            f"the stream was open for {self.max_age:g} s, the limit "
                            "(--stream-max-age); open a new one",
                        )
                    )
                elif (
                    self.idle
                    and entry.idle_limit
                    and entry.waiting
                    and now - entry.last > self.idle
                ):
                    expired.append(
                        (
                            entry,
                            "idle",
                            f"no message for {self.idle:g} s (--stream-idle-timeout); "
                            "the stream is closed",
                        )
                    )
            for entry, _, _ in expired:
                entry.last = now + 3600.0  # closed: not again
                entry.opened = now
        for entry, reason, details in expired:
            self._close(entry, grpc.StatusCode.DEADLINE_EXCEEDED, details)
            self._closed(entry.rpc, reason)

    @staticmethod
    def _close(entry: _Open, code: grpc.StatusCode, details: str) -> None:
        cancel_call(entry.context, code, details)
