"""Explanations: `Explaining`, the budget they share and the process they are made in, as
one object its owner builds and closes and the gRPC port and the console both use; and
the one error an explanation is refused with (`ExplainRefusedError`, saying why), which
each port maps to its answer."""

from classifier.server.explain.budget import ExplainBudget
from classifier.server.explain.explaining import Explaining
from classifier.server.explain.process import ExplainingProcess
from classifier.server.explain.refusal import ExplainRefusedError, Why

__all__ = [
    "ExplainBudget",
    "ExplainRefusedError",
    "Explaining",
    "ExplainingProcess",
    "Why",
]
