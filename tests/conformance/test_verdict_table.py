"""The reports' table: groups sorted, one count per verdict in order, a total row."""

from __future__ import annotations

from dataclasses import dataclass

from tests.conformance.verdict_table import verdict_table


@dataclass(frozen=True)
class _Judged:
    group: str
    verdict: str


def test_a_row_per_group_sorted_then_the_total() -> None:
    results = [
        _Judged("b", "right"),
        _Judged("a", "wrong"),
        _Judged("b", "odd"),
        _Judged("a", "right"),
    ]
    table = verdict_table(
        results, lambda r: r.group, ("sdk", "pairs", "right", "wrong"), ("right", "wrong")
    )
    assert table.splitlines() == [
        "| sdk | pairs | right | wrong |",
        "|---|--:|--:|--:|",
        "| a | 2 | 1 | 1 |",
        "| b | 2 | 1 | 0 |",
        "| **total** | 4 | 2 | 1 |",
    ]
