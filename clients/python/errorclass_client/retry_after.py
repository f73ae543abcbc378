"""How long to wait before retrying, from the provider's own evidence. Pure: no grpc.

The clients keep the provider's retry headers and Google's RetryInfo as descriptor
attributes (facts.json `evidence`). For an answer that is retryable, `retry_after` reads
them, the most specific source first:

    1. retry-after-ms           milliseconds (OpenAI's and Azure OpenAI's; the openai and
                                anthropic SDKs read it before Retry-After)
    2. x-ms-retry-after-ms      milliseconds (Azure's own spelling)
    3. retry-after              RFC 9110: whole seconds, or an HTTP date
    4. google.rpc.retry_info.retry_delay
                                Google's RetryInfo (`25s`, `0.5s`); Google's APIs send no
                                Retry-After, so 3 and 4 never compete
    5. x-ratelimit-reset-requests, x-ratelimit-reset-tokens
                                OpenAI's `6m0s`: when that limit's window is full again, the
                                later of the two (the descriptor does not say which limit
                                was hit, and a retry before the exhausted one resets fails)
    6. anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-reset
                                Anthropic's RFC 3339 timestamps, the latest, likewise

1 to 4 are what the provider asks a client to wait; 5 and 6 say when a window refills,
which is later than a retry may succeed, so they count only when nothing asks. A date
(3's HTTP date, 6's timestamps) becomes a wait from the provider's own clock, the `date`
header, when it is there and readable, and from the caller's clock otherwise (the
provider's clock and ours may disagree by seconds: the header compares like with like);
a date already past is a wait of zero. A value that does not parse is ignored and the
next source is read. The wait is capped (the rule's `retry_after_cap`, else the
ruleset's), and the answer says when the cap cut it.

This is the one Python copy of the algorithm: the service's engine imports it
(`classifier.engine.retry_after` re-exports it), and the spec's `retry_after` vectors,
generated with it as the oracle, hold the other languages' ports to it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from errorclass_client.facts import EVIDENCE_HEADER_ATTRIBUTE_PREFIX

__all__ = [
    "CAPPED_LABEL",
    "DEFAULT_CAP",
    "SOURCES",
    "Clock",
    "RetryAfter",
    "decimal_seconds",
    "go_duration",
    "proto_duration",
    "retry_after",
    "utc_now",
]

Clock = Callable[[], dt.datetime]
"""The caller's clock: an aware datetime (tests pass a fixed one)."""

CAPPED_LABEL = " (capped)"
"""What the wire's `retry_after_source` appends when the cap cut the wait."""

DEFAULT_CAP = dt.timedelta(seconds=60)
"""A ruleset's cap when its manifest sets none. A per-minute limit, the kind a retry
waits out, refills within a minute, and a run holding a call longer than that is better
failed and rescheduled (an hourly or daily window is never worth waiting in a run: those
answers are not retryable). Portkey caps the same headers at 60 s."""

_H = EVIDENCE_HEADER_ATTRIBUTE_PREFIX
RETRY_AFTER_MS = _H + "retry-after-ms"
X_MS_RETRY_AFTER_MS = _H + "x-ms-retry-after-ms"
RETRY_AFTER = _H + "retry-after"
RETRY_DELAY = "google.rpc.retry_info.retry_delay"
OPENAI_RESETS = (_H + "x-ratelimit-reset-requests", _H + "x-ratelimit-reset-tokens")
ANTHROPIC_RESETS = tuple(
    f"{_H}anthropic-ratelimit-{limit}-reset"
    for limit in ("requests", "tokens", "input-tokens", "output-tokens")
)
DATE = _H + "date"

SOURCES: tuple[str, ...] = (
    RETRY_AFTER_MS,
    X_MS_RETRY_AFTER_MS,
    RETRY_AFTER,
    RETRY_DELAY,
    *OPENAI_RESETS,
    *ANTHROPIC_RESETS,
)
"""Every attribute a wait is read from, in the order of precedence (the resets of one
provider are one step: the latest wins)."""
EVIDENCE = frozenset(SOURCES)
"""A descriptor none of whose attributes is here advises no wait (checked first: most
descriptors carry no retry evidence)."""


@dataclass(frozen=True, slots=True)
class RetryAfter:
    """How long to wait before retrying, and which evidence said so.

    `source` is the descriptor attribute the delay was read from
    (`http.response.header.retry-after`); `capped` says the ruleset's cap (or the
    rule's) cut what the provider asked for, so `delay` is the cap.
    """

    delay: dt.timedelta
    source: str
    capped: bool = False

    @property
    def seconds(self) -> float:
        return self.delay.total_seconds()

    @property
    def labelled_source(self) -> str:
        """The source as the wire's `retry_after_source` says it: the attribute, with
        " (capped)" when the cap cut the wait."""
        return f"{self.source}{CAPPED_LABEL}" if self.capped else self.source

    @staticmethod
    def from_labelled(delay: dt.timedelta, labelled: str) -> RetryAfter:
        """The advice a wire answer carries (`labelled_source`'s inverse)."""
        source = labelled.removesuffix(CAPPED_LABEL)
        return RetryAfter(delay, source, capped=source != labelled)

    def text(self) -> str:
        """`retry after 20 s (from http.response.header.retry-after)`, as explain says it."""
        why = f"the cap; {self.source} asked for longer" if self.capped else f"from {self.source}"
        return f"retry after {self.seconds:g} s ({why})"


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def retry_after(
    attributes: Mapping[str, str] | None, cap: dt.timedelta, now: Clock = utc_now
) -> RetryAfter | None:
    """The wait the evidence asks for, capped; None when no attribute says one.

    The caller decides whether the answer is retryable (a wait is never advised for one
    that is not); `now` is read only when a date must be turned into a wait and the
    provider sent no readable `date`.
    """
    if not attributes or EVIDENCE.isdisjoint(attributes):
        return None
    clock = _Clock(attributes, now)
    found = (
        _one(attributes, RETRY_AFTER_MS, _milliseconds)
        or _one(attributes, X_MS_RETRY_AFTER_MS, _milliseconds)
        or _one(attributes, RETRY_AFTER, lambda v: _retry_after(v, clock))
        or _one(attributes, RETRY_DELAY, proto_duration)
        or _latest(attributes, OPENAI_RESETS, go_duration)
        or _latest(attributes, ANTHROPIC_RESETS, lambda v: _until(_timestamp(v), clock))
    )
    if found is None:
        return None
    source, seconds = found
    limit = cap.total_seconds()
    if seconds > limit:
        return RetryAfter(cap, source, capped=True)
    return RetryAfter(dt.timedelta(seconds=seconds), source)


Found = tuple[str, float]


def _one(
    attributes: Mapping[str, str], name: str, read: Callable[[str], float | None]
) -> Found | None:
    value = attributes.get(name)
    if value is None:
        return None
    seconds = read(value)
    return None if seconds is None else (name, seconds)


def _latest(
    attributes: Mapping[str, str], names: tuple[str, ...], read: Callable[[str], float | None]
) -> Found | None:
    """The longest wait among the readable attributes of one provider's resets (the first
    named, on a tie)."""
    found = [f for name in names if (f := _one(attributes, name, read)) is not None]
    return max(found, key=lambda f: f[1]) if found else None


def _milliseconds(value: str) -> float | None:
    ms = decimal_seconds(value)
    return None if ms is None else ms / 1000


class _Clock:
    """Now, as the provider saw it: its `date` header, else the caller's clock (read once,
    and only if a date needs it)."""

    def __init__(self, attributes: Mapping[str, str], now: Clock) -> None:
        self._attributes = attributes
        self._now = now
        self._value: dt.datetime | None = None

    def __call__(self) -> dt.datetime:
        if self._value is None:
            date = self._attributes.get(DATE)
            self._value = (_http_date(date) if date is not None else None) or self._now()
        return self._value


def _retry_after(value: str, now: _Clock) -> float | None:
    """Retry-After: delay-seconds, or an HTTP date."""
    seconds = decimal_seconds(value)
    if seconds is not None:
        return seconds
    return _until(_http_date(value), now)


def _until(when: dt.datetime | None, now: _Clock) -> float | None:
    if when is None:
        return None
    return max(0.0, (when - now()).total_seconds())


def _http_date(value: str) -> dt.datetime | None:
    """An HTTP date (RFC 9110: IMF-fixdate, and the obsolete RFC 850 and asctime forms),
    aware; one without a zone is GMT, as HTTP dates are."""
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)


def _timestamp(value: str) -> dt.datetime | None:
    """An RFC 3339 timestamp with its offset (`2025-06-01T12:00:30Z`); one without a zone
    says nothing certain, and is ignored."""
    text = value.strip()
    if "T" not in text.upper():
        return None
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


# Durations as providers and rule authors write them, each form read one way. Each reader
# gives seconds as a float, or None for text it does not read: a malformed value is
# ignored, never guessed at. Signs are refused (no provider asks for a negative wait), and
# a number too large for a float is infinity, which any cap cuts.

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
    decimal numbers each with a unit (`6m0s`, `1.5h`, `20ms`, `2h3m4.5s`), or `0`
    (OpenAI's x-ratelimit-reset-requests / -tokens)."""
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
    """proto3 JSON's Duration: seconds with up to nine decimals and an `s` (`25s`, `0.5s`;
    google.rpc.RetryInfo's retryDelay)."""
    m = _PROTO.fullmatch(text.strip())
    return float(m.group(0)[:-1]) if m else None


def decimal_seconds(text: str) -> float | None:
    """A non-negative decimal number (`20`, `1.5`): Retry-After's delay-seconds is a whole
    number, but SDKs read a fraction too, and so does this (retry-after-ms in
    milliseconds)."""
    t = text.strip()
    return float(t) if _DECIMAL.fullmatch(t) else None
