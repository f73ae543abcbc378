"""Strings that an RE2 pattern finds: the message half of a lint witness.

RE2 syntax is, for everything a message pattern needs, a subset of Python's:
the few RE2-only spellings (`\\z`, `\\Q...\\E`, `\\pL`, `\\x{41}`, `[[:alpha:]]`, inline
flags in mid-pattern, `(?<name>...)`) are rewritten into something Python's
parser reads, then the parse tree is walked to build the shortest, plainest
string it accepts (the first alternative, the fewest repetitions). Nothing
here has to be exact: callers keep a sample only after the real RE2 pattern
has found a match in it.

Python's parse tree is private (every detail read of it is in
`classifier.engine.internals`, asserted by a test). A pattern it cannot read
simply has no sample.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from classifier.engine.internals import parse

MAX_SAMPLE_CHARS = 1024

_POSIX_CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r" \t\n\r\f\v",
    "blank": r" \t",
    "punct": r"!-/:-@\[-`{-~",
    "word": r"\w",
    "xdigit": "0-9A-Fa-f",
    "cntrl": r"\x00-\x1f",
    "print": r" -~",
    "graph": r"!-~",
    "ascii": r"\x00-\x7f",
}
_UNICODE_SAMPLES = {"Lu": "A", "Ll": "a", "Nd": "0", "N": "0", "Greek": "\u03b1", "Han": "\u4e2d"}

_CATEGORY_SAMPLES = {
    "CATEGORY_DIGIT": "0",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": "a",
    "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": " ",
    "CATEGORY_LINEBREAK": "\n",
    "CATEGORY_NOT_LINEBREAK": "a",
}
_CATEGORY_TESTS = {
    "CATEGORY_DIGIT": re.compile(r"\d"),
    "CATEGORY_NOT_DIGIT": re.compile(r"\D"),
    "CATEGORY_SPACE": re.compile(r"\s"),
    "CATEGORY_NOT_SPACE": re.compile(r"\S"),
    "CATEGORY_WORD": re.compile(r"\w"),
    "CATEGORY_NOT_WORD": re.compile(r"\W"),
    "CATEGORY_LINEBREAK": re.compile(r"\n"),
    "CATEGORY_NOT_LINEBREAK": re.compile(r"[^\n]"),
}
_NEGATED_SET_CANDIDATES = "ax0 Z_-.:/é"


class _UnsupportedError(Exception):
    """The pattern uses something this sampler does not build strings for."""


def samples(pattern: str) -> list[str]:
    """A few plain strings the pattern probably finds, simplest first (may be empty)."""
    try:
        tree = parse(to_python_syntax(pattern))
    except Exception:  # re.error, RecursionError, or a tree shape this Python lacks
        return []
    out: list[str] = []
    for at_least_once in (False, True):
        try:
            text = _Sampler(at_least_once).sequence(tree)
        except (_UnsupportedError, RecursionError):
            continue
        if len(text) <= MAX_SAMPLE_CHARS and text not in out:
            out.append(text)
    return out


def combined(patterns: Sequence[Any], limit: int = 8) -> list[str]:
    """Messages in which every one of the compiled RE2 `patterns` finds a match.

    Each pattern contributes a sample; the samples are joined in every order
    (with a space, then without), since a search finds a pattern anywhere in
    the message unless it is anchored. Only strings that every real pattern
    matches are returned.
    """
    if not patterns:
        return [""]
    per_pattern = [samples(p.pattern) for p in patterns]
    if any(not s for s in per_pattern):
        return []
    found: list[str] = []
    for choice in itertools.islice(itertools.product(*per_pattern), 16):
        for text in _arrangements(choice):
            if text not in found and all(p.search(text) is not None for p in patterns):
                found.append(text)
                if len(found) >= limit:
                    return found
    return found


def _arrangements(parts: Sequence[str]) -> Iterable[str]:
    unique = list(dict.fromkeys(parts))
    yield from unique
    for order in itertools.permutations(unique):
        yield " ".join(p for p in order if p)
        yield "".join(order)


def to_python_syntax(pattern: str) -> str:
    """Rewrite RE2-only spellings into Python's, closely enough to sample from."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
                out.append(re.escape(literal))
                i = n if end < 0 else end + 2
                continue
            if nxt == "x" and pattern.startswith("{", i + 2):
                end = pattern.find("}", i)
                try:
                    out.append(re.escape(chr(int(pattern[i + 3 : end], 16))))
                except ValueError:
                    out.append(pattern[i : end + 1])
                i = end + 1 if end > 0 else n
                continue
            if nxt == "z":
                out.append(r"\Z")
            elif nxt == "C":
                out.append(".")
            elif nxt in "pP":
                name, i = _unicode_class_name(pattern, i + 2)
                sample = _UNICODE_SAMPLES.get(name, "a") if nxt == "p" else "0"
                out.append(re.escape(sample))
                continue
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i):
                end = pattern.find(":]", i + 2)
                name = pattern[i + 2 : end] if end > 0 else ""
                if name in _POSIX_CLASSES:
                    out.append(_POSIX_CLASSES[name])
                    i = end + 2
                    continue
            if ch == "]":
                in_class = False
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):
                out.append(r"\]")
                i += 1
            continue
        if ch == "(" and pattern.startswith("(?", i):
            flags = re.match(r"\(\?([a-zA-Z-]*)([:)])", pattern[i:])
            if flags:
                out.append("(?:" if flags.group(2) == ":" else "")
                i += flags.end()
                continue
            if pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
                out.append("(?P<")
                i += 3
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def _unicode_class_name(pattern: str, i: int) -> tuple[str, int]:
    """The name after `\\p` (`L` or `{Greek}`) and the index after it."""
    if pattern.startswith("{", i):
        end = pattern.find("}", i)
        if end < 0:
            return "", len(pattern)
        return pattern[i + 1 : end].lstrip("^"), end + 1
    return pattern[i : i + 1], i + 1


class _Sampler:
    """Walks a parse tree, building the plainest string it accepts."""

    def __init__(self, at_least_once: bool) -> None:
        self.at_least_once = at_least_once

    def sequence(self, items: Iterable[tuple[Any, Any]]) -> str:
        return "".join(self.item(str(op), av) for op, av in items)

    def item(self, op: str, av: Any) -> str:
        if op == "LITERAL":
            return chr(int(av))
        if op == "NOT_LITERAL":
            return "x" if chr(av) != "x" else "y"
        if op == "ANY":
            return "x"
        if op == "AT":
            return ""
        if op == "IN":
            return _set_member(av)
        if op == "CATEGORY":
            return _CATEGORY_SAMPLES[str(av)]
        if op == "BRANCH":
            return self.sequence(av[1][0])
        if op == "SUBPATTERN":
            return self.sequence(av[-1])
        if op == "ATOMIC_GROUP":
            return self.sequence(av)
        if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = av
            times: int = min(max(low, 1) if self.at_least_once else low, high)
            return self.sequence(body) * times
        raise _UnsupportedError(op)


def _set_member(items: list[tuple[Any, Any]]) -> str:
    """A character of a set `[...]`: its first member, or for `[^...]` a common non-member."""
    if items and str(items[0][0]) == "NEGATE":
        rest = items[1:]
        for ch in _NEGATED_SET_CANDIDATES:
            if not any(_in_item(ch, str(op), av) for op, av in rest):
                return ch
        raise _UnsupportedError("NEGATE")
    op, av = items[0]
    kind = str(op)
    if kind == "LITERAL":
        return chr(av)
    if kind == "RANGE":
        return chr(av[0])
    if kind == "CATEGORY":
        return _CATEGORY_SAMPLES[str(av)]
    raise _UnsupportedError(kind)


def _in_item(ch: str, op: str, av: Any) -> bool:
    if op == "LITERAL":
        return bool(ord(ch) == av)
    if op == "RANGE":
        return bool(av[0] <= ord(ch) <= av[1])
    if op == "CATEGORY":
        return _CATEGORY_TESTS[str(av)].match(ch) is not None
    return True
