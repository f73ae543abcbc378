"""The client's in-process fallback: classify with a local copy of a ruleset when the
service cannot answer.

    from errorclass_client import Client
    from classifier.client.local import LocalFallback

    with Client("classifier:50051", fallback=LocalFallback.from_folder("rules")) as client:
        answer = client.classify_exception(exc)   # answer.local: True when it came from here

It lives in the server's package (`errorclass-classifier`), not the client's: importing
it loads the rule compiler (pydantic, YAML, RE2), which the client alone never does, so
only runtimes that want the fallback pay for it. Answers are marked `local=True` and
carry the local ruleset's version and digest, so a runtime (and whoever reads what it
stored) knows which rules decided.
"""

from __future__ import annotations

from pathlib import Path

import errorclass_client
from classifier.client.convert import answer_of
from classifier.descriptor import as_descriptor
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

    def classify(self, descriptor: errorclass_client.Descriptor) -> errorclass_client.Answer:
        """The client's descriptor, validated as the service validates one, classified here."""
        c = classify(self.ruleset, as_descriptor(descriptor))
        self.answered += 1
        return answer_of(c, local=True)
