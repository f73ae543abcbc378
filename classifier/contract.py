"""What every client must agree on beyond the proto: one behaviour and one vocabulary.

The proto says what a descriptor and an answer are. This module says the rest
a client needs, once: the defaults every client calls with (deadline, retries
and their throttling, the circuit breaker), the runtime contract's vocabulary
(what only the runtime knows, as attributes), and the convention for failures
that are not exceptions (a response that ended with a refusal). It is a source
of `clients/spec/facts.json` (`make spec`, tools/gen_spec.py), which each client
package renders into its own constants; docs/clients.md explains each fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

DEADLINE_SECONDS = 0.25
"""How long a call may take unless the caller says otherwise. A loopback or in-cluster
call answers in about a millisecond, with a p99 of a few (docs/performance.md): a quarter
of a second is tens of times that, and short enough that a run's failure handling never
waits long on a dead service."""
ATTEMPTS = 3
"""Tries per call while the server answers UNAVAILABLE (gRPC's retry policy)."""
RETRY_INITIAL_BACKOFF_SECONDS = 0.05
RETRY_MAX_BACKOFF_SECONDS = 1.0
RETRY_BACKOFF_MULTIPLIER = 2
RETRYABLE_STATUSES = ("UNAVAILABLE",)
"""Only UNAVAILABLE is retried: the server did not take the call. Classifying is a pure
function of the descriptor, so the retry is always safe."""
RETRY_THROTTLING_MAX_TOKENS = 10
RETRY_THROTTLING_TOKEN_RATIO = 0.1
"""gRPC's retry throttling: each failed attempt takes a token, each success gives back
`token_ratio`, and no retry is made while half the tokens or fewer are left, so an
outage causes no retry storm (gRFC A6)."""

BREAKER_FAILURES = 3
"""Consecutive service failures that open the breaker."""
BREAKER_RESET_SECONDS = 2.0
"""How long an open breaker waits before its first probe; doubled after each failed
probe, up to BREAKER_MAX_RESET_SECONDS."""
BREAKER_MAX_RESET_SECONDS = 30.0
BREAKER_TRIPPING = ("UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "INTERNAL", "UNKNOWN")
"""Statuses that say the service, not the request, is the problem."""
BREAKER_OPENS_AT_ONCE = ("DEADLINE_EXCEEDED",)
"""A hung server: one wait for the deadline is the most a caller pays."""


def service_config(service: str, attempts: int = ATTEMPTS) -> dict[str, Any]:
    """The gRPC service config every client sets on its channel (attempts 1: no retry)."""
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    method: dict[str, Any] = {"name": [{"service": service}]}
    if attempts > 1:
        method["retryPolicy"] = {
            "maxAttempts": attempts,
            "initialBackoff": f"{RETRY_INITIAL_BACKOFF_SECONDS}s",
            "maxBackoff": f"{RETRY_MAX_BACKOFF_SECONDS:g}s",
            "backoffMultiplier": RETRY_BACKOFF_MULTIPLIER,
            "retryableStatusCodes": list(RETRYABLE_STATUSES),
        }
    return {
        "methodConfig": [method],
        "retryThrottling": {
            "maxTokens": RETRY_THROTTLING_MAX_TOKENS,
            "tokenRatio": RETRY_THROTTLING_TOKEN_RATIO,
        },
    }


@dataclass(frozen=True, slots=True)
class RuntimeFact:
    """An attribute only the runtime can set, with the values the contract gives a meaning.

    `open` facts take another value too (a word, `WORD`), which no bundled rule decides;
    `count` facts take a whole number.
    """

    name: str
    values: tuple[str, ...] = ()
    open: bool = False
    count: bool = False
    decisive: bool = True
    """The runtime states it about the whole failure, so a rule that reads it decides over
    evidence from the exception (docs/rules.md, "Precedence"): whatever surfaced when the
    run's deadline fired, it is the deadline that decided the failure."""
    meaning: str = ""


WORD = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
"""What an open fact's other value must look like."""

RUNTIME_FACTS: tuple[RuntimeFact, ...] = (
    RuntimeFact(
        "time_limit",
        ("tool", "run"),
        meaning="whose time limit fired: the tool wrapper's own (ToolTimeout) or the run's "
        "or a step's deadline (Timeout), whatever surfaced",
    ),
    RuntimeFact(
        "veto",
        ("budget", "quota", "policy"),
        open=True,
        meaning="an interceptor declined the next step on purpose (the run pauses)",
    ),
    RuntimeFact(
        "stage",
        ("load", "parse", "compile", "validate"),
        meaning="the runtime failed on the agent definition, at this stage",
    ),
    RuntimeFact(
        "refused_by",
        ("breaker", "rate_limiter", "concurrency_limit", "quota", "budget"),
        meaning="the runtime's own guard refused the call before it was made: its circuit "
        "breaker for the provider (ProviderUnavailable), its rate limiter, concurrency cap or "
        "quota (QuotaExceeded), its budget (BudgetExceeded), whatever the exception's type",
    ),
    RuntimeFact(
        "provider_calls",
        count=True,
        meaning="how many provider calls the run had answered when reconciliation found it gone",
    ),
)
"""The runtime contract's vocabulary (docs/clients.md, "What only the runtime knows")."""
RUNTIME_FACT_NAMES: tuple[str, ...] = tuple(f.name for f in RUNTIME_FACTS)
DECISIVE_FACT_NAMES: frozenset[str] = frozenset(f.name for f in RUNTIME_FACTS if f.decisive)
"""The facts that put a rule reading them in the decisive tier (the engine's first step)."""

FINISH_REASON = "errorclass.FinishReason"
"""The type of a response that ended with a failure reason."""
PROMPT_BLOCKED = "errorclass.PromptBlocked"
"""The type of a prompt the provider refused before generating."""
RESPONSE_FAILURE = "errorclass.ResponseFailure"
"""The supertype of both."""

FAILURE_REASONS: dict[str, tuple[str, ...]] = {
    # chat completions finish_reason; Responses incomplete_details.reason (Azure OpenAI too)
    "openai": ("content_filter",),
    "anthropic": ("refusal",),
    # google-genai FinishReason
    "gemini": (
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    ),
    # Converse stopReason
    "bedrock": ("guardrail_intervened", "content_filtered"),
}
"""Finish and stop reasons that are the provider refusing or filtering, by the API that
spells them. A client treats every one as a failure whatever the provider label, since
an API is reached under many names (Azure OpenAI, Vertex)."""
CUTOFF_REASONS: tuple[str, ...] = (
    "length",
    "max_tokens",
    "MAX_TOKENS",
    "model_context_window_exceeded",
)
"""Length cut-offs: model misbehaviour (Unknown by the taxonomy), never sent as failures."""
NOT_BLOCKED: tuple[str, ...] = ("", "BLOCKED_REASON_UNSPECIFIED", "BLOCK_REASON_UNSPECIFIED")
"""Block reasons that say the prompt was not blocked."""

MAX_BODY_BYTES = 256 * 1024
"""A provider error body larger than this (UTF-8 bytes) is not read: an error body is small,
and a large one is not an error body."""
FINISH_REASON_MESSAGE = "The {provider} response ended with the failure finish reason {reason}."
PROMPT_BLOCKED_MESSAGE = "The {provider} API blocked the prompt ({reason})."
"""The descriptor's message for each, word for word in every client."""

HEADER_ATTRIBUTE_PREFIX = "http.response.header."
"""A provider's response header kept as evidence is the attribute of this prefix and the
header's name in lower case (OpenTelemetry's `http.response.header.<key>`)."""
EVIDENCE_HEADERS: tuple[str, ...] = (
    "retry-after",
    "retry-after-ms",
    "x-ms-retry-after-ms",
    "x-ratelimit-reset-requests",
    "x-ratelimit-reset-tokens",
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-reset",
    "date",
)
"""The response headers a client keeps from a provider's error: when to retry (seconds or
an HTTP date, milliseconds, OpenAI's `6m0s` resets, Anthropic's RFC 3339 resets), and the
provider's own clock (`date`), against which a date is read. No other header is kept."""
GOOGLE_DETAIL_ATTRIBUTES: dict[str, tuple[str, str]] = {
    "google.rpc.retry_info.retry_delay": ("type.googleapis.com/google.rpc.RetryInfo", "retryDelay"),
    "google.rpc.error_info.reason": ("type.googleapis.com/google.rpc.ErrorInfo", "reason"),
    "google.rpc.quota_failure.quota_id": (
        "type.googleapis.com/google.rpc.QuotaFailure",
        "violations[0].quotaId",
    ),
}
"""What a Google error body's `error.details` says, kept as attributes: the delay RetryInfo
asks for (`25s`), ErrorInfo's reason (`API_KEY_INVALID`), the first QuotaFailure
violation's quota (`GenerateRequestsPerDayPerProjectPerModel-FreeTier`, a daily quota)."""
MAX_EVIDENCE_CHARS = 256
"""Each kept header or detail value is cut to this many characters."""
