"""Conditions are a closed union: a new kind that an analysis does not handle fails mypy there."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from classifier import CauseInput, Origin, build_descriptor, classify, explain, load_ruleset
from tests.support import ROOT, MakeRuleset

NEW_KIND = '''

@dataclass(frozen=True, slots=True, eq=False)
class LanguageKnown(_Compiled):
    """A kind added without teaching any analysis about it."""

    text: str
'''


def test_a_new_condition_kind_fails_mypy_wherever_it_is_not_handled(tmp_path: Path) -> None:
    """The predicate, weight, cost order, index key, observed, lint and witness all notice."""
    shutil.copytree(ROOT / "classifier", tmp_path / "classifier")
    shutil.copytree(ROOT / "clients" / "python", tmp_path / "clients" / "python")  # mypy_path
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    conditions = tmp_path / "classifier" / "engine" / "conditions.py"
    text = conditions.read_text(encoding="utf-8")
    union = (
        "Condition = TypeIs | FieldIn | FieldPresent | MessageMatches | AttributeIs | CauseMatches"
    )
    assert union in text
    text = text.replace(union, NEW_KIND + "\n\n" + union + " | LanguageKnown")
    conditions.write_text(text, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / ".mypy_cache"), "classifier"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    files = set(re.findall(r"^(classifier/\S+\.py):\d+: error", run.stdout, flags=re.M))
    assert files == {
        "classifier/bundle/build.py",
        "classifier/engine/conditions.py",
        "classifier/engine/compiler.py",
        "classifier/engine/index.py",
        "classifier/engine/nearness.py",
        "classifier/engine/trace.py",
        "classifier/lint/checks.py",
        "classifier/lint/witness.py",
    }, run.stdout
    assert "assert_never" in run.stdout or "Never" in run.stdout


def test_has_asks_for_evidence_and_weighs_nothing(make_ruleset: MakeRuleset) -> None:
    """`has: code` holds for any code and never outranks a rule that names the code."""
    ruleset = load_ruleset(
        make_ruleset(
            """
            rules:
              - id: any-400-with-a-code
                when: {origin: provider, http_status: 400, has: code}
                class: ProviderError
              - id: context-window
                when: {origin: provider, code: context_length_exceeded}
                class: BudgetExceeded
                priority: 1
              - id: cause-with-a-message
                when: {type: x.Wrapper, cause: {has: [code, message]}}
                class: Timeout
            """
        )
    )
    rules = {r.id: r for r in ruleset.rules}
    assert rules["any-400-with-a-code"].condition_count == 2
    assert rules["cause-with-a-message"].condition_count == 1

    def answer(**fields: Any) -> str:
        return classify(ruleset, build_descriptor(**{"type": "x.E", **fields})).rule_id

    assert answer(origin=Origin.provider, http_status=400, code="invalid_value") == (
        "any-400-with-a-code"
    )
    assert answer(origin=Origin.provider, http_status=400) == ""
    assert answer(origin=Origin.provider, http_status=400, code="context_length_exceeded") == (
        "context-window"
    )
    cause = CauseInput(type="x.C", code="E1", message="")
    assert classify(ruleset, build_descriptor(type="x.Wrapper", causes=[cause])).rule_id == ""
    cause = CauseInput(type="x.C", code="E1", message="boom")
    assert classify(ruleset, build_descriptor(type="x.Wrapper", causes=[cause])).rule_id == (
        "cause-with-a-message"
    )
    near = explain(ruleset, build_descriptor(type="x.E", origin=Origin.provider, http_status=400))
    assert near.explanation is not None
    (first, *_) = near.explanation.near_misses
    assert (first.rule_id, first.failed_conditions, first.observed) == (
        "any-400-with-a-code",
        ("has: code",),
        ("code is not set",),
    )


def test_lacks_asks_for_a_field_to_be_unset(make_ruleset: MakeRuleset) -> None:
    """`lacks: http_status` holds only when there is no status: a connection failure, not a
    response, whatever else the two share."""
    ruleset = load_ruleset(
        make_ruleset(
            """
            rules:
              - id: connection-failure
                when: {type: x.HttpError, origin: provider, lacks: http_status}
                class: ProviderError
              - id: cause-without-code
                when: {type: x.Wrapper, cause: {type: x.C, lacks: code}}
                class: Timeout
            """
        )
    )
    rules = {r.id: r for r in ruleset.rules}
    assert rules["connection-failure"].condition_count == 2

    def answer(**fields: Any) -> str:
        return classify(ruleset, build_descriptor(**{"type": "x.HttpError", **fields})).rule_id

    assert answer(origin=Origin.provider) == "connection-failure"
    assert answer(origin=Origin.provider, http_status=400) == ""
    with_code = build_descriptor(type="x.Wrapper", causes=[CauseInput(type="x.C", code="E1")])
    without = build_descriptor(type="x.Wrapper", causes=[CauseInput(type="x.C")])
    assert classify(ruleset, with_code).rule_id == ""
    assert classify(ruleset, without).rule_id == "cause-without-code"
    near = explain(
        ruleset, build_descriptor(type="x.HttpError", origin=Origin.provider, http_status=400)
    )
    assert near.explanation is not None
    (first, *_) = near.explanation.near_misses
    assert (first.rule_id, first.failed_conditions, first.observed) == (
        "connection-failure",
        ("lacks: http_status",),
        ("http_status is 400",),
    )
