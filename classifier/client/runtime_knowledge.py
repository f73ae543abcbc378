"""What only the runtime knows, as the descriptor attributes the service gives a meaning to.

The exception rarely says who set a time limit, whether a block was deliberate, or that
the definition was being loaded: a wrapper's `future.result(timeout=)` and the same call
inside the tool raise the same TimeoutError. The runtime knows, and says it with these
attributes (docs/clients.md, "What only the runtime knows"; proto `attributes`):

- `time_limit`: `tool` (the tool wrapper's own limit fired: ToolTimeout, continue) or
  `run` (the run's or a step's deadline fired: Timeout, fail);
- `veto`: `budget`, `quota`, `policy` (an interceptor declined the next step on purpose:
  BudgetExceeded, QuotaExceeded, ContentBlocked, all paused); another word is a veto too;
- `stage`: `load`, `parse`, `compile`, `validate` (the agent definition failed there:
  CompilationFailed);
- `provider_calls`: how many provider calls the run had answered when reconciliation
  found it gone (`0`: Infrastructure).

`runtime_attributes` checks the values and spells the attributes, so a runtime never
writes these names by hand; `descriptor_from_exception` takes the same keywords.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

TIME_LIMITS = ("tool", "run")
VETOES = ("budget", "quota", "policy")
STAGES = ("load", "parse", "compile", "validate")
RUNTIME_ATTRIBUTES = ("time_limit", "veto", "stage", "provider_calls")
_WORD = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


def runtime_attributes(
    *,
    time_limit: str | None = None,
    veto: str | None = None,
    stage: str | None = None,
    provider_calls: int | str | None = None,
) -> dict[str, str]:
    """The attributes for what the runtime says; a value outside the contract raises ValueError."""
    out: dict[str, str] = {}
    if time_limit is not None:
        out["time_limit"] = _one_of("time_limit", time_limit, TIME_LIMITS)
    if veto is not None:
        word = str(veto).strip().lower()
        if not _WORD.match(word):
            raise ValueError(
                f"veto: {veto!r} is not a word; the service knows {', '.join(VETOES)}"
                " (another word is a veto too, with class Unknown)"
            )
        out["veto"] = word
    if stage is not None:
        out["stage"] = _one_of("stage", stage, STAGES)
    if provider_calls is not None:
        out["provider_calls"] = _count(provider_calls)
    return out


def merged(attributes: Mapping[str, str] | None, knowledge: Mapping[str, str]) -> dict[str, str]:
    """`attributes` with the runtime's knowledge; the same key set twice, differently, raises."""
    out = dict(attributes or {})
    for key, value in knowledge.items():
        if key in out and out[key] != value:
            raise ValueError(f"{key}: given as {value!r} and in attributes as {out[key]!r}")
        out[key] = value
    return out


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> str:
    word = str(value).strip().lower()
    if word not in allowed:
        raise ValueError(f"{name}: {value!r} is not one of {', '.join(allowed)}")
    return word


def _count(value: int | str) -> str:
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        raise ValueError(f"provider_calls: {value!r} is not a count (0, 1, 2, ...)")
    return str(int(text))
