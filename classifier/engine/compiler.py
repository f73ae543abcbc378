"""Compile validated rule documents into a Ruleset the engine can run.

The compiler is the ordered list of named stages in `STAGES`, each a pure
function from one `Compilation` to the next. A stage adds located
diagnostics instead of stopping, so an author sees every problem in one run:

    catalog      action ids unique; class defaults name known actions and possible effects,
                 and are retryable only where a retry can help
    rule_ids     rule ids unique across the ruleset
    rules        action, effect and retryable resolved (retryable only where a retry can
                 help); conditions built; RE2 patterns compiled, and refused unless every
                 client's RE2 reads them alike (engine/portable.py)
    index        candidate lookup by type name, decisive rules and fallbacks apart; a bucket of
                 many rules split by a plain field

The documents arrive parsed (statuses, codes, origins and classes are values
of the taxonomy already); a condition's canonical text echoes what the
author wrote. Patterns are compiled here, never in the engine.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, assert_never

import re2

from classifier.answer import Action
from classifier.codes import Code, info
from classifier.engine import portable
from classifier.engine.conditions import (
    AttributeIs,
    CauseMatches,
    Condition,
    FieldIn,
    FieldPresent,
    MessageMatches,
    TypeIs,
    weight,
)
from classifier.engine.index import RuleIndex
from classifier.engine.literals import required_literals
from classifier.engine.retry_after import DEFAULT_CAP
from classifier.engine.ruleset import (
    CompiledRule,
    DisabledRule,
    Layer,
    Outcome,
    OverriddenRule,
    Ruleset,
)
from classifier.errors import Diagnostic, RulesetError, Severity
from classifier.location import Location
from classifier.source.documents import CauseWhenDoc, ClassDefaultDoc, WhenDoc
from classifier.source.loader import RulesetSource, RuleSource, StackSource, load_stack
from classifier.source.yamlsource import Positions, flow
from classifier.taxonomy import NEVER_RETRY_REASONS, RETRY, Effect, ErrorClass, Retry
from classifier.text import did_you_mean, doc_pointer

MAX_PATTERN_CHARS = 2048
RE2_MAX_MEM = 8 * 1024 * 1024

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
_RE2_OPTIONS.max_mem = RE2_MAX_MEM


@dataclass(frozen=True)
class Compilation:
    """What the stages have built so far from a stack of layers, and every diagnostic found."""

    stack: StackSource
    diagnostics: tuple[Diagnostic, ...]
    actions: Mapping[str, Action] = field(default_factory=dict)
    action_retry: Mapping[str, Retry] = field(default_factory=dict)
    """Whether a retry can help, per action id (the catalog's `retry:`)."""
    action_locations: Mapping[str, Location] = field(default_factory=dict)
    own_actions: frozenset[str] = frozenset()
    defaults: Mapping[ErrorClass, Outcome] | None = None
    actions_known: bool = True
    """Every layer's catalog was read: an action not in `actions` is unknown (when one could
    not be, its problem is reported, and no action is called unknown for its sake)."""
    class_locations: Mapping[ErrorClass, Location] = field(default_factory=dict)
    conflict_action: Action | None = None
    effective: tuple[tuple[RuleSource, int], ...] = ()
    """The rules that take part, bottom layer first, each with its layer (0 = the top)."""
    disabled: tuple[DisabledRule, ...] = ()
    overridden: tuple[OverriddenRule, ...] = ()
    rejected: tuple[RuleSource, ...] = ()
    """Rules left out (a duplicate id): still compiled, so their own problems are reported."""
    rules: tuple[CompiledRule, ...] = ()
    index: RuleIndex[CompiledRule] | None = None
    fallbacks: RuleIndex[CompiledRule] | None = None
    decisive: RuleIndex[CompiledRule] | None = None
    decisive_fallbacks: RuleIndex[CompiledRule] | None = None


Stage = Callable[[Compilation], Compilation]


def load_ruleset(root: Path | str) -> Ruleset:
    """Read, validate and compile a ruleset folder and the rulesets it builds on;
    raise RulesetError with every problem."""
    return compile_stack(load_stack(root))


def compile_ruleset(source: RulesetSource) -> Ruleset:
    """Compile one loaded folder as a ruleset of its own (its `base:` is not read)."""
    return compile_stack(StackSource((source,), ()))


def compile_stack(stack: StackSource) -> Ruleset:
    """Run every stage; raise RulesetError listing every error found."""
    if stack.diagnostics:
        # A base that is not there (or a cycle) stops the load with that error alone: every
        # rule, action and `disable` that names what the base would define would follow.
        raise RulesetError(list(stack.diagnostics))
    found = tuple(d for layer in stack.layers for d in layer.diagnostics)
    c = Compilation(stack, found)
    for _name, stage in STAGES:
        c = stage(c)
    errors = [d for d in c.diagnostics if d.severity is Severity.error]
    top = stack.top
    manifest = top.manifest
    if (
        errors
        or manifest is None
        or c.defaults is None
        or c.index is None
        or c.fallbacks is None
        or c.decisive is None
        or c.decisive_fallbacks is None
    ):
        raise RulesetError(errors)
    return Ruleset(
        name=manifest.name,
        version=manifest.version,
        description=manifest.description,
        digest=stack.digest,
        source=top.layer.where,
        rules=c.rules,
        index=c.index,
        fallbacks=c.fallbacks,
        decisive=c.decisive,
        decisive_fallbacks=c.decisive_fallbacks,
        defaults=dict(c.defaults),
        conflict_action=c.conflict_action or c.defaults[ErrorClass.Unknown].action,
        actions=dict(c.actions),
        action_retry=dict(c.action_retry),
        loaded_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        action_locations=c.action_locations,
        class_locations=c.class_locations,
        lint_ignore=frozenset(manifest.lint_ignore),
        layers=tuple(_layer(layer) for layer in reversed(stack.layers) if not layer.layer.joins),
        own_actions=c.own_actions,
        disabled=c.disabled,
        overridden=c.overridden,
        retry_after_cap=retry_after_cap(stack),
    )


def retry_after_cap(stack: StackSource) -> dt.timedelta:
    """The ruleset's cap on an advised wait: the uppermost manifest's that sets one, else
    DEFAULT_CAP."""
    for layer in reversed(stack.layers):
        if layer.manifest is not None and layer.manifest.retry_after_cap is not None:
            return layer.manifest.retry_after_cap
    return DEFAULT_CAP


def _layer(source: RulesetSource) -> Layer:
    m = source.manifest
    return Layer(
        name=m.name if m else "",
        version=m.version if m else "",
        digest=source.digest,
        source=source.layer.where,
        folder=source.layer.folder,
    )


# catalog ---------------------------------------------------------------------------------------


def catalog_stage(c: Compilation) -> Compilation:
    """The actions, every class's defaults, and the action for an Unknown by conflict.

    Layers are read bottom first: a layer's action or class default replaces
    the one of the same id or class below it.
    """
    found: list[Diagnostic] = []
    actions: dict[str, Action] = {}
    retry_of: dict[str, Retry] = {}
    action_at: dict[str, Location] = {}
    classes: dict[ErrorClass, tuple[ClassDefaultDoc, Positions]] = {}
    class_at: dict[ErrorClass, Location] = {}
    own: set[str] = set()
    layers = c.stack.layers
    numbers = c.stack.numbers()
    for n, layer in enumerate(layers):
        catalog = layer.catalog
        if catalog is None:
            continue
        at = layer.catalog_positions
        here: set[str] = set()
        for i, doc in enumerate(catalog.actions):
            if doc.id in here:
                found.append(
                    Diagnostic(
                        Code.duplicate_action_id,
                        f"action {doc.id!r} is already defined",
                        at.value(("actions", i, "id")),
                    )
                )
                continue
            here.add(doc.id)
            below = retry_of.get(doc.id)
            retry = Retry(doc.retry) if doc.retry else below or Retry.may
            if below is Retry.never and retry is Retry.may:
                found.append(
                    Diagnostic(
                        Code.retry_cannot_help,
                        f"action {doc.id!r} is `retry: never` in a base ({action_at[doc.id]}): "
                        "a layer may reword it or point at its own runbook, but not make a "
                        "retry of what it answers advisable; leave `retry` out, or define an "
                        "action of your own",
                        at.value(("actions", i, "retry")),
                        related=(action_at[doc.id],),
                    )
                )
            actions[doc.id] = Action(doc.id, doc.summary, doc.runbook)
            retry_of[doc.id] = retry
            action_at[doc.id] = at.value(("actions", i))
            if numbers[n] == 0:
                own.add(doc.id)
        for error_class, default in catalog.classes.items():
            classes[error_class] = (default, at)
            class_at[error_class] = at.key(("classes", error_class.name))
    missing = [k.name for k in ErrorClass if k not in classes]
    if missing and layers[0].catalog is not None:
        found.append(
            Diagnostic(
                Code.missing_class_default,
                f"every class needs a default action and effect; missing: {', '.join(missing)}",
                layers[0].catalog_positions.value(("classes",)),
            )
        )
    defaults, conflict_action = _class_defaults(classes, actions, retry_of, found)
    return dataclasses.replace(
        c,
        diagnostics=(*c.diagnostics, *found),
        actions=actions,
        action_retry=retry_of,
        action_locations=action_at,
        own_actions=frozenset(own),
        defaults=defaults if not missing else None,
        actions_known=all(layer.catalog_read for layer in layers),
        class_locations=class_at,
        conflict_action=conflict_action,
    )


def _class_defaults(
    classes: Mapping[ErrorClass, tuple[ClassDefaultDoc, Positions]],
    actions: Mapping[str, Action],
    retry_of: Mapping[str, Retry],
    found: list[Diagnostic],
) -> tuple[dict[ErrorClass, Outcome], Action | None]:
    defaults: dict[ErrorClass, Outcome] = {}
    conflict_action: Action | None = None
    for error_class, (default, at) in classes.items():
        name = error_class.name
        where = at.value(("classes", name))
        if default.conflict_action is not None:
            field_at = at.value(("classes", name, "conflict_action"))
            if error_class is not ErrorClass.Unknown:
                found.append(
                    Diagnostic(
                        Code.invalid_class_default,
                        "only Unknown has a conflict_action (the action for an Unknown "
                        "caused by disagreeing rules)",
                        field_at,
                    )
                )
            elif default.conflict_action not in actions:
                found.append(
                    Diagnostic(
                        Code.unknown_action,
                        f"class {name} names unknown action {default.conflict_action!r}"
                        + did_you_mean(default.conflict_action, actions),
                        field_at,
                    )
                )
            else:
                conflict_action = actions[default.conflict_action]
        if default.action not in actions:
            found.append(
                Diagnostic(
                    Code.unknown_action,
                    f"class {name} names unknown action {default.action!r}"
                    + did_you_mean(default.action, actions),
                    at.value(("classes", name, "action")),
                )
            )
            continue
        unknown = error_class is ErrorClass.Unknown
        invalid = False
        if unknown != (default.effect == "unspecified"):
            invalid = True
            found.append(
                Diagnostic(
                    Code.invalid_class_default,
                    "Unknown makes no claim about the run: its effect must be unspecified"
                    if unknown
                    else f"class {name} needs an effect (fail, pause or continue)",
                    where,
                )
            )
        if unknown and default.retryable:
            invalid = True
            found.append(
                Diagnostic(
                    Code.invalid_class_default,
                    "an Unknown answer is never retryable (no rule vouched for the failure): "
                    "leave retryable out, or set it to false",
                    at.value(("classes", name, "retryable")),
                )
            )
        if default.retryable and not unknown:
            why = cannot_retry(error_class, default.action, retry_of)
            if why:
                invalid = True
                found.append(
                    Diagnostic(
                        Code.retry_cannot_help,
                        f"class {name}'s default is retryable, but {why}; set retryable to "
                        "false (a rule may still advise a retry where its action allows one)",
                        at.value(("classes", name, "retryable")),
                    )
                )
        if invalid:
            continue
        defaults[error_class] = Outcome(
            error_class,
            actions[default.action],
            Effect.from_label(default.effect),
            default.retryable,
        )
    return defaults, conflict_action


def cannot_retry(error_class: ErrorClass, action_id: str, retry_of: Mapping[str, Retry]) -> str:
    """Why a retry cannot help an answer of this class and action (the taxonomy's `never`
    for the class, the catalog's for the action), or "" when it may."""
    if RETRY[error_class] is Retry.never:
        return f"a retry cannot help a {error_class.name} ({NEVER_RETRY_REASONS[error_class]})"
    if retry_of.get(action_id) is Retry.never:
        return f"action {action_id} says a retry cannot help (`retry: never`)"
    return ""


# rule_ids --------------------------------------------------------------------------------------


def rule_ids_stage(c: Compilation) -> Compilation:
    """Which rules take part: ids unique within a layer; a layer's `disable` and `override`
    take base rules out; any other id a base already has is a duplicate."""
    found: list[Diagnostic] = []
    live: dict[str, tuple[RuleSource, int]] = {}
    disabled: list[DisabledRule] = []
    overridden: list[OverriddenRule] = []
    rejected: list[RuleSource] = []
    numbers = c.stack.numbers()
    here: dict[str, RuleSource] = {}
    for n, layer in enumerate(c.stack.layers):
        number = numbers[n]
        if n and numbers[n - 1] != number:
            here = {}  # ids are unique within a layer (and what joins it)
        manifest = layer.manifest
        for i, off in enumerate(manifest.disable if manifest else ()):
            where = layer.manifest_positions.value(("disable", i, "rule"))
            if off.rule in live:
                del live[off.rule]
                disabled.append(DisabledRule(off.rule, off.reason, where))
            else:
                found.append(_no_such_rule("disable", off.rule, live, where))
        for rule in layer.rules:
            rid = rule.doc.id
            seen = here.get(rid) or (
                live[rid][0] if rid in live and not rule.doc.override else None
            )
            if seen is not None:
                hint = "" if rid in here else "; to replace the base's rule, set `override: true`"
                found.append(
                    Diagnostic(
                        Code.duplicate_rule_id,
                        f"rule {rid!r} is already defined at {seen.at('id')}{hint}",
                        rule.at("id"),
                        rule_id=rid,
                        related=(seen.at("id"),),
                    )
                )
                rejected.append(rule)
                continue
            if rule.doc.override and rid not in live:
                found.append(_no_such_rule("override", rid, live, rule.at("override")))
                continue
            if rule.doc.override:
                overridden.append(OverriddenRule(rid, rule.at("id"), live[rid][0].at("id")))
            live.pop(rid, None)
            here[rid] = rule
            live[rid] = (rule, number)
    return dataclasses.replace(
        c,
        diagnostics=(*c.diagnostics, *found),
        effective=tuple(live.values()),
        disabled=tuple(disabled),
        overridden=tuple(overridden),
        rejected=tuple(rejected),
    )


def _no_such_rule(
    key: str, rule_id: str, live: Mapping[str, tuple[RuleSource, int]], where: Location
) -> Diagnostic:
    return Diagnostic(
        Code.unknown_rule,
        f"`{key}` names rule {rule_id!r}, which no base defines{did_you_mean(rule_id, live)}",
        where,
        rule_id=rule_id,
    )


# rules -----------------------------------------------------------------------------------------


def rules_stage(c: Compilation) -> Compilation:
    found: list[Diagnostic] = []
    compiled: list[CompiledRule] = []
    for source in c.rejected:
        _rule(source, -1, 0, c, found)
    for order, (source, layer) in enumerate(c.effective):
        rule = _rule(source, order, layer, c, found)
        if rule is not None:
            compiled.append(rule)
    for invalid in (r for layer in c.stack.layers for r in layer.invalid_rules):
        if c.actions_known and invalid.action not in c.actions:
            found.append(
                _unknown_action(invalid.action, c.actions, invalid.action_at, invalid.rule_id)
            )
    return dataclasses.replace(c, diagnostics=(*c.diagnostics, *found), rules=tuple(compiled))


def _unknown_action(
    action_id: str, actions: Mapping[str, Action], where: Location, rule_id: str
) -> Diagnostic:
    """A rule's action the catalog does not have (a valid rule's, or an invalid one's)."""
    return Diagnostic(
        Code.unknown_action,
        f"action {action_id!r} is not in the catalog{did_you_mean(action_id, actions)}; "
        "add it to actions.yaml, or name one that is there",
        where,
        rule_id=rule_id,
    )


Problem = Callable[..., None]


def _rule(
    source: RuleSource,
    order: int,
    layer: int,
    compilation: Compilation,
    diagnostics: list[Diagnostic],
) -> CompiledRule | None:
    doc = source.doc
    actions, defaults = compilation.actions, compilation.defaults
    before = len(diagnostics)

    def problem(code: Code, message: str, *field: str | int) -> None:
        diagnostics.append(Diagnostic(code, message, source.at(*field), rule_id=doc.id))

    action: Action | None = None
    if doc.action is not None:
        action = actions.get(doc.action)
        if action is None and compilation.actions_known:
            diagnostics.append(_unknown_action(doc.action, actions, source.at("action"), doc.id))
    written = source.written.get("when", {})
    type_condition, conditions = _conditions(doc.when, written, ("when",), problem)
    if len(diagnostics) > before or defaults is None or doc.class_ not in defaults:
        return None
    default = defaults[doc.class_]
    action = action or default.action
    why = cannot_retry(doc.class_, action.id, compilation.action_retry)
    if doc.retryable and why:
        fix = (
            f"remove `retryable: true` (no {doc.class_.name} answer is retryable)"
            if RETRY[doc.class_] is Retry.never
            else "remove `retryable: true` (its answer is then not retryable), or name an "
            "action a retry can help"
        )
        problem(
            Code.retry_cannot_help,
            f"the rule marks retryable what a retry cannot fix: {why}; {fix}",
            "retryable",
        )
        return None
    outcome = Outcome(
        error_class=doc.class_,
        action=action,
        effect=Effect.from_label(doc.effect) if doc.effect else default.effect,
        retryable=not why and (default.retryable if doc.retryable is None else doc.retryable),
        retry_after_cap=doc.retry_after_cap,
    )
    return CompiledRule(
        id=doc.id,
        location=source.location,
        description=doc.description,
        type_condition=type_condition,
        conditions=conditions,
        condition_count=sum(
            weight(c) for c in (*([type_condition] if type_condition else []), *conditions)
        ),
        priority=doc.priority,
        order=order,
        outcome=outcome,
        fallback=doc.fallback,
        layer=layer,
        locations={
            "when": source.at("when"),
            **{
                key: source.positions.key((*source.path, "when", key))
                for key, value in doc.when
                if value is not None
            },
        },
        lint_ignore=frozenset(doc.lint_ignore),
    )


def _cost(c: Condition) -> int:
    """Cheapest first: a set lookup, then a dict lookup, the type chain, causes, RE2."""
    match c:
        case FieldIn() | FieldPresent():
            return 0
        case AttributeIs():
            return 1
        case TypeIs():
            return 2
        case CauseMatches():
            return 3
        case MessageMatches():
            return 4
        case _:
            assert_never(c)


def _conditions(
    when: CauseWhenDoc, written: Mapping[str, Any], path: tuple[str | int, ...], problem: Problem
) -> tuple[TypeIs | None, tuple[Condition, ...]]:
    """Compile a `when` (or a `cause`) into its type condition and the rest, cheapest first.

    `when` holds the parsed values; `written` is the same mapping as the author
    wrote it, which each condition's text echoes.
    """

    def text(key: str) -> str:
        return _text(key, written[key])

    out: list[Condition] = []
    type_condition = None
    if when.type is not None:
        type_condition = TypeIs(when.type, text("type"))
    if when.http_status is not None:
        out.append(FieldIn("http_status", when.http_status, text("http_status")))
    if when.grpc_status is not None:
        out.append(FieldIn("grpc_status", when.grpc_status, text("grpc_status")))
    if when.code is not None:
        out.append(FieldIn("code", when.code, text("code")))
    for name in when.has or ():
        out.append(FieldPresent(name, _text("has", name)))
    for name in when.lacks or ():
        out.append(FieldPresent(name, _text("lacks", name), present=False))
    if when.message is not None:
        pattern = _pattern(when.message, (*path, "message"), problem)
        if pattern is not None:
            out.append(MessageMatches(pattern, text("message"), required_literals(when.message)))
    if isinstance(when, WhenDoc):
        if when.origin is not None:
            out.append(FieldIn("origin", when.origin, text("origin")))
        if when.provider is not None:
            out.append(FieldIn("provider", when.provider, text("provider")))
        if when.language is not None:
            out.append(FieldIn("language", when.language, text("language")))
        for name, values in (when.attributes or {}).items():
            out.append(
                AttributeIs(name, values, _text("attributes", {name: written["attributes"][name]}))
            )
        if when.cause is not None:
            cause_written = written["cause"]
            cause_type, cause_rest = _conditions(
                when.cause, cause_written, (*path, "cause"), problem
            )
            parts = ((cause_type,) if cause_type else ()) + cause_rest
            if parts:
                shown = {k: cause_written[k] for k, v in when.cause if v is not None}
                out.append(CauseMatches(parts, _text("cause", shown)))
            else:
                problem(
                    Code.empty_condition,
                    "a cause condition with no conditions matches any cause",
                    *path,
                    "cause",
                )
    out.sort(key=_cost)
    return type_condition, tuple(out)


def _pattern(text: str, path: tuple[str | int, ...], problem: Problem) -> Any:
    if len(text) > MAX_PATTERN_CHARS:
        problem(
            Code.pattern_too_long,
            f"{len(text)} characters exceed the limit of {MAX_PATTERN_CHARS}",
            *path,
        )
        return None
    try:
        compiled = re2.compile(text, _RE2_OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        problem(Code.invalid_pattern, pattern_message(text, reason), *path)
        return None
    not_portable = portable.problem(text)
    if not_portable is not None:
        problem(
            Code.non_portable_pattern,
            f"the pattern `{flow(text)}` would not match the same messages in every client: "
            f"{not_portable}; {doc_pointer(info(Code.non_portable_pattern).anchor)}",
            *path,
        )
        return None
    return compiled


_RE2_HINTS = (
    ("perl operator: (?<", "RE2 has no lookbehind (`(?<=`, `(?<!`)"),
    ("perl operator: (?=", "RE2 has no lookahead (`(?=`, `(?!`)"),
    ("perl operator: (?!", "RE2 has no lookahead (`(?=`, `(?!`)"),
    ("perl operator", "a `(?` group or flag RE2 does not know"),
    ("missing )", "a group `(` is never closed"),
    ("unexpected )", "a `)` closes no group"),
    ("missing ]", "a character class `[` is never closed"),
    (
        "bad repetition",
        "a repetition (`*`, `+`, `?`, `{n}`) repeats nothing, or repeats a repetition",
    ),
    ("invalid repetition size", "a count `{m,n}` is backwards or above 1000"),
    ("invalid character class range", "a range `[z-a]` is backwards, or `\\p{...}` names no class"),
    ("trailing \\", "the pattern ends with a lone `\\`"),
)
"""RE2's complaints in words, tried in order; RE2's own wording follows."""


def pattern_message(text: str, reason: str) -> str:
    """A pattern RE2 refused: the pattern as written, what is wrong in words, then RE2's."""
    if re.search(r"escape sequence: \\[1-9]", reason):
        plain = "RE2 has no backreferences (`\\1`)"
    elif "escape sequence" in reason:
        plain = "an escape RE2 does not know"
    else:
        plain = next((h for k, h in _RE2_HINTS if k in reason), "RE2 cannot compile it")
    return (
        f"the pattern `{flow(text)}` is not valid RE2: {plain} (RE2: {reason}); RE2 matches in "
        "linear time, so rewrite the pattern, or test a code or status instead; "
        f"{doc_pointer(info(Code.invalid_pattern).anchor)}"
    )


def _text(key: str, written: Any) -> str:
    """Canonical rule text for a condition, in YAML flow style (`type: [a, b]`)."""
    return f"{key}: {flow(_unwrap(written))}"


def _unwrap(value: Any) -> Any:
    """One-element lists read better as their element (`type: X`, not `type: [X]`)."""
    if isinstance(value, list):
        return _unwrap(value[0]) if len(value) == 1 else [_unwrap(v) for v in value]
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


# index -----------------------------------------------------------------------------------------


def index_stage(c: Compilation) -> Compilation:
    """One index per tier, in precedence order: decisive rules, decisive fallbacks, the
    others, their fallbacks (the engine asks each only when the ones before found nothing)."""
    return dataclasses.replace(
        c,
        index=RuleIndex(r for r in c.rules if not r.fallback and not r.decisive),
        fallbacks=RuleIndex(r for r in c.rules if r.fallback and not r.decisive),
        decisive=RuleIndex(r for r in c.rules if not r.fallback and r.decisive),
        decisive_fallbacks=RuleIndex(r for r in c.rules if r.fallback and r.decisive),
    )


STAGES: tuple[tuple[str, Stage], ...] = (
    ("catalog", catalog_stage),
    ("rule_ids", rule_ids_stage),
    ("rules", rules_stage),
    ("index", index_stage),
)
"""The compiler, in order; each stage sees what the ones before it built."""
