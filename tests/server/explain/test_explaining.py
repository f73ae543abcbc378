"""Explaining, the one way an explanation is made: a slot taken, the work made in the explaining process, its CPU
charged, the slot given back whatever happened; refused before any work without a slot."""

from __future__ import annotations

import os
import time

import pytest

from classifier import load_ruleset
from classifier.engine.ruleset import Ruleset
from classifier.server.explain import ExplainBudget, Explaining, ExplainRefusedError, Why
from tests.support import BUNDLED_RULES


def busy(_ruleset: Ruleset, seconds: float) -> int:
    """Run in the explaining process: spend `seconds` of its CPU, say where it ran."""
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass
    return os.getpid()


def fails(_ruleset: Ruleset) -> None:
    raise KeyError("no-such-rule")


@pytest.fixture(scope="module")
def ruleset() -> Ruleset:
    return load_ruleset(BUNDLED_RULES)


def explaining(at_once: int, share: float, burst: float) -> Explaining:
    return Explaining(ExplainBudget(at_once=at_once, share=share, burst=burst))


def test_the_work_runs_in_the_explaining_process_and_its_cpu_is_charged(
    ruleset: Ruleset,
) -> None:
    with explaining(at_once=1, share=0.5, burst=0.05) as made:
        pid = made.explain(ruleset, busy, (0.1,), 30.0)
        assert pid != os.getpid()
        assert made.budget.credit < -0.03  # the process's 0.1 s, charged past the 0.05 s burst
        with pytest.raises(ExplainRefusedError, match="share of the server's CPU") as info:
            made.explain(ruleset, busy, (0.0,), 30.0)
        assert info.value.why is Why.SPENT
        assert made.process.forks == 1  # the refused call never reached the process


def test_the_slot_is_given_back_when_the_work_raises(ruleset: Ruleset) -> None:
    with explaining(at_once=1, share=1.0, burst=1.0) as made:
        with pytest.raises(KeyError, match="no-such-rule"):
            made.explain(ruleset, fails, (), 30.0)
        made.budget.take()  # free again
        made.budget.give()


def test_a_taken_slot_refuses_at_once(ruleset: Ruleset) -> None:
    with explaining(at_once=1, share=1.0, burst=1.0) as made:
        with made.slot(), pytest.raises(ExplainRefusedError, match="1 call at a time") as info:
            made.explain(ruleset, busy, (0.0,), 30.0)
        assert info.value.why is Why.BUSY
        assert made.process.forks == 0
