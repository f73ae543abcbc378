"""The permanent run error taxonomy, origins, effects, gRPC code names, runtime languages.

The class numbers are stored in every past run's row by the runtimes that
call us, so they are permanent: a class is appended with the next free
number, never inserted, renumbered or reused. `tests/test_taxonomy.py` pins
them, and the proto mirrors them.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class ErrorClass(IntEnum):
    """A run error class; the value is its permanent number."""

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


CLASS_DESCRIPTIONS: dict[ErrorClass, str] = {
    ErrorClass.Unknown: (
        "No rule matched. Not a failure and not a guess: a measurement that the rules "
        "or the taxonomy are incomplete."
    ),
    ErrorClass.ProviderError: (
        "The model provider answered with an error: a 5xx, a broken connection, or a 4xx "
        "no more specific class fits."
    ),
    ErrorClass.ProviderUnavailable: (
        "Our own circuit breaker for that provider is open; no call was made."
    ),
    ErrorClass.RateLimited: "The provider said 429.",
    ErrorClass.QuotaExceeded: (
        "One of the application's own quotas or limiters is used up (not the provider's)."
    ),
    ErrorClass.ContentFiltered: (
        "The provider's safety or content filter refused or cut off the response."
    ),
    ErrorClass.ToolError: "A tool threw.",
    ErrorClass.Timeout: "The run, or a call within it, ran past its time limit.",
    ErrorClass.CompilationFailed: "The agent definition failed to compile or validate.",
    ErrorClass.BudgetExceeded: "A tree or context budget was exceeded.",
    ErrorClass.Canceled: "Cancelled by the caller or the user.",
    ErrorClass.ContentBlocked: "The application's own content guard refused.",
    ErrorClass.Infrastructure: (
        "The process running the run vanished without ever talking to the provider."
    ),
    ErrorClass.ToolTimeout: "A tool call did not settle within its configured timeout.",
}


class Retry(StrEnum):
    """Whether retrying the same call can help: what the taxonomy says per class, and the
    catalog per action (`retry:` in actions.yaml). The compiler refuses an answer that is
    retryable where either says `never` (`retry_cannot_help`)."""

    never = "never"
    """The same call fails the same way until a person changes something."""
    may = "may"
    """A retry can succeed (the rule, or the class default, says whether it is advised)."""


RETRY: dict[ErrorClass, Retry] = {
    ErrorClass.Unknown: Retry.never,
    ErrorClass.ProviderError: Retry.may,
    ErrorClass.ProviderUnavailable: Retry.may,
    ErrorClass.RateLimited: Retry.may,
    ErrorClass.QuotaExceeded: Retry.may,
    ErrorClass.ContentFiltered: Retry.never,
    ErrorClass.ToolError: Retry.may,
    ErrorClass.Timeout: Retry.may,
    ErrorClass.CompilationFailed: Retry.never,
    ErrorClass.BudgetExceeded: Retry.never,
    ErrorClass.Canceled: Retry.never,
    ErrorClass.ContentBlocked: Retry.never,
    ErrorClass.Infrastructure: Retry.may,
    ErrorClass.ToolTimeout: Retry.may,
}
"""Whether a retry can help, per class. A provider's 429 may be its billing quota
(`insufficient_quota` is RateLimited by convention), and a QuotaExceeded may be our own
limiter, which clears as load falls: for those classes the action says `never` where it
must (`provider.fix-billing`, `app.quota-review`)."""

NEVER_RETRY_REASONS: dict[ErrorClass, str] = {
    ErrorClass.Unknown: "no rule vouched for the failure",
    ErrorClass.ContentFiltered: "the provider's filter refuses the same input again",
    ErrorClass.CompilationFailed: "the definition fails the same way until it is fixed",
    ErrorClass.BudgetExceeded: (
        "the budget or the context window is still used up: the same call exceeds it again"
    ),
    ErrorClass.Canceled: "the user or the calling application chose to stop the run",
    ErrorClass.ContentBlocked: "our own guard refuses the same input again",
}
"""Why a retry cannot help a class that says `never`, for the diagnostics."""


class Origin(IntEnum):
    """Where the exception was raised; values match the proto's Origin."""

    unspecified = 0
    provider = 1
    tool = 2
    guard = 3
    runtime = 4
    interceptor = 5
    reconciler = 6
    user = 7


LANGUAGES = ("python", "java", "dotnet", "go", "node", "rust")
"""The runtimes' `language` labels, as their descriptor builders send them (the proto's
`language` field names them). Not a closed set (a descriptor may say another), but the one
a misspelt `language:` in a rule is told apart from (lint's `misspelt_value`)."""

ORIGIN_ALIASES: dict[str, str] = {"caller": "user"}
"""Other names an origin goes by, wherever one is written by name (rules, descriptor files,
tables, the clients): alias -> the `Origin` member's name."""


def origin_named(name: str) -> Origin | None:
    """The origin a name or alias means (`tool`, `Provider `, `caller`), case and surrounding
    space aside; None when it means none. The one reading of an origin's name, so every
    entry point accepts the same spellings."""
    key = name.strip().lower()
    return Origin.__members__.get(ORIGIN_ALIASES.get(key, key))


class Effect(IntEnum):
    """What the failure does to the run; values match the proto's RunEffect."""

    unspecified = 0
    fail = 1
    pause = 2
    continue_ = 3

    @property
    def label(self) -> str:
        """The name used in YAML and in text output (`continue`, not `continue_`)."""
        return self.name.rstrip("_")

    @classmethod
    def from_label(cls, label: str) -> Effect:
        return cls["continue_" if label == "continue" else label]


class UnknownReason(IntEnum):
    """Why an answer is Unknown; values match the proto's UnknownReason."""

    none = 0
    no_match = 1
    conflict = 2


GRPC_CODES: dict[str, int] = {
    "OK": 0,
    "CANCELLED": 1,
    "UNKNOWN": 2,
    "INVALID_ARGUMENT": 3,
    "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5,
    "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7,
    "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9,
    "ABORTED": 10,
    "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12,
    "INTERNAL": 13,
    "UNAVAILABLE": 14,
    "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
}
GRPC_CODE_NAMES: dict[int, str] = {number: name for name, number in GRPC_CODES.items()}


def grpc_code(value: str | int) -> int:
    """Resolve a gRPC code given by name (either spelling of CANCELLED) or number.

    Raises ValueError naming the accepted values.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a gRPC status code")
    if isinstance(value, int):
        if value in GRPC_CODE_NAMES:
            return value
        raise ValueError(f"{value} is not a gRPC status code (0-16)")
    name = value.strip().upper()
    if name == "CANCELED":
        name = "CANCELLED"
    if name in GRPC_CODES:
        return GRPC_CODES[name]
    if name.isdigit():
        return grpc_code(int(name))
    raise ValueError(f"unknown gRPC status code {value!r}; known: {', '.join(GRPC_CODES)}")
