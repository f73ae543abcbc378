"""The markdown table both conformance reports print: per group, pairs and a count per verdict."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar


class Judged(Protocol):
    @property
    def verdict(self) -> str: ...


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
