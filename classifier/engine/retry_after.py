"""How long to wait before retrying, from the provider's own evidence: the engine's name for
`errorclass_client.retry_after`, the one Python copy of the algorithm (its docstring
says the sources and their order; the client evaluates bundles in process with it, and
the service depends on the client). The spec's `retry_after` vectors, generated from it,
hold the other languages' ports to it."""

from __future__ import annotations

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
    retry_after,
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
