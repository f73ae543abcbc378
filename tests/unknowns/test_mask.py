"""Masking what varies (secrets are classifier.redact's, tested in tests/test_redact.py)."""

from __future__ import annotations

import pytest

from classifier.unknowns.mask import MAX_TOKENS, mask


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
