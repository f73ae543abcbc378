"""Structured logs: one JSON object per line on stderr, for start, reload, shutdown and errors."""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any


def log(event: str, level: str = "info", **fields: Any) -> None:
    record = {
        "ts": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "level": level,
        "event": event,
        **fields,
    }
    print(json.dumps(record, default=str), file=sys.stderr, flush=True)
