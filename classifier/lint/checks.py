"""Lint: what a valid ruleset gets wrong, before it ships.

`lint(ruleset)` returns warnings (severity `warning`), each with a stable code:

    conflicting_rules     two rules tie on precedence, can match the same descriptor,
                          and disagree on class or effect: that descriptor gets Unknown
    shadowed_rule         a rule that can never win: another matches everything it
                          matches and always outranks it
    catch_all_rule        a rule with no condition, or only a root type (`Exception`)
    message_only_rule     a rule that decides on free text alone
    unused_action         a catalog action that nothing can recommend
    class_never_produced  a class no rule produces
    unsatisfiable_rule    a rule whose own conditions contradict each other (`http_status:
                          507` with `lacks: http_status`): it can never match
    misspelt_value        a `language` or `provider` value close to a known one but not it
                          (`language: pyhton`): the values no closed list holds, so not errors
    overruled_rule        a rule that silently loses to a decisive runtime fact: it reads the
                          fact under another name or with a value the runtime never sends, or
                          its author ranked it above a decisive rule (priority, layer, or that
                          rule being a fallback) and the decisive tier reverses that

Conflicts and shadows carry a *witness*: a descriptor both rules match. Every
witness is confirmed by the real engine before it is reported (`classify`
must answer Unknown (conflict), or not the shadowed rule, and the engine's
own ranking of the matches must put the two rules where the warning says),
so a reported conflict is a real one. The search is not exhaustive: a pair whose witness cannot be
built (patterns no sample satisfies together, or a third rule that outranks
both on every witness tried) is not reported. Sound, not complete.

An unsatisfiable rule carries the contradiction instead: the conditions that cannot hold
together and why, from the analysis the witness builder chooses its values with
(`witness.constraints`), so it is proven, not searched for.

Shadowing is found rule against rule (one rule covering another), not by a
union of several rules.

A rule's `lint_ignore` (or the manifest's, for the whole ruleset) silences
codes the author accepts; `lint_report` counts what was silenced.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import assert_never

from classifier.codes import LINT_CODES, Code
from classifier.contract import (
    DECISIVE_FACT_NAMES,
    RUNTIME_FACT_NAMES,
    RUNTIME_FACTS,
    WORD,
    RuntimeFact,
)
from classifier.descriptor import Descriptor
from classifier.engine.conditions import (
    AttributeIs,
    CauseMatches,
    Condition,
    FieldIn,
    FieldPresent,
    MessageMatches,
    TypeIs,
    is_set,
)
from classifier.engine.evaluate import classify, ranked_matches
from classifier.engine.ruleset import CompiledRule, Ruleset
from classifier.errors import Diagnostic, Severity, sorted_diagnostics
from classifier.lint.witness import (
    WitnessBuilder,
    compatible,
    constraints,
    plain_values,
    witness_text,
)
from classifier.location import Location
from classifier.taxonomy import GRPC_CODES, LANGUAGES, Effect, ErrorClass, UnknownReason
from classifier.text import and_list, did_you_mean, plural

__all__ = ["LINT_CODES", "ROOT_TYPES", "LintReport", "lint", "lint_report"]

ROOT_TYPES = frozenset(
    {
        "Exception",
        "BaseException",
        "builtins.Exception",
        "builtins.BaseException",
        "java.lang.Throwable",
        "java.lang.Exception",
        "kotlin.Throwable",
        "kotlin.Exception",
        "System.Exception",
        "error",
        "Error",
    }
)
"""Types every exception of a language derives from: a rule on one alone catches everything."""

WITNESS_ATTEMPTS = 24
"""Witnesses tried per pair before the linter gives up on confirming it."""

_STRUCTURAL_FIELDS = frozenset({"http_status", "grpc_status", "code"})
_HTTP_STATUS_IN_TEXT = re.compile(r"(?<![\d.])([1-5]\d\d)(?!\d)")


@dataclass(frozen=True, slots=True)
class LintReport:
    """The warnings a ruleset gets, and how many `lint_ignore` silenced."""

    warnings: list[Diagnostic]
    suppressed: int


@dataclass(frozen=True, slots=True)
class _Finding:
    diagnostic: Diagnostic
    rules: tuple[CompiledRule, ...] = ()

    @property
    def about_top_layer(self) -> bool:
        """A layered ruleset is told about its own rules only, not its bases' (their authors
        lint those); a finding about no rule (an action, a class) is scoped where it is made."""
        return all(r.layer == 0 for r in self.rules)

    def ignored(self, ruleset: Ruleset) -> bool:
        code = self.diagnostic.code
        return code in ruleset.lint_ignore or any(code in r.lint_ignore for r in self.rules)


def lint(ruleset: Ruleset) -> list[Diagnostic]:
    """Every lint warning about a valid ruleset, sorted by file and line."""
    return lint_report(ruleset).warnings


def lint_report(ruleset: Ruleset) -> LintReport:
    """The warnings, and the number of findings `lint_ignore` silenced."""
    builder = WitnessBuilder(ruleset)
    findings = [
        *_conflicts(ruleset, builder),
        *_shadowed(ruleset, builder),
        *_catch_alls(ruleset.rules),
        *_message_only(ruleset.rules),
        *_unused_actions(ruleset),
        *_classes_never_produced(ruleset),
        *_unsatisfiable(ruleset.rules),
        *_misspelt_values(ruleset.rules),
        *_overruled(ruleset, builder),
    ]
    findings = [f for f in findings if f.about_top_layer]
    kept = [f.diagnostic for f in findings if not f.ignored(ruleset)]
    return LintReport(sorted_diagnostics(kept), len(findings) - len(kept))


def _warning(
    code: Code,
    message: str,
    location: Location,
    rule: CompiledRule | None = None,
    related: tuple[Location, ...] = (),
    witness: Descriptor | None = None,
) -> Diagnostic:
    return Diagnostic(
        code,
        message,
        location,
        rule_id=rule.id if rule else "",
        severity=Severity.warning,
        related=related,
        witness=witness_text(witness) if witness is not None else "",
    )


def _answer(rule: CompiledRule) -> tuple[ErrorClass, Effect]:
    return (rule.outcome.error_class, rule.outcome.effect)


def _verdict(rule: CompiledRule) -> str:
    return f"{rule.outcome.error_class.name}/{rule.outcome.effect.label}"


# conflicting_rules ---------------------------------------------------------------------------


def _conflicts(ruleset: Ruleset, builder: WitnessBuilder) -> Iterator[_Finding]:
    """Pairs that tie on every precedence step, can match one descriptor, and disagree.

    Rules tie only within one tier (both decisive, or neither), and on type depth only when
    the name they match sits at the same place in the chain, so typed rules must share a
    name (untyped rules tie with untyped rules); then they need the same condition count
    and priority.
    """
    groups: dict[tuple[bool, bool, int, int, int, str | None], list[CompiledRule]] = defaultdict(
        list
    )
    for rule in ruleset.rules:
        names = sorted(rule.type_condition.names) if rule.type_condition else [None]
        for name in names:
            key = (rule.decisive, rule.fallback, rule.condition_count, rule.priority, rule.layer)
            groups[(*key, name)].append(rule)
    seen: set[tuple[int, int]] = set()
    values = {rule.order: plain_values(rule) for rule in ruleset.rules}
    for group in groups.values():
        for a, b in combinations(group, 2):
            if _answer(a) == _answer(b) or (a.order, b.order) in seen:
                continue
            seen.add((a.order, b.order))
            if not compatible(values[a.order], values[b.order]):
                continue
            witness = _first(
                builder.candidates([a, b], WITNESS_ATTEMPTS), _conflict_shown(ruleset, a, b)
            )
            if witness is not None:
                yield _Finding(_conflict(a, b, witness), (a, b))


def _conflict_shown(
    ruleset: Ruleset, a: CompiledRule, b: CompiledRule
) -> Callable[[Descriptor], bool]:
    """Whether the engine answers Unknown (conflict) for a descriptor, with a and b in the tie."""

    def shown(d: Descriptor) -> bool:
        ranked = ranked_matches(ruleset, d)
        tied = {m.rule.order for m in ranked if m.rank == ranked[0].rank}
        return {a.order, b.order} <= tied and (
            classify(ruleset, d).unknown_reason is UnknownReason.conflict
        )

    return shown


def _conflict(a: CompiledRule, b: CompiledRule, witness: Descriptor) -> Diagnostic:
    depth = "at the same type depth" if a.type_condition else "without a type condition"
    return _warning(
        Code.conflicting_rules,
        f'conflicts with rule "{a.id}" at {a.location}: both match the witness {depth}, with '
        f"{plural(b.condition_count, 'condition')} and priority {b.priority}, but this rule says "
        f"{_verdict(b)} and that one {_verdict(a)}, so the answer is Unknown (conflict); "
        "add a condition to one of them, or give one a priority",
        b.location,
        b,
        related=(a.location,),
        witness=witness,
    )


# shadowed_rule -------------------------------------------------------------------------------


def _shadowed(ruleset: Ruleset, builder: WitnessBuilder) -> Iterator[_Finding]:
    """Rules another rule covers (matches all they match) and always outranks.

    A covering rule's conditions are each implied by one of the covered
    rule's, so it has no more conditions; to outrank at the same type depth
    it must have as many (the same keys, so the same tier: a decisive fact is
    a key), then a higher priority, or the same priority, the same class and
    effect, and an earlier place in order.
    """
    groups: dict[tuple[object, int], list[CompiledRule]] = defaultdict(list)
    for rule in ruleset.rules:
        groups[(_signature(rule.all_conditions), rule.condition_count)].append(rule)
    for group in groups.values():
        if len(group) < 2:
            continue
        by_name: dict[str, list[CompiledRule]] = defaultdict(list)
        for rule in group:
            for name in rule.type_condition.names if rule.type_condition else ():
                by_name[name].append(rule)
        for shadowed in group:
            tc = shadowed.type_condition
            rivals = by_name[min(tc.names)] if tc else group
            for winner in rivals:
                if winner is shadowed or not _outranks(winner, shadowed):
                    continue
                if not _covers(winner.all_conditions, shadowed.all_conditions):
                    continue
                witness = _first(
                    builder.candidates([shadowed], WITNESS_ATTEMPTS),
                    _shadow_shown(ruleset, winner, shadowed),
                )
                if witness is not None:
                    yield _Finding(_shadow(winner, shadowed, witness), (shadowed,))
                    break


def _outranks(w: CompiledRule, r: CompiledRule) -> bool:
    """Whether w beats r whenever both match at the same type depth (never a conflict).

    Only rules of one group are compared, so both have the same condition count.
    """
    if w.fallback != r.fallback:
        return r.fallback
    if w.priority != r.priority:
        return w.priority > r.priority
    if w.layer != r.layer:
        return w.layer < r.layer
    return w.order < r.order and _answer(w) == _answer(r)


def _shadow_shown(
    ruleset: Ruleset, w: CompiledRule, r: CompiledRule
) -> Callable[[Descriptor], bool]:
    """Whether, for a descriptor, both rules match, w ranks ahead of r, and r does not decide."""

    def shown(d: Descriptor) -> bool:
        ranked = [m.rule.order for m in ranked_matches(ruleset, d)]
        return (
            w.order in ranked
            and r.order in ranked
            and ranked.index(w.order) < ranked.index(r.order)
            and classify(ruleset, d).rule_id != r.id
        )

    return shown


def _shadow(w: CompiledRule, r: CompiledRule, witness: Descriptor) -> Diagnostic:
    if w.fallback != r.fallback:
        why = "is not a fallback, and this rule is"
    elif w.priority != r.priority:
        why = f"wins on priority ({w.priority} > {r.priority})"
    elif w.layer != r.layer:
        why = "is in a layer above this rule's"
    else:
        why = f"comes first in ruleset order with the same answer ({_verdict(w)})"
        if _covers(r.all_conditions, w.all_conditions):
            why += "; the two are duplicates"
    return _warning(
        Code.shadowed_rule,
        f'can never win: rule "{w.id}" at {w.location} matches every descriptor this rule '
        f"matches and {why}; remove this rule, or make it more specific than that one",
        r.location,
        r,
        related=(w.location,),
        witness=witness,
    )


def _key(condition: Condition) -> str:
    """The key of a rule's `when` a condition tests (`attributes.<name>` per attribute)."""
    match condition:
        case TypeIs():
            return "type"
        case FieldIn(field=name):
            return name
        case FieldPresent(field=name, present=present):
            return f"{'has' if present else 'lacks'}.{name}"
        case MessageMatches():
            return "message"
        case AttributeIs(name=name):
            return f"attributes.{name}"
        case CauseMatches():
            return "cause"
        case _:
            assert_never(condition)


def _signature(conditions: Iterable[Condition]) -> object:
    return tuple(
        sorted(
            (_key(c), repr(_signature(c.conditions)) if isinstance(c, CauseMatches) else "")
            for c in conditions
        )
    )


def _covers(wide: Sequence[Condition], narrow: Sequence[Condition]) -> bool:
    """Whether every condition in `wide` holds wherever all of `narrow` hold."""
    by_key = {_key(c): c for c in narrow}
    return all(
        _implies(by_key.get(_key(w)), w)
        or (isinstance(w, FieldPresent) and w.present and _implies(by_key.get(w.field), w))
        for w in wide
    )


def _implies(narrow: Condition | None, wide: Condition) -> bool:
    """Whether `wide` holds wherever `narrow` (the same key's condition, if any) holds."""
    match wide:
        case TypeIs(names=names):
            return isinstance(narrow, TypeIs) and narrow.names <= names
        case FieldIn(values=values):
            return isinstance(narrow, FieldIn) and narrow.values <= values
        case FieldPresent(field=name, present=present):
            if isinstance(narrow, FieldPresent):
                return narrow.present is present
            return (
                present
                and isinstance(narrow, FieldIn)
                and narrow.field == name
                and all(is_set(v) for v in narrow.values)
            )
        case AttributeIs(values=values):
            return isinstance(narrow, AttributeIs) and narrow.values <= values
        case MessageMatches(pattern=pattern):
            return isinstance(narrow, MessageMatches) and bool(
                narrow.pattern.pattern == pattern.pattern
            )
        case CauseMatches(conditions=inner):
            return isinstance(narrow, CauseMatches) and _covers(inner, narrow.conditions)
        case _:
            assert_never(wide)


def _first(
    candidates: Iterable[Descriptor], shown: Callable[[Descriptor], bool]
) -> Descriptor | None:
    """The first candidate witness the engine confirms; None when it confirms none."""
    return next((d for d in candidates if shown(d)), None)


# catch_all_rule, message_only_rule -----------------------------------------------------------


def _catch_alls(rules: Iterable[CompiledRule]) -> Iterator[_Finding]:
    for rule in rules:
        if rule.condition_count == 0:
            yield _Finding(
                _warning(
                    Code.catch_all_rule,
                    "has no condition, so it matches every descriptor: it turns Unknown "
                    "into a guess; give it a type, status or code to match",
                    rule.locations.get("when", rule.location),
                    rule,
                ),
                (rule,),
            )
            continue
        tc = rule.type_condition
        roots = sorted(tc.names & ROOT_TYPES) if tc is not None else []
        if roots and not rule.conditions:
            yield _Finding(
                _warning(
                    Code.catch_all_rule,
                    f"matches every exception: {roots[0]} is a root type and the rule has no "
                    "other condition, so it turns Unknown into a guess; name the specific "
                    "types, or add a status or code condition",
                    rule.locations.get("type", rule.location),
                    rule,
                ),
                (rule,),
            )


def _message_only(rules: Iterable[CompiledRule]) -> Iterator[_Finding]:
    for rule in rules:
        message = _message_condition(rule.conditions)
        if message is None or _structural(rule.all_conditions):
            continue
        key = _key(message)
        yield _Finding(
            _warning(
                Code.message_only_rule,
                f"decides on message text alone (`{message.text}`): free text is where "
                "classifiers go wrong (a 429 inside an echoed prompt is not a rate limit); "
                + _structural_hint(message.text),
                rule.locations.get(key, rule.location),
                rule,
            ),
            (rule,),
        )


def _message_condition(conditions: Iterable[Condition]) -> Condition | None:
    """The first condition that tests message text, itself or through a cause."""
    return next((c for c in conditions if _tests_message(c)), None)


def _tests_message(c: Condition) -> bool:
    match c:
        case MessageMatches():
            return True
        case CauseMatches(conditions=inner):
            return _message_condition(inner) is not None
        case TypeIs() | FieldIn() | FieldPresent() | AttributeIs():
            return False
        case _:
            assert_never(c)


def _structural(conditions: Iterable[Condition]) -> bool:
    """Whether a type, status or code (on the descriptor or a cause) takes part."""
    return any(_is_structural(c) for c in conditions)


def _is_structural(c: Condition) -> bool:
    match c:
        case TypeIs():
            return True
        case FieldIn(field=name):
            return name in _STRUCTURAL_FIELDS
        case CauseMatches(conditions=inner):
            return _structural(inner)
        case FieldPresent() | MessageMatches() | AttributeIs():
            return False
        case _:
            assert_never(c)


def _structural_hint(text: str) -> str:
    if m := _HTTP_STATUS_IN_TEXT.search(text):
        return f"the pattern mentions {m.group(1)}: test http_status: {m.group(1)} instead"
    words = re.sub(r"[^A-Z]+", "_", text.upper())
    for name in sorted(GRPC_CODES, key=len, reverse=True):
        if len(name) > 2 and f"_{name}_" in f"_{words}_":
            return f"the pattern mentions {name}: test grpc_status: {name} instead"
    return "test a type, a status or a code as well"


# unused_action, class_never_produced ---------------------------------------------------------


def _unused_actions(ruleset: Ruleset) -> Iterator[_Finding]:
    used = {o.action.id for o in ruleset.defaults.values()}
    used.add(ruleset.conflict_action.id)
    used.update(rule.outcome.action.id for rule in ruleset.rules)
    own = ruleset.own_actions
    for action_id in ruleset.actions:
        if action_id not in used and (own is None or action_id in own):
            yield _Finding(
                _warning(
                    Code.unused_action,
                    f'action "{action_id}" is named by no rule and is no class\'s default, '
                    "so no answer can recommend it; name it in a rule, or remove it",
                    ruleset.action_locations.get(action_id, Location(ruleset.source)),
                )
            )


def _classes_never_produced(ruleset: Ruleset) -> Iterator[_Finding]:
    produced = {rule.outcome.error_class for rule in ruleset.rules}
    for error_class in ErrorClass:
        if error_class is ErrorClass.Unknown or error_class in produced:
            continue
        yield _Finding(
            _warning(
                Code.class_never_produced,
                f"no rule produces class {error_class.name} ({int(error_class)}): every failure "
                "of that kind comes out as another class or Unknown; add a rule for it",
                ruleset.class_locations.get(error_class, Location(ruleset.source)),
            )
        )


# unsatisfiable_rule --------------------------------------------------------------------------


def _unsatisfiable(rules: Iterable[CompiledRule]) -> Iterator[_Finding]:
    """Rules no descriptor can match: the witness builder's analysis proves their conditions
    contradict. The warning is at the first condition of the first contradiction and names
    where the others are."""
    for rule in rules:
        found = constraints(rule.all_conditions).contradictions()
        if not found:
            continue
        places = [
            rule.locations.get(_written_key(c), rule.location)
            for contradiction in found
            for c in contradiction.conditions
        ]
        yield _Finding(
            _warning(
                Code.unsatisfiable_rule,
                f"can never match: {'; '.join(c.text for c in found)}, so no descriptor "
                "satisfies this rule and it decides nothing; remove the condition that is "
                "wrong, or split the rule in two",
                places[0],
                rule,
                related=tuple(dict.fromkeys(places[1:])),
            ),
            (rule,),
        )


def _written_key(condition: Condition) -> str:
    """The key of a rule's `when` that holds a condition, as `CompiledRule.locations` names
    it (`has` and `lacks` are one key each, and so is `attributes`)."""
    key = _key(condition)
    return key.split(".", 1)[0]


# misspelt_value ------------------------------------------------------------------------------

_KNOWN_LABELS: dict[str, tuple[str, ...]] = {"language": LANGUAGES, "provider": ()}
"""The label fields a rule may misspell, each with the values known without any rule: the
runtimes' languages (providers are as many as there are APIs: only the rules name them)."""


def _misspelt_values(rules: Sequence[CompiledRule]) -> Iterator[_Finding]:
    """Label values (a language, a provider) close to a known one but not it: a runtime's
    language, or a value more rules of the ruleset (a base's too) name than name this one
    (of two values named as often, neither is taken for the other's misspelling). The
    other fields' values are parsed against closed lists, and a misspelling there is an
    error with the same hint; a label is open (a runtime may send any), so here it is a
    warning, and a value close to none is taken as meant."""
    named: dict[str, Counter[str]] = {name: Counter() for name in _KNOWN_LABELS}
    for rule in rules:
        for field, value in _labels(rule):
            named[field][value] += 1
    for rule in rules:
        for field, value in _labels(rule):
            fixed = _KNOWN_LABELS[field]
            more = [v for v, n in named[field].items() if n > named[field][value]]
            if value in fixed or not (hint := did_you_mean(value, [*fixed, *more])):
                continue
            why = (
                f"no {field} a runtime reports"
                if did_you_mean(value, fixed)
                else f"named by fewer rules than a {field} close to it"
            )
            yield _Finding(
                _warning(
                    Code.misspelt_value,
                    f"{field} {value!r} is {why}{hint}: a misspelt value matches nothing a "
                    f"runtime sends; correct it (or, if {value!r} is meant, say so with "
                    "lint_ignore: [misspelt_value])",
                    rule.locations.get(field, rule.location),
                    rule,
                ),
                (rule,),
            )


def _labels(rule: CompiledRule) -> Iterator[tuple[str, str]]:
    """The (field, value) pairs of a rule's label conditions, values sorted."""
    for c in rule.conditions:
        if isinstance(c, FieldIn) and c.field in _KNOWN_LABELS:
            for value in sorted(c.values):
                yield c.field, value


# overruled_rule ------------------------------------------------------------------------------


def _overruled(ruleset: Ruleset, builder: WitnessBuilder) -> Iterator[_Finding]:
    """Rules that silently lose to a decisive runtime fact (docs/rules.md, `overruled_rule`):
    a fact read under another name or with a value the runtime never sends (proven from the
    contract), and an ordinary rule its author ranked above a decisive rule, by the steps
    that rank authors' intent (fallback, priority, layer) rather than the exception's
    evidence (type depth, condition count), confirmed on a witness by the engine."""
    for rule in ruleset.rules:
        yield from _facts_never_sent(rule)
    decisive = [r for r in ruleset.rules if r.decisive]
    if not decisive:
        return
    values = {rule.order: plain_values(rule) for rule in ruleset.rules}
    for rule in ruleset.rules:
        if rule.decisive:
            continue
        for fact_rule in decisive:
            step = _ranked_above(rule, fact_rule)
            if step is None or _answer(rule) == _answer(fact_rule):
                continue
            if not compatible(values[rule.order], values[fact_rule.order]):
                continue
            witness = _first(
                builder.candidates([rule, fact_rule], WITNESS_ATTEMPTS),
                _overruled_shown(ruleset, rule, fact_rule, step),
            )
            if witness is not None:
                yield _Finding(_overruled_by(rule, fact_rule, step, witness), (rule,))
                break


def _ranked_above(rule: CompiledRule, fact_rule: CompiledRule) -> str | None:
    """The step at which, without the decisive tier, the author's ranking puts `rule` above
    `fact_rule` wherever both match at one type depth (None: none does, or the evidence
    decides: type depth, condition count)."""
    if rule.fallback != fact_rule.fallback:
        return "fallback" if fact_rule.fallback else None
    if rule.condition_count != fact_rule.condition_count:
        return None
    if (rule.type_condition is None) != (fact_rule.type_condition is None):
        return None
    if rule.priority != fact_rule.priority:
        return "priority" if rule.priority > fact_rule.priority else None
    if rule.layer != fact_rule.layer:
        return "layer" if rule.layer < fact_rule.layer else None
    return None


def _overruled_shown(
    ruleset: Ruleset, rule: CompiledRule, fact_rule: CompiledRule, step: str
) -> Callable[[Descriptor], bool]:
    """Whether, for a descriptor, both match (at one type depth, unless the fallback step is
    what ranked them), the decisive rule ranks ahead, and `rule` does not decide."""

    def shown(d: Descriptor) -> bool:
        ranked = {m.rule.order: m for m in ranked_matches(ruleset, d)}
        mine, theirs = ranked.get(rule.order), ranked.get(fact_rule.order)
        if mine is None or theirs is None or not theirs.rank < mine.rank:
            return False
        if step != "fallback" and mine.depth != theirs.depth:
            return False
        return classify(ruleset, d).rule_id != rule.id

    return shown


def _overruled_by(
    rule: CompiledRule, fact_rule: CompiledRule, step: str, witness: Descriptor
) -> Diagnostic:
    facts = ", ".join(f"{f.name}: {'|'.join(sorted(f.values))}" for f in fact_rule.facts)
    why = {
        "fallback": "that rule is a fallback",
        "priority": f"on priority, {rule.priority} > {fact_rule.priority}",
        "layer": "as a rule of a layer above that rule's",
    }[step]
    return _warning(
        Code.overruled_rule,
        f'is ranked above rule "{fact_rule.id}" at {fact_rule.location} ({why}), but that rule '
        f"reads the runtime's decisive fact {facts} and this one does not: where the runtime "
        "states the fact (the witness), the fact decides at precedence step 1 and this rule "
        f"silently loses ({_verdict(fact_rule)} instead of its {_verdict(rule)}); to decide "
        "those failures, read the fact in this rule too, or accept it with "
        "lint_ignore: [overruled_rule]",
        rule.location,
        rule,
        related=(fact_rule.location,),
        witness=witness,
    )


_SEPARATORS = re.compile(r"[-. ]+|(?<=[a-z0-9])(?=[A-Z])")


def _facts_never_sent(rule: CompiledRule) -> Iterator[_Finding]:
    """A decisive fact read under another spelling (the rule stays out of the tier and
    matches nothing the helpers send), or with a value the contract does not give it."""
    for c in rule.conditions:
        if not isinstance(c, AttributeIs):
            continue
        where = rule.locations.get("attributes", rule.location)
        if c.name not in RUNTIME_FACT_NAMES:
            meant = _fact_meant(c.name)
            if meant is not None:
                yield _Finding(
                    _warning(
                        Code.overruled_rule,
                        f"reads attribute {c.name!r}, the runtime's decisive fact {meant!r} "
                        f"written another way: runtimes send {meant!r}, so this rule is not "
                        "in the decisive tier and matches none of the failures the fact is "
                        f"stated for, which the fact's own rules decide; write {meant!r}",
                        where,
                        rule,
                    ),
                    (rule,),
                )
            continue
        fact = FACTS[c.name]
        if not fact.decisive:
            continue
        wrong = [repr(v) for v in sorted(c.values) if not _sent(fact, v)]
        if wrong:
            yield _Finding(
                _warning(
                    Code.overruled_rule,
                    f"reads the decisive fact {fact.name} with {and_list(wrong)}, "
                    f"which runtimes never send ({_fact_values(fact)}): for those values this "
                    "rule matches nothing, and the failures it was written for are decided by "
                    "the fact's own rules; write the contract's value",
                    where,
                    rule,
                ),
                (rule,),
            )


def _fact_meant(name: str) -> str | None:
    """The decisive fact a key spells another way (`timeLimit`, `Time-Limit`, `timelimit`)."""
    decisive = sorted(DECISIVE_FACT_NAMES)
    words = _SEPARATORS.sub("_", name.strip()).lower()
    if words in DECISIVE_FACT_NAMES:
        return words
    squashed = {f.replace("_", ""): f for f in decisive}
    if words.replace("_", "") in squashed:
        return squashed[words.replace("_", "")]
    close = did_you_mean(words, decisive)
    # a slip of a letter or two, not another attribute that starts alike (`time_limit_ms`)
    return next(
        (
            f
            for f in decisive
            if close == f" (did you mean {f!r}?)" and abs(len(f) - len(words)) <= 1
        ),
        None,
    )


def _sent(fact: RuntimeFact, value: str) -> bool:
    """Whether a runtime's helpers can send this value of the fact (they lower-case and
    check every value against the contract, and write a count in decimal)."""
    if fact.count:
        return _COUNT.fullmatch(value) is not None
    return value in fact.values or (fact.open and WORD.fullmatch(value) is not None)


def _fact_values(fact: RuntimeFact) -> str:
    if fact.count:
        return f"{fact.name} is a whole number written in decimal"
    more = ", or another lower-case word" if fact.open else ""
    return f"{fact.name} is one of {', '.join(fact.values)}{more}"


_COUNT = re.compile(r"0|[1-9][0-9]*")
FACTS = {f.name: f for f in RUNTIME_FACTS}
