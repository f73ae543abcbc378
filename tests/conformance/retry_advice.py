"""The service's retry advice for one descriptor, as the client hands it to a runtime
(`Answer.retry_after`, `Answer.retry_after_source`).

The conformance judges compare the wait the service advises with the one the fake provider
asked for; they read it from the same answer that gives the class, action and rule, so
nothing is classified twice and a descriptor the client would refuse is refused here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from errorclass_client import Answer, Client, Descriptor

CALL_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Advice:
    answer: Answer
    retry_after: float | None
    """Seconds to wait before a retry, as the service advises; None when it advises none."""
    source: str
    """Which attribute it came from (` (capped)` when the ruleset's cap cut it); "" for none."""


def classify(client: Client, d: Descriptor) -> Advice:
    answer = client.classify(d, timeout=CALL_TIMEOUT_S)
    wait = answer.retry_after.total_seconds() if answer.retry_after is not None else None
    return Advice(answer, wait, answer.retry_after_source)
