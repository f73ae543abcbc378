"""Message samples: plain strings that RE2 patterns (RE2-only spellings included) really find."""

from __future__ import annotations

import pytest
import re2

from classifier.lint.patterns import combined, samples, to_python_syntax


@pytest.mark.parametrize(
    ("pattern", "simplest"),
    [
        ("(?i)rate\\s+limit(ed)?", "rate limit"),
        ("^Too many requests$", "Too many requests"),
        ("\\b429\\b", "429"),
        ("x{2,3}[^a-c]", "xxx"),
        ("(?s)a.*b", "ab"),
        ("\\QC++ (x)\\E", "C++ (x)"),
        ("\\pL+\\d\\z", "a0"),
        ("[[:alpha:]]+: [^[:space:]]+", "a: a"),
        ("foo(?i)bar", "foobar"),
        ("(?i:quota) (?P<n>\\d+)|never", "quota 0"),
        ("(?<name>ab|cd)", "ab"),
        ("\\x{41}\\x41", "AA"),
        ("[]a]", "]"),
        ("(?U)a+?", "a"),
    ],
)
def test_the_simplest_sample_is_plain_and_re2_finds_it(pattern: str, simplest: str) -> None:
    found = samples(pattern)
    assert found[0] == simplest
    assert all(re2.search(pattern, s) for s in found), to_python_syntax(pattern)


def test_a_pattern_the_sampler_cannot_read_has_no_sample() -> None:
    assert samples("(?<=x)y") == []  # RE2 rejects lookbehind anyway
    assert samples("a(") == []


def test_combined_samples_satisfy_every_pattern_in_some_order() -> None:
    patterns = [re2.compile("(?i)limit$"), re2.compile("^Rate")]
    assert combined(patterns)[0] == "Rate limit"
    assert combined([re2.compile("^a"), re2.compile("^b")]) == []
    assert combined([]) == [""]
