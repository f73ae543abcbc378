"""Structured logs: one JSON object per line on stderr, for start, reload, shutdown and errors."""

from __future__ import annotations

import datetime as dt
import json
import sys
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
