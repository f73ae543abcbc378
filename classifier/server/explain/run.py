"""The one way an explanation is made: within the budget, in the explaining process.

gRPC's explain calls and the console's explain form share one budget and one
process; each step of the protocol is written once: take a slot (refused at
once when there is none), run the work in the explaining process, charge the
CPU it took there, give the slot back whatever happened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from classifier.engine.ruleset import Ruleset
from classifier.server.explain.budget import ExplainBudget
from classifier.server.explain.process import Explainer

T = TypeVar("T")


def explain_within_budget(
    budget: ExplainBudget,
    explainer: Explainer,
    ruleset: Ruleset,
    work: Callable[..., T],
    args: tuple[Any, ...],
    timeout: float | None,
) -> T:
    """`work(ruleset, *args)` made in the explaining process within `budget`.

    ExplainRefusedError before any work when the budget has no slot or no CPU left;
    ExplainerFailedError when the process died or ran past `timeout`; what `work`
    raises is raised here. The slot is given back in every case.
    """
    with budget.slot():
        return explain_in_slot(budget, explainer, ruleset, work, args, timeout)


def explain_in_slot(
    budget: ExplainBudget,
    explainer: Explainer,
    ruleset: Ruleset,
    work: Callable[..., T],
    args: tuple[Any, ...],
    timeout: float | None,
) -> T:
    """As `explain_within_budget`, for a caller that holds the slot already
    (`with budget.slot():`), having taken it before work of its own that a refusal must
    spare (a batch's parse): run in the explaining process, charge its CPU."""
    result, cpu = explainer.run(ruleset, work, args, timeout)
    budget.charge(cpu)
    return result
