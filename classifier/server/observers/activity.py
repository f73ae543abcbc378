"""What the operator console shows about traffic since start: each rule's hits and last
hit, and the Unknown share minute by minute over the last hour.

An observer of every answer, so it is on the gRPC path: one clock read, one dict look-up
and a few attribute increments, no lock (measured in benchmarks/bench_console.py and
tests/server/test_console.py). The GIL makes each increment whole on CPython's default
build; the counts are the console's, and `errorclass_classifications_total` stays the
exact series to alert on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from classifier.answer import Classification
from classifier.descriptor import Descriptor
from classifier.taxonomy import ErrorClass

MINUTES = 60
"""Minutes of Unknown share kept: the console's chart spans the last hour."""


@dataclass(slots=True)
class _Hits:
    count: int = 0
    last: float = 0.0


@dataclass(slots=True)
class _Minute:
    minute: int = -1
    """Minutes since the epoch this slot counts; another value means the slot is stale."""
    answers: int = 0
    unknown: int = 0


@dataclass(frozen=True, slots=True)
class RuleHits:
    count: int
    last: float
    """Unix seconds of the latest answer the rule decided."""


@dataclass(frozen=True, slots=True)
class MinuteShare:
    start: float
    """Unix seconds at the start of the minute."""
    answers: int
    unknown: int

    @property
    def share(self) -> float:
        return self.unknown / self.answers if self.answers else 0.0


class Activity:
    """Per-rule hits and the last hour's Unknown share, counted as answers are given."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.started = clock()
        self._hits: dict[str, _Hits] = {}
        self._minutes = [_Minute() for _ in range(MINUTES)]

    def classified(self, descriptor: Descriptor, result: Classification) -> None:
        now = self._clock()
        minute = int(now // 60)
        slot = self._minutes[minute % MINUTES]
        if slot.minute != minute:
            slot.minute, slot.answers, slot.unknown = minute, 0, 0
        slot.answers += 1
        if result.error_class is ErrorClass.Unknown:
            slot.unknown += 1
            return
        hits = self._hits.get(result.rule_id)
        if hits is None:
            hits = self._hits.setdefault(result.rule_id, _Hits())
        hits.count += 1
        hits.last = now

    def hits(self) -> dict[str, RuleHits]:
        """Each rule that decided an answer since start, by id (copied: safe to keep)."""
        return {rule: RuleHits(h.count, h.last) for rule, h in list(self._hits.items())}

    def hit(self, rule_id: str) -> RuleHits | None:
        """One rule's hits since start (None: it never decided an answer)."""
        h = self._hits.get(rule_id)
        return None if h is None else RuleHits(h.count, h.last)

    def last_hour(self) -> list[MinuteShare]:
        """The last MINUTES minutes, oldest first, the current (partial) minute last."""
        now = int(self._clock() // 60)
        slots = {s.minute: s for s in list(self._minutes)}
        out = []
        for minute in range(now - MINUTES + 1, now + 1):
            slot = slots.get(minute)
            answers, unknown = (slot.answers, slot.unknown) if slot is not None else (0, 0)
            out.append(MinuteShare(minute * 60.0, answers, unknown))
        return out
