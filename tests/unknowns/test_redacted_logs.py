"""Decision logs a server wrote with redaction on: a marker is a value, never words.

The server's redactor replaces an e-mail or a key with `[REDACTED:email]`; the inbox keeps
that marker whole in a template (masking would read its brackets as a JSON payload,
`<JSON>`), and the drafter reads neither markers nor placeholders as evidence: a family
drafts the same with secrets in its messages as without.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import re2

from classifier.cli import main
from classifier.unknowns.drafts import template_pattern, words_pattern
from classifier.unknowns.mask import literal_text, mask
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.conftest import StartApp
from tests.support import BUNDLED_RULES


@pytest.mark.parametrize(
    ("message", "masked"),
    [
        (
            "queue full for [REDACTED:email] using key [REDACTED:openai_key]",
            "queue full for [REDACTED:email] using key [REDACTED:openai_key]",
        ),
        # a digit in the mask's name is not an id; the token's own value still is masked
        ("auth=[REDACTED:custom_1] from 10.0.0.7:443", "auth=[REDACTED:custom_1] from <IP>"),
        # a wider mask takes in a marker inside it
        ("see https://x.example.com/?k=[REDACTED:openai_key] now", "see <URL> now"),
        ("[REDACTED:email]: [1, 2]", "[REDACTED:email]: <JSON>"),
    ],
)
def test_a_marker_templates_as_itself(message: str, masked: str) -> None:
    assert mask(message) == masked


def test_a_marker_is_a_value_to_the_drafter() -> None:
    """Its words are no evidence, and a drafted pattern matches any value where it stood:
    the stored (redacted) message and the live one, which holds the secret."""
    template = "queue full for [REDACTED:email] using key [REDACTED:bearer]"
    assert literal_text(template) == "queue full for using key"
    assert literal_text("Invalid <JSON> from <HOST>") == "Invalid from"
    assert words_pattern(template) == "queue full for"
    pattern = template_pattern(template)
    assert pattern is not None
    assert "REDACTED" not in pattern
    compiled = re2.compile(pattern)
    assert compiled.search("queue full for [REDACTED:email] using key [REDACTED:bearer]")
    assert compiled.search("queue full for ann@acme.example.com using key Bearer abc123def456")


def _served_log(start_app: StartApp, log: Path, messages: list[str]) -> Path:
    """The decision log a real server (redaction on, as by default) writes for a family of
    python acme.queue.QueueFull at origin runtime with these messages."""
    running = start_app(BUNDLED_RULES, watch=False, decision_log=log)
    requests = [
        pb.ClassifyRequest(
            descriptor=pb.ExceptionDescriptor(
                type="acme.queue.QueueFull",
                language="python",
                origin=pb.ORIGIN_RUNTIME,
                message=message,
            )
        )
        for message in messages
    ]
    running.stub.ClassifyBatch(pb.ClassifyBatchRequest(requests=requests), timeout=30)
    running.app.stop(grace=1)  # flushes the log
    return log


def _unknowns(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["unknowns", "--rules", str(BUNDLED_RULES), "--format", "json", *argv]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_a_family_redacted_by_a_real_server_drafts_as_without_its_secrets(
    start_app: StartApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = _served_log(
        start_app,
        tmp_path / "secret.jsonl",
        [
            f"queue full for user{i}@acme.example.com using key sk-proj-{'a' * 20}{i:04d}"
            for i in range(6)
        ],
    )
    plain = _served_log(
        start_app,
        tmp_path / "plain.jsonl",
        [f"queue full for tenant{i} using key k{i}" for i in range(6)],
    )
    lines = [json.loads(line) for line in secret.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 6
    assert all(ln["redacted"]["masks"] == {"email": 1, "openai_key": 1} for ln in lines)

    [cluster] = _unknowns(capsys, str(secret))["ranked"]
    assert cluster["template"] == "queue full for [REDACTED:email] using key [REDACTED:openai_key]"

    [redacted] = _unknowns(capsys, "--propose", str(secret))["proposals"]
    [without] = _unknowns(capsys, "--propose", str(plain))["proposals"]
    candidates = [c["class"] for c in redacted["class"]["plausible"]]
    assert "ToolError" not in candidates
    assert candidates == [c["class"] for c in without["class"]["plausible"]]
    assert candidates[0] == "CompilationFailed"
    assert redacted["action"]["id"] == without["action"]["id"] == "definition.fix"
    assert redacted["status"] == "proposed"
    assert redacted["rule"]["when"] == without["rule"]["when"]
    # the drafted cases keep the markers, never the secrets
    messages = {case["descriptor"]["message"] for case in redacted["cases"]}
    assert messages == {"queue full for [REDACTED:email] using key [REDACTED:openai_key]"}
