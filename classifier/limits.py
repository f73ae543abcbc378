"""Documented limits on what the service accepts.

A descriptor over a hard limit is refused with the field and the limit named.
A message longer than MAX_MESSAGE_CHARS is not refused: it is classified on
its first MAX_MESSAGE_CHARS characters, because a runtime must always get an
answer for a well-formed descriptor.
"""

from __future__ import annotations

MAX_TYPE_NAME_CHARS = 1024
MAX_SUPERTYPES = 64
MAX_CAUSES = 32
MAX_CODE_CHARS = 256
MAX_MESSAGE_CHARS = 4096
MAX_LABEL_CHARS = 128
MAX_ATTRIBUTES = 64
MAX_ATTRIBUTE_KEY_CHARS = 256
MAX_ATTRIBUTE_VALUE_CHARS = 4096

MAX_BATCH = 1000
"""Descriptors in one ClassifyBatch call, and decisions in one ReportDecisions call; more is
INVALID_ARGUMENT naming `requests` (`decisions`)."""
MAX_REPORTED_TEXT_CHARS = 4096
"""Characters of each text of a reported decision's answer (ReportDecisions: class name,
action, rule id, ruleset version); more is INVALID_ARGUMENT naming the field."""
MAX_REQUEST_BYTES = 4 * 1024 * 1024
"""Default largest request message the server reads (`serve --max-request-bytes`);
gRPC itself answers a larger one with RESOURCE_EXHAUSTED naming both sizes."""

MAX_EXPLAINED_PER_CALL = 4
"""Descriptors of one ClassifyBatch that may ask for `explain`; more is INVALID_ARGUMENT
naming `requests` (an explanation costs about a hundred times an answer)."""
EXPLAIN_AT_ONCE = 1
"""Calls (or stream messages) the server explains at once; another that asks for explain
meanwhile is RESOURCE_EXHAUSTED at once: explaining costs a hundred times an answer, and
this bounds the share of the server explain floods can take from other callers."""
EXPLAIN_CPU_SHARE = 0.2
"""Of one core, on average, what explanations may take (a token bucket in CPU seconds);
past it, explain is RESOURCE_EXHAUSTED until the share has refilled."""
EXPLAIN_CPU_BURST_SECONDS = 0.5
"""CPU seconds of explanation the bucket holds: an occasional explain is never refused."""
EXPLAIN_TIMEOUT_SECONDS = 30.0
"""The longest one explain call may take (the call's own deadline, when shorter, rules);
past it the explaining process is replaced and the call answered UNAVAILABLE."""
HOLD_MIN_SECONDS = 0.1
HOLD_MAX_SECONDS = 1.0
"""A connection refused an explanation (the budget spent, the slot taken, too many in one
batch) is told when to retry (`grpc-retry-pushback-ms`), and its next calls are held
back until then, this range bounding the wait: a client that floods explain is slowed to
the pace the server gives explanations, while a client that waits as told never notices."""
MAX_HELD_CALLS = 1024
"""Calls held back at once, over every connection; past it, a held connection's call is
queued as any other (the bound is on what holding may keep in memory)."""
MAX_EXPLANATION_CHARS = 16 * 1024
"""Characters of an explanation's text over gRPC; a longer one is cut, saying so."""
MAX_EXPLAINED_TEXT_CHARS = 256
"""Characters of each message, attribute value and observed value an explanation over
gRPC shows (the descriptor was classified on its first MAX_MESSAGE_CHARS)."""

PUBLISHED = (
    "MAX_TYPE_NAME_CHARS",
    "MAX_SUPERTYPES",
    "MAX_CAUSES",
    "MAX_CODE_CHARS",
    "MAX_MESSAGE_CHARS",
    "MAX_LABEL_CHARS",
    "MAX_ATTRIBUTES",
    "MAX_ATTRIBUTE_KEY_CHARS",
    "MAX_ATTRIBUTE_VALUE_CHARS",
    "MAX_BATCH",
)
"""The limits every client package carries in its generated facts (Node, Java, Go), so that
a client refuses what the service would refuse before any call."""
