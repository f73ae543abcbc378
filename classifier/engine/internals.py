"""Every private detail of Python's `re` the package relies on: its parser's tree.

Two readers walk the tree Python's own regular-expression parser builds of a
pattern, because no public API describes a pattern's structure: the literal
prefilter (`classifier.engine.literals`: the literal runs every match contains)
and the linter's sampler (`classifier.lint.patterns`: the plainest string a
pattern finds). The parser is `re._parser` (`sre_parse` before 3.11), private
but of the same shape since Python 3; hypothesis' `from_regex` and `rstr` build
on the same tree. Each detail read is here, each asserted for the running Python
by tests/engine/test_internals.py, so a release that changes one fails there
rather than silently yielding no prefilter or no samples (both readers treat a
tree they cannot read as "nothing known", which is safe but slow or silent).

The tree, as the readers take it:

- `parse(pattern)` is a sequence of `(op, argument)` items; its `state.flags`
  holds the flags the pattern set (`(?i)` is `re.IGNORECASE`);
- `op` is a named constant whose `str` is its name (`"LITERAL"`); `LITERAL`
  is that constant for a single character, the argument its code point;
- the arguments the sampler reads: NOT_LITERAL a code point; IN a list of
  items (`NEGATE` first when negated; LITERAL, RANGE `(low, high)`, CATEGORY);
  CATEGORY a constant named `CATEGORY_DIGIT` and so on; BRANCH `(None,
  alternatives)`; SUBPATTERN with its body last; ATOMIC_GROUP a body;
  MAX_REPEAT, MIN_REPEAT and POSSESSIVE_REPEAT `(low, high, body)`.
"""

from __future__ import annotations

import importlib
from typing import Any

_parser: Any = importlib.import_module("re._parser")

LITERAL: Any = importlib.import_module("re._constants").LITERAL
"""The op of a single character; its argument is the character's code point."""


def parse(pattern: str) -> Any:
    """Python's parse tree of pattern (see the module docstring for its shape).

    Raises `re.error` for a pattern Python cannot read (and, for pathological
    ones, RecursionError, OverflowError or ValueError), as the parser does.
    """
    return _parser.parse(pattern)


def flags_of(tree: Any) -> int:
    """The flags a parsed pattern set (inline `(?i)` and the like)."""
    flags: int = tree.state.flags
    return flags
