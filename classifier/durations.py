"""Durations as providers and rule authors write them, each form read one way.

    go_duration("2h3m4.5s")   OpenAI's x-ratelimit-reset-requests / -tokens (Go's
                              time.Duration text: `6m0s`, `1s`, `20ms`)
    proto_duration("0.5s")    google.rpc.RetryInfo's retryDelay (proto3 JSON's Duration)
    decimal_seconds("20")     Retry-After's delay-seconds; retry-after-ms in milliseconds

Each gives seconds as a float, or None for text it does not read: a malformed value is
ignored, never guessed at. Signs are refused (no provider asks for a negative wait), and a
number too large for a float is infinity, which any cap cuts.

One copy in Python: the readers live with the retry_after algorithm in the client
(`errorclass_client.retry_after`, which the service depends on and which loads neither
grpcio nor protobuf); the rule language reads `retry_after_cap` with the same ones.
"""

from __future__ import annotations

from errorclass_client.retry_after import decimal_seconds, go_duration, proto_duration

__all__ = ["decimal_seconds", "go_duration", "proto_duration"]
