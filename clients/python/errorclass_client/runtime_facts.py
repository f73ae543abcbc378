"""What only the runtime knows, as the descriptor attributes the service gives a meaning to.

The exception rarely says who set a time limit, whether a block was deliberate, or that
the definition was being loaded: a wrapper's `future.result(timeout=)` and the same call
inside the tool raise the same TimeoutError. The runtime knows, and says it with these
attributes (facts.json `runtime_facts`; docs/clients.md, "What only the runtime knows"):

- `time_limit`: `tool` (the tool wrapper's own limit fired: ToolTimeout, continue) or
  `run` (the run's or a step's deadline fired: Timeout, fail);
- `veto`: `budget`, `quota`, `policy` (an interceptor declined the next step on purpose:
  BudgetExceeded, QuotaExceeded, ContentBlocked, all paused); another word is a veto too;
- `stage`: `load`, `parse`, `compile`, `validate` (the agent definition failed there:
  CompilationFailed);
- `refused_by`: `breaker`, `rate_limiter`, `concurrency_limit`, `quota`, `budget` (the
  runtime's own guard refused the call before it was made: ProviderUnavailable,
  QuotaExceeded, BudgetExceeded, whatever the exception's type);
- `provider_calls`: how many provider calls the run had answered when reconciliation
  found it gone (`0`: Infrastructure).

`runtime_attributes` checks the values and spells the attributes, so a runtime never
writes these names by hand; `descriptor_from_exception` takes the same keywords.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from errorclass_client import facts
from errorclass_client._text import strip
from errorclass_client.errors import RuntimeFactError

RUNTIME_ATTRIBUTES: tuple[str, ...] = tuple(facts.RUNTIME_FACTS)
"""The facts' names, in the contract's order (the first refused one is named)."""
_WORD = re.compile(facts.OPEN_FACT_PATTERN)
_DIGITS = re.compile(r"[0-9]+")


def runtime_attributes(
    *,
    time_limit: str | None = None,
    veto: str | None = None,
    stage: str | None = None,
    refused_by: str | None = None,
    provider_calls: int | str | None = None,
) -> dict[str, str]:
    """The attributes for what the runtime says. Each value is text (a count may also be a
    whole number), stripped and lower-cased; a value outside the contract raises
    RuntimeFactError (a ValueError) naming the fact."""
    return facts_attributes(
        {
            "time_limit": time_limit,
            "veto": veto,
            "stage": stage,
            "refused_by": refused_by,
            "provider_calls": provider_calls,
        }
    )


def facts_attributes(given: Mapping[str, object]) -> dict[str, str]:
    """`runtime_attributes` for a mapping of fact names to values (None: not said)."""
    unknown = sorted(set(given) - set(RUNTIME_ATTRIBUTES))
    if unknown:
        raise RuntimeFactError(
            unknown[0], f"not a runtime fact; the contract has {', '.join(RUNTIME_ATTRIBUTES)}"
        )
    out: dict[str, str] = {}
    for name, fact in facts.RUNTIME_FACTS.items():
        value = given.get(name)
        if value is not None:
            out[name] = _count(name, value) if fact["count"] else _word(name, value, fact)
    return out


def _word(name: str, value: object, fact: Mapping[str, object]) -> str:
    allowed = fact["values"]
    assert isinstance(allowed, tuple)
    if not isinstance(value, str):  # `True` is not the word "true"
        raise RuntimeFactError(name, f"{value!r} is not text")
    word = strip(value).lower()
    if word in allowed or (fact["open"] and _WORD.fullmatch(word)):
        return word
    if fact["open"]:
        raise RuntimeFactError(
            name,
            f"{value!r} is not a word; the service knows {', '.join(allowed)}"
            " (another word is a veto too, with class Unknown)",
        )
    raise RuntimeFactError(name, f"{value!r} is not one of {', '.join(allowed)}")


def _count(name: str, value: object) -> str:
    """A whole number written in decimal: a non-negative int, or text of ASCII digits."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _DIGITS.fullmatch(strip(value)):
        number = int(strip(value))
    if number is None or number < 0:
        raise RuntimeFactError(name, f"{value!r} is not a count (0, 1, 2, ...)")
    return str(number)


def merged(attributes: Mapping[str, str] | None, knowledge: Mapping[str, str]) -> dict[str, str]:
    """`attributes` with the runtime's knowledge; the same key set twice, differently, raises."""
    out = dict(attributes or {})
    for key, value in knowledge.items():
        if key in out and out[key] != value:
            raise RuntimeFactError(key, f"given as {value!r} and in attributes as {out[key]!r}")
        out[key] = value
    return out
