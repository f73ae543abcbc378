"""The console's page budget, and how its explain form spends the server's explain budget.

Both are the console's own for now: issue 27 replaces them with the one token bucket and
the one explain function of `server/explain/`, which gRPC explain calls use too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from classifier import limits
from classifier.engine.explain import explained_text
from classifier.engine.ruleset import Ruleset
from classifier.errors import DescriptorError
from classifier.server.explain_budget import ExplainBudget, ExplainRefusedError
from classifier.server.explainer import Explainer, ExplainerFailedError
from classifier.server.web.routes import RefusedError
from classifier.source.descriptor_file import parse_descriptor


class PageBudget:
    """A token bucket: `rate` pages a second on average, `burst` at most at once."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._tokens = float(burst)
        self._at = clock()
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
            if self._tokens < 1:
                return False
            self._tokens -= 1
            return True


def console_explanation(ruleset: Ruleset, text: str, rule_id: str) -> tuple[str, str]:
    """The form's descriptor explained as `classifier explain` prints it (what the explaining
    process runs): ("explained", text), ("invalid", the violations) or ("no_rule", "")."""
    try:
        descriptor = parse_descriptor(text, "<form>")
        _, _, explanation = explained_text(ruleset, descriptor, rule_id)
    except DescriptorError as exc:
        return "invalid", "\n".join(str(v) for v in exc.violations)
    except KeyError:
        return "no_rule", ""
    return "explained", explanation


def explain_in_budget(
    budget: ExplainBudget, explainer: Explainer, ruleset: Ruleset, text: str, rule_id: str
) -> tuple[str, str]:
    """`console_explanation` in the explaining process, within the server's explain budget:
    take its slot (or refuse at once, 429), run, charge the CPU it took, give the slot back."""
    try:
        budget.take()
    except ExplainRefusedError as refused:
        raise RefusedError("429 Too Many Requests", refused.reason) from None
    try:
        try:
            result, cpu = explainer.run(
                ruleset, console_explanation, (text, rule_id), limits.EXPLAIN_TIMEOUT_SECONDS
            )
        except ExplainerFailedError as failed:
            raise RefusedError("503 Service Unavailable", f"no explanation: {failed}") from None
        budget.charge(cpu)
    finally:
        budget.give()
    return result
