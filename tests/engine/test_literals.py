"""The literal prefilter for message patterns: never says no where RE2 would say yes."""

from __future__ import annotations

import re2
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from classifier.engine.literals import NONE, Literals, required_literals

# Letters whose case orbit leaves ASCII (Kelvin sign, long s), and others that fold oddly.
ODD = ["\u212a", "\u017f", "\u0130", "\u0131", "\u00df", "\u1e9e", "\u00e9", "\u00c9"]
ALPHABET = ["a", "b", "k", "s", "K", "S", "x", " ", ".", "1", *ODD]

char = st.sampled_from(ALPHABET)
atom = st.one_of(
    char.map(re2.escape),
    st.sampled_from([".", r"\d", "[a-k]", "[^s]", r"\w", r"\b", "^", "$"]),
)


def _pieces(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    piece = st.tuples(
        st.one_of(atom, inner.map(lambda e: f"({e})"), inner.map(lambda e: f"(?i:{e})")),
        st.sampled_from(["", "", "", "*", "+", "?", "{1,2}"]),
    ).map("".join)
    return st.lists(piece, min_size=1, max_size=5).map("".join)


expression = st.recursive(
    _pieces(st.just("a")),
    lambda inner: st.one_of(_pieces(inner), st.tuples(inner, inner).map("|".join)),
    max_leaves=6,
)
patterns = st.tuples(st.sampled_from(["", "(?i)", "(?s)", "(?i)(?m)"]), expression).map("".join)


@settings(max_examples=800, deadline=None)
@given(patterns, st.lists(st.one_of(char, st.sampled_from(["ks", "KS", "kS", "a.b"])), max_size=12))
def test_whatever_re2_matches_contains_the_required_literals(
    pattern: str, parts: list[str]
) -> None:
    """If RE2 finds the pattern in a text, the prefilter lets that text through."""
    try:
        compiled = re2.compile(pattern)
    except re2.error:
        assume(False)
        raise
    literals = required_literals(pattern)
    text = "".join(parts)
    for candidate in (text, text + "".join(literals.runs), "".join(literals.runs).upper()):
        if compiled.search(candidate) is not None:
            assert literals.present(candidate), (pattern, candidate, literals)


def test_runs_come_from_the_top_level_sequence_only() -> None:
    """Groups, repetitions and alternatives end a run; nothing inside them is required."""
    assert required_literals(r"maximum context length is \d+ tokens").runs == (
        "maximum context length is ",
        " tokens",
    )
    assert required_literals(r"quota.*exceeded").runs == ("exceeded", "quota")
    assert required_literals(r"ab?c").runs == ("a", "c")
    assert required_literals(r"(abc)+").runs == ()
    assert required_literals(r"a|b").runs == ()


def test_case_insensitive_runs_are_ascii_and_compared_case_folded() -> None:
    """Under (?i) the message is case-folded, so the Kelvin sign still counts as a k."""
    literals = required_literals("(?i)Bank")
    assert literals == Literals(("bank",), folded=True)
    assert literals.present("BAN\u212a error")
    assert re2.compile("(?i)Bank").search("BAN\u212a error") is not None
    assert not literals.present("bang")
    status = required_literals("(?i)status")
    assert re2.compile("(?i)status").search("\u017ftatus") is not None
    assert status.present("\u017ftatus")


def test_a_run_stops_at_a_non_ascii_letter_under_case_insensitivity() -> None:
    """Non-ASCII letters fold in ways RE2 and Python may not share, so they are left to RE2."""
    assert required_literals("(?i)caf\u00e9 au lait").runs == (" au lait", "caf")


def test_what_python_cannot_read_gives_no_prefilter() -> None:
    """RE2 syntax Python's parser does not know (\\pL, \\Q..\\E, (?U)) means RE2 is always asked."""
    for pattern in (r"\pL+ error", r"\Qa.b\E", "(?U)a+b"):
        assert re2.compile(pattern) is not None
        assert required_literals(pattern) == NONE
        assert NONE.present("anything")
