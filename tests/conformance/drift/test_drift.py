"""The SDK drift check: it passes on the pinned SDKs, and fails on a class no rule can decide."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

from tests.conformance.drift.entries import (
    Allowed,
    Entry,
    RuleSpec,
    can_decide,
    check,
    read_allowlist,
    read_rules,
)
from tests.conformance.drift.run import ALLOWLIST, RULES, run_check, walk_python


def test_the_pinned_python_sdks_have_a_rule_or_a_reason() -> None:
    started = time.monotonic()
    report = run_check()
    assert report.ok, report.text()
    assert report.decided > 300  # the walk found the SDKs (not an empty, vacuous pass)
    assert time.monotonic() - started < 120


def test_a_new_class_without_a_rule_fails(tmp_path: Path) -> None:
    """A synthetic SDK module, walked like the pinned ones: one new class has no rule."""
    package = tmp_path / "drift_synthetic_sdk"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            import openai

            class BrandNewQuotaError(Exception):
                '''A class an SDK bump adds: no rule names it or its supertypes.'''

            class StillARateLimit(openai.RateLimitError):
                '''A new subclass of a decided class is decided by the supertype's rule.'''

            class _Private(Exception):
                '''Not exported: left out.'''

            class SomeWarning(UserWarning):
                '''A warning, not a failure: left out.'''
            """
        )
    )
    entries = walk_python(["synthetic=drift_synthetic_sdk"], extra_path=[tmp_path])
    assert {e.type for e in entries} == {
        "drift_synthetic_sdk.BrandNewQuotaError",
        "drift_synthetic_sdk.StillARateLimit",
    }
    report = check(entries, read_rules(RULES), read_allowlist(ALLOWLIST))
    assert not report.ok
    assert [e.type for e in report.undecided] == ["drift_synthetic_sdk.BrandNewQuotaError"]
    assert "undecided: python synthetic: drift_synthetic_sdk.BrandNewQuotaError" in report.text()
    # Listed with a reason, it passes.
    allowed = [Allowed("drift_synthetic_sdk.BrandNewQuotaError", "python", "a test")]
    assert check(entries, read_rules(RULES), allowed).ok


def test_node_entries_from_json(tmp_path: Path) -> None:
    """The Node side feeds the same check a JSON list of classes with their prototype chains."""
    entries = [
        {
            "sdk": "@aws-sdk/client-bedrock-runtime",
            "language": "node",
            "type": "ThrottlingException",
            "supertypes": ["BedrockRuntimeServiceException", "ServiceException", "Error"],
            "code": "ThrottlingException",
        },
        {"sdk": "made-up", "language": "node", "type": "BrandNewError", "supertypes": ["Error"]},
    ]
    path = tmp_path / "node-entries.json"
    path.write_text(json.dumps(entries))
    allow = tmp_path / "allow.yaml"
    allow.write_text("deliberately_unknown: []\n")
    report = run_check([path], allow=allow)
    assert [e.type for e in report.undecided] == ["BrandNewError"], report.text()
    assert report.decided == 1


def test_stale_allowlist_entries_fail() -> None:
    entries = [Entry("sdk", "python", "pkg.Gone", ("Exception",))]
    rules = [RuleSpec("r", frozenset({"pkg.Decided"}), None, None)]
    decided = Entry("sdk", "python", "pkg.Decided", ("Exception",))
    allow = [
        Allowed("pkg.Gone", "python", "kept"),
        Allowed("pkg.Removed", "python", "no such class any more"),
        Allowed("pkg.Decided", "python", "a rule decides it now"),
        Allowed("OtherLang", "node", "not checked in a Python run"),
    ]
    report = check([*entries, decided], rules, allow)
    assert {a.name for a in report.stale} == {"pkg.Removed", "pkg.Decided"}


@pytest.mark.parametrize(
    ("rule", "entry", "decides"),
    [
        # a rule on a supertype decides the subclass, like an exception handler
        (
            RuleSpec("r", frozenset({"a.Base"}), None, None),
            Entry("s", "python", "a.Sub", ("a.Base", "Exception")),
            True,
        ),
        # a root type decides nothing in particular
        (
            RuleSpec("r", frozenset({"Exception"}), None, None),
            Entry("s", "python", "a.Sub", ("Exception",)),
            False,
        ),
        # untyped rules (statuses, origins) do not count for a class
        (RuleSpec("r", None, None, None), Entry("s", "python", "a.Sub", ("Exception",)), False),
        # a language condition must name the entry's language
        (
            RuleSpec("r", frozenset({"a.Sub"}), frozenset({"node"}), None),
            Entry("s", "python", "a.Sub", ()),
            False,
        ),
        # a code entry needs the code listed; an untyped code rule counts
        (
            RuleSpec("r", None, None, frozenset({"ThrottlingException"})),
            Entry("s", "python", "x.E", (), "ThrottlingException"),
            True,
        ),
        (
            RuleSpec("r", frozenset({"a.Other"}), None, frozenset({"ThrottlingException"})),
            Entry("s", "python", "x.E", (), "ThrottlingException"),
            False,
        ),
        (
            RuleSpec("r", frozenset({"x.E"}), None, None),
            Entry("s", "python", "x.E", (), "ThrottlingException"),
            False,
        ),
    ],
)
def test_can_decide(rule: RuleSpec, entry: Entry, decides: bool) -> None:
    assert can_decide(rule, entry) is decides
