"""Every private detail of another library this client relies on, in one place.

Describing a failure must never read from the network, so the client reads a provider's
error body only when the HTTP client already read it; neither httpx nor requests says so
publicly (`response.content` reads the body when it was not read, or raises), so the
client looks at the attribute both keep the read body in. The bundle evaluator asks RE2
only whether a pattern matches, which google-re2's public `search` answers by building a
match object. A new release may rename either: each detail here is asserted for the
installed release by clients/python/tests/test_private.py, and a renamed one only makes
the client read less (no body) or slower (`search`), never wrong.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def read_body(response: Any) -> bytes | None:
    """The body an httpx or requests response has already read, else None.

    httpx's `Response._content` is set by `read()` (absent before); requests'
    `Response._content` holds the body once consumed (False before)."""
    try:
        content = getattr(response, "_content", None)
    except Exception:
        return None
    return bytes(content) if isinstance(content, bytes | bytearray) else None


def re2_matcher(regexp: Any) -> Callable[[bytes], bool]:
    """Whether a compiled google-re2 pattern finds a match in UTF-8 bytes, without building
    the match object `search` returns (a third of the evaluator's cost per pattern).

    google-re2's `_Regexp._regexp` is the pybind11 RE2 object; its `Match(anchor, text,
    pos, endpos)` returns the spans of the match and its groups, the first `(-1, -1)` when
    nothing matched. Without it (another release), `search`."""
    raw = getattr(regexp, "_regexp", None)
    match = getattr(raw, "Match", None)
    anchor = getattr(getattr(sys.modules.get("re2"), "_Anchor", None), "UNANCHORED", None)
    if match is None or anchor is None:
        search = regexp.search
        return lambda text: search(text) is not None

    def matches(text: bytes) -> bool:
        return bool(match(anchor, text, 0, len(text))[0][0] != -1)

    return matches
