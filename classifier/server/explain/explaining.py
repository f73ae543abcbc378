"""The server's explanations as one resource: the budget they share and the process they
are made in, owned together (`Explaining`), used by the gRPC port and the console alike.

Each step of the protocol is written once, here: take a slot (refused at once when
there is none), run the work in the explaining process, charge the CPU it took there,
give the slot back whatever happened. Every refusal, the budget's or the process's, is
one error (`ExplainRefusedError`, with its `why`), which each port maps to its answer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from classifier.engine.ruleset import Ruleset
from classifier.server.explain.budget import ExplainBudget
from classifier.server.explain.process import ExplainingProcess

T = TypeVar("T")


class Explaining:
    """One budget and one explaining process, made and closed together by their owner
    (runtime.App, or `create_server` for a server alone), which enters this into its
    ExitStack and hands it to the gRPC port's parts and to the console.

    `explain` makes an explanation within the budget; a caller with work of its own that
    a refusal must spare (a batch's parse) takes `slot()` first and explains with
    `explain_in_slot` inside it. Both raise ExplainRefusedError when there is none.
    """

    def __init__(
        self, budget: ExplainBudget | None = None, process: ExplainingProcess | None = None
    ) -> None:
        self.budget = budget or ExplainBudget()
        self.process = process or ExplainingProcess()

    def explain(
        self, ruleset: Ruleset, work: Callable[..., T], args: tuple[Any, ...], timeout: float | None
    ) -> T:
        """`work(ruleset, *args)` made in the explaining process within the budget.

        ExplainRefusedError before any work when the budget has no slot or no CPU left
        (why: BUSY, SPENT), or when the process died or ran past `timeout` (DIED, LATE);
        what `work` raises is raised here. The slot is given back in every case.
        """
        with self.slot():
            return self.explain_in_slot(ruleset, work, args, timeout)

    def slot(self) -> contextlib.AbstractContextManager[None]:
        """One of the budget's slots for the block (ExplainRefusedError before it runs when
        there is none), given back after it with the CPU the block spent, here and in
        the explaining process."""
        return self.budget.slot()

    def explain_in_slot(
        self, ruleset: Ruleset, work: Callable[..., T], args: tuple[Any, ...], timeout: float | None
    ) -> T:
        """As `explain`, for a caller that holds the slot already (`with slot():`): run in
        the explaining process, charge its CPU to the budget."""
        result, cpu = self.process.run(ruleset, work, args, timeout)
        self.budget.charge(cpu)
        return result

    def close(self) -> None:
        """Stop the explaining process (the console may still be explaining: its owner
        closes this after the ports)."""
        self.process.close()

    def __enter__(self) -> Explaining:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
