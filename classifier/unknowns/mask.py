"""What varies in a message, replaced by a placeholder.

`mask` turns `Node 'summarize' raised asyncio.CancelledError after 30s (run 7f3c...)` into
`Node <QUOTED> raised asyncio.CancelledError after <NUM> (run <HEX>)`: two messages of one
failure then read the same, and the template miner only has to find what masking did not.
URLs, emails, quoted values and payloads are masked first (a URL before the host and the
numbers inside it), then each token that may hold a value is masked on its own.

Secrets are another matter: what is stored rather than grouped passes through
`classifier.redact`, the one redactor.
"""

from __future__ import annotations

import re
from typing import Final

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
    message: `classifier unknowns` masks every Unknown line it reads.
    """
    text = message
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
    return " ".join(tokens)
