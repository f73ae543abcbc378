"""Build a bundle from a compiled Ruleset: the converter from the engine's shapes to the format.

The bundle is a pure function of the ruleset and the classifier's version:
no clock, no path of the machine it was built on (a rule's location is its file
relative to its layer's folder, under the layer's name: `default/python/openai.yaml:3:5`,
wherever the folder is and whatever the working directory), keys in a fixed order and
ASCII JSON, so the same ruleset always gives the same bytes, and so the same
signature: a CI step can sign the bundle a server will build from the same rules.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any, assert_never

from classifier import limits, version
from classifier.answer import Action
from classifier.bundle.format import (
    FORMAT,
    FORMAT_VERSION,
    PRECEDENCE,
    ActionDoc,
    AnswerDoc,
    AttributeCondition,
    BundleDoc,
    CauseCondition,
    ClassDefaultDoc,
    DescriptorRulesDoc,
    FieldInCondition,
    LayerDoc,
    MessageCondition,
    PresentCondition,
    RuleDoc,
    RulesetDoc,
    TypeCondition,
    UnknownDoc,
)
from classifier.descriptor import FIELDS
from classifier.engine.conditions import (
    AttributeIs,
    CauseMatches,
    Condition,
    FieldIn,
    FieldPresent,
    MessageMatches,
    TypeIs,
)
from classifier.engine.ruleset import CompiledRule, Outcome, Ruleset
from classifier.source.display import LIBRARY_PREFIX
from classifier.taxonomy import ORIGIN_ALIASES, Effect, ErrorClass, Origin, UnknownReason

WHITESPACE = "".join(c for c in map(chr, range(0x110000)) if c.isspace())
"""What `str.strip()` removes, which is how the service strips names (clients/spec's
facts.json publishes the same set)."""

LIMITS = (
    "MAX_TYPE_NAME_CHARS",
    "MAX_SUPERTYPES",
    "MAX_CAUSES",
    "MAX_CODE_CHARS",
    "MAX_MESSAGE_CHARS",
    "MAX_LABEL_CHARS",
    "MAX_ATTRIBUTES",
    "MAX_ATTRIBUTE_KEY_CHARS",
    "MAX_ATTRIBUTE_VALUE_CHARS",
)
"""The limits of a descriptor (classifier/limits.py) a bundle carries."""


def build_bundle(ruleset: Ruleset) -> BundleDoc:
    """The bundle of a compiled ruleset."""
    return BundleDoc(
        format=FORMAT,
        format_version=FORMAT_VERSION,
        classifier_version=version(),
        ruleset=RulesetDoc(
            name=ruleset.name,
            version=ruleset.version,
            digest=ruleset.digest,
            description=ruleset.description,
            layers=[
                LayerDoc(name=x.name, version=x.version, digest=x.digest) for x in _layers(ruleset)
            ],
        ),
        precedence=list(PRECEDENCE),
        descriptor=_descriptor_rules(),
        classes=[
            ClassDefaultDoc(
                number=int(k),
                name=k.name,
                action=_action(o.action),
                effect=_effect(o.effect),
                retryable=o.retryable,
            )
            for k, o in sorted(ruleset.defaults.items())
        ],
        unknown=UnknownDoc(
            no_match=_unknown(ruleset, UnknownReason.no_match),
            conflict=_unknown(ruleset, UnknownReason.conflict),
        ),
        rules=[_rule(r, ruleset) for r in sorted(ruleset.rules, key=lambda r: r.order)],
    )


def bundle_bytes(ruleset: Ruleset) -> bytes:
    """The bundle as its file holds it: what `bundle build` writes and a signature covers."""
    return dump(build_bundle(ruleset))


def dump(bundle: BundleDoc) -> bytes:
    """The one spelling of a bundle: ASCII JSON (every character past U+007F escaped, so no
    reader's text decoding matters), each top-level key on a line of its own and each rule
    on one line (a changed rule is a changed line in a diff), a final newline."""
    data = bundle.model_dump(mode="json", by_alias=True, exclude_none=True)
    rules = data.pop("rules")
    lines = [f" {json.dumps(k)}: {_compact(v)}," for k, v in data.items()]
    body = ",\n".join(f"  {_compact(r)}" for r in rules)
    text = "{\n" + "\n".join(lines) + '\n "rules": [\n' + body + "\n ]\n}\n"
    return text.encode("ascii")


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def _layers(ruleset: Ruleset) -> list[Any]:
    if ruleset.layers:
        return list(ruleset.layers)
    return [LayerDoc(name=ruleset.name, version=ruleset.version, digest=ruleset.digest)]


def _descriptor_rules() -> DescriptorRulesDoc:
    names = [f.name for f in FIELDS if f.kind in ("type", "type_names", "code", "label")]
    return DescriptorRulesDoc(
        whitespace=WHITESPACE,
        stripped=names,
        lower_cased=[f.name for f in FIELDS if f.kind == "label"],
        message_max_chars=limits.MAX_MESSAGE_CHARS,
        origin_aliases=dict(ORIGIN_ALIASES),
        limits={name: getattr(limits, name) for name in LIMITS},
    )


def _action(a: Action) -> ActionDoc:
    return ActionDoc(id=a.id, summary=a.summary, runbook_url=a.runbook_url)


def _effect(e: Effect) -> Any:
    return e.label


def _answer(o: Outcome, cap: dt.timedelta | None = None) -> AnswerDoc:
    return AnswerDoc.model_validate(
        {
            "class": int(o.error_class),
            "class_name": o.error_class.name,
            "action": _action(o.action),
            "effect": _effect(o.effect),
            "retryable": o.retryable,
            "retry_after_cap_seconds": cap.total_seconds() if cap is not None else None,
        }
    )


def _unknown(ruleset: Ruleset, reason: UnknownReason) -> AnswerDoc:
    c = ruleset.unknown[reason]
    return _answer(Outcome(ErrorClass.Unknown, c.action, c.effect, c.retryable))


def portable_location(rule: CompiledRule, ruleset: Ruleset) -> str:
    """The rule's location with its file named inside its layer (`<layer>/<path>`), not as
    this machine's working directory shows it; as shown when the file is not in the layer's
    folder (a layer held only in memory keeps its label)."""
    loc = rule.location
    layer = ruleset.layers[rule.layer] if rule.layer < len(ruleset.layers) else None
    path = loc.file
    if layer is not None:
        if path.startswith(LIBRARY_PREFIX):
            path = path[len(LIBRARY_PREFIX) :]
        elif layer.folder:
            # lexically, never through a link: a ConfigMap's files are links into a
            # timestamped folder, which must not reach the bytes
            relative = os.path.relpath(os.path.abspath(path), layer.folder)
            if not relative.startswith(".."):
                path = f"{layer.name}/{Path(relative).as_posix()}"
    return f"{path}:{loc.line}:{loc.column}"


def _rule(rule: CompiledRule, ruleset: Ruleset) -> RuleDoc:
    return RuleDoc(
        id=rule.id,
        location=portable_location(rule, ruleset),
        order=rule.order,
        layer=rule.layer,
        fallback=rule.fallback,
        decisive=rule.decisive,
        priority=rule.priority,
        condition_count=rule.condition_count,
        type=sorted(rule.type_condition.names) if rule.type_condition else None,
        conditions=[_condition(c, in_cause=False) for c in rule.conditions],
        answer=_answer(rule.outcome, ruleset.caps.get(rule.id)),
    )


def _condition(c: Condition, *, in_cause: bool) -> Any:
    """One compiled condition in the bundle's normalised form."""
    match c:
        case TypeIs(names=names, text=text):
            return TypeCondition(names=sorted(names), text=text)
        case FieldIn(field="http_status", values=values, text=text):
            statuses = ranges(frozenset(values))
            return FieldInCondition(field="http_status", ranges=statuses, text=text)
        case FieldIn(field=name, values=values, text=text):
            return FieldInCondition.model_validate(
                {"field": name, "values": sorted(_plain(v) for v in values), "text": text}
            )
        case FieldPresent(field=name, present=present, text=text):
            return PresentCondition.model_validate(
                {"field": name, "present": present, "text": text}
            )
        case MessageMatches(pattern=pattern, text=text):
            return MessageCondition(pattern=pattern.pattern, text=text)
        case AttributeIs(name=name, values=values, text=text):
            return AttributeCondition(name=name, values=sorted(values), text=text)
        case CauseMatches(conditions=inner, text=text):
            if in_cause:
                raise ValueError(f"{text}: a cause condition inside a cause has no bundle form")
            return CauseCondition.model_validate(
                {"conditions": [_condition(i, in_cause=True) for i in inner], "text": text}
            )
        case _:
            assert_never(c)


def _plain(value: Any) -> str | int:
    """A plain field's value as the vectors spell a descriptor: origins by name."""
    if isinstance(value, Origin):
        return value.name
    if isinstance(value, int):
        return int(value)
    return str(value)


def ranges(values: frozenset[Any]) -> list[tuple[int, int]]:
    """A set of statuses as inclusive ranges, sorted and merged (`5xx` is one range)."""
    out: list[tuple[int, int]] = []
    for v in sorted(values):
        if out and out[-1][1] == v - 1:
            out[-1] = (out[-1][0], v)
        else:
            out.append((v, v))
    return out
