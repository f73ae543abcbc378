"""The serving ruleset's home (`RulesetHolder`) and the outcome of the last attempt to
replace it: what the servicer, the reloader, the observers and the console read.

Not to be confused with `Condition.holds` (the engine: whether a condition is
true of a descriptor) nor with the pushback (classifier.server.rpc.pushback:
connections held back until their retry time)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from classifier.engine.ruleset import Ruleset
from classifier.errors import Diagnostic


class ReloadResult(StrEnum):
    reloaded = "reloaded"
    unchanged = "unchanged"
    failed = "failed"


@dataclass(frozen=True, slots=True)
class ReloadStatus:
    """One reload attempt: what it did, when, what started it, and why it failed."""

    result: ReloadResult
    at: str
    trigger: str
    diagnostics: tuple[Diagnostic, ...] = ()
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.result is not ReloadResult.failed


class RulesetHolder:
    """The serving ruleset. Readers take `current` once per request, so every answer
    comes from one ruleset even while a reload swaps in another: a swap is one
    reference assignment, and the Reloader makes one at a time."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.current = ruleset
        self.last_reload: ReloadStatus | None = None
