"""The explain budget: one explanation at a time, and at most its share of a core."""

from __future__ import annotations

import time

import pytest

from classifier import limits
from classifier.server.explain import ExplainBudget, ExplainRefusedError


def _burn(seconds: float) -> None:
    """Spend `seconds` of this thread's CPU time."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def test_one_explanation_at_a_time() -> None:
    budget = ExplainBudget(at_once=1, share=1.0, burst=1.0)
    budget.take()
    with pytest.raises(ExplainRefusedError, match="1 call at a time"):
        budget.take()
    budget.give()
    budget.take()
    budget.give()


def test_cpu_spent_past_the_burst_is_refused_until_the_share_refills() -> None:
    """Charged with the thread CPU time really spent, refilled at `share` of wall time."""
    budget = ExplainBudget(at_once=1, share=0.5, burst=0.05)
    budget.take()
    _burn(0.1)  # twice the burst: 0.05 s of CPU in debt
    budget.give()
    assert budget.credit < 0
    with pytest.raises(ExplainRefusedError, match=r"50% of a core.*retry in 0\.\d s"):
        budget.take()
    time.sleep(0.15)  # 0.15 s at half a core refills 0.075 s: out of debt
    budget.take()
    budget.give()


def test_cpu_spent_in_the_explaining_process_is_charged_too() -> None:
    """The thread waits for the explaining process; what that process spent is charged."""
    budget = ExplainBudget(at_once=1, share=0.5, burst=0.05)
    budget.take()
    budget.charge(0.1)  # as ExplainingProcess.run reports it
    budget.give()
    assert -0.06 < budget.credit < -0.04
    with pytest.raises(ExplainRefusedError, match=r"retry in 0\.\d s") as info:
        budget.take()
    assert 0.08 < info.value.retry_after < 0.12  # the debt at half a core
    time.sleep(0.15)
    budget.take()
    budget.give()  # nothing charged this time: the extra does not carry over
    assert budget.credit > 0


def test_a_busy_slot_says_retry_soon() -> None:
    budget = ExplainBudget(at_once=1, share=1.0, burst=1.0)
    budget.take()
    try:
        with pytest.raises(ExplainRefusedError) as info:
            budget.take()
        assert info.value.retry_after == limits.HOLD_MIN_SECONDS
    finally:
        budget.give()


def test_waiting_is_not_charged_only_cpu() -> None:
    """A slow explanation that mostly waits (a loaded machine) costs what it computed."""
    budget = ExplainBudget(at_once=1, share=0.1, burst=0.05)
    budget.take()
    time.sleep(0.2)
    budget.give()
    assert budget.credit > 0
    budget.take()
    budget.give()


def test_the_share_bounds_what_a_flood_of_explanations_takes() -> None:
    """A caller explaining back to back for 0.6 s, each explanation 5 ms of CPU: what it got
    is the burst plus the share of the time, not the whole core."""
    share, burst = 0.2, 0.02
    budget = ExplainBudget(at_once=1, share=share, burst=burst)
    started = time.monotonic()
    spent = 0.0
    while time.monotonic() - started < 0.6:
        try:
            budget.take()
        except ExplainRefusedError:
            time.sleep(0.001)
            continue
        before = time.thread_time()
        _burn(0.005)
        spent += time.thread_time() - before
        budget.give()
    elapsed = time.monotonic() - started
    assert spent <= burst + share * elapsed + 0.01  # one explanation may overdraw
    assert spent >= 0.5 * share * elapsed  # and the share is really given
