"""The taxonomy as a runtime reads an answer: classes, origins, effects and
the reasons of an Unknown, numbered as the proto numbers them (permanent).

Rendered from clients/spec/facts.json by `make spec` (tools/spec/render_python.py):
do not edit; tests/clients/test_spec.py fails when it drifts.
"""

from __future__ import annotations

from enum import IntEnum


class ErrorClass(IntEnum):
    """A run error class; its value is the permanent number runtimes store."""

    Unknown = 0
    ProviderError = 1
    ProviderUnavailable = 2
    RateLimited = 3
    QuotaExceeded = 4
    ContentFiltered = 5
    ToolError = 6
    Timeout = 7
    CompilationFailed = 8
    BudgetExceeded = 9
    Canceled = 10
    ContentBlocked = 11
    Infrastructure = 12
    ToolTimeout = 13


class Origin(IntEnum):
    """Where the exception was raised (`caller` is another name for `user`)."""

    unspecified = 0
    provider = 1
    tool = 2
    guard = 3
    runtime = 4
    interceptor = 5
    reconciler = 6
    user = 7


class Effect(IntEnum):
    """What the failure does to the run (`continue_`: a keyword)."""

    unspecified = 0
    fail = 1
    pause = 2
    continue_ = 3

    @property
    def label(self) -> str:
        """The name as rules and text write it (`continue`, not `continue_`)."""
        return self.name.rstrip("_")

    @classmethod
    def from_label(cls, label: str) -> Effect:
        return cls["continue_" if label == "continue" else label]


class UnknownReason(IntEnum):
    """Why an answer is Unknown (`none` for every other answer)."""

    none = 0
    no_match = 1
    conflict = 2
