"""Each private detail of another library the client relies on (errorclass_client._private),
asserted for the installed release: a release that renames one fails here, not silently
in a runtime that would then read no provider body."""

from __future__ import annotations

import io

import httpx
import pytest
import requests

from errorclass_client._private import re2_matcher, read_body

BODY = b'{"error": {"code": "context_length_exceeded", "message": "too long"}}'


def test_httpx_keeps_a_read_body_in_content_and_none_before() -> None:
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    unread = httpx.Response(400, request=request, stream=httpx.ByteStream(BODY))
    assert read_body(unread) is None, "an unread httpx body must not be read from the stream"
    unread.read()
    assert read_body(unread) == BODY
    assert read_body(httpx.Response(400, request=request, content=BODY)) == BODY


def test_requests_keeps_a_consumed_body_in_content_and_false_before() -> None:
    response = requests.Response()
    response.status_code = 400
    response.raw = io.BytesIO(BODY)
    assert read_body(response) is None, "an unconsumed requests body must not be read"
    assert response.content == BODY  # consuming it, as raise_for_status' callers have
    assert read_body(response) == BODY


@pytest.mark.parametrize("other", [None, object(), {"_content": BODY}])
def test_anything_else_gives_no_body(other: object) -> None:
    assert read_body(other) is None


def test_google_re2_answers_whether_a_pattern_matches_from_its_raw_regexp() -> None:
    """`_Regexp._regexp.Match(anchor, text, pos, endpos)` gives the spans, the first
    (-1, -1) without a match: what `re2_matcher` reads instead of building a match."""
    re2 = pytest.importorskip("re2")
    regexp = re2.compile("(?:quota|limit) exceeded")
    assert regexp._regexp.Match(re2._Anchor.UNANCHORED, b"the limit exceeded", 0, 18)[0] == (
        4,
        18,
    )
    assert regexp._regexp.Match(re2._Anchor.UNANCHORED, b"fine", 0, 4)[0] == (-1, -1)
    matches = re2_matcher(regexp)
    assert matches.__name__ == "matches", "the raw path, not the fallback to search"
    for text in (
        b"quota exceeded",
        b"x limit exceeded y",
        b"",
        b"quota",
        "é quota exceeded".encode(),
    ):
        assert matches(text) == (regexp.search(text) is not None)
