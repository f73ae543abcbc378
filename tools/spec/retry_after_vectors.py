"""`retry_after.json`: the wait a retryable answer advises, with the engine as the oracle.

The inputs are written here by hand, one for each form a provider sends (each header of
`classifier/engine/retry_after.py`'s precedence, Google's RetryInfo, HTTP dates in their
three forms, Go durations, RFC 3339 resets), and for what must be skipped or cut (a value
that does not parse, a sign, a zone missing, a date past, the cap); `want` is what
`classifier.engine.retry_after.retry_after` says for them, at the input's `now`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from classifier.answer import retry_after_dict
from classifier.contract import HEADER_ATTRIBUTE_PREFIX
from classifier.engine.retry_after import RETRY_DELAY, retry_after

NOW = "2026-01-01T00:00:00Z"
H = HEADER_ATTRIBUTE_PREFIX
DATE = {H + "date": "Thu, 01 Jan 2026 00:00:00 GMT"}
CAP = 60.0

INPUTS: list[tuple[str, str, dict[str, str], float]] = [
    # name, note, attributes, cap (seconds)
    ("ms", "OpenAI's retry-after-ms, milliseconds", {H + "retry-after-ms": "1500"}, CAP),
    ("ms-fraction", "a fraction of a millisecond", {H + "retry-after-ms": "20000.5"}, CAP),
    ("x-ms", "Azure's x-ms-retry-after-ms", {H + "x-ms-retry-after-ms": "250"}, CAP),
    ("seconds", "Retry-After in seconds", {H + "retry-after": "20"}, CAP),
    ("seconds-zero", "Retry-After: 0 (retry at once)", {H + "retry-after": "0"}, CAP),
    ("seconds-fraction", "a fraction, which SDKs read", {H + "retry-after": "1.25"}, CAP),
    ("seconds-padded", "blanks around the number", {H + "retry-after": " 20 "}, CAP),
    ("seconds-sign", "a sign is refused", {H + "retry-after": "-5"}, CAP),
    ("seconds-plus", "a plus sign too", {H + "retry-after": "+5"}, CAP),
    ("seconds-exponent", "no exponent", {H + "retry-after": "1e3"}, CAP),
    ("seconds-fullwidth", "ASCII digits only", {H + "retry-after": "\uff12\uff10"}, CAP),
    (
        "seconds-huge",
        "too large for a double: infinity, which the cap cuts",
        {H + "retry-after": "1" + "0" * 400},
        CAP,
    ),
    ("seconds-garbage", "not a number nor a date", {H + "retry-after": "soon"}, CAP),
    (
        "date-imf",
        "an IMF-fixdate 30 s after the provider's own date header",
        {**DATE, H + "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT"},
        CAP,
    ),
    (
        "date-rfc850",
        "the obsolete RFC 850 form",
        {**DATE, H + "retry-after": "Thursday, 01-Jan-26 00:00:45 GMT"},
        CAP,
    ),
    (
        "date-asctime",
        "the obsolete asctime form (no zone: GMT)",
        {**DATE, H + "retry-after": "Thu Jan  1 00:00:50 2026"},
        CAP,
    ),
    (
        "date-no-date-header",
        "a date read against the runtime's clock when no date header came",
        {H + "retry-after": "Thu, 01 Jan 2026 00:00:12 GMT"},
        CAP,
    ),
    (
        "date-unreadable-date-header",
        "an unreadable date header: the runtime's clock",
        {H + "date": "yesterday", H + "retry-after": "Thu, 01 Jan 2026 00:00:07 GMT"},
        CAP,
    ),
    (
        "date-provider-clock",
        "the provider's clock ahead of ours: its own date counts",
        {
            H + "date": "Thu, 01 Jan 2026 00:05:00 GMT",
            H + "retry-after": "Thu, 01 Jan 2026 00:05:10 GMT",
        },
        CAP,
    ),
    (
        "date-past",
        "a date already past is a wait of zero",
        {**DATE, H + "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT"},
        CAP,
    ),
    ("retry-info", "Google's RetryInfo retryDelay", {RETRY_DELAY: "25s"}, CAP),
    ("retry-info-fraction", "a proto Duration with nanoseconds", {RETRY_DELAY: "1.250s"}, CAP),
    ("retry-info-half", "half a second", {RETRY_DELAY: "0.5s"}, CAP),
    ("retry-info-no-unit", "a Duration needs its s", {RETRY_DELAY: "25"}, CAP),
    (
        "openai-resets",
        "OpenAI's resets: the later of the two, capped",
        {H + "x-ratelimit-reset-requests": "1s", H + "x-ratelimit-reset-tokens": "6m0s"},
        CAP,
    ),
    (
        "openai-reset-ms",
        "a Go duration in milliseconds",
        {H + "x-ratelimit-reset-tokens": "20ms"},
        CAP,
    ),
    (
        "openai-reset-compound",
        "hours, minutes and a fraction of seconds",
        {H + "x-ratelimit-reset-requests": "1h2m3.5s"},
        7200.0,
    ),
    ("openai-reset-micro", "the micro sign", {H + "x-ratelimit-reset-tokens": "1500\u00b5s"}, CAP),
    ("openai-reset-zero", "Go's 0", {H + "x-ratelimit-reset-tokens": "0"}, CAP),
    (
        "openai-reset-bad",
        "one unreadable, the other read",
        {H + "x-ratelimit-reset-requests": "soon", H + "x-ratelimit-reset-tokens": "2s"},
        CAP,
    ),
    (
        "openai-reset-no-unit",
        "a number without a unit is not a Go duration",
        {H + "x-ratelimit-reset-tokens": "12"},
        CAP,
    ),
    (
        "anthropic-resets",
        "Anthropic's RFC 3339 resets: the latest, from the date header",
        {
            **DATE,
            H + "anthropic-ratelimit-requests-reset": "2026-01-01T00:00:10Z",
            H + "anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:30Z",
            H + "anthropic-ratelimit-input-tokens-reset": "2026-01-01T00:00:20Z",
        },
        CAP,
    ),
    (
        "anthropic-offset",
        "a reset with an offset",
        {**DATE, H + "anthropic-ratelimit-output-tokens-reset": "2026-01-01T01:00:40+01:00"},
        CAP,
    ),
    (
        "anthropic-fraction",
        "a reset with fractional seconds, against the runtime's clock",
        {H + "anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:05.250Z"},
        CAP,
    ),
    (
        "anthropic-no-zone",
        "a reset without a zone says nothing certain",
        {H + "anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:30"},
        CAP,
    ),
    (
        "anthropic-date-only",
        "a date without a time is not a reset",
        {H + "anthropic-ratelimit-tokens-reset": "2026-01-02"},
        CAP,
    ),
    (
        "ms-before-retry-after",
        "retry-after-ms outranks Retry-After",
        {H + "retry-after-ms": "500", H + "retry-after": "20"},
        CAP,
    ),
    (
        "x-ms-before-retry-after",
        "x-ms-retry-after-ms outranks Retry-After",
        {H + "x-ms-retry-after-ms": "750", H + "retry-after": "3"},
        CAP,
    ),
    (
        "retry-after-before-resets",
        "what the provider asks outranks when a window refills",
        {H + "retry-after": "2", H + "x-ratelimit-reset-tokens": "30s"},
        CAP,
    ),
    (
        "unreadable-then-next",
        "an unreadable source is skipped, the next read",
        {H + "retry-after-ms": "soon", H + "retry-after": "4"},
        CAP,
    ),
    (
        "retry-info-before-resets",
        "RetryInfo before the reset headers",
        {RETRY_DELAY: "3s", H + "x-ratelimit-reset-tokens": "30s"},
        CAP,
    ),
    ("capped", "longer than the cap: the cap, and it says so", {H + "retry-after": "120"}, CAP),
    ("cap-exact", "exactly the cap is not cut", {H + "retry-after": "60"}, CAP),
    ("small-cap", "a rule's own cap", {H + "retry-after": "20"}, 5.0),
    ("none", "no evidence: no wait", {"http.response.header.x-request-id": "req_1"}, CAP),
    ("date-only", "a date header alone is no evidence", dict(DATE), CAP),
    (
        "nothing-readable",
        "every source unreadable: no wait",
        {H + "retry-after": "later", RETRY_DELAY: "soon"},
        CAP,
    ),
]


def _now() -> dt.datetime:
    return dt.datetime.fromisoformat(NOW)


def retry_after_vectors() -> dict[str, Any]:
    vectors = []
    for name, note, attributes, cap in INPUTS:
        advice = retry_after(attributes, dt.timedelta(seconds=cap), _now)
        vectors.append(
            {
                "name": name,
                "note": note,
                "input": {"attributes": attributes, "now": NOW, "cap_seconds": cap},
                "want": {"retry_after": None if advice is None else retry_after_dict(advice)},
            }
        )
    return {
        "$comment": "Generated by `make spec` (tools/spec/retry_after_vectors.py): the "
        "engine's retry_after is the oracle; do not edit.",
        "kind": "retry_after",
        "vectors": vectors,
    }
