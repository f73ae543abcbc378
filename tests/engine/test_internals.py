"""Each private detail of Python's `re` parser the engine and the linter read
(`classifier.engine.internals`), asserted for the running Python; and that no other
module reaches for the private parser itself."""

from __future__ import annotations

import re
from typing import Any

import pytest

from classifier.engine import internals
from tests.support import ROOT


def _items(pattern: str) -> list[tuple[str, Any]]:
    return [(str(op), av) for op, av in internals.parse(pattern)]


def test_a_pattern_parses_to_a_sequence_of_op_and_argument() -> None:
    tree = internals.parse("ab")
    ops = [(op, av) for op, av in tree]
    assert ops == [(internals.LITERAL, ord("a")), (internals.LITERAL, ord("b"))]
    assert str(internals.LITERAL) == "LITERAL"


def test_the_tree_carries_the_flags_the_pattern_set() -> None:
    assert internals.flags_of(internals.parse("(?i)x")) & re.IGNORECASE
    assert not internals.flags_of(internals.parse("x")) & re.IGNORECASE
    assert internals.flags_of(internals.parse("(?s)x")) & re.DOTALL


def test_a_pattern_python_cannot_read_raises_re_error() -> None:
    with pytest.raises(re.error):
        internals.parse("(unclosed")


def test_the_arguments_the_sampler_reads_have_their_documented_shapes() -> None:
    [(op, av)] = _items("[^a-c\\d]")
    assert op == "IN"
    assert [str(o) for o, _ in av] == ["NEGATE", "RANGE", "CATEGORY"]
    assert av[1][1] == (ord("a"), ord("c"))
    assert str(av[2][1]) == "CATEGORY_DIGIT"
    assert _items("[^x]") == [("NOT_LITERAL", ord("x"))]
    [(op, av)] = _items("a{2,5}")
    assert op == "MAX_REPEAT"
    low, high, body = av
    assert (low, high) == (2, 5)
    assert [(str(o), a) for o, a in body] == [("LITERAL", ord("a"))]
    assert _items("a*?")[0][0] == "MIN_REPEAT"
    assert _items("a*+")[0][0] == "POSSESSIVE_REPEAT"
    [(op, av)] = _items("(?:ab|cd)")
    assert op == "BRANCH"
    assert av[0] is None
    assert [[chr(a) for _, a in alt] for alt in av[1]] == [["a", "b"], ["c", "d"]]
    [(op, av)] = _items("(x)")
    assert op == "SUBPATTERN"
    assert [(str(o), a) for o, a in av[-1]] == [("LITERAL", ord("x"))]
    [(op, av)] = _items("(?>y)")
    assert op == "ATOMIC_GROUP"
    assert [(str(o), a) for o, a in av] == [("LITERAL", ord("y"))]
    assert [op for op, _ in _items("^.$")] == ["AT", "ANY", "AT"]
    [(op, av)] = _items("\\s")
    assert (op, [(str(o), str(a)) for o, a in av]) == ("IN", [("CATEGORY", "CATEGORY_SPACE")])


def test_only_the_inventory_imports_the_private_parser() -> None:
    private = ("re._parser", "re._constants", "sre_parse", "sre_constants")
    found = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "classifier").rglob("*.py"))
        if any(name in path.read_text(encoding="utf-8") for name in private)
    ]
    assert found == ["classifier/engine/internals.py"]
