"""The server's live sample of Unknowns: bounded in bytes, redacted, and read by `--addr`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from classifier import build_descriptor, load_ruleset
from classifier.cli import main
from classifier.engine.evaluate import classify
from classifier.server.observers.metrics import Metrics
from classifier.server.observers.unknown_sample import UnknownSample
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.conftest import StartApp
from tests.support import wait_for


def held_bytes(sample: UnknownSample) -> int:
    """What the sample really holds: its ordered dict (table and links) and every key, entry
    and line in it, as the interpreter sizes them."""
    entries = sample._entries
    return sys.getsizeof(entries) + sum(
        sys.getsizeof(k) + sys.getsizeof(e) + sys.getsizeof(e.line) + 2 * sys.getsizeof(e.size)
        for k, e in entries.items()
    )


def test_a_flood_of_unique_unknowns_stays_within_the_cap(serving_rules: Path) -> None:
    """20,000 Unknowns, every one a failure of its own (a fresh type and message): the sample
    counts at most its cap, and what it really holds is within it too."""
    ruleset = load_ruleset(serving_rules)
    cap = 256 * 1024
    sample = UnknownSample(Metrics(), max_bytes=cap)
    for i in range(20_000):
        d = build_descriptor(
            type=f"com.example.Weird{i}",
            message=f"failure {i} of kind k{i} for tenant t{i}",
            attributes={"run_id": f"r{i}"},
        )
        sample.add(1_764_400_000.0 + i, d, classify(ruleset, d))
        assert sample.bytes <= cap
        if i % 1000 == 999:
            assert held_bytes(sample) <= cap, f"{held_bytes(sample):,} held, the cap is {cap:,}"
    assert 100 < len(sample) < 20_000
    lines = sample.lines().splitlines()
    assert len(lines) == len(sample)
    newest = json.loads(lines[-1])
    assert newest["descriptor"]["type"] == "com.example.Weird19999"  # the newest are kept
    assert (
        sample.metrics.registry.get_sample_value("errorclass_unknown_sample_bytes") == sample.bytes
    )


def test_the_live_sample_is_redacted_and_read_by_unknowns_addr(
    serving_rules: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    running = start_app(
        serving_rules,
        watch=False,
        unknown_sample_bytes=64 * 1024,
        redact_patterns=("ticket=TICKET-[0-9]+",),
    )
    secrets = ("sk-proj-abcdefghijklmnop1234", "AKIAIOSFODNN7EXAMPLE", "alice@example.com")
    requests = [
        pb.ClassifyRequest(
            descriptor=pb.ExceptionDescriptor(
                type="com.acme.GatewayError",
                language="java",
                message=f"call {i} refused for key {secrets[i % 2]} (owner {secrets[2]}, TICKET-4711)",
                attributes={"auth": f"Bearer eyJhbGciOiJIUzI1NiJ9.{i:06d}"},
            )
        )
        for i in range(30)
    ] + [
        pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type=f"x.Flood{i}", message="m"))
        for i in range(2_000)
    ] + [pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="T", http_status=429, origin=pb.ORIGIN_PROVIDER))]  # fmt: skip
    running.stub.ClassifyBatch(pb.ClassifyBatchRequest(requests=requests[:30]))
    wait_for(lambda: "com.acme.GatewayError" in running.http("/-/unknowns")[1])
    _, before_flood = running.http("/-/unknowns")
    for secret in (*secrets, "eyJhbGciOiJIUzI1NiJ9", "TICKET-4711"):
        assert secret not in before_flood
    for mask in ("email", "bearer", "ticket"):  # the installation's own mask too
        assert f"[REDACTED:{mask}]" in before_flood
    assert "[REDACTED:openai_key]" in before_flood or "[REDACTED:aws_access_key]" in before_flood
    for start in range(30, len(requests), 500):
        running.stub.ClassifyBatch(pb.ClassifyBatchRequest(requests=requests[start : start + 500]))
    wait_for(lambda: running.metric("errorclass_unknown_sample_clusters") > 0)
    wait_for(lambda: "x.Flood1999" in running.http("/-/unknowns")[1])
    status, body = running.http("/-/unknowns")
    assert status == 200
    assert running.metric("errorclass_unknown_sample_bytes") <= 64 * 1024
    for secret in (*secrets, "eyJhbGciOiJIUzI1NiJ9", "TICKET-4711"):
        assert secret not in body
    lines = [json.loads(line) for line in body.splitlines()]
    assert all(set(ln) == {"ts", "ruleset_version", "descriptor", "answer", "seen"} for ln in lines)
    assert all(ln["answer"]["class"] == "Unknown" for ln in lines)
    assert running.app.admin is not None
    capsys.readouterr()
    addr = running.app.admin.address
    assert (
        main(["unknowns", "--admin-addr", addr, "--rules", str(serving_rules), "--format", "json"])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["unknowns"] == sum(ln["seen"] for ln in lines)
    assert report["sources"] == [f"{addr}/-/unknowns"]


def test_the_endpoint_says_when_the_sample_is_off(serving_rules: Path, start_app: StartApp) -> None:
    running = start_app(serving_rules, watch=False, unknown_sample_bytes=0)
    assert running.http("/-/unknowns") == (404, "the live Unknown sample is off\n")
