"""The server's live sample of Unknowns: bounded in bytes, redacted, and read by `--addr`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from classifier import build_descriptor, load_ruleset
from classifier.cli import main
from classifier.client import Client
from classifier.engine.evaluate import classify
from classifier.server.observers.metrics import Metrics
from classifier.server.observers.unknown_sample import UnknownSample
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.conftest import StartApp
from tests.support import BUNDLED_RULES, serving_files, wait_for, write_folder


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


def _unknowns_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, Any], str]:
    capsys.readouterr()
    assert main(["unknowns", *args, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    report: dict[str, Any] = json.loads(out)
    return report, err


def test_without_rules_the_live_sample_is_explained_under_what_the_server_serves(
    tmp_path: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    """`unknowns --admin-addr` alone: the server says what it serves (GET /-/ruleset, its
    GetRuleset answer), and the folder it serves from, readable here, gives the near misses
    and coverage, saying so; a team's layered ruleset included."""
    write_folder(tmp_path / "serving", serving_files())
    team = write_folder(
        tmp_path / "team",
        {
            "ruleset.yaml": "name: team\nversion: 2.0.0\nbase:\n  - path: ../serving\n",
            "team.yaml": "rules:\n  - id: team.gateway-503\n"
            "    when: {type: com.acme.GatewayError, http_status: 503}\n"
            "    class: ProviderError\n",
        },
    )
    running = start_app(team, watch=False)
    for i in range(3):  # near the team's rule, but without its status: Unknown
        running.stub.Classify(
            pb.ClassifyRequest(
                descriptor=pb.ExceptionDescriptor(
                    type="com.acme.GatewayError", message=f"upstream {i} refused"
                )
            )
        )
    wait_for(lambda: "com.acme.GatewayError" in running.http("/-/unknowns")[1])
    assert running.app.admin is not None
    addr = running.app.admin.address
    status, body = running.http("/-/ruleset")
    assert status == 200
    described = json.loads(body)
    info = Client(running.app.address).get_ruleset()
    assert (described["name"], described["digest"], described["source"]) == (
        info.name,
        info.digest,
        info.source,
    )
    assert [layer["name"] for layer in described["layers"]] == ["team", "serving"]

    report, said = _unknowns_json(capsys, "--admin-addr", addr)
    served = load_ruleset(team)
    assert report["ruleset"] == {"name": "team", "version": "2.0.0", "digest": served.digest}
    assert f"no --rules: team 2.0.0 from {info.source}, what {addr} serves" in said
    [cluster] = [c for c in report["ranked"] if c["key"]["type"] == "com.acme.GatewayError"]
    assert [n["rule"] for n in cluster["near_misses"]][:1] == ["team.gateway-503"]
    assert cluster["now"]["summary"] == "still Unknown under team 2.0.0"
    # The same report as naming the folder: the default is the served rules, nothing else.
    named, _ = _unknowns_json(capsys, "--admin-addr", addr, "--rules", str(team))
    assert named["ranked"] == report["ranked"]


def test_a_served_folder_not_readable_here_falls_back_to_the_bundled_library_saying_so(
    tmp_path: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server's folder gone from this machine (another machine's, or moved): the bundled
    library explains the sample, as other commands default to, and stderr says why."""
    folder = write_folder(tmp_path / "elsewhere", serving_files())
    running = start_app(folder, watch=False)
    running.stub.Classify(
        pb.ClassifyRequest(
            descriptor=pb.ExceptionDescriptor(type="openai.RateLimitError", language="python")
        )
    )
    wait_for(lambda: "openai.RateLimitError" in running.http("/-/unknowns")[1])
    assert running.app.admin is not None
    addr = running.app.admin.address
    folder.rename(tmp_path / "moved")
    report, said = _unknowns_json(capsys, "--admin-addr", addr)
    library = load_ruleset(BUNDLED_RULES)
    assert report["ruleset"]["digest"] == library.digest
    assert (
        f"no --rules: {addr} serves serving 1.0.0 from {folder}, but {folder} is not a folder "
        f"readable here: the bundled library instead ({library.name} {library.version})"
    ) in said
    [cluster] = [c for c in report["ranked"] if c["key"]["type"] == "openai.RateLimitError"]
    assert cluster["now"]["covered"]  # the library knows openai's rate limit
