"""Structured logs: one JSON object per line on stderr, for start, reload, shutdown and errors."""

from __future__ import annotations

import datetime as dt
import json
import sys
import threading
import time
from typing import Any


def utc_now() -> str:
    """The time now, RFC 3339 UTC with milliseconds."""
    return utc_time(time.time())


def utc_time(seconds: float) -> str:
    """A Unix time, RFC 3339 UTC with milliseconds."""
    at = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def log(event: str, level: str = "info", **fields: Any) -> None:
    record = {"ts": utc_now(), "level": level, "event": event, **fields}
    # One write per line: with --workers, several processes share this stream.
    sys.stderr.write(json.dumps(record, default=str) + "\n")
    sys.stderr.flush()


class RateLimitedLog:
    """At most one line per key per `seconds`; the next line says how many were held back.

    For events a hostile client or a failing disk can repeat thousands of times a
    second (refused calls, write errors): the first is logged at once, later ones
    are counted into `repeated` on the next line logged for the same key.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._last: dict[Any, float] = {}
        self._held: dict[Any, int] = {}
        self._lock = threading.Lock()

    def log(self, event: str, key: Any, level: str = "info", **fields: Any) -> bool:
        """Log now unless this key was logged less than `seconds` ago; whether it logged."""
        now = time.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.seconds:
                self._held[key] = self._held.get(key, 0) + 1
                return False
            self._last[key] = now
            held = self._held.pop(key, 0)
        if held:
            fields["repeated"] = held
        log(event, level, **fields)
        return True
