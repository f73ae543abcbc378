"""Compile validated rule documents into a Ruleset the engine can run.

The compiler is an ordered list of named, pure stages over the loaded
source; each stage adds located diagnostics instead of stopping, so an
author sees every problem in one run:

    catalog      action ids unique; class defaults name known actions and possible effects
    rule_ids     rule ids unique across the ruleset
    rules        class, action, effect resolved; conditions and RE2 patterns compiled
    index        candidate lookup by type name; a bucket of many rules split by a plain field

Patterns are compiled here, never in the engine.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import re2
import yaml

from classifier.answer import Action
from classifier.codes import Code
from classifier.engine.conditions import (
    AttributeIs,
    CauseMatches,
    Condition,
    FieldIn,
    MessageMatches,
    TypeIs,
)
from classifier.engine.index import RuleIndex
from classifier.engine.literals import required_literals
from classifier.engine.ruleset import CompiledRule, Outcome, Ruleset
from classifier.errors import Diagnostic, RulesetError, Severity
from classifier.location import Location
from classifier.source.documents import (
    CatalogDoc,
    CauseWhenDoc,
    WhenDoc,
    parse_class,
    parse_grpc_code,
    parse_http_statuses,
    parse_origin,
    scalar_text,
)
from classifier.source.loader import RulesetSource, RuleSource, display_path, load_source
from classifier.taxonomy import Effect, ErrorClass

MAX_PATTERN_CHARS = 2048
RE2_MAX_MEM = 8 * 1024 * 1024

_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's emitter writes the same text as PyYAML's, five times faster (start-up time)."""

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
_RE2_OPTIONS.max_mem = RE2_MAX_MEM


def load_ruleset(root: Path | str) -> Ruleset:
    """Read, validate and compile a ruleset folder; raise RulesetError with every problem."""
    return compile_ruleset(load_source(root))


def compile_ruleset(source: RulesetSource) -> Ruleset:
    """Compile loaded documents; raise RulesetError listing every error found."""
    diagnostics = list(source.diagnostics)
    actions, defaults, conflict_action = _catalog(source, diagnostics)
    _rule_ids(source.rules, diagnostics)
    rules = _rules(source.rules, actions, defaults, diagnostics)
    errors = [d for d in diagnostics if d.severity is Severity.error]
    if errors or source.manifest is None or defaults is None:
        raise RulesetError(errors)
    return Ruleset(
        name=source.manifest.name,
        version=source.manifest.version,
        description=source.manifest.description,
        digest=source.digest,
        source=display_path(source.root),
        rules=tuple(rules),
        index=RuleIndex(rules),
        defaults=defaults,
        conflict_action=conflict_action or defaults[ErrorClass.Unknown].action,
        actions=actions,
        loaded_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        action_locations=_action_locations(source),
        class_locations=_class_locations(source),
        lint_ignore=frozenset(source.manifest.lint_ignore),
    )


def _action_locations(source: RulesetSource) -> dict[str, Location]:
    if source.catalog is None:
        return {}
    at = source.catalog_positions
    out: dict[str, Location] = {}
    for i, doc in enumerate(source.catalog.actions):
        out.setdefault(doc.id, at.value(("actions", i)))
    return out


def _class_locations(source: RulesetSource) -> dict[ErrorClass, Location]:
    if source.catalog is None:
        return {}
    at = source.catalog_positions
    return {parse_class(name): at.key(("classes", name)) for name in source.catalog.classes}


def _catalog(
    source: RulesetSource, diagnostics: list[Diagnostic]
) -> tuple[dict[str, Action], dict[ErrorClass, Outcome] | None, Action | None]:
    """The actions, every class's defaults, and the action for an Unknown by conflict."""
    catalog: CatalogDoc | None = source.catalog
    if catalog is None:
        return {}, None, None
    at = source.catalog_positions
    actions: dict[str, Action] = {}
    for i, doc in enumerate(catalog.actions):
        if doc.id in actions:
            diagnostics.append(
                Diagnostic(
                    Code.duplicate_action_id,
                    f"action {doc.id!r} is already defined",
                    at.value(("actions", i, "id")),
                )
            )
            continue
        actions[doc.id] = Action(doc.id, doc.summary, doc.runbook)
    defaults: dict[ErrorClass, Outcome] = {}
    conflict_action: Action | None = None
    for name, default in catalog.classes.items():
        error_class = parse_class(name)
        where = at.value(("classes", name))
        if default.conflict_action is not None:
            field_at = at.value(("classes", name, "conflict_action"))
            if error_class is not ErrorClass.Unknown:
                diagnostics.append(
                    Diagnostic(
                        Code.invalid_class_default,
                        "only Unknown has a conflict_action (the action for an Unknown "
                        "caused by disagreeing rules)",
                        field_at,
                    )
                )
            elif default.conflict_action not in actions:
                diagnostics.append(
                    Diagnostic(
                        Code.unknown_action,
                        f"class {name} names unknown action {default.conflict_action!r}",
                        field_at,
                    )
                )
            else:
                conflict_action = actions[default.conflict_action]
        if default.action not in actions:
            diagnostics.append(
                Diagnostic(
                    Code.unknown_action,
                    f"class {name} names unknown action {default.action!r}",
                    at.value(("classes", name, "action")),
                )
            )
            continue
        unknown = error_class is ErrorClass.Unknown
        invalid = False
        if unknown != (default.effect == "unspecified"):
            invalid = True
            diagnostics.append(
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
            diagnostics.append(
                Diagnostic(
                    Code.invalid_class_default,
                    "an Unknown answer is never retryable (no rule vouched for the failure): "
                    "leave retryable out, or set it to false",
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
    return actions, defaults, conflict_action


def _rule_ids(rules: Sequence[RuleSource], diagnostics: list[Diagnostic]) -> None:
    first: dict[str, RuleSource] = {}
    for rule in rules:
        seen = first.setdefault(rule.doc.id, rule)
        if seen is not rule:
            diagnostics.append(
                Diagnostic(
                    Code.duplicate_rule_id,
                    f"rule {rule.doc.id!r} is already defined at {seen.at('id')}",
                    rule.at("id"),
                    rule_id=rule.doc.id,
                    related=(seen.at("id"),),
                )
            )


def _rules(
    rules: Sequence[RuleSource],
    actions: dict[str, Action],
    defaults: dict[ErrorClass, Outcome] | None,
    diagnostics: list[Diagnostic],
) -> list[CompiledRule]:
    compiled: list[CompiledRule] = []
    for order, source in enumerate(rules):
        rule = _rule(source, order, actions, defaults, diagnostics)
        if rule is not None:
            compiled.append(rule)
    return compiled


def _rule(
    source: RuleSource,
    order: int,
    actions: dict[str, Action],
    defaults: dict[ErrorClass, Outcome] | None,
    diagnostics: list[Diagnostic],
) -> CompiledRule | None:
    doc = source.doc
    before = len(diagnostics)

    def problem(code: Code, message: str, *field: str | int) -> None:
        diagnostics.append(Diagnostic(code, message, source.at(*field), rule_id=doc.id))

    error_class = parse_class(doc.class_)
    action: Action | None = None
    if doc.action is not None:
        action = actions.get(doc.action)
        if action is None:
            problem(Code.unknown_action, f"action {doc.action!r} is not in the catalog", "action")
    type_condition, conditions = _conditions(doc.when, ("when",), problem)
    if len(diagnostics) > before or defaults is None or error_class not in defaults:
        return None
    default = defaults[error_class]
    outcome = Outcome(
        error_class=error_class,
        action=action or default.action,
        effect=Effect.from_label(doc.effect) if doc.effect else default.effect,
        retryable=default.retryable if doc.retryable is None else doc.retryable,
    )
    return CompiledRule(
        id=doc.id,
        location=source.location,
        description=doc.description,
        type_condition=type_condition,
        conditions=conditions,
        condition_count=sum(
            c.weight for c in (*([type_condition] if type_condition else []), *conditions)
        ),
        priority=doc.priority,
        order=order,
        outcome=outcome,
        locations={
            "when": source.at("when"),
            **{
                key: source.positions.key((*source.path, "when", key))
                for key in doc.when.model_dump(exclude_none=True)
            },
        },
        lint_ignore=frozenset(doc.lint_ignore),
    )


_COST = {FieldIn: 0, AttributeIs: 1, TypeIs: 2, CauseMatches: 3, MessageMatches: 4}


def _conditions(
    when: CauseWhenDoc, path: tuple[str | int, ...], problem: Any
) -> tuple[TypeIs | None, tuple[Condition, ...]]:
    """Compile a `when` (or a `cause`) into its type condition and the rest, cheapest first."""
    out: list[Condition] = []
    type_condition = None
    if when.type is not None:
        type_condition = TypeIs(frozenset(when.type), _text("type", when.type))
    if when.http_status is not None:
        statuses = frozenset().union(*(parse_http_statuses(v) for v in when.http_status))
        out.append(
            FieldIn("http_status", "http_status", statuses, _text("http_status", when.http_status))
        )
    if when.grpc_status is not None:
        codes = frozenset(parse_grpc_code(v) for v in when.grpc_status)
        out.append(
            FieldIn("grpc_status", "grpc_status", codes, _text("grpc_status", when.grpc_status))
        )
    if when.code is not None:
        out.append(
            FieldIn(
                "code",
                "code",
                frozenset(scalar_text(v) for v in when.code),
                _text("code", when.code),
            )
        )
    if when.message is not None:
        pattern = _pattern(when.message, (*path, "message"), problem)
        if pattern is not None:
            out.append(
                MessageMatches(
                    pattern, _text("message", when.message), required_literals(when.message)
                )
            )
    if isinstance(when, WhenDoc):
        if when.origin is not None:
            origins = frozenset(parse_origin(v) for v in when.origin)
            out.append(FieldIn("origin", "origin", origins, _text("origin", when.origin)))
        for key in ("provider", "language"):
            values = getattr(when, key)
            if values is not None:
                out.append(
                    FieldIn(
                        key, key, frozenset(v.strip().lower() for v in values), _text(key, values)
                    )
                )
        for name, values in (when.attributes or {}).items():
            texts = frozenset(scalar_text(v) for v in values)
            out.append(AttributeIs(name, texts, _text("attributes", {name: values})))
        if when.cause is not None:
            cause_type, cause_rest = _conditions(when.cause, (*path, "cause"), problem)
            parts = ((cause_type,) if cause_type else ()) + cause_rest
            if parts:
                doc = when.cause.model_dump(exclude_none=True)
                out.append(CauseMatches(parts, _text("cause", doc)))
            else:
                problem(
                    Code.empty_condition,
                    "a cause condition with no conditions matches any cause",
                    *path,
                    "cause",
                )
    out.sort(key=lambda c: _COST[type(c)])
    return type_condition, tuple(out)


def _pattern(text: str, path: tuple[str | int, ...], problem: Any) -> Any:
    if len(text) > MAX_PATTERN_CHARS:
        problem(
            Code.pattern_too_long,
            f"{len(text)} characters exceed the limit of {MAX_PATTERN_CHARS}",
            *path,
        )
        return None
    try:
        return re2.compile(text, _RE2_OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        problem(Code.invalid_pattern, f"invalid RE2 pattern {text!r}: {reason}", *path)
        return None


def _unwrap(value: Any) -> Any:
    """One-element lists read better as their element (`type: X`, not `type: [X]`)."""
    if isinstance(value, list):
        return _unwrap(value[0]) if len(value) == 1 else [_unwrap(v) for v in value]
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


_PLAIN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.$/@*+-]*\Z")
_STR_TAG = "tag:yaml.org,2002:str"
_RESOLVER = yaml.resolver.Resolver()


def _plain(value: Any) -> str | None:
    """A scalar or a list of scalars that YAML writes as is, written the same way; else None.

    Type names, codes and statuses are nearly every condition, and the
    emitter costs tens of microseconds a call; anything that might need
    quoting is left to it.
    """
    if isinstance(value, list):
        items = [_plain(v) for v in value]
        if not items or None in items:
            return None
        return "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if (
        isinstance(value, str)
        and _PLAIN_WORD.match(value)
        and _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR_TAG  # type: ignore[no-untyped-call]
    ):
        return value
    return None


def _text(key: str, value: Any) -> str:
    """Canonical rule text for a condition, in YAML flow style (`type: [a, b]`)."""
    value = _unwrap(value)
    if (plain := _plain(value)) is not None:
        return f"{key}: {plain}"
    rendered = yaml.dump(
        value, Dumper=_Dumper, default_flow_style=True, width=10**9, sort_keys=False
    ).strip()
    rendered = rendered.removesuffix("\n...").removesuffix("...").strip()
    return f"{key}: {rendered}"
