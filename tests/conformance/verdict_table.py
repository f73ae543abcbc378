"""The markdown tables both conformance reports print: per group, pairs and a count per
verdict; and per language, the right class, the right action and the right retry_after
counted apart."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar


class Judged(Protocol):
    @property
    def verdict(self) -> str: ...


class Scored(Protocol):
    """A pair scored three times: is its class the one wanted; where the scenario or
    situation names an action, is the action the one wanted too; where it names a wait, is
    the answer's retry_after that wait."""

    @property
    def language(self) -> str: ...
    @property
    def class_right(self) -> bool: ...
    @property
    def action_wanted(self) -> bool: ...
    @property
    def action_right(self) -> bool: ...
    @property
    def retry_after_wanted(self) -> bool: ...
    @property
    def retry_after_right(self) -> bool: ...


R = TypeVar("R", bound=Judged)


def verdict_table(
    results: Sequence[R], group: Callable[[R], str], columns: Sequence[str], verdicts: Sequence[str]
) -> str:
    """A row per group (sorted) and a total; `columns` heads the group's column, then pairs,
    then one column per verdict, in `verdicts`' order."""
    groups: dict[str, list[R]] = defaultdict(list)
    for r in results:
        groups[group(r)].append(r)
    rows = [
        "| " + " | ".join(columns) + " |",
        "|---|" + "--:|" * (len(columns) - 1),
    ]

    def row(name: str, rs: Sequence[R]) -> str:
        counts = " | ".join(str(sum(r.verdict == v for r in rs)) for v in verdicts)
        return f"| {name} | {len(rs)} | {counts} |"

    rows += [row(name, rs) for name, rs in sorted(groups.items())]
    rows.append(row("**total**", results))
    return "\n".join(rows)


S = TypeVar("S", bound=Scored)

CLASS_AND_ACTION = (
    "language",
    "pairs",
    "right class",
    "action wanted",
    "right action",
    "retry_after wanted",
    "right retry_after",
)


def class_and_action_table(results: Sequence[S]) -> str:
    """Per language (sorted) and a total: pairs, those with the right class, those whose
    want names an action and those of them with the right class and action, those whose
    want names a wait and those of them with the right class and wait. A pair with the
    right class and the wrong action (or wait) counts in the first and not the later, so
    they measure different things: what the failure is, what to do about it, and when."""
    groups: dict[str, list[S]] = defaultdict(list)
    for r in results:
        groups[r.language].append(r)
    rows = [
        "| " + " | ".join(CLASS_AND_ACTION) + " |",
        "|---|" + "--:|" * (len(CLASS_AND_ACTION) - 1),
    ]

    def row(name: str, rs: Sequence[S]) -> str:
        counts = (
            len(rs),
            sum(r.class_right for r in rs),
            sum(r.action_wanted for r in rs),
            sum(r.action_wanted and r.action_right for r in rs),
            sum(r.retry_after_wanted for r in rs),
            sum(r.retry_after_wanted and r.retry_after_right for r in rs),
        )
        return f"| {name} | " + " | ".join(str(c) for c in counts) + " |"

    rows += [row(name, rs) for name, rs in sorted(groups.items())]
    rows.append(row("**total**", results))
    return "\n".join(rows)
