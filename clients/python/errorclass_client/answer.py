"""What the service answers, as the client returns it.

The fields mirror the server's `classifier.Classification` and its explanation (a test
checks the names agree), so code that classifies in process and code that calls the
service read the same names. One difference is deliberate: `error_class` is the
`ErrorClass` member when this client knows the number, and the bare number when the
server is newer and has appended a class this client has never seen. The number is what
a runtime stores, so it is never lost or guessed; `class_name` always carries the
server's name for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from errorclass_client.taxonomy import Effect, ErrorClass, UnknownReason

NO_TYPE_DEPTH = -1
"""`RuleMatch.type_depth` of a rule without a type condition (on the wire too)."""


@dataclass(frozen=True, slots=True)
class Action:
    """A recommended operator action."""

    id: str
    summary: str
    runbook_url: str = ""


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """A rule that matched, the conditions that held, and its precedence key."""

    rule_id: str
    location: str
    class_name: str
    conditions: tuple[str, ...]
    type_depth: int
    condition_count: int
    priority: int
    effect: str = ""
    fallback: bool = False


@dataclass(frozen=True, slots=True)
class PrecedenceDecision:
    """Why the winner beat another match: the step that decided, and a sentence."""

    loser_rule_id: str
    step: str
    reason: str


@dataclass(frozen=True, slots=True)
class NearMiss:
    """A rule that came close, the conditions that failed, and what the descriptor had instead.

    `observed` runs parallel to `failed_conditions` (empty when the tracer
    was not given the descriptor).
    """

    rule_id: str
    location: str
    class_name: str
    failed_conditions: tuple[str, ...]
    held_count: int
    held_conditions: tuple[str, ...] = ()
    observed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RuleVerdict:
    """Why one named rule did or did not decide a descriptor (`explain --rule`).

    `outcome` is `decided`; `no_match` (the conditions that held and failed, with what the
    descriptor had where each failed look); `lost` (it matched, and lost at precedence
    `step` to `rivals`, for `reason`); or `conflict` (it tied with `rivals` and they
    disagreed, so the answer is Unknown).
    """

    rule_id: str
    location: str
    class_name: str
    outcome: str
    held_conditions: tuple[str, ...] = ()
    failed_conditions: tuple[str, ...] = ()
    observed: tuple[str, ...] = ()
    step: str = ""
    rivals: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Explanation:
    """How the engine reached an answer: matches best first, decisions, near misses."""

    matches: tuple[RuleMatch, ...]
    winner_rule_id: str
    decisions: tuple[PrecedenceDecision, ...]
    near_misses: tuple[NearMiss, ...]


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
    """True when the answer was decided in this process (from the client's bundle, or the
    `fallback` given to it), not by the service: `ruleset_digest` then names the local
    ruleset, and `bundle_digest` the bundle that decided."""
    bundle_digest: str = ""
    """For a local answer from a bundle, the bundle's digest (sha256 of its bytes, as
    GetBundle names it); empty for the service's answers."""
    retry_after: timedelta | None = None
    """How long to wait before retrying: a retryable answer whose descriptor carries the
    provider's retry evidence (`errorclass_client.retry_after`); None otherwise."""
    retry_after_source: str = ""
    """The attribute the wait was read from, ending " (capped)" when the rule's cap cut it
    (as the wire's `retry_after_source` says it); empty without a wait."""

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
    bundle_digest: str = ""
    """The digest of its bundle (GetBundle), sha256:<hex> of the bundle's bytes: what local
    answers name ("" from a server older than the field, and for a candidate)."""
    bundle_signed: bool = False
    """Whether the bundle carries the operator's signatures."""
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
