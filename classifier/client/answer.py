"""What the service answers, as the Python client returns it.

The fields mirror `classifier.engine.Classification`, so code that
classifies in-process and code that calls the service read the same names.
One difference is deliberate: `error_class` is the `ErrorClass` member when
this client knows the number, and the bare number when the server is newer
and has appended a class this client has never seen. The number is what a
runtime stores, so it is never lost or guessed; `class_name` always carries
the server's name for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from classifier.answer import Action, Explanation
from classifier.taxonomy import Effect, ErrorClass, UnknownReason


def error_class(number: int) -> ErrorClass | int:
    """The class for a wire number; the bare number when this client does not know it."""
    try:
        return ErrorClass(number)
    except ValueError:
        return number


@dataclass(frozen=True, slots=True)
class Answer:
    """The classification of one descriptor, and which ruleset and rule gave it."""

    error_class: ErrorClass | int
    class_name: str
    action: Action
    effect: Effect
    retryable: bool
    rule_id: str
    ruleset_version: str
    ruleset_digest: str
    unknown_reason: UnknownReason = UnknownReason.none
    explanation: Explanation | None = None
    explanation_text: str = ""
    local: bool = False
    """True when the client's fallback classified in process (the service could not):
    `ruleset_digest` then names the local ruleset."""

    @property
    def class_number(self) -> int:
        """The permanent number: what a runtime stores."""
        return int(self.error_class)

    @property
    def is_unknown(self) -> bool:
        """No rule decided (no match, or a conflict): a measurement, not a verdict."""
        return self.class_number == ErrorClass.Unknown


class ReloadResult(StrEnum):
    """What a reload attempt did (the proto's ReloadResult)."""

    unspecified = "unspecified"
    """No attempt was described (a newer server's result this client does not know)."""
    reloaded = "reloaded"
    unchanged = "unchanged"
    failed = "failed"


@dataclass(frozen=True, slots=True)
class ReloadInfo:
    """The most recent attempt to reload a served ruleset's folder."""

    result: ReloadResult
    at: str
    """When it was made, RFC 3339 UTC."""
    trigger: str
    """What started it: watch, signal or admin."""
    error: str = ""
    """Why it failed, one `file:line:col: code: message` a line; empty unless failed."""


@dataclass(frozen=True, slots=True)
class RulesetLayer:
    """One ruleset of a layered stack (the served ruleset first, then its bases)."""

    name: str
    version: str
    digest: str
    source: str


@dataclass(frozen=True, slots=True)
class RulesetInfo:
    """The ruleset a server is serving, the last reload of it, and the candidate shadowing it."""

    name: str
    version: str
    digest: str
    rule_count: int
    loaded_at: str
    source: str
    description: str
    layers: tuple[RulesetLayer, ...] = ()
    classifier_version: str = ""
    """The classifier software serving it ("" from a server older than the field)."""
    last_reload: ReloadInfo | None = None
    """None when no reload was tried since the server started."""
    candidate: RulesetInfo | None = None
    """The shadow ruleset (`serve --candidate`), which never answers; None without one."""


@dataclass(frozen=True, slots=True)
class ClassInfo:
    """One class of the taxonomy with the serving ruleset's defaults."""

    error_class: ErrorClass | int
    name: str
    description: str
    default_action: Action
    default_effect: Effect
    default_retryable: bool
