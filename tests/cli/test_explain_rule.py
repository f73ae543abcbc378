"""`classifier explain --rule ID`: why that rule did not decide, at every precedence step.

Golden text for each way a named rule can fail to decide (or decide): its conditions
failed (with what the descriptor had), or it matched and lost at decisive, fallback, type
depth, condition count, priority or ruleset order, or it tied and disagreed (conflict), or
lost to rules that then conflict. The same over `--addr`: a real server on loopback answers
`Classify` with `explain_rule`, and prints the same text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from classifier import load_ruleset
from classifier.cli import main
from classifier.server import GrpcServer, create_server
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.golden_files import assert_golden
from tests.support import ROOT

EXPLAIN = ROOT / "tests" / "golden" / "explain"
RULE_CASES = {
    # golden name: (descriptor file, rule, the verdict's outcome and step)
    "rule-decisive": ("decisive", "socket-closed", "lost", "decisive"),
    "rule-fallback": ("fallback", "sdk-api-error", "lost", "fallback"),
    "rule-type-depth": ("type-depth", "io", "lost", "type_depth"),
    "rule-condition-count": ("condition-count", "openai-429", "lost", "condition_count"),
    "rule-untyped": ("condition-count", "provider-429", "lost", "type_depth"),
    "rule-priority": ("priority", "prio-low", "lost", "priority"),
    "rule-order": ("order", "agree-b", "lost", "order"),
    "rule-conflict": ("conflict", "a", "conflict", "conflict"),
    "rule-lost-to-conflict": ("conflict-lost", "provider-429", "lost", "type_depth"),
    "rule-no-match": ("unknown", "provider-429", "no_match", ""),
    "rule-other-type": ("conflict", "prio-low", "no_match", ""),
    "rule-decided": ("cause", "wrapped-timeout", "decided", ""),
}


def test_every_precedence_step_has_a_case() -> None:
    steps = {step for *_, step in RULE_CASES.values()}
    assert {
        "decisive",
        "fallback",
        "type_depth",
        "condition_count",
        "priority",
        "order",
        "conflict",
    } <= steps
    assert {outcome for _, _, outcome, _ in RULE_CASES.values()} == {
        "lost",
        "conflict",
        "no_match",
        "decided",
    }


@pytest.mark.parametrize("name", sorted(RULE_CASES))
def test_golden_explain_rule(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    descriptor, rule, outcome, step = RULE_CASES[name]
    monkeypatch.chdir(EXPLAIN)
    assert main(["explain", "--rules", "rules", "--rule", rule, f"{descriptor}.yaml"]) == 0
    out = capsys.readouterr().out
    assert_golden(EXPLAIN / f"{name}.txt", out)
    assert (
        main(
            [
                "explain",
                "--rules",
                "rules",
                "--rule",
                rule,
                "--format",
                "json",
                f"{descriptor}.yaml",
            ]
        )
        == 0
    )
    verdict = json.loads(capsys.readouterr().out)["rule_verdict"]
    assert (verdict["rule_id"], verdict["outcome"], verdict["step"]) == (rule, outcome, step)


def test_a_rule_that_does_not_exist_is_named(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(EXPLAIN)
    assert main(["explain", "--rules", "rules", "--rule", "no-such", "order.yaml"]) == 2
    assert "has no rule 'no-such'" in capsys.readouterr().err


@pytest.fixture
def golden_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[GrpcServer]:
    monkeypatch.chdir(EXPLAIN)  # locations read as the local run prints them
    srv = create_server(load_ruleset(Path("rules")), "127.0.0.1:0")
    srv.start()
    yield srv
    srv.stop(grace=0)


@pytest.mark.parametrize(
    "name", ["rule-decisive", "rule-fallback", "rule-conflict", "rule-no-match"]
)
def test_over_addr_the_server_says_the_same(
    name: str, golden_server: GrpcServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A running server's Classify(explain, explain_rule) gives the text the local run gives."""
    descriptor, rule, _, _ = RULE_CASES[name]
    addr = f"127.0.0.1:{golden_server.port}"
    assert main(["explain", "--addr", addr, "--rule", rule, f"{descriptor}.yaml"]) == 0
    assert capsys.readouterr().out == (EXPLAIN / f"{name}.txt").read_text(encoding="utf-8")


def test_the_rpc_carries_the_verdict_and_refuses_an_unknown_rule(golden_server: GrpcServer) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{golden_server.port}") as channel:
        stub = pb_grpc.ErrorClassifierStub(channel)
        d = pb.ExceptionDescriptor(type="com.example.Prio", origin=pb.ORIGIN_PROVIDER, code="P")
        reply = stub.Classify(
            pb.ClassifyRequest(descriptor=d, explain=True, explain_rule="prio-low")
        )
        v = reply.explanation.rule_verdict
        assert (v.outcome, v.step, list(v.rivals)) == ("lost", "priority", ["prio-high"])
        deadline = pb.ExceptionDescriptor(
            type="java.net.SocketException",
            supertypes=["java.io.IOException"],
            origin=pb.ORIGIN_PROVIDER,
            attributes={"time_limit": "run"},
        )
        reply = stub.Classify(pb.ClassifyRequest(descriptor=deadline, explain=True))
        steps = {d.loser_rule_id: (d.step, d.reason) for d in reply.explanation.decisions}
        assert steps["socket-closed"][0] == "decisive"
        assert steps["socket-closed"][1].startswith("decided by the runtime's fact time_limit=run")
        batch = stub.ClassifyBatch(
            pb.ClassifyBatchRequest(
                requests=[
                    pb.ClassifyRequest(descriptor=d),
                    pb.ClassifyRequest(descriptor=d, explain=True, explain_rule="prio-high"),
                ]
            )
        )
        assert not batch.responses[0].HasField("explanation")
        assert batch.responses[1].explanation.rule_verdict.outcome == "decided"
        with pytest.raises(grpc.RpcError) as err:
            stub.Classify(pb.ClassifyRequest(descriptor=d, explain=True, explain_rule="nope"))
        assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "explain_rule" in (err.value.details() or "")
