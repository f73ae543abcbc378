"""The facts every errorclass client shares, as Python constants.

Rendered from clients/spec/facts.json by `make spec` (tools/spec/render_python.py):
do not edit; tests/clients/test_spec.py fails when it drifts.
"""

# ruff: noqa: E501  (rendered values are kept whole on their lines)

from __future__ import annotations

from typing import Any, Final

VERSION: Final = "0.1.0"
"""The classifier's version; this package carries it."""

MAX_TYPE_NAME_CHARS: Final = 1024
MAX_SUPERTYPES: Final = 64
MAX_CAUSES: Final = 32
MAX_CODE_CHARS: Final = 256
MAX_MESSAGE_CHARS: Final = 4096
MAX_LABEL_CHARS: Final = 128
MAX_ATTRIBUTES: Final = 64
MAX_ATTRIBUTE_KEY_CHARS: Final = 256
MAX_ATTRIBUTE_VALUE_CHARS: Final = 4096
MAX_BATCH: Final = 1000
MAX_BODY_BYTES: Final = 262144
"""The limits the service enforces; characters are code points, bytes UTF-8 bytes."""

WHITESPACE: Final = "\x09\x0a\x0b\x0c\x0d\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
"""What "stripped" strips from both ends of a name (Python's `str.isspace`)."""

ORIGIN_NAMES: Final = (
    "unspecified",
    "provider",
    "tool",
    "guard",
    "runtime",
    "interceptor",
    "reconciler",
    "user",
)
ORIGIN_ALIASES: Final = {
    "caller": "user",
}
GRPC_CODES: Final = {
    "OK": 0,
    "CANCELLED": 1,
    "UNKNOWN": 2,
    "INVALID_ARGUMENT": 3,
    "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5,
    "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7,
    "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9,
    "ABORTED": 10,
    "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12,
    "INTERNAL": 13,
    "UNAVAILABLE": 14,
    "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
}
"""gRPC status names to numbers, as Google error bodies spell them."""
GRPC_CODE_NAMES: Final = {number: name for name, number in GRPC_CODES.items()}

SERVICE_PACKAGE: Final = "errorclass.v1"
SERVICE_NAME: Final = "errorclass.v1.ErrorClassifier"

DEADLINE_MS: Final = 250
"""How long a call may take unless the caller says otherwise."""
ATTEMPTS: Final = 3
"""Tries per call while the server answers UNAVAILABLE (gRPC's retry policy)."""
BREAKER_FAILURES: Final = 3
BREAKER_RESET_MS: Final = 2000
BREAKER_MAX_RESET_MS: Final = 30000
BREAKER_TRIPPING: Final = (
    "UNAVAILABLE",
    "DEADLINE_EXCEEDED",
    "RESOURCE_EXHAUSTED",
    "INTERNAL",
    "UNKNOWN",
)
BREAKER_OPENS_AT_ONCE: Final = ("DEADLINE_EXCEEDED",)

SERVICE_CONFIG: Final[dict[str, Any]] = {
    "methodConfig": [
        {
            "name": [
                {
                    "service": "errorclass.v1.ErrorClassifier",
                },
            ],
            "retryPolicy": {
                "maxAttempts": 3,
                "initialBackoff": "0.05s",
                "maxBackoff": "1s",
                "backoffMultiplier": 2,
                "retryableStatusCodes": [
                    "UNAVAILABLE",
                ],
            },
        },
    ],
    "retryThrottling": {
        "maxTokens": 10,
        "tokenRatio": 0.1,
    },
}
"""The gRPC service config every client sets: retries of UNAVAILABLE, throttled."""

RUNTIME_FACTS: Final = {
    "time_limit": {
        "values": (
            "tool",
            "run",
        ),
        "open": False,
        "count": False,
        "decisive": True,
    },
    "veto": {
        "values": (
            "budget",
            "quota",
            "policy",
        ),
        "open": True,
        "count": False,
        "decisive": True,
    },
    "stage": {
        "values": (
            "load",
            "parse",
            "compile",
            "validate",
        ),
        "open": False,
        "count": False,
        "decisive": True,
    },
    "refused_by": {
        "values": (
            "breaker",
            "rate_limiter",
            "concurrency_limit",
            "quota",
            "budget",
        ),
        "open": False,
        "count": False,
        "decisive": True,
    },
    "provider_calls": {
        "values": (),
        "open": False,
        "count": True,
        "decisive": True,
    },
}
"""What only the runtime knows: each attribute, its values, whether it takes another
word (`open`, matching OPEN_FACT_PATTERN) or a whole number (`count`), and whether it
decides the class whatever the exception (`decisive`)."""
OPEN_FACT_PATTERN: Final = "^[a-z][a-z0-9_-]{0,63}$"

FINISH_REASON_TYPE: Final = "errorclass.FinishReason"
PROMPT_BLOCKED_TYPE: Final = "errorclass.PromptBlocked"
RESPONSE_FAILURE_TYPE: Final = "errorclass.ResponseFailure"
FAILURE_REASONS: Final = {
    "openai": ("content_filter",),
    "anthropic": ("refusal",),
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
    "bedrock": (
        "guardrail_intervened",
        "content_filtered",
    ),
}
"""Reasons that are the provider refusing, by the API that spells them."""
CUTOFF_REASONS: Final = (
    "length",
    "max_tokens",
    "MAX_TOKENS",
    "model_context_window_exceeded",
)
NOT_BLOCKED: Final = (
    "",
    "BLOCKED_REASON_UNSPECIFIED",
    "BLOCK_REASON_UNSPECIFIED",
)
FINISH_REASON_MESSAGE: Final = (
    "The {provider} response ended with the failure finish reason {reason}."
)
PROMPT_BLOCKED_MESSAGE: Final = "The {provider} API blocked the prompt ({reason})."

EVIDENCE_HEADER_ATTRIBUTE_PREFIX: Final = "http.response.header."
EVIDENCE_HEADERS: Final = (
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
"""Response headers a client keeps, as attributes: the prefix, the lower-cased name."""
EVIDENCE_GOOGLE_DETAILS: Final = {
    "google.rpc.retry_info.retry_delay": {
        "type_url": "type.googleapis.com/google.rpc.RetryInfo",
        "field": "retryDelay",
    },
    "google.rpc.error_info.reason": {
        "type_url": "type.googleapis.com/google.rpc.ErrorInfo",
        "field": "reason",
    },
    "google.rpc.quota_failure.quota_id": {
        "type_url": "type.googleapis.com/google.rpc.QuotaFailure",
        "field": "violations[0].quotaId",
    },
}
"""Attributes from a Google error's `details`: the item of `type_url`, its `field`."""
EVIDENCE_MAX_CHARS: Final = 256
