"""The compiled ruleset: what the engine runs.

These are the *evaluated* shapes (`CompiledRule`, `Ruleset`); the YAML
shapes live in `classifier.source.documents`. A Ruleset is immutable once built, so a server can
swap one for another in a single reference assignment.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from classifier.answer import Action, Classification
from classifier.contract import DECISIVE_FACT_NAMES
from classifier.engine.conditions import AttributeIs, Condition, Test, TypeIs, type_depth
from classifier.engine.index import RuleIndex
from classifier.engine.retry_after import DEFAULT_CAP
from classifier.location import Location
from classifier.taxonomy import Effect, ErrorClass, Retry, UnknownReason

Rank = tuple[bool, bool, int, int, int, int]
"""(not decisive, fallback, type depth, -condition count, -priority, layer): the smallest
wins."""

UNTYPED_DEPTH = 1_000_000
"""The type depth of a rule without a type condition: it loses to every typed rule."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a rule (or a class default) says about a failure."""

    error_class: ErrorClass
    action: Action
    effect: Effect
    retryable: bool
    retry_after_cap: dt.timedelta | None = None
    """The rule's own cap on an advised wait (None: the ruleset's)."""


@dataclass(frozen=True, slots=True, eq=False)
class CompiledRule:
    """A rule ready to evaluate.

    `type_condition` is kept apart from the other conditions because it
    decides precedence (how near the matched type is) and drives the index;
    `conditions` are the rest, cheapest first. A `fallback` rule decides
    only when no other rule matches. A `decisive` rule reads a fact the
    runtime states about the whole failure (`time_limit`, `refused_by`, ...:
    the contract's decisive facts), so it ranks above every rule that does
    not, whatever evidence the exception carries. `locations` places each key of the
    rule's `when` (and `when` itself) in its file, for diagnostics;
    `lint_ignore` lists the lint codes the author accepts for this rule.
    """

    id: str
    location: Location
    description: str
    type_condition: TypeIs | None
    conditions: tuple[Condition, ...]
    condition_count: int
    priority: int
    order: int
    outcome: Outcome
    fallback: bool = False
    layer: int = 0
    """Which layer of a stack the rule comes from: 0 is the ruleset asked for, 1 its base..."""
    locations: Mapping[str, Location] = field(default_factory=dict)
    lint_ignore: frozenset[str] = frozenset()
    decisive: bool = field(init=False)
    """The rule reads a decisive runtime fact (an `attributes` condition on a key whose
    `RuntimeFact.decisive` is true): it is in the decisive tier, precedence's first step."""
    facts: tuple[AttributeIs, ...] = field(init=False, repr=False)
    """The conditions on decisive facts that put the rule in that tier (empty: not there)."""
    precedence: tuple[int, int, int] = field(init=False, repr=False)
    """(-condition_count, -priority, layer): smaller wins among matches at one type depth."""
    tests: tuple[Test, ...] = field(init=False, repr=False)
    """Each condition's compiled test, in order: what the engine's hot path calls."""

    def __post_init__(self) -> None:
        facts = tuple(
            c
            for c in self.conditions
            if isinstance(c, AttributeIs) and c.name in DECISIVE_FACT_NAMES
        )
        object.__setattr__(self, "facts", facts)
        object.__setattr__(self, "decisive", bool(facts))
        object.__setattr__(self, "precedence", (-self.condition_count, -self.priority, self.layer))
        object.__setattr__(self, "tests", tuple(c.holds for c in self.conditions))

    @property
    def all_conditions(self) -> tuple[Condition, ...]:
        """Every condition, type first, as explain shows them."""
        head = (self.type_condition,) if self.type_condition else ()
        return (*head, *self.conditions)

    def type_depth(self, chain: tuple[str, ...]) -> int | None:
        """Distance from the descriptor's own type to the nearest type this rule names.

        UNTYPED_DEPTH when the rule has no type condition; None when it has
        one and nothing in the chain satisfies it.
        """
        if self.type_condition is None:
            return UNTYPED_DEPTH
        return type_depth(self.type_condition, chain)

    def rank(self, depth: int) -> Rank:
        """Precedence key: smaller wins (decisive, not a fallback, nearer type, more
        conditions, priority, the upper layer)."""
        return (
            not self.decisive,
            self.fallback,
            depth,
            -self.condition_count,
            -self.priority,
            self.layer,
        )


@dataclass(frozen=True, slots=True)
class Layer:
    """One ruleset of a stack: what each answer's digest is made of."""

    name: str
    version: str
    digest: str
    source: str
    """Where the layer is, as people read it: a folder's absolute path, or a label."""
    folder: str = ""
    """The resolved folder it was read from, for a watcher (empty: it was only in memory)."""


@dataclass(frozen=True, slots=True)
class DisabledRule:
    """A base rule a layer turned off, with the reason it gave and where."""

    rule_id: str
    reason: str
    location: Location


@dataclass(frozen=True, slots=True)
class OverriddenRule:
    """A base rule a layer replaced with its own (`override: true`), and where each is."""

    rule_id: str
    location: Location
    """The layer's rule, the one that takes part."""
    replaced: Location
    """The base's rule, left out."""


@dataclass(frozen=True, slots=True)
class Match:
    """A rule that matched a descriptor, with the precedence key it matched at."""

    rule: CompiledRule
    depth: int
    rank: Rank


@dataclass(frozen=True)
class Ruleset:
    """A compiled ruleset: rules in source order, their index, and the class defaults.

    `action_locations` and `class_locations` place the catalog's entries in
    `actions.yaml`, and `lint_ignore` lists the lint codes the manifest turns
    off: what the linter needs beyond the rules themselves.
    """

    name: str
    version: str
    description: str
    digest: str
    source: str
    rules: tuple[CompiledRule, ...]
    index: RuleIndex[CompiledRule]
    """The rules that are neither decisive nor fallbacks."""
    fallbacks: RuleIndex[CompiledRule]
    """The fallback rules that are not decisive, asked only when no rule of `index` matches."""
    decisive: RuleIndex[CompiledRule]
    """The decisive rules that are not fallbacks: asked first, when the descriptor carries a
    fact one of them reads."""
    decisive_fallbacks: RuleIndex[CompiledRule]
    """The decisive fallbacks: asked when no other decisive rule matches."""
    defaults: dict[ErrorClass, Outcome]
    conflict_action: Action
    """The action for an Unknown by conflict: Unknown's `conflict_action`, else its action."""
    actions: dict[str, Action] = field(default_factory=dict)
    action_retry: Mapping[str, Retry] = field(default_factory=dict)
    """Whether a retry can help when an action is the advice (the catalog's `retry:`):
    every retryable answer's action says `may` (the compiler refuses otherwise)."""
    loaded_at: str = ""
    action_locations: Mapping[str, Location] = field(default_factory=dict)
    class_locations: Mapping[ErrorClass, Location] = field(default_factory=dict)
    lint_ignore: frozenset[str] = frozenset()
    layers: tuple[Layer, ...] = ()
    """The stack, the ruleset asked for first; one layer for a ruleset of its own."""
    own_actions: frozenset[str] | None = None
    """The actions the top layer's catalog defines (None: every action is its own)."""
    disabled: tuple[DisabledRule, ...] = ()
    overridden: tuple[OverriddenRule, ...] = ()
    retry_after_cap: dt.timedelta = DEFAULT_CAP
    """The longest wait an answer advises, unless its rule sets its own cap."""
    decisive_facts: frozenset[str] = field(init=False, repr=False, compare=False)
    """The decisive facts some rule reads: a descriptor with none of them skips the tier."""
    answers: dict[CompiledRule, Classification] = field(init=False, repr=False, compare=False)
    """Each rule's answer, built once: a rule always answers the same way."""
    unknown: dict[UnknownReason, Classification] = field(init=False, repr=False, compare=False)
    """The Unknown answer for each reason (no match, conflict)."""
    caps: dict[str, dt.timedelta] = field(init=False, repr=False, compare=False)
    """Each retryable rule's cap on an advised wait, by rule id (its own, else the
    ruleset's); a rule that is not retryable is not here, and no wait is advised for it."""

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "decisive_facts", frozenset(f.name for r in self.rules for f in r.facts)
        )
        object.__setattr__(self, "answers", {r: self._answer(r) for r in self.rules})
        object.__setattr__(
            self,
            "caps",
            {
                r.id: r.outcome.retry_after_cap or self.retry_after_cap
                for r in self.rules
                if r.outcome.retryable
            },
        )
        object.__setattr__(
            self,
            "unknown",
            {
                reason: self._unknown(reason)
                for reason in UnknownReason
                if reason is not UnknownReason.none
            },
        )

    def _answer(self, rule: CompiledRule) -> Classification:
        o = rule.outcome
        return Classification(
            o.error_class, o.action, o.effect, o.retryable, rule.id, self.version, self.digest
        )

    def _unknown(self, reason: UnknownReason) -> Classification:
        if reason is UnknownReason.conflict:
            action = self.conflict_action
        else:
            action = self.defaults[ErrorClass.Unknown].action
        return Classification(
            ErrorClass.Unknown,
            action,
            Effect.unspecified,
            False,
            "",
            self.version,
            self.digest,
            reason,
        )

    def rule(self, rule_id: str) -> CompiledRule | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    def disabled_rule(self, rule_id: str) -> DisabledRule | None:
        """The `disable:` entry that took a base's rule rule_id out, if one did."""
        return next((d for d in self.disabled if d.rule_id == rule_id), None)

    def no_rule(self, rule_id: str) -> str:
        """Why the ruleset has no rule rule_id: a layer disabled it (where, and why), or no
        layer defines it."""
        off = self.disabled_rule(rule_id)
        if off is not None:
            return (
                f"rule {rule_id!r} is disabled by {self.name} {self.version} "
                f"({off.location}): {off.reason}"
            )
        return f"{self.name} {self.version} has no rule {rule_id!r}"
