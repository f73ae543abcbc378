"""Regression cases beside the rules (`rules/**/*.cases.yaml`), loaded and checked.

A stand-in for issue 5's runner (`classifier test`): it reads the case-file
format the team agreed on, classifies each case against the ruleset the file
belongs to, and reports every want field that differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from classifier import Classification, Ruleset, classify, descriptor_from_data, load_ruleset

CASE_KEYS = {"note", "descriptor", "want", "todo"}
WANT_KEYS = {"class", "rule", "effect", "action", "retryable", "unknown_reason"}


@dataclass(frozen=True)
class Case:
    """One case: where it is written, what it sends and what it wants."""

    file: Path
    index: int
    note: str
    descriptor: dict[str, Any]
    want: dict[str, Any]
    todo: str
    rules: Path

    @property
    def id(self) -> str:
        return f"{self.file.name}[{self.index}]"


def case_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.cases.yaml"))


def load_cases(path: Path) -> list[Case]:
    """Every case in a file; raises ValueError naming the file and case for a bad shape."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise ValueError(f"{path}: expected a mapping with a `cases:` list")
    if set(doc) - {"rules", "cases"}:
        raise ValueError(f"{path}: unknown keys {sorted(set(doc) - {'rules', 'cases'})}")
    rules = (path.parent / doc["rules"]).resolve() if "rules" in doc else _nearest_ruleset(path)
    cases = []
    for i, raw in enumerate(doc["cases"]):
        where = f"{path}: case {i}"
        if not isinstance(raw, dict) or not {"note", "descriptor", "want"} <= set(raw):
            raise ValueError(f"{where}: needs note, descriptor and want")
        if set(raw) - CASE_KEYS:
            raise ValueError(f"{where}: unknown keys {sorted(set(raw) - CASE_KEYS)}")
        want = raw["want"]
        if not isinstance(want, dict) or "class" not in want or set(want) - WANT_KEYS:
            raise ValueError(f"{where}: want needs `class` and only {sorted(WANT_KEYS)}")
        cases.append(
            Case(path, i, raw["note"], raw["descriptor"], want, raw.get("todo", ""), rules)
        )
    return cases


def _nearest_ruleset(path: Path) -> Path:
    for folder in path.resolve().parents:
        if (folder / "ruleset.yaml").is_file():
            return folder
    raise ValueError(f"{path}: no ruleset.yaml in any folder above it")


@cache
def ruleset_at(folder: Path) -> Ruleset:
    return load_ruleset(folder)


def run(case: Case) -> Classification:
    return classify(ruleset_at(case.rules), descriptor_from_data(case.descriptor))


def mismatches(case: Case, got: Classification) -> list[str]:
    """Each want field that the answer does not match, as `field: want X, got Y`."""
    actual = {
        "class": got.error_class.name,
        "rule": got.rule_id,
        "effect": got.effect.label,
        "action": got.action.id,
        "retryable": got.retryable,
        "unknown_reason": got.unknown_reason.name,
    }
    return [
        f"{key}: want {value!r}, got {actual[key]!r}"
        for key, value in case.want.items()
        if actual[key] != value
    ]
