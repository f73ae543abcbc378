"""The class a drafted rule carries: only from evidence that decides classes.

A wrong class a reviewer accepts is stored for ever in every past run's row, so a draft
settles its class only when the evidence that decides classes in this library names one
class and nothing else names another:

    strong    an origin the taxonomy ties to one class (`tool` ToolError, `guard`
              ContentBlocked, `reconciler` Infrastructure, `user` Canceled); a status or a
              gRPC code (429 from the provider, 408, DEADLINE_EXCEEDED, ...); a cause
              the ruleset classifies on its own; the tied rules of a conflict; a near rule
              that held on a status, code or cause and failed only on the type, language or
              provider it is written for. Origin `provider` is ProviderError only when nothing
              more specific is said ("anything that is not a timeout").
    weak      a near rule (`classifier.engine.nearness`, the one ranking) that held on a
              type or message and failed only on the scope it is written for;
              words of the template that a rule of the ruleset already keys on ("timed
              out", "quota"). Weak evidence never settles; it unsettles a strong one that
              disagrees.
    hints     what the type's and template's words and the origin suggest. Never evidence:
              they only fill the candidate list a person chooses from.

An unsettled draft's class is a placeholder (`class: 'TO CHOOSE: ...'`) that fails
`classifier check` (code `class_to_choose`) with the candidates and why each is
plausible; it is checked (loads, lint, replay, cases) with its first candidate standing
in, and written with the placeholder.

The draft's id is named in `rule_ids`, its action chosen in `action_choice` (after the
class, which it reads).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from classifier.descriptor import Descriptor
from classifier.engine.conditions import (
    CauseMatches,
    Condition,
    FieldIn,
    FieldPresent,
    MessageMatches,
    TypeIs,
)
from classifier.engine.evaluate import classify
from classifier.engine.nearness import DECIDING_FIELDS, decides, rank
from classifier.engine.ruleset import CompiledRule, Ruleset
from classifier.engine.trace import ExplainTracer
from classifier.errors import DescriptorError
from classifier.source.documents import CLASS_TO_CHOOSE
from classifier.taxonomy import GRPC_CODE_NAMES, ErrorClass, Origin
from classifier.unknowns.cluster import Cluster
from classifier.unknowns.mask import literal_text

Reason = tuple[ErrorClass, str]


@dataclass(frozen=True, slots=True)
class ClassChoice:
    """The class of a draft: settled (one class), or a placeholder and its candidates."""

    proposed: ErrorClass
    """The settled class; unsettled, the first candidate, which stands in while the draft
    is checked (the draft is written with the placeholder)."""
    settled: bool
    plausible: tuple[Reason, ...]
    """Settled: the evidence. Unsettled: the candidates, each with why it is plausible."""

    @property
    def written(self) -> str:
        """What the drafted rule and cases say for `class`: the class, or the placeholder."""
        if self.settled:
            return self.proposed.name
        return placeholder(self.plausible)


def placeholder(candidates: Iterable[Reason]) -> str:
    """`TO CHOOSE: A (why); B (why)`: refused by `check` (documents.parse_class) until a
    person writes one class."""
    listed = "; ".join(f"{cls.name} ({why})" for cls, why in candidates)
    return f"{CLASS_TO_CHOOSE} {listed or 'no class named by any evidence'}"


# strong evidence -------------------------------------------------------------------------

_ORIGIN_CLASSES: dict[Origin, Reason] = {
    Origin.tool: (ErrorClass.ToolError, "origin tool: a tool threw"),
    Origin.guard: (ErrorClass.ContentBlocked, "origin guard: our own content guard refused"),
    Origin.reconciler: (
        ErrorClass.Infrastructure,
        "origin reconciler: the run's process vanished",
    ),
    Origin.user: (ErrorClass.Canceled, "origin user: the user or caller cancelled"),
}
_PROVIDER_DEFAULT: Reason = (
    ErrorClass.ProviderError,
    "origin provider: the provider call failed, and nothing says it was more than an error",
)
_GRPC: dict[str, ErrorClass] = {
    "DEADLINE_EXCEEDED": ErrorClass.Timeout,
    "UNAVAILABLE": ErrorClass.ProviderError,
    "RESOURCE_EXHAUSTED": ErrorClass.RateLimited,
}
"""gRPC codes that name a class when the provider answered them."""
_SCOPE_FIELDS = frozenset({"language", "provider"})


def _status_evidence(d: Descriptor) -> tuple[list[Reason], list[Reason]]:
    """Strong and weak evidence from the statuses (a tool's statuses are the tool's: its
    origin decides)."""
    strong: list[Reason] = []
    weak: list[Reason] = []
    if d.origin is Origin.tool:
        return strong, weak
    provider = d.origin is Origin.provider
    status = d.http_status
    if status == 429:
        if provider:
            strong.append((ErrorClass.RateLimited, "HTTP 429 from the provider"))
        else:
            weak.append((ErrorClass.RateLimited, "HTTP 429, if the provider said it"))
            weak.append((ErrorClass.QuotaExceeded, "HTTP 429, if our own limiter said it"))
    elif status == 408:
        strong.append((ErrorClass.Timeout, "HTTP 408: the call ran past its time"))
    elif status is not None and status >= 500 and provider:
        strong.append((ErrorClass.ProviderError, f"HTTP {status} from the provider"))
    if d.grpc_status is not None:
        name = GRPC_CODE_NAMES.get(d.grpc_status, str(d.grpc_status))
        cls = _GRPC.get(name)
        if cls is ErrorClass.Timeout:
            strong.append((cls, f"gRPC {name}"))
        elif cls is not None and provider:
            strong.append((cls, f"gRPC {name} from the provider"))
        elif cls is not None:
            weak.append((cls, f"gRPC {name}, if the provider answered it"))
        elif name == "CANCELLED":
            weak.append((ErrorClass.Canceled, "gRPC CANCELLED, if the caller cancelled"))
    return strong, weak


def _cause_evidence(d: Descriptor, ruleset: Ruleset) -> list[Reason]:
    """Each cause classified on its own (with the outer descriptor's origin, language and
    provider), when the rule deciding it held on a condition that decides classes."""
    out: list[Reason] = []
    for i, cause in enumerate(d.causes):
        inner = Descriptor(
            type=cause.type,
            supertypes=cause.supertypes,
            http_status=cause.http_status,
            grpc_status=cause.grpc_status,
            origin=d.origin,
            code=cause.code,
            message=cause.message,
            causes=d.causes[i + 1 :],
            language=d.language,
            provider=d.provider,
        )
        result = classify(ruleset, inner)
        rule = ruleset.rule(result.rule_id) if result.rule_id else None
        if rule is None or not any(decides(c, inner) for c in rule.all_conditions):
            continue
        cls = result.error_class
        out.append((cls, f"its cause {cause.type} is {cls.name} by rule {rule.id}"))
    return out


def _scope_only(c: Condition) -> bool:
    """A condition that only says which descriptors a rule is written for (not its origin:
    a rule that failed on its origin says what happens at another origin)."""
    match c:
        case TypeIs() | FieldPresent():
            return True
        case FieldIn(field=name):
            return name in _SCOPE_FIELDS
        case _:
            return False


def _near_evidence(d: Descriptor, ruleset: Ruleset) -> tuple[list[Reason], list[Reason]]:
    """What the near rules lend: their class, when what failed was only their scope (the
    type, language or provider they are written for). A rule that failed on a cause, a
    status, a code, a message, an origin or an attribute names a class this descriptor
    lacks the evidence for, and lends nothing. It is strong when what held is a status, a
    code or a cause, weak when only a type or a message."""
    tracer = ExplainTracer(descriptor=d)
    classify(ruleset, d, tracer)
    strong: list[Reason] = []
    weak: list[Reason] = []
    for n in rank(tracer.evaluations, d):
        if not all(_scope_only(c) for c in n.failed):
            continue
        cls = n.rule.outcome.error_class
        held = ", ".join(c.text for c in n.deciding)
        failed = ", ".join(c.text for c in n.failed)
        why = f"rule {n.rule.id} held on {held} and failed only on {failed}"
        named = any(
            isinstance(c, CauseMatches) or (isinstance(c, FieldIn) and c.field in DECIDING_FIELDS)
            for c in n.deciding
        )
        (strong if named else weak).append((cls, why))
    return strong, weak


# weak evidence: words a rule keys on -----------------------------------------------------

_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "not",
        "was",
        "with",
        "from",
        "this",
        "that",
        "has",
        "have",
        "are",
        "after",
        "before",
        "into",
        "onto",
        "than",
        "then",
        "when",
        "what",
        "which",
        "while",
        "your",
        "our",
        "its",
        "can",
        "could",
        "did",
        "does",
    ]
)
_LETTERS = re.compile(r"[a-z]{2,}")


def _phrases(pattern: str) -> set[str]:
    """The two-word phrases (and single words of an alternation) a message pattern keys on,
    lower case: `^Operation timed out after` -> {operation timed, timed out}."""
    text = re.sub(r"\(\?[a-z]+\)", " ", pattern.lower())
    text = re.sub(r"\\s[+*?]?| ", "\x00", text)  # the pattern's own word breaks
    out: set[str] = set()
    for chunk in re.split(r"\\.|[\^$()\[\]{}*+?.]", text):
        for alternative in chunk.split("|"):
            words = [w for w in alternative.split("\x00") if w]
            if not all(_LETTERS.fullmatch(w) for w in words):
                words = [w for w in words if _LETTERS.fullmatch(w)]
            if len(words) == 1 and "|" in chunk and len(words[0]) >= 5:
                out.add(words[0])
            out |= {
                f"{a} {b}"
                for a, b in pairwise(words)
                if a not in _STOP and b not in _STOP and len(a) >= 3 and len(b) >= 3
            }
    return out


def _message_patterns(rule: CompiledRule) -> list[str]:
    out = []
    for c in rule.all_conditions:
        inner = c.conditions if isinstance(c, CauseMatches) else (c,)
        out += [i.pattern.pattern for i in inner if isinstance(i, MessageMatches)]
    return out


def _origin_fails(rule: CompiledRule, d: Descriptor) -> bool:
    return any(
        isinstance(c, FieldIn) and c.field == "origin" and not c.holds(d)
        for c in rule.all_conditions
    )


def _word_evidence(c: Cluster, d: Descriptor | None, ruleset: Ruleset) -> list[Reason]:
    """Classes of the rules whose message patterns key on words this template has."""
    template = f" {' '.join(re.findall(r'[a-z]+', literal_text(c.template).lower()))} "
    out: list[Reason] = []
    for rule in ruleset.rules:
        if d is not None and _origin_fails(rule, d):
            continue
        for pattern in _message_patterns(rule):
            found = sorted(p for p in _phrases(pattern) if f" {p} " in template)
            if found:
                out.append(
                    (rule.outcome.error_class,
                     f"its message says {found[0]!r}, which rule {rule.id} keys on")
                )  # fmt: skip
                break
    return out


# hints -----------------------------------------------------------------------------------

_HINTS: tuple[tuple[re.Pattern[str], ErrorClass, str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), cls, why)
    for p, cls, why in (
        (r"tim(e|ed) ?out|deadline", ErrorClass.Timeout, "its words say it timed out"),
        (r"cancel", ErrorClass.Canceled, "its words say it was cancelled"),
        (r"rate.?limit|too many requests", ErrorClass.RateLimited, "its words say rate limit"),
        (r"quota", ErrorClass.QuotaExceeded, "its words say quota"),
        (
            r"budget|recursion|max\w*(turns|rounds|steps|depth)|context.?length",
            ErrorClass.BudgetExceeded,
            "its words say a limit on the run's size or depth was reached",
        ),
        (r"polic|denied|denial", ErrorClass.ContentBlocked, "its words say a policy refused"),
        (r"content.?filter|safety", ErrorClass.ContentFiltered, "its words say content filter"),
        (
            r"worker|sig(kill|term)|oom|process pool|terminated",
            ErrorClass.Infrastructure,
            "its words say the process running the work died",
        ),
        (
            r"attributeerror|keyerror|keynotfound|argumentnull|nullreference|typeerror|"
            r"indexerror|no attribute|cannot read propert|sequence contains no",
            ErrorClass.ToolError,
            "its words say a bug in our code: a ToolError if that code ran as a tool",
        ),
        (
            r"pars|json|decod|validat|output|command|invalid start",
            ErrorClass.ToolError,
            "the model's output (a tool call, a command, JSON) did not parse, if a tool read it",
        ),
    )
)
_ORIGIN_HINTS: dict[Origin, tuple[Reason, ...]] = {
    Origin.unspecified: (
        (ErrorClass.ToolError, "if a tool raised it, which the runtime can say with origin tool"),
        (ErrorClass.ProviderError, "if the provider call raised it, origin provider"),
    ),
    Origin.runtime: (
        (ErrorClass.CompilationFailed, "if the agent definition failed to compile or validate"),
        (ErrorClass.BudgetExceeded, "if a budget of the run was used up"),
    ),
    Origin.provider: (
        (ErrorClass.ProviderError, "the provider call failed"),
        (ErrorClass.Timeout, "if the provider call ran past its time"),
    ),
    Origin.tool: (
        (ErrorClass.ToolError, "a tool threw"),
        (ErrorClass.ToolTimeout, "if the tool wrapper's own time limit fired"),
    ),
}


def evidence_text(c: Cluster) -> str:
    """What the drafter reads words from: the type and the template's own words. Never a
    placeholder or a redaction marker (`<JSON>`, `[REDACTED:email]`): masking and the
    redactor wrote those, not the failure."""
    return f"{c.key.type} {literal_text(c.template)}"


def _hints(c: Cluster, origin: Origin) -> list[Reason]:
    text = evidence_text(c)
    out = [(cls, why) for pattern, cls, why in _HINTS if pattern.search(text)]
    return out + list(_ORIGIN_HINTS.get(origin, ()))


# the choice ------------------------------------------------------------------------------


def choose_class(c: Cluster, tied: Iterable[str], ruleset: Ruleset) -> ClassChoice:
    """The settled class, or the candidates (see the module docstring). `tied` are the rules
    a conflict's typical member ties on."""
    try:
        d: Descriptor | None = c.typical.parsed()
    except DescriptorError:
        d = None
    strong: list[Reason] = []
    weak: list[Reason] = []
    for rule_id in tied:
        rule = ruleset.rule(rule_id)
        if rule is not None:
            strong.append((rule.outcome.error_class, f"rule {rule_id}, tied on it, says so"))
    if d is not None:
        if d.origin in _ORIGIN_CLASSES:
            strong.append(_ORIGIN_CLASSES[d.origin])
        s, w = _status_evidence(d)
        strong += s
        weak += w
        strong += _cause_evidence(d, ruleset)
        s, w = _near_evidence(d, ruleset)
        strong += s
        weak += w
        if d.origin is Origin.provider and not strong:
            strong.append(_PROVIDER_DEFAULT)
    weak += _word_evidence(c, d, ruleset)
    strong = [r for r in strong if r[0] is not ErrorClass.Unknown]
    weak = [r for r in weak if r[0] is not ErrorClass.Unknown]
    named = {cls for cls, _ in strong}
    if len(named) == 1 and all(cls in named for cls, _ in weak):
        return ClassChoice(strong[0][0], True, tuple(_first_reasons([*strong, *weak])))
    hints = _hints(c, d.origin if d is not None else Origin.unspecified)
    candidates = _first_reasons([*strong, *weak, *hints])
    if not candidates:
        candidates = [(ErrorClass.ToolError, "no evidence names a class: a stand-in")]
    return ClassChoice(candidates[0][0], False, tuple(candidates))


def _first_reasons(reasons: Iterable[Reason]) -> list[Reason]:
    """One reason per class, the first given (strongest first)."""
    out: dict[ErrorClass, str] = {}
    for cls, why in reasons:
        out.setdefault(cls, why)
    return list(out.items())


# what is written -------------------------------------------------------------------------


def written_rule(rule: dict[str, Any], choice: ClassChoice) -> dict[str, Any]:
    """The drafted rule as written: the class, or the placeholder that fails `check`."""
    return {**rule, "class": choice.written}


def written_cases(cases: list[dict[str, Any]], choice: ClassChoice) -> list[dict[str, Any]]:
    """The drafted cases as written: their `want` says the same class or placeholder."""
    return [{**case, "want": {**case["want"], "class": choice.written}} for case in cases]


__all__ = [
    "ClassChoice",
    "choose_class",
    "evidence_text",
    "placeholder",
    "written_cases",
    "written_rule",
]
