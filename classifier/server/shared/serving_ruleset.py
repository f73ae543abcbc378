"""The serving ruleset's home (`RulesetHolder`), with its bundle, and the outcome of the last
attempt to replace it: what the servicer, the reloader, the observers and the console read.

Not to be confused with `Condition.holds` (the engine: whether a condition is
true of a descriptor) nor with the pushback (classifier.server.rpc.pushback:
connections held back until their retry time)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from classifier.engine.ruleset import Ruleset
from classifier.errors import Diagnostic
from classifier.server.shared.serving_bundle import ServingBundle
from errorclass_client.answer import ReloadResult

__all__ = ["ReloadResult", "ReloadStatus", "RulesetHolder", "Serving"]
"""`ReloadResult` is the client's (one home for what a reload did: the wire's enum, which
the server writes and the client reads); importable from here as before."""


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


class Serving(NamedTuple):
    """A ruleset and the bundle built from it (None where none is built: a candidate, a
    server made without `serve`), read together."""

    ruleset: Ruleset
    bundle: ServingBundle | None


class RulesetHolder:
    """The serving ruleset and its bundle. Readers take `current` once per request, so
    every answer comes from one ruleset even while a reload swaps in another: a swap is one
    reference assignment, and the Reloader makes one at a time. What describes the ruleset
    with its bundle (GetRuleset, GetBundle, the console) reads `serving`, the two in one
    reference, never one of an old pair and one of a new."""

    def __init__(self, ruleset: Ruleset, bundle: ServingBundle | None = None) -> None:
        self.serving = Serving(ruleset, bundle)
        self.current = ruleset
        self.last_reload: ReloadStatus | None = None

    def swap(self, ruleset: Ruleset, bundle: ServingBundle | None) -> None:
        """Serve `ruleset`, described with `bundle` (built from it)."""
        self.serving = Serving(ruleset, bundle)
        self.current = ruleset

    def resigned(self, bundle: ServingBundle) -> None:
        """Keep the serving ruleset; describe it with `bundle`, its bundle signed anew."""
        self.serving = Serving(self.serving.ruleset, bundle)
