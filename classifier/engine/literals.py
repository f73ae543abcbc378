"""Literals a message pattern cannot match without: a prefilter that spares most RE2 calls.

A pattern such as `(?i)maximum context length is \\d+ tokens` matches only
messages that contain "maximum context length is " (in any case), and
most messages do not. Testing that with `in` costs tens of nanoseconds;
calling RE2 costs a microsecond, and every call releases and retakes the
GIL, which in a threaded server hands the interpreter to another thread
and waits to get it back. So the compiler keeps, next to each compiled
pattern, the literal runs every match must contain, and the condition
calls RE2 only when all of them are present. The prefilter is a necessary
condition, never a sufficient one: RE2 still decides.

The runs are read from Python's own regular-expression parser (its private
tree, in `classifier.engine.internals`), which
accepts most of RE2's syntax. Anything it cannot read, or reads
differently, yields no runs (RE2 is then called every time); only runs in
the top-level sequence are taken, outside groups, repetitions and
alternatives. Under `(?i)` a run is kept only while it is ASCII and
compared with the case-folded message: each ASCII letter's case orbit in
RE2 (for k and s it includes the Kelvin sign and the long s) folds to
that letter, so a match still shows the run in the folded text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from classifier.engine.internals import LITERAL, flags_of, parse

_ALLOWED_FLAGS = re.IGNORECASE | re.UNICODE | re.MULTILINE | re.DOTALL


@dataclass(frozen=True, slots=True)
class Literals:
    """Runs every match contains; compared with the case-folded text when `folded`."""

    runs: tuple[str, ...]
    folded: bool

    def present(self, text: str) -> bool:
        """False when the text cannot match; True when RE2 must be asked."""
        haystack = text.casefold() if self.folded else text
        return all(run in haystack for run in self.runs)


NONE = Literals((), folded=False)


def required_literals(pattern: str) -> Literals:
    """The literal runs of pattern's top-level sequence (NONE when there are none, or in doubt)."""
    try:
        parsed = parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return NONE
    flags = flags_of(parsed)
    if flags & ~_ALLOWED_FLAGS:
        return NONE
    folded = bool(flags & re.IGNORECASE)
    runs: list[str] = []
    run: list[str] = []
    for op, arg in parsed:
        char = chr(arg) if op is LITERAL else ""
        if char and (not folded or char.isascii()):
            run.append(char.casefold() if folded else char)
            continue
        if run:
            runs.append("".join(run))
            run = []
    if run:
        runs.append("".join(run))
    if not runs:
        return NONE
    return Literals(tuple(sorted(set(runs), key=lambda r: (-len(r), r))), folded)
