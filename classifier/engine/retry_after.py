"""How long to wait before retrying, from the provider's own evidence. Pure: no grpc.

The clients keep the provider's retry headers and Google's RetryInfo as descriptor
attributes (classifier.contract: EVIDENCE_HEADERS, GOOGLE_DETAIL_ATTRIBUTES). For an
answer that is retryable, `retry_after` reads them, the most specific source first:

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
header, when it is there and readable, and from the service's clock otherwise (the
provider's clock and ours may disagree by seconds: the header compares like with like);
a date already past is a wait of zero. A value that does not parse is ignored and the
next source is read. The wait is capped (the rule's `retry_after_cap`, else the
ruleset's), and the answer says when the cap cut it.

The algorithm has one Python copy: `errorclass_client.retry_after` (the client evaluates
bundles in process with it, and the service depends on the client); this module gives it
the engine's answer type (`classifier.answer.RetryAfter`). The spec's `retry_after`
vectors, generated from it, hold the other languages' ports to it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from classifier.answer import RetryAfter
from errorclass_client import retry_after as _algorithm
from errorclass_client.retry_after import (
    ANTHROPIC_RESETS,
    DATE,
    DEFAULT_CAP,
    OPENAI_RESETS,
    RETRY_AFTER,
    RETRY_AFTER_MS,
    RETRY_DELAY,
    SOURCES,
    X_MS_RETRY_AFTER_MS,
    Clock,
    utc_now,
)

__all__ = [
    "ANTHROPIC_RESETS",
    "DATE",
    "DEFAULT_CAP",
    "OPENAI_RESETS",
    "RETRY_AFTER",
    "RETRY_AFTER_MS",
    "RETRY_DELAY",
    "SOURCES",
    "X_MS_RETRY_AFTER_MS",
    "Clock",
    "retry_after",
    "utc_now",
]


def retry_after(
    attributes: Mapping[str, str], cap: dt.timedelta, now: Clock = utc_now
) -> RetryAfter | None:
    """The wait the evidence asks for, capped; None when no attribute says one
    (`errorclass_client.retry_after.retry_after`, as the engine's RetryAfter)."""
    found = _algorithm.retry_after(attributes, cap, now)
    return None if found is None else RetryAfter(found.delay, found.source, found.capped)
