"""Whether every client's RE2 reads a message pattern as the service's does.

A bundle's patterns are matched by four RE2 implementations: C++ RE2 (the
service and the Python client, google-re2), Go's regexp, Java's re2j and
JavaScript's re2js. They share RE2's syntax and linear-time semantics, and
a pattern that only asks *whether* a message matches (never what was
captured) means the same to all four, with these exceptions, each measured
on the four (docs/rules.md#non_portable_pattern has the figures):

- Unicode classes (`\\pL`, `\\p{Greek}`, `\\PN`): each carries its own
  Unicode tables, so which characters a class holds, and which class names
  exist, differ (re2j's `\\pL` lacks letters Unicode added since 8.0, re2js
  knows scripts Go does not);
- case-insensitive matching of a non-ASCII character: the case-folding
  tables differ (re2j hangs compiling `(?i)\\x{1C80}`; `(?i)\\x{A7C0}` finds
  U+A7C1 in three of them only). ASCII letters fold alike everywhere, the
  Kelvin sign and the long s included;
- `\\C` (any byte): C++ RE2 alone;
- a group name outside ASCII letters, digits and `_`, or used twice: C++
  RE2 accepts it, the others refuse the pattern;
- a surrogate code point (`\\x{D800}`-`\\x{DFFF}`): Java finds it inside
  a UTF-16 surrogate pair;
- groups nested past MAX_DEPTH: Go and re2js refuse a pattern nested
  1,000 deep, C++ RE2 and re2j do not.

`problem` reads a pattern C++ RE2 has already compiled (so its syntax is
valid) and names the first construct outside the portable subset.
"""

from __future__ import annotations

import re

MAX_DEPTH = 100
"""Groups nested deeper than this are refused: well under the nesting Go and re2js refuse
(1,000 syntax-tree levels; a group adds at most four), far above what a message needs."""

_GROUP_NAME = re.compile(r"[A-Za-z0-9_]+")
_FLAGS = re.compile(r"\(\?([imsU]*)(?:-([imsU]*))?([:)])")
_HEX = re.compile(r"\\x(?:\{([0-9A-Fa-f]+)\}|([0-9A-Fa-f]{2}))")
_OCTAL = re.compile(r"\\([0-7]{1,3})")


def problem(pattern: str) -> str | None:
    """The first construct of pattern the four RE2s do not read alike, in words; None when
    it is portable."""
    return _Scanner(pattern).scan()


class _Scanner:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.caseless = False
        self.saved: list[bool] = []
        self.names: set[str] = set()

    def scan(self) -> str | None:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            found = (
                self._escape(in_class=False)
                if c == "\\"
                else self._class()
                if c == "["
                else self._open()
                if c == "("
                else self._close()
                if c == ")"
                else self._literal(c)
            )
            if found:
                return found
        return None

    def _literal(self, c: str, *, step: bool = True) -> str | None:
        if step:
            self.i += 1
        return self._code_point(ord(c), c)

    def _code_point(self, cp: int, shown: str) -> str | None:
        if 0xD800 <= cp <= 0xDFFF:
            return (
                f"`{shown}` is a surrogate code point, which Java's re2j finds inside a UTF-16 "
                "surrogate pair; no valid message holds one alone"
            )
        if cp > 0x7F and self.caseless:
            return (
                f"`{shown}` is matched case-insensitively, and case folding beyond ASCII differs "
                "between the clients' RE2s (each has its own Unicode tables); spell the cases "
                "you mean (`[éÉ]`) or end `(?i)` before it (`(?i:error) café`)"
            )
        return None

    def _escape(self, *, in_class: bool) -> str | None:
        p, i = self.p, self.i
        n = p[i + 1]
        if n == "Q" and not in_class:
            end = p.find("\\E", i + 2)
            stop = len(p) if end < 0 else end
            for c in p[i + 2 : stop]:
                if found := self._literal(c, step=False):
                    return found
            self.i = len(p) if end < 0 else end + 2
            return None
        if n in "pP":
            m = re.compile(r"\\[pP](\{[^}]*\}|.)").match(p, i)
            shown = m.group(0) if m else p[i : i + 2]
            return (
                f"`{shown}` is a Unicode class, and which characters a class holds (and which "
                "names exist) differs between the clients' RE2s, each with its own Unicode "
                "tables; spell the characters or ranges you mean, or use an ASCII class "
                "(`[[:alpha:]]`, `\\w`, `\\d`)"
            )
        if n == "C":
            return "`\\C` (any byte) is C++ RE2's alone: Go, re2j and re2js refuse it"
        if m := _HEX.match(p, i):
            self.i = m.end()
            return self._code_point(int(m.group(1) or m.group(2), 16), m.group(0))
        if m := _OCTAL.match(p, i):
            self.i = m.end()
            return self._code_point(int(m.group(1), 8), m.group(0))
        self.i = i + 2
        return self._code_point(ord(n), n) if ord(n) > 0x7F else None

    def _class(self) -> str | None:
        p = self.p
        self.i += 1
        if p.startswith("^", self.i):
            self.i += 1
        first = True
        while self.i < len(p) and (p[self.i] != "]" or first):
            first = False
            if p.startswith("[:", self.i):
                end = p.find(":]", self.i + 2)
                if end > 0:
                    self.i = end + 2
                    continue
            if p[self.i] == "\\":
                if found := self._escape(in_class=True):
                    return found
                continue
            if found := self._literal(p[self.i]):
                return found
        self.i += 1
        return None

    def _open(self) -> str | None:
        p, i = self.p, self.i
        if not p.startswith("(?", i):
            return self._push(i + 1, self.caseless)
        if m := _FLAGS.match(p, i):
            on, off, end = m.group(1), m.group(2) or "", m.group(3)
            caseless = (self.caseless or "i" in on) and "i" not in off
            if end == ")":
                self.caseless = caseless
                self.i = m.end()
                return None
            return self._push(m.end(), caseless)
        m = re.compile(r"\(\?P?<([^>]*)>").match(p, i)
        if m is None:  # (?: or anything RE2 accepted that we do not name
            after = i + 3 if p.startswith("(?:", i) else i + 2
            return self._push(after, self.caseless)
        name = m.group(1)
        if not _GROUP_NAME.fullmatch(name):
            return (
                f"the group name `{name}` holds characters other than ASCII letters, digits "
                "and `_`: Go, re2j and re2js refuse the pattern"
            )
        if name in self.names:
            return f"the group name `{name}` is used twice: re2j and re2js refuse the pattern"
        self.names.add(name)
        return self._push(m.end(), self.caseless)

    def _push(self, after: int, caseless: bool) -> str | None:
        self.saved.append(self.caseless)
        self.caseless = caseless
        self.i = after
        if len(self.saved) > MAX_DEPTH:
            return (
                f"groups nest more than {MAX_DEPTH} deep: Go and re2js refuse a pattern nested "
                "1,000 levels deep, so the subset stops well before"
            )
        return None

    def _close(self) -> str | None:
        self.caseless = self.saved.pop() if self.saved else False
        self.i += 1
        return None
