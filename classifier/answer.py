"""What an answer is, apart from how it is computed.

`Classification` is what the engine returns for one descriptor (class,
action, effect, retryable, the deciding rule and ruleset); `Explanation` and
its parts are what `explain` adds: the rules that matched, why the winner
beat each other match, and the near misses of an Unknown. The client, the
server and the author tools all read these types, so they live here, below
the engine, and import nothing but the taxonomy.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from classifier.taxonomy import Effect, ErrorClass, UnknownReason
from errorclass_client.retry_after import CAPPED_LABEL as CAPPED_LABEL
from errorclass_client.retry_after import RetryAfter as RetryAfter

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


@dataclass(frozen=True, slots=True)
class Classification:
    """The answer for one descriptor, and which ruleset and rule gave it."""

    error_class: ErrorClass
    action: Action
    effect: Effect
    retryable: bool
    rule_id: str
    ruleset_version: str
    ruleset_digest: str
    unknown_reason: UnknownReason = UnknownReason.none
    explanation: Explanation | None = None
    retry_after: RetryAfter | None = None
    """For a retryable answer whose descriptor carries the provider's retry evidence, how
    long to wait (`classifier.engine.retry_after`); None otherwise."""


def classification_dict(c: Classification) -> dict[str, Any]:
    """A classification as plain data (for JSON output and tests)."""
    out: dict[str, Any] = {
        "class": c.error_class.name,
        "class_number": int(c.error_class),
        "effect": c.effect.label,
        "retryable": c.retryable,
        "action": {
            "id": c.action.id,
            "summary": c.action.summary,
            "runbook_url": c.action.runbook_url,
        },
        "rule": c.rule_id,
        "ruleset_version": c.ruleset_version,
        "ruleset_digest": c.ruleset_digest,
    }
    if c.unknown_reason is not UnknownReason.none:
        out["unknown_reason"] = c.unknown_reason.name
    if c.retry_after is not None:
        out["retry_after"] = retry_after_dict(c.retry_after)
    if c.explanation is not None:
        out["explanation"] = dataclasses.asdict(c.explanation)
    return out


def retry_after_dict(r: RetryAfter) -> dict[str, Any]:
    """The advice as plain data: seconds (a float), the attribute it came from, and whether
    the cap cut it."""
    return {"seconds": r.seconds, "source": r.source, "capped": r.capped}
