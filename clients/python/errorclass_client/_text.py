"""Text as every client counts and strips it (clients/spec/README.md, "Counting").

Characters are code points (Python's `len`), so a cut never splits a surrogate pair;
"stripped" means the facts' whitespace set, which is Python's `str.isspace`.
"""

from __future__ import annotations

from errorclass_client.facts import WHITESPACE


def strip(text: str) -> str:
    return text.strip(WHITESPACE)


def utf8_text(text: str) -> str:
    """text with each lone surrogate replaced by U+FFFD (a pair spelt as two is joined).

    A JSON escape can spell one (`"\\ud800"`), and protobuf refuses to send a string
    UTF-8 cannot encode. Nearly every text is ASCII, which is checked first.
    """
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def utf8_bytes(text: str) -> int:
    """How many UTF-8 bytes the text is, lone surrogates counted as U+FFFD's three."""
    return len(utf8_text(text).encode())
