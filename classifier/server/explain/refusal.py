"""No explanation: the one error an explanation is refused with, and why.

The budget refuses before any work (its slot is taken, or its CPU share spent:
retry later, the caller is told when); the explaining process fails during the
work (it died, or ran past the call's deadline: it is replaced, and the call may be
retried at once). The gRPC port and the console each map it to their answer:
`rpc.service` to RESOURCE_EXHAUSTED (the budget) or UNAVAILABLE (the process),
`web.console` to 429 or 503.
"""

from __future__ import annotations

import enum


class Why(enum.Enum):
    """Why an explanation was refused."""

    BUSY = "busy"
    """The budget's slots are all taken by other explanations."""
    SPENT = "spent"
    """The budget's share of the server's CPU is spent."""
    DIED = "died"
    """The explaining process died (it is restarted)."""
    LATE = "late"
    """The explanation ran past the call's deadline (the process is replaced)."""

    @property
    def by_budget(self) -> bool:
        """Refused by the budget, before any work (else: the explaining process failed)."""
        return self in (Why.BUSY, Why.SPENT)


class ExplainRefusedError(Exception):
    """No explanation: `why`, `reason` the sentence for the caller, `retry_after` the
    seconds it should wait before asking again (0 when the process failed: it is
    replaced, and a new call may come at once)."""

    def __init__(self, why: Why, reason: str, retry_after: float = 0.0) -> None:
        super().__init__(reason)
        self.why = why
        self.reason = reason
        self.retry_after = retry_after
