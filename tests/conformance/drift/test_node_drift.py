"""The drift check on the pinned Node SDKs (tests/conformance/node/error_classes.mjs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance.drift.entries import Allowed, Entry, check, read_allowlist, read_rules
from tests.conformance.drift.node import node_entries
from tests.conformance.drift.run import ALLOWLIST, RULES, run_check
from tests.conformance.node_drivers import node_available


@pytest.fixture(scope="module")
def entries_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not node_available():
        pytest.skip("node and npm are not on PATH: the Node drift check needs Node >= 20")
    path = tmp_path_factory.mktemp("drift") / "node-entries.json"
    node_entries(path)
    return path


def test_the_pinned_node_sdks_have_a_rule_or_a_reason(entries_file: Path) -> None:
    """Every Error class the pinned Node SDKs export is decided by a rule or listed with a reason."""
    report = run_check([entries_file])
    assert report.ok, report.text()


def test_the_node_entries_are_what_the_helper_sends(entries_file: Path) -> None:
    """Entries carry the constructor name and prototype chain, the SDKs' status classes among them."""
    entries = {
        (e.sdk, e.type, e.code): e
        for e in map(Entry.from_data, json.loads(entries_file.read_text()))
    }
    rate = entries[("openai", "RateLimitError", "")]
    assert rate.supertypes == ("APIError", "OpenAIError", "Error")
    assert rate.language == "node"
    assert ("@anthropic-ai/sdk", "ContractSpendLimitReachedError", "") in entries
    throttling = entries[
        ("@aws-sdk/client-bedrock-runtime", "ThrottlingException", "ThrottlingException")
    ]
    assert throttling.supertypes == ("BedrockRuntimeServiceException", "ServiceException", "Error")
    assert ("ai", "APICallError", "") in entries


def test_a_new_node_class_without_a_rule_fails(entries_file: Path, tmp_path: Path) -> None:
    """A class a pin bump adds (here a made-up one under the SDK's root) fails until decided or listed."""
    data = json.loads(entries_file.read_text())
    data.append(
        {
            "sdk": "openai",
            "language": "node",
            "type": "BrandNewNodeError",
            "supertypes": ["OpenAIError", "Error"],
        }
    )
    path = tmp_path / "bumped.json"
    path.write_text(json.dumps(data))
    report = run_check([path])
    assert not report.ok
    assert [e.type for e in report.undecided] == ["BrandNewNodeError"], report.text()
    assert "undecided: node openai: BrandNewNodeError" in report.text()


def test_a_node_allow_list_entry_a_rule_now_decides_is_stale(entries_file: Path) -> None:
    """A listed Node class that a rule decides is reported stale, so the list stays true."""
    entries = [Entry.from_data(raw) for raw in json.loads(entries_file.read_text())]
    rules = read_rules(RULES)
    allow = read_allowlist(ALLOWLIST)
    decided = next(e for e in entries if e.type == "APICallError")
    report = check(entries, rules, [*allow, Allowed(decided.type, "node", "a test")])
    assert [a.name for a in report.stale] == ["APICallError"], report.text()
