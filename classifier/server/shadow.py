"""Shadow a candidate ruleset: classify every request under it too, answer with the
active one only, and count where the two would answer differently.

An author sees what promoting the candidate would change on real traffic:
metrics count every disagreement by (active class, candidate class, active
rule, candidate rule), and the log keeps a few examples of each, each line
an object with a `descriptor` key, so the log is itself a corpus
`classifier diff` can replay (its free text masked by the redactor, the
line saying what was masked). Examples are bounded per disagreement and in
kinds, and start afresh whenever either ruleset changes.
"""

from __future__ import annotations

import threading

from classifier.answer import Classification
from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.redact import DEFAULT, Redactor
from classifier.server.decisions import answer_dict
from classifier.server.holder import RulesetHolder
from classifier.server.log import log
from classifier.server.metrics import Metrics
from classifier.source.descriptor_file import descriptor_dict

DEFAULT_EXAMPLES = 5
MAX_KINDS = 1000

Kind = tuple[str, str, str, str]


def answers_differ(a: Classification, b: Classification) -> bool:
    """Whether a runtime would act differently on b than on a."""
    return (a.error_class, a.effect, a.retryable, a.action.id) != (
        b.error_class,
        b.effect,
        b.retryable,
        b.action.id,
    )


class Shadow:
    """Compares every answer with what the candidate in `holder` would say."""

    def __init__(
        self,
        holder: RulesetHolder,
        metrics: Metrics,
        *,
        examples: int = DEFAULT_EXAMPLES,
        redactor: Redactor = DEFAULT,
    ) -> None:
        self.holder = holder
        self.redactor = redactor
        self.metrics = metrics
        self.examples = examples
        self._lock = threading.Lock()
        self._logged: dict[Kind, int] = {}
        self._digests = ("", "")

    def classified(self, descriptor: Descriptor, active: Classification) -> None:
        candidate_rules = self.holder.current
        candidate = classify(candidate_rules, descriptor)
        self.metrics.shadow_comparisons.inc()
        if not answers_differ(active, candidate):
            return
        kind = (
            active.error_class.name,
            candidate.error_class.name,
            active.rule_id,
            candidate.rule_id,
        )
        self.metrics.shadow_disagreements.labels(*kind).inc()
        if self._take_example(kind, (active.ruleset_digest, candidate.ruleset_digest)):
            data, masked = self.redactor.descriptor(descriptor_dict(descriptor))
            extra = {"redacted": masked.as_dict()} if masked else {}
            for name, count in masked.masks.items():
                self.metrics.redactions.labels(name).inc(count)
            log(
                "shadow_disagreement",
                level="warning",
                descriptor=data,
                active=answer_dict(active),
                candidate=answer_dict(candidate),
                **extra,
            )

    def _take_example(self, kind: Kind, digests: tuple[str, str]) -> bool:
        with self._lock:
            if digests != self._digests:
                self._digests = digests
                self._logged.clear()
            seen = self._logged.get(kind, 0)
            if seen >= self.examples or (seen == 0 and len(self._logged) >= MAX_KINDS):
                return False
            self._logged[kind] = seen + 1
            return True
