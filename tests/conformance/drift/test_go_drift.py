"""The drift check on the pinned Go SDKs (tests/conformance/go/errortypes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance.drift.entries import Allowed, Entry, check, read_allowlist, read_rules
from tests.conformance.drift.golang import go_entries
from tests.conformance.drift.run import ALLOWLIST, RULES, run_check
from tests.conformance.go_drivers import go_available


@pytest.fixture(scope="module")
def entries_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not go_available():
        pytest.skip("go is not on PATH: the Go drift check needs Go >= 1.26")
    path = tmp_path_factory.mktemp("drift") / "go-entries.json"
    go_entries(path)
    return path


def test_the_pinned_go_sdks_have_a_rule_or_a_reason(entries_file: Path) -> None:
    """Every exported error type of the pinned Go SDKs is decided by a rule or listed with a reason."""
    report = run_check([entries_file])
    assert report.ok, report.text()


def test_the_go_entries_are_what_describe_sends(entries_file: Path) -> None:
    """Entries are %T names; an AWS service error is a code entry, as Describe sends its ErrorCode()."""
    entries = {
        (e.sdk, e.type, e.code) for e in map(Entry.from_data, json.loads(entries_file.read_text()))
    }
    assert ("github.com/openai/openai-go/v3", "*apierror.Error", "") in entries
    assert ("github.com/anthropics/anthropic-sdk-go", "*apierror.Error", "") in entries
    assert ("google.golang.org/genai", "genai.APIError", "") in entries  # a value receiver
    assert (
        "github.com/aws/aws-sdk-go-v2/service/bedrockruntime",
        "*types.ThrottlingException",
        "ThrottlingException",
    ) in entries


def test_a_new_go_type_without_a_rule_fails(entries_file: Path, tmp_path: Path) -> None:
    """A type a pin bump adds fails until decided or listed."""
    data = json.loads(entries_file.read_text())
    data.append(
        {
            "sdk": "google.golang.org/genai",
            "language": "go",
            "type": "*genai.BrandNewError",
            "supertypes": [],
        }
    )
    path = tmp_path / "bumped.json"
    path.write_text(json.dumps(data))
    report = run_check([path])
    assert not report.ok
    assert [e.type for e in report.undecided] == ["*genai.BrandNewError"], report.text()


def test_a_go_allow_list_entry_a_rule_now_decides_is_stale(entries_file: Path) -> None:
    """A listed Go type that a rule decides is reported stale, so the list stays true."""
    entries = [Entry.from_data(raw) for raw in json.loads(entries_file.read_text())]
    allow = read_allowlist(ALLOWLIST)
    decided = next(e for e in entries if e.type == "*apierror.Error")
    report = check(entries, read_rules(RULES), [*allow, Allowed(decided.type, "go", "a test")])
    assert [a.name for a in report.stale] == ["*apierror.Error"], report.text()
