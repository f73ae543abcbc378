"""The evaluator's shortcuts never change an answer: the literal a message must hold before
RE2 is asked (`required_literal`) is one every match holds, and a pattern compiled without
its capturing groups (`uncaptured`) matches the same messages. (The bundle vectors prove
the answers; this proves each shortcut on its own, on patterns built to trip it.)"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from errorclass_client.bundle._evaluate import (
    BOUNDARY,
    _decider,
    _options,
    literals,
    required_literal,
    uncaptured,
)

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


UNCAPTURED = [
    ("(a|b)c", "(?:a|b)c"),
    ("(?P<x>a)(?<y>b)", "(?:a)(?:b)"),
    ("(?i)(a)", "(?i)(?:a)"),
    ("(?:a)(b)", "(?:a)(?:b)"),
    ("[(]a", "[(]a"),
    ("[]()]x", "[]()]x"),
    ("[^]()]x", "[^]()]x"),
    ("[[:alpha:](]y(z)", "[[:alpha:](]y(?:z)"),
    ("\\(a\\)", "\\(a\\)"),
    ("\\Q(a)\\E(b)", "\\Q(a)\\E(?:b)"),
]


@pytest.mark.parametrize(("pattern", "want"), UNCAPTURED, ids=[c[0] for c in UNCAPTURED])
def test_capturing_groups_become_non_capturing_and_nothing_else_changes(
    pattern: str, want: str
) -> None:
    assert uncaptured(pattern) == want


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


def test_no_shortcut_disagrees_with_re2_on_any_vector_message() -> None:
    """Over every pattern of the spec's bundles and the messages of the bundle vectors (and
    of the hand-made cases), RE2's verdict and the literal's never disagree on a match, and
    the pattern without its groups matches exactly the same messages."""
    messages: set[str] = {p for p, _ in CASES} | {"ac", "bc", "ab", "(a)b", "y", "z", "(a)"}
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
    patterns = _patterns() + [p for p, _ in CASES] + [p for p, _ in UNCAPTURED]
    assert len(patterns) > 90
    wrong = []
    for pattern in patterns:
        literal, anchored, whole = required_literal(pattern)
        search = re2.compile(pattern).search
        bare = re2.compile(uncaptured(pattern)).search
        for message in messages:
            found = search(message) is not None
            if (bare(message) is not None) != found:
                wrong.append(("uncaptured", pattern, message))
            if not literal:
                continue
            holds = message.startswith(literal) if anchored else literal in message
            if found and not holds:
                wrong.append(("literal", pattern, message))
            if whole and holds != found:
                wrong.append(("whole", pattern, message))
    assert wrong == []


def _vector_messages() -> set[str]:
    messages: set[str] = set()
    for path in sorted((SPEC / "vectors").glob("bundle*.json")):
        for v in json.loads(path.read_text("utf-8"))["vectors"]:
            d = v["input"].get("descriptor")
            if d is None:
                continue
            for subject in (d, *d.get("causes", ())):
                text = subject.get("message")
                if text and "@PAD@" not in text:
                    messages.add(
                        text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
                    )
    return messages


def test_the_strings_read_from_a_pattern_never_disagree_with_re2() -> None:
    """`literals` (the strings every match holds, and the patterns it decides alone) and
    `_decider` against RE2, over every pattern of the spec's bundles and the hand-made
    cases, on the vectors' messages and on texts built around each string (case variants,
    word and non-word characters beside it, repeats, newlines): the evaluator skips RE2
    only where RE2 would not match, and decides alone only as RE2 decides."""
    patterns = sorted(set(_patterns()) | {p for p, _ in CASES} | {p for p, _ in UNCAPTURED})
    rnd = random.Random(7)
    before = ["", "x", "_", "9", "-", "\n", "a ", "Error: ", "  ", "\u00e9 ", "1"]
    after = ["", "\n", " x", "d", "s", ")", "ms", "\u00e9", "  ", "_", "-", "9"]
    built: set[str] = set()
    for pattern in patterns:
        needs, _, exact, _ = literals(pattern)
        for group in (*needs, tuple(exact or ())):
            for text in sorted(group)[:40]:
                plain = text.replace(BOUNDARY, "")
                for variant in (plain, plain.upper(), plain.title()):
                    built.add(variant)
                    built |= {f"{rnd.choice(before)}{variant}{rnd.choice(after)}" for _ in "abc"}
                built |= {f"{plain} {plain}", f"x{plain}x {plain}", text.replace(BOUNDARY, " ")}
    texts = sorted(_vector_messages() | built)
    assert len(texts) > 3000
    wrong = []
    decided = 0
    for pattern in patterns:
        needs, folded, exact, anchors = literals(pattern)
        search = re2.compile(pattern, _options(re2)).search
        bounded = exact is not None and any(BOUNDARY in x for x in exact)
        decide = _decider(exact, anchors) if exact is not None else None
        for text in texts:
            found = search(text) is not None
            hay = text.lower() if folded else text
            held = all(any(s in hay for s in group) for group in needs)
            if needs and (not folded or text.isascii()) and found and not held:
                wrong.append(("needs", pattern, text))
            if decide is not None and (not (folded or bounded) or text.isascii()):
                decided += 1
                if decide(hay) != found:
                    wrong.append(("exact", pattern, text))
    assert decided > 10000
    assert wrong[:10] == []
