"""The public corpus of real descriptors (`tests/corpus/real-descriptors.yaml`) and its figures.

The file is a copy of the team's shared corpus (`../shared/corpus/` in the
workspace) so the project stands alone; a test compares the two wherever the
shared copy exists.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from classifier import Descriptor, descriptor_from_data
from tests.support import ROOT

CORPUS = ROOT / "tests" / "corpus" / "real-descriptors.yaml"
SHARED_COPIES = [
    folder / "shared" / "corpus" / "real-descriptors.yaml" for folder in ROOT.parents[:2]
]


@dataclass(frozen=True)
class CorpusCase:
    """One real descriptor with the class the corpus expects."""

    id: str
    descriptor: Descriptor
    expect: str
    ambiguous: bool


def load_corpus(path: Path = CORPUS) -> list[CorpusCase]:
    doc: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [
        CorpusCase(
            id=case["id"],
            descriptor=descriptor_from_data(case["descriptor"]),
            expect=case["expect"],
            ambiguous=bool(case.get("ambiguous", False)),
        )
        for case in doc["cases"]
    ]


@dataclass
class Figures:
    """Correct, wrong and Unknown answers, kept apart for unambiguous and ambiguous cases."""

    unambiguous: Counter[str] = field(default_factory=Counter)
    ambiguous: Counter[str] = field(default_factory=Counter)
    wrong: list[str] = field(default_factory=list)

    def add(self, case: CorpusCase, got: str) -> None:
        outcome = "correct" if got == case.expect else "Unknown" if got == "Unknown" else "wrong"
        (self.ambiguous if case.ambiguous else self.unambiguous)[outcome] += 1
        if outcome != "correct":
            kind = "ambiguous" if case.ambiguous else "unambiguous"
            self.wrong.append(f"{case.id} ({kind}): expected {case.expect}, got {got}")

    def lines(self) -> list[str]:
        def row(name: str, c: Counter[str]) -> str:
            total = sum(c.values())
            return (
                f"{name:<12} {total:>3} cases: {c['correct']} correct, "
                f"{c['wrong']} wrong, {c['Unknown']} Unknown"
            )

        return [row("unambiguous", self.unambiguous), row("ambiguous", self.ambiguous)]


FIGURES = Figures()
"""Filled by the corpus test, printed in pytest's terminal summary (tests/rules/conftest.py)."""
