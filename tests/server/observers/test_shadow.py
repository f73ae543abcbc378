"""Shadowing a candidate: it sees every request, never answers, and its disagreements are counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from classifier.source.descriptor_file import descriptor_from_data
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.conftest import StartApp
from tests.support import ruleset_files, wait_for, write_folder

PROBE = pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="test.Probe"))
LIMITED = pb.ClassifyRequest(
    descriptor=pb.ExceptionDescriptor(type="x.Y", http_status=429, message="slow down")
)


def _shadow_lines(err: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in err.splitlines() if '"shadow_disagreement"' in line]


def test_the_candidate_is_compared_but_never_answers(
    tmp_path: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    """Answers come from --rules; each disagreement is counted by class and rule on both sides."""
    active = write_folder(tmp_path / "active", ruleset_files("1.0.0", "Timeout"))
    candidate = write_folder(tmp_path / "next", ruleset_files("1.1.0", "ToolTimeout"))
    running = start_app(active, candidate=candidate, shadow_examples=2)
    stub = running.stub
    for _ in range(5):
        answer = stub.Classify(PROBE)
        assert (answer.class_name, answer.ruleset_version) == ("Timeout", "1.0.0")
    assert stub.Classify(LIMITED).class_name == "RateLimited"
    stub.ClassifyBatch(pb.ClassifyBatchRequest(requests=[PROBE, LIMITED]))

    assert running.metric("errorclass_shadow_comparisons_total") == 8
    kind = {
        "active_class": "Timeout",
        "candidate_class": "ToolTimeout",
        "active_rule": "probe",
        "candidate_rule": "probe",
    }
    assert running.metric("errorclass_shadow_disagreements_total", **kind) == 6
    lines = _shadow_lines(capsys.readouterr().err)
    assert len(lines) == 2
    example = lines[0]
    assert example["descriptor"] == {"type": "test.Probe"}
    assert descriptor_from_data(example["descriptor"]).type == "test.Probe"
    assert example["active"]["class"] == "Timeout"  # type: ignore[index]
    assert example["candidate"]["class"] == "ToolTimeout"  # type: ignore[index]
    assert example["candidate"]["ruleset_version"] == "1.1.0"  # type: ignore[index]


def test_get_ruleset_describes_the_candidate(tmp_path: Path, start_app: StartApp) -> None:
    """The candidate's identity and its own reload status sit under RulesetInfo.candidate."""
    active = write_folder(tmp_path / "active", ruleset_files("1.0.0", "Timeout"))
    candidate = write_folder(tmp_path / "next", ruleset_files("1.1.0", "ToolTimeout"))
    running = start_app(active, candidate=candidate)
    info = running.stub.GetRuleset(pb.GetRulesetRequest())
    assert (info.version, info.candidate.version) == ("1.0.0", "1.1.0")
    assert not info.candidate.HasField("candidate")
    assert running.metric("errorclass_ruleset_rules", role="candidate") == 2

    write_folder(candidate, ruleset_files("1.2.0", "Timeout"))
    wait_for(lambda: running.stub.GetRuleset(pb.GetRulesetRequest()).candidate.version == "1.2.0")
    info = running.stub.GetRuleset(pb.GetRulesetRequest())
    assert info.candidate.last_reload.result == pb.RELOAD_RESULT_RELOADED
    assert not info.HasField("last_reload")
    before = running.metric("errorclass_shadow_comparisons_total")
    running.stub.Classify(PROBE)
    assert running.metric("errorclass_shadow_comparisons_total") == before + 1
    assert running.metric("errorclass_shadow_disagreements_total") == 0


def test_without_a_candidate_nothing_is_shadowed(tmp_path: Path, start_app: StartApp) -> None:
    """No --candidate: no comparisons, and GetRuleset has no candidate."""
    active = write_folder(tmp_path / "active", ruleset_files("1.0.0", "Timeout"))
    running = start_app(active, watch=False)
    running.stub.Classify(PROBE)
    assert running.metric("errorclass_shadow_comparisons_total") == 0
    assert not running.stub.GetRuleset(pb.GetRulesetRequest()).HasField("candidate")
