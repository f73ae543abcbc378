"""Masking what varies, and redacting what must not be kept."""

from __future__ import annotations

import pytest

from classifier.unknowns.mask import MAX_TOKENS, mask, redact


@pytest.mark.parametrize(
    ("message", "masked"),
    [
        ("Job: 7.", "Job: <NUM>."),
        ("took 30s, 1.5 MB", "took <NUM>, <NUM> MB"),
        ("run 3f2a9c1d-0b7e-4c1a-9a2b-8c3d4e5f6a7b failed", "run <UUID> failed"),
        ("trace 4bf92f3577b34da6a3ce929d0e0e4736", "trace <HEX>"),
        ("at 0xDEADBEEF", "at <HEX>"),
        ("see https://errors.pydantic.dev/2.7/v/missing", "see <URL>"),
        ("connect to api.openai.com:443 refused", "connect to <HOST> refused"),
        ("connect to 10.0.3.7:8080 refused", "connect to <IP> refused"),
        ("connect to localhost:50051 refused", "connect to <HOST> refused"),
        ("mail bob.smith+x@example.co.uk now", "mail <EMAIL> now"),
        ("at 2026-11-29T12:00:00.123Z and 12:00:01", "at <TS> and <TS>"),
        ("Node 'summarize' raised", "Node <QUOTED> raised"),
        ('key "model" missing', "key <QUOTED> missing"),
        (
            "Error code: 529 - {'type': 'error', 'error': {'type': 'x'}}",
            "Error code: <NUM> - <JSON>",
        ),
        ("ids req_abc123 chatcmpl-9xYz12 run-3", "ids <ID> <ID> <ID>"),
        ("read /etc/agents/triage.json", "read <PATH>"),
        ("  spaces\n\tand  lines ", "spaces and lines"),
    ],
)
def test_what_varies_is_masked(message: str, masked: str) -> None:
    assert mask(message) == masked


@pytest.mark.parametrize(
    "message",
    [
        "maximum recursion depth exceeded while calling a Python object",
        "Node raised asyncio.CancelledError",  # a type name is not a host
        "don't retry, it's permanent",  # apostrophes are not quotes
        "json.decoder.JSONDecodeError",
    ],
)
def test_what_does_not_vary_is_kept(message: str) -> None:
    assert mask(message) == message


def test_a_long_message_keeps_its_head() -> None:
    tokens = mask(" ".join(f"w{chr(97 + i % 26)}" for i in range(200))).split()
    assert len(tokens) == MAX_TOKENS + 1
    assert tokens[-1] == "<*>"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", "eyJhbGciOiJIUzI1NiJ9"),
        (
            "Incorrect API key provided: sk-proj-abcdefghijklmnop1234",
            "sk-proj-abcdefghijklmnop1234",
        ),
        ("aws AKIAIOSFODNN7EXAMPLE denied", "AKIAIOSFODNN7EXAMPLE"),
        ("key AIzaSyA1234567890abcdefghijklmnop used", "AIzaSyA1234567890abcdefghijklmnop"),
        ("user alice@example.com not found", "alice@example.com"),
        ("password=hunter22 rejected", "hunter22"),
    ],
)
def test_secrets_are_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert "<REDACTED" in out


def test_redaction_keeps_the_rest() -> None:
    assert redact("Worker exited prematurely: signal 15 (SIGTERM) Job: 7.") == (
        "Worker exited prematurely: signal 15 (SIGTERM) Job: 7."
    )
