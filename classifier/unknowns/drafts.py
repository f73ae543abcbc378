"""The drafts for an Unknown cluster: the rule `when`s to try, and the rule and cases each makes.

From the least to the most specific text they read (`propose` tries them in this order):

    structure               the structural conditions every member shares: its own type,
                            language, origin, statuses, code, provider, its first cause
    structure, fallback     the same, deciding only when no other rule matches (what an
                            SDK's base type gets, docs/rules.md step 2)
    structure and words     plus the template's longest run of literal words as the message
    structure and template  plus the whole template as an anchored pattern

Nothing here checks a draft (that is `proof`) or writes one (`proposal_output`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from classifier.engine.ruleset import Ruleset
from classifier.generic_types import is_generic
from classifier.redact import DEFAULT as REDACTOR
from classifier.unknowns.action_choice import ActionChoice
from classifier.unknowns.class_choice import ClassChoice
from classifier.unknowns.cluster import Cluster
from classifier.unknowns.mask import VALUE_TOKEN, value_pattern
from classifier.unknowns.structure import CAUSE_KEY_FIELDS, SHOWN_FIELDS

MIN_WORDS = 2
"""A message condition needs a run of at least this many literal words."""
MAX_CASES = 3
"""Cases drafted per cluster, each a distinct descriptor."""


# message patterns -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Draft:
    """One way to scope a cluster: a rule's `when`, named for what it reads."""

    label: str
    when: dict[str, Any]
    fallback: bool = False


def _escape(text: str) -> str:
    """RE2 metacharacters escaped, the rest left as written (readable in review)."""
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", text)


def _literal(token: str) -> bool:
    """A token with no placeholder and no redaction marker in it: words a pattern may key on."""
    return not VALUE_TOKEN.search(token)


def words_pattern(template: str) -> str | None:
    """The template's longest run of literal words, escaped; None when it has none long enough."""
    best: list[str] = []
    run: list[str] = []
    for token in [*template.split(), "<*>"]:
        if _literal(token):
            run.append(token)
            continue
        if len(run) > len(best) or (
            len(run) == len(best) and len(" ".join(run)) > len(" ".join(best))
        ):
            best = run
        run = []
    if len(best) < MIN_WORDS:
        return None
    return _escape(" ".join(best))


def template_pattern(template: str) -> str | None:
    """The whole template as an anchored pattern, each placeholder (and redaction marker)
    loose."""
    tokens = template.split()
    if not any(_literal(t) for t in tokens):
        return None
    parts = []
    for token in tokens:
        pieces, last = [], 0
        for m in VALUE_TOKEN.finditer(token):
            pieces.append(_escape(token[last : m.start()]))
            pieces.append(value_pattern(m.group()))
            last = m.end()
        pieces.append(_escape(token[last:]))
        parts.append("".join(pieces))
    return "^" + r"\s+".join(parts)


# structure: the conditions a cluster's structural key gives (its fields from
# unknowns.structure, which reads the descriptor's field table) -----------------------------


def structure_when(c: Cluster) -> dict[str, Any]:
    """Every structural condition the cluster's members share (they share their whole key);
    of the causes, the first whose type is not generic."""
    k = c.key
    when: dict[str, Any] = {"type": k.type}
    for name in SHOWN_FIELDS:
        value = getattr(k, name)
        if value not in (None, ""):
            when[name] = value
    causes = [c for c in k.causes if not is_generic(c[0])] or list(k.causes)
    if causes:
        fields = zip(CAUSE_KEY_FIELDS, causes[0], strict=True)
        when["cause"] = {name: value for name, value in fields if value not in (None, "")}
    return when


def scoped_by_structure(c: Cluster) -> bool:
    """Whether structure alone scopes a draft: a type that is not generic, or beside a
    generic one a cause that is not, a code or a status (`TypeError` alone would match
    every TypeError of every library)."""
    k = c.key
    if not is_generic(k.type):
        return True
    return bool(
        k.code
        or k.http_status is not None
        or k.grpc_status is not None
        or any(
            not is_generic(cause[0]) or any(v not in (None, "") for v in cause[1:])
            for cause in k.causes
        )
    )


# the drafts -----------------------------------------------------------------------------


def drafts_for(c: Cluster) -> list[Draft]:
    """The drafts to try for a cluster, from the least to the most specific text they read."""
    base = structure_when(c)
    out = []
    if scoped_by_structure(c):
        out += [Draft("structure", base), Draft("structure, as a fallback", base, fallback=True)]
    if (words := words_pattern(c.template)) is not None:
        out.append(Draft("structure and the template's words", {**base, "message": words}))
    full = template_pattern(c.template)
    if full is not None and full != words:
        out.append(Draft("structure and the whole template", {**base, "message": full}))
    return out


# the rule and cases a draft makes -------------------------------------------------------


def rule_for(rule_id: str, c: Cluster, draft: Draft, klass: ClassChoice, action: ActionChoice,
             ruleset: Ruleset) -> dict[str, Any]:  # fmt: skip
    """The rule document a draft stands for: checked with the class proposed (or standing in),
    written with `class_choice.written_rule`."""
    rule: dict[str, Any] = {
        "id": rule_id,
        "description": (
            f"Drafted by `classifier unknowns --propose` for cluster {c.id} "
            f"({c.count:,} Unknowns): {c.key.label()}"
        ),
        "when": draft.when,
        "class": klass.proposed.name,
    }
    if action.id != ruleset.defaults[klass.proposed].action.id:
        rule["action"] = action.id
    if draft.fallback:
        rule["fallback"] = True
    return rule


def cases_for(c: Cluster, rule_id: str, klass: ClassChoice) -> list[dict[str, Any]]:
    """Up to MAX_CASES cases, each a distinct descriptor (as redacted): the examples first,
    then the cluster's sample of distinct members."""
    found = [(e.where, _redacted(e.descriptor)) for e in c.examples]
    found += [("the cluster's sample", _redacted(d)) for d in c.sample]
    unique = distinct(
        ({"where": w, "descriptor": d} for w, d in found),
        key=lambda x: json.dumps(x["descriptor"], sort_keys=True),
    )
    shown = klass.proposed.name if klass.settled else "its class to choose"
    return [
        {
            "note": f"cluster {c.id}, example {i} ({x['where']}) is {shown}",
            "descriptor": x["descriptor"],
            "want": {"class": klass.proposed.name, "rule": rule_id},
        }
        for i, x in enumerate(unique[:MAX_CASES], 1)
    ]


def _redacted(data: dict[str, Any]) -> dict[str, Any]:
    """A descriptor fit for a case file in a repository: secrets in its free text replaced by
    the same masks the server applies (the case must still pass, which the checks confirm)."""
    return REDACTOR.descriptor(data)[0]


def distinct(items: Iterable[dict[str, Any]], key: Any) -> list[dict[str, Any]]:
    """Items whose `key(item)` differs from every earlier one, in order."""
    seen: set[Any] = set()
    out = []
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out
