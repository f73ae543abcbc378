"""Durations as providers and rule authors write them, each form read one way.

    go_duration("2h3m4.5s")   OpenAI's x-ratelimit-reset-requests / -tokens (Go's
                              time.Duration text: `6m0s`, `1s`, `20ms`)
    proto_duration("0.5s")    google.rpc.RetryInfo's retryDelay (proto3 JSON's Duration)
    decimal_seconds("20")     Retry-After's delay-seconds; retry-after-ms in milliseconds

Each gives seconds as a float, or None for text it does not read: a malformed value is
ignored, never guessed at. Signs are refused (no provider asks for a negative wait), and a
number too large for a float is infinity, which any cap cuts.
"""

from __future__ import annotations

import re

_GO_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_GO_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)", re.ASCII)
_PROTO = re.compile(r"(\d+)(\.\d{1,9})?s", re.ASCII)
_DECIMAL = re.compile(r"\d+(\.\d+)?", re.ASCII)
"""ASCII digits only: `float` reads other scripts' digits too, and no provider sends them."""


def go_duration(text: str) -> float | None:
    """Go's `time.Duration.String()` form and what `time.ParseDuration` reads: one or more
    decimal numbers each with a unit (`6m0s`, `1.5h`, `20ms`, `2h3m4.5s`), or `0`."""
    t = text.strip()
    if t == "0":
        return 0.0
    total, pos = 0.0, 0
    while pos < len(t):
        m = _GO_PART.match(t, pos)
        if m is None:
            return None
        total += float(m.group(1)) * _GO_UNITS[m.group(2)]
        pos = m.end()
    return total if t else None


def proto_duration(text: str) -> float | None:
    """proto3 JSON's Duration: seconds with up to nine decimals and an `s` (`25s`, `0.5s`)."""
    m = _PROTO.fullmatch(text.strip())
    return float(m.group(0)[:-1]) if m else None


def decimal_seconds(text: str) -> float | None:
    """A non-negative decimal number (`20`, `1.5`): Retry-After's delay-seconds is a whole
    number, but SDKs read a fraction too, and so does this."""
    t = text.strip()
    return float(t) if _DECIMAL.fullmatch(t) else None
