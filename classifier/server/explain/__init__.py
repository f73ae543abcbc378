"""Explanations: the budget they share, the process they are made in, and the one function
that makes one (`explain_within_budget`), called by the gRPC port and the console alike."""

from classifier.server.explain.budget import ExplainBudget, ExplainRefusedError
from classifier.server.explain.process import Explainer, ExplainerFailedError
from classifier.server.explain.run import explain_in_slot, explain_within_budget

__all__ = [
    "ExplainBudget",
    "ExplainRefusedError",
    "Explainer",
    "ExplainerFailedError",
    "explain_in_slot",
    "explain_within_budget",
]
