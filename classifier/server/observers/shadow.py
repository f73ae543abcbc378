"""Shadow a candidate ruleset: classify every request under it too, answer with the
active one only, and count where the two would answer differently.

An author sees what promoting the candidate would change on real traffic:
metrics count every disagreement by (active class, candidate class, active
rule, candidate rule), and the log keeps a few examples of each, each line
an object with a `descriptor` key, so the log is itself a corpus
`classifier diff` can replay (its free text masked by the redactor, the
line saying what was masked). Examples are bounded per disagreement and in
kinds, and start afresh whenever either ruleset changes. The same examples, and a count
per kind since then, are kept in memory for the operator console.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter

from classifier.answer import Classification
from classifier.defaults import DEFAULT_SHADOW_EXAMPLES
from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.redact import DEFAULT, Redactor
from classifier.server.observers.decisions import answer_dict
from classifier.server.observers.metrics import Metrics
from classifier.server.shared.log import log
from classifier.server.shared.serving_ruleset import RulesetHolder
from classifier.source.descriptor_file import descriptor_dict

MAX_KINDS = 1000

Kind = tuple[str, str, str, str]
"""(active class, candidate class, active rule, candidate rule)."""


@dataclass(frozen=True, slots=True)
class Example:
    descriptor: dict[str, Any]
    """Redacted, in the descriptor-file shape."""
    active: dict[str, Any]
    candidate: dict[str, Any]


@dataclass(slots=True)
class _Kept:
    count: int = 0
    taken: int = 0
    examples: list[Example] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One kind of disagreement since the rulesets last changed: how often, and examples."""

    kind: Kind
    count: int
    examples: tuple[Example, ...]


def answers_differ(a: Classification, b: Classification) -> bool:
    """Whether a runtime would act differently on b than on a."""
    return (a.error_class, a.effect, a.retryable, a.action.id) != (
        b.error_class,
        b.effect,
        b.retryable,
        b.action.id,
    )


class ShadowMetrics:
    """The shadow's instruments, declared on the registry it is handed and moved only through
    these methods; a server without a candidate declares them too, at zero."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._comparisons = Counter(
            "errorclass_shadow_comparisons",
            "Requests also classified under the candidate ruleset.",
            registry=registry,
        )
        self._disagreements = Counter(
            "errorclass_shadow_disagreements",
            "Requests the candidate ruleset would answer differently (class, effect, "
            "retryable or action), by active and candidate class and rule.",
            ("active_class", "candidate_class", "active_rule", "candidate_rule"),
            registry=registry,
        )

    def compared(self) -> None:
        self._comparisons.inc()

    def disagreed(self, kind: tuple[str, str, str, str]) -> None:
        self._disagreements.labels(*kind).inc()


class Shadow:
    """Compares every answer with what the candidate in `holder` would say."""

    def __init__(
        self,
        holder: RulesetHolder,
        metrics: Metrics,
        *,
        examples: int = DEFAULT_SHADOW_EXAMPLES,
        redactor: Redactor = DEFAULT,
    ) -> None:
        self.holder = holder
        self.redactor = redactor
        self.metrics = metrics
        self.instruments = ShadowMetrics(metrics.registry)
        self.examples = examples
        self._lock = threading.Lock()
        self._kept: dict[Kind, _Kept] = {}
        self._digests = ("", "")
        self.since = time.time()
        """When the kinds kept began: start, or the last change of either ruleset."""
        self.untracked = 0
        """Disagreements of kinds past MAX_KINDS since then (counted in metrics only)."""

    def classified(self, descriptor: Descriptor, active: Classification) -> None:
        candidate_rules = self.holder.current
        candidate = classify(candidate_rules, descriptor)
        self.instruments.compared()
        if not answers_differ(active, candidate):
            return
        kind = (
            active.error_class.name,
            candidate.error_class.name,
            active.rule_id,
            candidate.rule_id,
        )
        self.instruments.disagreed(kind)
        kept = self._take_example(kind, (active.ruleset_digest, candidate.ruleset_digest))
        if kept is None:
            return
        data, masked = self.redactor.descriptor(descriptor_dict(descriptor))
        extra = {"redacted": masked.as_dict()} if masked else {}
        self.metrics.redacted(masked.masks)
        example = Example(data, answer_dict(active), answer_dict(candidate))
        with self._lock:
            kept.examples.append(example)
        log(
            "shadow_disagreement",
            level="warning",
            descriptor=data,
            active=example.active,
            candidate=example.candidate,
            **extra,
        )

    def _take_example(self, kind: Kind, digests: tuple[str, str]) -> _Kept | None:
        """Count the disagreement; its kind's record when an example is wanted, else None."""
        with self._lock:
            if digests != self._digests:
                self._digests = digests
                self._kept.clear()
                self.since, self.untracked = time.time(), 0
            kept = self._kept.get(kind)
            if kept is None:
                if len(self._kept) >= MAX_KINDS:
                    self.untracked += 1
                    return None
                kept = self._kept[kind] = _Kept()
            kept.count += 1
            if kept.taken >= self.examples:
                return None
            kept.taken += 1
            return kept

    def disagreements(self) -> list[Disagreement]:
        """Every kind kept since `since`, the most frequent first."""
        with self._lock:
            found = [Disagreement(k, v.count, tuple(v.examples)) for k, v in self._kept.items()]
        return sorted(found, key=lambda d: (-d.count, d.kind))
