"""The decision log: one JSON line per answer, in the shape `classifier diff` replays."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from classifier import load_ruleset
from classifier.answer import classification_dict
from classifier.cli import main
from classifier.engine.evaluate import classify
from classifier.server.observers.decisions import DecisionLog
from classifier.server.observers.metrics import Metrics
from classifier.server.rpc.convert import descriptor_from_proto
from classifier.source.descriptor_file import descriptor_from_data
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.conftest import StartApp
from tests.support import ROOT, ruleset_files, write_folder

DESCRIPTORS = [
    pb.ExceptionDescriptor(
        type="openai.RateLimitError",
        supertypes=["openai.APIStatusError", "Exception"],
        http_status=429,
        origin=pb.ORIGIN_PROVIDER,
        message="Rate limit reached for gpt-4o — please slow down",
        provider="OpenAI",
        attributes={"tenant": "acme"},
    ),
    pb.ExceptionDescriptor(
        type="System.Threading.Tasks.TaskCanceledException",
        supertypes=["System.OperationCanceledException", "System.SystemException"],
        causes=[pb.Cause(type="System.TimeoutException", grpc_status=4)],
        origin=pb.ORIGIN_PROVIDER,
    ),
    pb.ExceptionDescriptor(type="com.example.Weird", code="E42"),
]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_answer_is_a_line_that_replays_to_the_same_answer(
    serving_rules: Path, tmp_path: Path, start_app: StartApp
) -> None:
    """Each line's descriptor reads back through descriptor_from_data and classifies identically."""
    log = tmp_path / "decisions.jsonl"
    running = start_app(serving_rules, watch=False, decision_log=log)
    stub = running.stub
    stub.Classify(pb.ClassifyRequest(descriptor=DESCRIPTORS[0], explain=True))
    stub.ClassifyBatch(
        pb.ClassifyBatchRequest(requests=[pb.ClassifyRequest(descriptor=d) for d in DESCRIPTORS])
    )
    list(stub.ClassifyStream(iter([pb.ClassifyRequest(descriptor=DESCRIPTORS[2])])))
    running.app.stop(grace=1)

    lines = _lines(log)
    assert len(lines) == 5
    ruleset = load_ruleset(serving_rules)
    sent = [DESCRIPTORS[0], *DESCRIPTORS, DESCRIPTORS[2]]
    for line, wire in zip(lines, sent, strict=True):
        assert set(line) == {"ts", "ruleset_version", "descriptor", "answer"}
        assert line["ts"].endswith("Z")
        replayed = descriptor_from_data(line["descriptor"])
        assert replayed == descriptor_from_proto(wire)
        expected = classification_dict(classify(ruleset, replayed))
        assert line["answer"] == expected
        assert line["ruleset_version"] == ruleset.version == line["answer"]["ruleset_version"]
    assert lines[0]["descriptor"]["provider"] == "openai"
    assert "explanation" not in lines[0]["answer"]
    assert [ln["answer"]["class"] for ln in lines] == [
        "RateLimited",
        "RateLimited",
        "Timeout",
        "Unknown",
        "Unknown",
    ]
    assert running.metric("errorclass_decision_log_lines_total") == 5


def test_a_line_says_how_long_to_wait_and_from_which_header(
    serving_rules: Path, tmp_path: Path, start_app: StartApp
) -> None:
    """A retryable answer with the provider's retry evidence is logged with the wait it
    advises; over the wire the answer carries it too, unary and batched, and no prebuilt
    response is reused for it (the plain answer after it has none)."""
    log = tmp_path / "decisions.jsonl"
    running = start_app(serving_rules, watch=False, decision_log=log)
    waiting = pb.ExceptionDescriptor()
    waiting.CopyFrom(DESCRIPTORS[0])
    waiting.attributes["http.response.header.retry-after"] = "20"
    plain = running.stub.Classify(pb.ClassifyRequest(descriptor=DESCRIPTORS[0]))
    single = running.stub.Classify(pb.ClassifyRequest(descriptor=waiting))
    batch = running.stub.ClassifyBatch(
        pb.ClassifyBatchRequest(
            requests=[pb.ClassifyRequest(descriptor=d) for d in (waiting, DESCRIPTORS[0])]
        )
    )
    running.app.stop(grace=1)
    waited = pb.ClassifyResponse()
    waited.CopyFrom(plain)
    waited.retry_after.FromSeconds(20)
    waited.retry_after_source = "http.response.header.retry-after"
    assert single == waited
    assert list(batch.responses) == [waited, plain]
    assert not plain.HasField("retry_after")
    answers = [line["answer"] for line in _lines(log)]
    wait = {"seconds": 20.0, "source": "http.response.header.retry-after", "capped": False}
    assert [a.get("retry_after") for a in answers] == [None, wait, wait, None]
    assert {a["class"] for a in answers} == {"RateLimited"}


def test_unknown_only_keeps_what_no_rule_covers(
    serving_rules: Path, tmp_path: Path, start_app: StartApp
) -> None:
    """--decision-log-unknown-only writes only Unknown answers."""
    log = tmp_path / "unknown.jsonl"
    running = start_app(
        serving_rules, watch=False, decision_log=log, decision_log_unknown_only=True
    )
    for d in DESCRIPTORS * 2:
        running.stub.Classify(pb.ClassifyRequest(descriptor=d))
    running.app.stop(grace=1)
    lines = _lines(log)
    assert [ln["descriptor"]["type"] for ln in lines] == ["com.example.Weird"] * 2
    assert {ln["answer"]["unknown_reason"] for ln in lines} == {"no_match"}


def test_the_log_rotates_at_its_size_cap(serving_rules: Path, tmp_path: Path) -> None:
    """Past max_bytes the file rolls to d.1.jsonl ... d.N.jsonl, oldest lines falling off; none split."""
    ruleset = load_ruleset(serving_rules)
    descriptor = descriptor_from_proto(DESCRIPTORS[2])
    result = classify(ruleset, descriptor)
    path = tmp_path / "d.jsonl"
    log = DecisionLog(path, Metrics(), max_bytes=2000, backups=2)
    log.start()
    for _ in range(100):
        log.classified(descriptor, result)
    log.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["d.1.jsonl", "d.2.jsonl", "d.jsonl"]
    for name in files:
        size = (tmp_path / name).stat().st_size
        assert 0 < size <= 2000
        assert all(
            ln["descriptor"]["type"] == "com.example.Weird" for ln in _lines(tmp_path / name)
        )


def test_a_full_queue_drops_and_counts_instead_of_blocking(
    serving_rules: Path, tmp_path: Path
) -> None:
    """When the writer falls behind, answers are not slowed: lines are dropped and counted."""
    ruleset = load_ruleset(serving_rules)
    descriptor = descriptor_from_proto(DESCRIPTORS[2])
    result = classify(ruleset, descriptor)
    metrics = Metrics()
    log = DecisionLog(tmp_path / "d.jsonl", metrics, queue_size=10)
    for _ in range(25):  # the writer is not started, so nothing drains
        log.classified(descriptor, result)
    assert metrics.registry.get_sample_value("errorclass_decision_log_dropped_total") == 15
    log.start()
    log.close()
    assert len(_lines(tmp_path / "d.jsonl")) == 10


def test_close_waits_while_a_slow_writer_drains_the_queue(
    serving_rules: Path, tmp_path: Path
) -> None:
    """A clean stop loses no decision: on a FIFO read slowly (a slow disk), the writer needs
    well over close_timeout to drain 3,000 lines, yet keeps writing; close, given a grace
    long enough, waits for every line instead of abandoning the writer after 1 s."""
    ruleset = load_ruleset(serving_rules)
    descriptor = descriptor_from_proto(DESCRIPTORS[0])
    result = classify(ruleset, descriptor)
    path = tmp_path / "d.fifo"
    os.mkfifo(path)
    got = bytearray()

    def read_slowly() -> None:
        with path.open("rb", buffering=0) as fifo:
            for _ in range(100_000):  # bounded; ends at the writer's close (EOF)
                chunk = fifo.read(16_384)
                if not chunk:
                    return
                got.extend(chunk)
                time.sleep(0.02)

    reader = threading.Thread(target=read_slowly)
    reader.start()
    metrics = Metrics()
    log = DecisionLog(path, metrics, close_timeout=1.0)
    log.start()
    for _ in range(3000):
        log.classified(descriptor, result)
    started = time.monotonic()
    log.close(grace=60)
    took = time.monotonic() - started
    reader.join(timeout=60)
    lines = got.decode().splitlines()
    print(f"\nslow FIFO: 3,000 lines ({len(got):,} bytes) drained in {took:.2f} s at close")
    assert took > 1.0  # the old close would have abandoned the writer here
    assert len(lines) == 3000
    assert metrics.registry.get_sample_value("errorclass_decision_log_dropped_total") == 0
    assert metrics.registry.get_sample_value("errorclass_decision_log_lines_total") == 3000


def test_a_line_that_cannot_be_written_is_not_counted(serving_rules: Path, tmp_path: Path) -> None:
    """errorclass_decision_log_lines counts lines written: past a file size limit (a process
    limit standing in for a full disk) writes fail, and those lines are not counted."""
    path = tmp_path / "d.jsonl"
    script = (
        "import resource, sys; from pathlib import Path\n"
        "from classifier import build_descriptor, load_ruleset\n"
        "from classifier.engine.evaluate import classify\n"
        "from classifier.server.observers.decisions import DecisionLog\n"
        "from classifier.server.observers.metrics import Metrics\n"
        "descriptor = build_descriptor(type='com.example.Weird', code='E42')\n"
        "result = classify(load_ruleset(sys.argv[1]), descriptor)\n"
        "metrics = Metrics()\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (2000, resource.RLIM_INFINITY))\n"
        "log = DecisionLog(Path(sys.argv[2]), metrics)\n"
        "log.start()\n"
        "for _ in range(20): log.classified(descriptor, result)\n"
        "log.close()\n"
        "print(metrics.registry.get_sample_value('errorclass_decision_log_lines_total'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(serving_rules), str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "File too large" in out.stderr
    *complete, partial = path.read_text(encoding="utf-8").split("\n")
    assert partial == ""  # no torn line: the file ends on a whole one
    assert all(json.loads(line)["descriptor"]["code"] == "E42" for line in complete)
    assert 0 < len(complete) < 20
    assert float(out.stdout) == len(complete)


def test_classifier_diff_replays_the_decision_log(
    tmp_path: Path, start_app: StartApp, capsys: pytest.CaptureFixture[str]
) -> None:
    """The log, rotated files included, is a corpus: `classifier diff` shows what a change moves."""
    old = write_folder(tmp_path / "old", ruleset_files("1.0.0", "Timeout"))
    new = write_folder(tmp_path / "new", ruleset_files("1.1.0", "ToolTimeout"))
    logs = tmp_path / "logs"
    logs.mkdir()
    running = start_app(
        old,
        watch=False,
        decision_log=logs / "d.jsonl",
        decision_log_max_bytes=600,
        decision_log_backups=10,
    )
    probe = pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="test.Probe"))
    for _ in range(3):
        running.stub.Classify(probe)
        running.stub.Classify(pb.ClassifyRequest(descriptor=DESCRIPTORS[2]))
    running.app.stop(grace=1)
    assert sorted(p.name for p in logs.iterdir())[:2] == ["d.1.jsonl", "d.2.jsonl"]
    capsys.readouterr()
    main(["diff", "--base", str(old), "--head", str(new), "--format", "json", str(logs)])
    report = json.loads(capsys.readouterr().out)
    assert (report["total"], report["distinct"], report["changed"]) == (6, 2, 3)
    [group] = report["groups"]
    assert (group["from"], group["to"], group["count"]) == ("Timeout", "ToolTimeout", 3)
    assert {c["descriptor"]["type"] for c in group["changes"]} == {"test.Probe"}
