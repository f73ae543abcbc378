"""What varies in a message, replaced by a placeholder.

`mask` turns `Node 'summarize' raised asyncio.CancelledError after 30s (run 7f3c...)` into
`Node <QUOTED> raised asyncio.CancelledError after <NUM> (run <HEX>)`: two messages of one
failure then read the same, and the template miner only has to find what masking did not.
URLs, emails, quoted values and payloads are masked first (a URL before the host and the
numbers inside it), then each token that may hold a value is masked on its own.

Secrets are another matter: what is stored rather than grouped passes through
`classifier.redact`, the one redactor. Its markers (`[REDACTED:email]`) are already what
varies, said in words: `mask` keeps each whole, as itself (the JSON mask would read its
brackets as a payload), and like a placeholder it stands for a value, never for words a
draft may key on (`literal_text`, `value_pattern`).
"""

from __future__ import annotations

import re
from typing import Final

from classifier.redact import MARKER_PATTERN

MAX_TOKENS: Final = 64
"""Tokens of a masked message kept for templating; a longer tail is one `<*>`."""

_TLDS = (
    "com|net|org|io|ai|dev|app|cloud|co|us|eu|uk|de|fr|jp|local|internal|svc|cluster|"
    "amazonaws|googleapis|azure|windows"
)

_WHOLE: Final[tuple[tuple[str, str, tuple[str, ...]], ...]] = (
    ("URL", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>()\[\]{}]+", ("://",)),
    ("EMAIL", r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+", ("@",)),
    (
        "QUOTED",
        r"(?<![\w'\"`])(?:'[^'\n]{0,256}'|\"[^\"\n]{0,256}\"|`[^`\n]{0,256}`)(?![\w])",
        ("'", '"', "`"),
    ),
    ("JSON", r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}|\[(?:[^\[\]]|\[[^\[\]]*\])*\]", ("{", "[")),
)
"""Masks that may span tokens, each run only when its trigger characters are present."""

_TOKEN_MASKS: Final[tuple[tuple[str, str], ...]] = (
    ("UUID", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    (
        "TS",
        r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        r"|\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b",
    ),
    ("IP", r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b"),
    ("HOST", rf"\b(?:[a-zA-Z0-9-]+\.)+(?:{_TLDS})(?::\d{{1,5}})?\b|\blocalhost(?::\d{{1,5}})?\b"),
    ("HEX", r"\b0[xX][0-9a-fA-F]+\b|\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"),
    (
        "ID",
        r"\b(?=[A-Za-z0-9]*[_-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)+\b"
        r"|\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{8,}\b",
    ),
    ("PATH", r"(?<![\w.])(?:/[\w.@+-]+){2,}/?"),
    ("NUM", r"(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?(?:ms|us|ns|s|m|h|[kKMG]i?B|B|%)?\b"),
)
"""Masks within one token, tried in order at each position of a token that may hold one."""

_WHOLE_PATTERNS = tuple((re.compile(p), f"<{name}>", t) for name, p, t in _WHOLE)
_TOKEN = re.compile("|".join(f"(?P<{name}>{p})" for name, p in _TOKEN_MASKS))

PLACEHOLDERS: Final = frozenset(f"<{m[0]}>" for m in (*_WHOLE, *_TOKEN_MASKS)) | {"<*>"}
"""Every token `mask` or the miner puts where a value was."""
PLACEHOLDER_PATTERNS: Final[dict[str, str]] = {
    "<URL>": r"\S+",
    "<EMAIL>": r"\S+",
    "<UUID>": r"[0-9a-fA-F-]{36}",
    "<TS>": r"\S+",
    "<IP>": r"[0-9.:]+",
    "<HOST>": r"\S+",
    "<HEX>": r"\S+",
    "<QUOTED>": r".+?",
    "<JSON>": r".+?",
    "<ID>": r"\S+",
    "<PATH>": r"\S+",
    "<NUM>": r"\S+",
    "<*>": r".*?",
}
"""An RE2 pattern for what each placeholder stood for, loose on purpose (drafted rules)."""


MARKER: Final = re.compile(MARKER_PATTERN)
"""A redaction marker, kept whole by `mask`."""
MARKER_PATTERN_IN_RULE: Final = r".+?"
"""What a marker stood for, in a drafted rule's pattern: any value (a bearer token's marker
replaced a word, a space and the token), never the marker's own text, which only stored
records carry: the live descriptor a rule is matched against holds the secret."""
VALUE_TOKEN: Final = re.compile(r"<(?:[A-Z]+|\*)>|" + MARKER_PATTERN)
"""A placeholder or a redaction marker inside a token: what stands for a value."""


def is_value(token: str) -> bool:
    """Whether a whole token stands for a value (a placeholder or a redaction marker)."""
    return token in PLACEHOLDERS or MARKER.fullmatch(token) is not None


def value_pattern(found: str) -> str:
    """The loose RE2 pattern for what a placeholder or a marker (as VALUE_TOKEN found it)
    stood for."""
    return PLACEHOLDER_PATTERNS.get(found, MARKER_PATTERN_IN_RULE)


def literal_text(template: str) -> str:
    """The template's own words: every placeholder and redaction marker taken out. What a
    drafter may read as evidence (`<JSON>` says nothing about JSON, `[REDACTED:email]`
    nothing about e-mail)."""
    return " ".join(VALUE_TOKEN.sub(" ", template).split())


def _placeholder(m: re.Match[str]) -> str:
    return f"<{m.lastgroup}>"


_NEEDS = re.compile(r"[\d/]|\.[^\s]|localhost")
_PUNCT = "()[]{},;:.!?'\""


def _masked_token(token: str) -> str:
    core = token.strip(_PUNCT)
    if core.isdigit():  # the commonest value by far: a bare number
        return token.replace(core, "<NUM>", 1)
    return _TOKEN.sub(_placeholder, token)


def mask(message: str) -> str:
    """The message with what varies replaced, whitespace runs as one space, at most MAX_TOKENS
    tokens (a longer tail becomes `<*>`).

    Masks that span tokens (URLs, emails, quoted values, payloads) run first and only when
    their trigger characters occur; then each token that may hold a value (a digit, a
    slash, an inner dot) is masked on its own, which keeps this a few microseconds a
    message: `classifier unknowns` masks every Unknown line it reads. A redaction marker
    is set aside first and put back as it was (unless a wider mask, a URL or a payload
    around it, took it in).
    """
    text, markers = _set_aside(message)
    for pattern, placeholder, triggers in _WHOLE_PATTERNS:
        for t in triggers:
            if t in text:
                text = pattern.sub(placeholder, text)
                break
    tokens = text.split()
    for i, token in enumerate(tokens):
        if not token.isalpha() and _NEEDS.search(token):
            tokens[i] = _masked_token(token)
    if len(tokens) > MAX_TOKENS:
        tokens = [*tokens[:MAX_TOKENS], "<*>"]
    masked = " ".join(tokens)
    return masked.translate(markers) if markers else masked


_SET_ASIDE = 0xE000
"""Markers stand in the text as characters of Unicode's private use area while the masks
run: no mask's pattern matches one on its own (not a word character, a digit, a dot or a
slash), and each is one character, so the token masks see a token as it was around it."""
_MAX_SET_ASIDE = 0xF8FF - _SET_ASIDE + 1
_PRIVATE = re.compile("[\ue000-\uf8ff]")


def _set_aside(message: str) -> tuple[str, dict[int, str]]:
    """The message with each redaction marker replaced by a private character, and the
    table (for `str.translate`) that puts them back. A message that holds private
    characters of its own keeps its markers in place (they are then masked as any text)."""
    if "[REDACTED:" not in message or _PRIVATE.search(message):
        return message, {}
    markers: dict[int, str] = {}

    def aside(m: re.Match[str]) -> str:
        if len(markers) == _MAX_SET_ASIDE:
            return m.group()
        code = _SET_ASIDE + len(markers)
        markers[code] = m.group()
        return chr(code)

    return MARKER.sub(aside, message), markers
