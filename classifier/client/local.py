"""The client's in-process fallback: classify with a local copy of a ruleset when the
service cannot answer.

    from classifier.client import Client
    from classifier.client.local import LocalFallback

    with Client("classifier:50051", fallback=LocalFallback.from_folder("rules")) as client:
        answer = client.classify_exception(exc)   # answer.local: True when it came from here

Importing this module loads the rule compiler (pydantic, YAML, RE2), which
`import classifier.client` never does: only runtimes that want the fallback pay
for it. Answers are marked `local=True` and carry the local ruleset's version
and digest, so a runtime (and whoever reads what it stored) knows which rules
decided.
"""

from __future__ import annotations

from pathlib import Path

from classifier.client.answer import Answer
from classifier.descriptor import Descriptor
from classifier.engine.compiler import load_ruleset
from classifier.engine.evaluate import classify
from classifier.engine.ruleset import Ruleset


class LocalFallback:
    """Classifies with `ruleset`, in process; counts its answers in `answered`."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self.answered = 0

    @classmethod
    def from_folder(cls, path: str | Path) -> LocalFallback:
        """Load and compile a ruleset folder (RulesetError when it does not load)."""
        return cls(load_ruleset(path))

    @property
    def digest(self) -> str:
        return self.ruleset.digest

    def classify(self, descriptor: Descriptor) -> Answer:
        c = classify(self.ruleset, descriptor)
        self.answered += 1
        return Answer(
            error_class=c.error_class,
            class_name=c.error_class.name,
            action=c.action,
            effect=c.effect,
            retryable=c.retryable,
            rule_id=c.rule_id,
            ruleset_version=c.ruleset_version,
            ruleset_digest=c.ruleset_digest,
            unknown_reason=c.unknown_reason,
            local=True,
        )
