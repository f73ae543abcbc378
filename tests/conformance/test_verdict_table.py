"""The reports' table: groups sorted, one count per verdict in order, a total row."""

from __future__ import annotations

from dataclasses import dataclass

from tests.conformance.verdict_table import class_and_action_table, verdict_table


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


@dataclass(frozen=True)
class _Scored:
    language: str
    class_right: bool
    action_wanted: bool
    action_right: bool
    retry_after_wanted: bool = False
    retry_after_right: bool = False


def test_class_action_and_wait_are_counted_apart_per_language() -> None:
    """A right class with a wrong action (or wait) counts as a right class only; an action
    or a wait is counted only where one is wanted, and only with its class."""
    results = [
        _Scored("python", True, True, True, True, True),
        _Scored("python", True, True, False, True, False),
        _Scored("python", True, False, False, False, True),
        _Scored("go", False, True, False),
        _Scored("go", True, False, False, True, True),
    ]
    assert class_and_action_table(results).splitlines() == [
        "| language | pairs | right class | action wanted | right action"
        " | retry_after wanted | right retry_after |",
        "|---|--:|--:|--:|--:|--:|--:|",
        "| go | 2 | 1 | 1 | 0 | 1 | 1 |",
        "| python | 3 | 3 | 2 | 1 | 2 | 1 |",
        "| **total** | 5 | 4 | 3 | 1 | 3 | 2 |",
    ]
