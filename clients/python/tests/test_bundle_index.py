"""The evaluator's shortcuts never change an answer: the literal a message must hold before
RE2 is asked (`required_literal`) is one every match holds. (The bundle vectors prove the
answers; this proves the shortcut on its own, on patterns built to trip it.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from errorclass_client.bundle._evaluate import required_literal

re2 = pytest.importorskip("re2")
SPEC = Path(__file__).parents[2] / "spec"

CASES = [
    ("prompt is too long", ("prompt is too long", False, True)),
    ("^HTTP 429 \\(insufficient_quota\\)", ("HTTP 429 (insufficient_quota)", True, True)),
    (
        "^API returned unexpected status code: 429\\b",
        ("API returned unexpected status code: 429", True, False),
    ),
    ("^abc$", ("abc", True, False)),
    ("ab?c", ("a", False, False)),
    ("ab*c", ("a", False, False)),
    ("ab{2}c", ("a", False, False)),
    ("a|b", ("", False, False)),
    ("^x(a|b)", ("x", True, False)),
    ("ab|c", ("", False, False)),
    ("[|]ab", ("", False, False)),
    ("[]|]x|y", ("", False, False)),
    ("[[:alpha:]|]x", ("", False, False)),
    ("\\Qa|b\\E", ("", False, False)),
    ("(?i)abc", ("", False, False)),
    ("\\bword", ("", False, False)),
    ("a\\.b", ("a.b", False, True)),
    ("é+x", ("", False, False)),
    ("", ("", False, False)),
]


@pytest.mark.parametrize(("pattern", "want"), CASES, ids=[c[0] or "empty" for c in CASES])
def test_the_literal_is_the_text_every_match_begins_with(
    pattern: str, want: tuple[str, bool, bool]
) -> None:
    assert required_literal(pattern) == want


def _patterns() -> list[str]:
    found: list[str] = []

    def walk(conditions: list[dict[str, object]]) -> None:
        for c in conditions:
            if c["kind"] == "message":
                found.append(str(c["pattern"]))
            elif c["kind"] == "cause":
                walk(c["conditions"])  # type: ignore[arg-type]

    for path in sorted((SPEC / "bundles").glob("*.json")):
        for rule in json.loads(path.read_text("utf-8"))["rules"]:
            walk(rule["conditions"])
    return found


def test_no_message_a_bundle_pattern_matches_lacks_its_literal() -> None:
    """Over every pattern of the spec's bundles and the messages of the bundle vectors (and
    of the hand-made cases), RE2's verdict and the literal's never disagree on a match."""
    messages: set[str] = {p for p, _ in CASES}
    for path in sorted((SPEC / "vectors").glob("bundle*.json")):
        for v in json.loads(path.read_text("utf-8"))["vectors"]:
            d = v["input"].get("descriptor")
            if d is None:  # bundle_verify
                continue
            for subject in (d, *d.get("causes", ())):
                text = subject.get("message")
                if text and "@PAD@" not in text:  # as matched: lone surrogates replaced
                    messages.add(
                        text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
                    )
    patterns = _patterns() + [p for p, _ in CASES]
    assert len(patterns) > 90
    wrong = []
    for pattern in patterns:
        literal, anchored, whole = required_literal(pattern)
        if not literal:
            continue
        search = re2.compile(pattern).search
        for message in messages:
            holds = message.startswith(literal) if anchored else literal in message
            if search(message) is not None and not holds:
                wrong.append((pattern, message))
            if whole and holds != (search(message) is not None):
                wrong.append((pattern, message))
    assert wrong == []
