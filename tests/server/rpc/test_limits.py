"""Limits and hostile requests: each refused with the right status naming the limit,
deadlines honoured, abandoned streams freed, and the server serving throughout."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from classifier import limits
from classifier.engine.ruleset import Ruleset
from classifier.server import ServerLimits, create_server
from classifier.server.explain import ExplainRefusedError, Why
from classifier.server.rpc.executor import Lane
from classifier.server.rpc.pushback import Pushback
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.conftest import Running, StartApp
from tests.support import ROOT, MakeRuleset, trailer, wait_for

OK = pb.ExceptionDescriptor(type="x.Y", http_status=429, origin=pb.ORIGIN_PROVIDER)


def _request(**fields: object) -> pb.ClassifyRequest:
    return pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="x.Y", **fields))  # type: ignore[arg-type]


def _refused(stub: pb_grpc.ErrorClassifierStub, request: pb.ClassifyRequest) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        stub.Classify(request, timeout=10)
    return info.value


def _held_stream(stub: pb_grpc.ErrorClassifierStub) -> tuple[Any, threading.Event]:
    """A stream that has had one answer and stays open (holding a worker) until the event."""
    gate = threading.Event()

    def requests() -> Iterator[pb.ClassifyRequest]:
        yield pb.ClassifyRequest(descriptor=OK)
        gate.wait(10)

    stream = stub.ClassifyStream(requests())
    assert next(stream).class_name == "RateLimited"
    return stream, gate


@pytest.fixture
def running(serving_rules: Path, start_app: StartApp) -> Iterator[Running]:
    r = start_app(serving_rules, watch=False, limits=ServerLimits(max_request_bytes=256 * 1024))
    yield r
    assert r.stub.Classify(pb.ClassifyRequest(descriptor=OK)).class_name == "RateLimited"


@pytest.mark.parametrize(
    ("request_", "field", "message"),
    [
        (
            _request(supertypes=["a.B"] * (limits.MAX_SUPERTYPES + 1)),
            "descriptor.supertypes",
            f"65 entries exceed the limit of {limits.MAX_SUPERTYPES}",
        ),
        (
            _request(causes=[pb.Cause(type="c")] * (limits.MAX_CAUSES + 1)),
            "descriptor.causes",
            f"33 causes exceed the limit of {limits.MAX_CAUSES}",
        ),
        (
            pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="T" * 1025)),
            "descriptor.type",
            f"1025 characters exceed the limit of {limits.MAX_TYPE_NAME_CHARS}",
        ),
        (
            _request(code="c" * 257),
            "descriptor.code",
            f"257 characters exceed the limit of {limits.MAX_CODE_CHARS}",
        ),
        (
            _request(provider="p" * 129),
            "descriptor.provider",
            f"129 characters exceed the limit of {limits.MAX_LABEL_CHARS}",
        ),
        (
            _request(attributes={f"k{i}": "v" for i in range(limits.MAX_ATTRIBUTES + 1)}),
            "descriptor.attributes",
            f"65 attributes exceed the limit of {limits.MAX_ATTRIBUTES}",
        ),
        (
            _request(attributes={"k": "v" * 4097}),
            "descriptor.attributes['k']",
            f"value exceeds the limit of {limits.MAX_ATTRIBUTE_VALUE_CHARS} characters",
        ),
        (
            _request(causes=[pb.Cause(type="c", supertypes=["s"] * 65)]),
            "descriptor.causes[0].supertypes",
            "65 entries exceed the limit of 64",
        ),
    ],
)
def test_a_descriptor_over_a_limit_is_invalid_argument_naming_it(
    running: Running, request_: pb.ClassifyRequest, field: str, message: str
) -> None:
    """Each hard descriptor limit answers INVALID_ARGUMENT with the field and the number."""
    err = _refused(running.stub, request_)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"{field}: {message}" in (err.details() or "")


def test_a_request_over_the_size_limit_is_resource_exhausted(running: Running) -> None:
    """gRPC refuses the bytes before parsing them and names both sizes."""
    err = _refused(running.stub, _request(attributes={"blob": "x" * 300_000}))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert str(256 * 1024) in (err.details() or "")


def test_a_batch_over_the_limit_is_refused_naming_it(running: Running) -> None:
    """More than MAX_BATCH descriptors: INVALID_ARGUMENT on `requests` with the limit."""
    batch = pb.ClassifyBatchRequest(
        requests=[pb.ClassifyRequest(descriptor=OK)] * (limits.MAX_BATCH + 1)
    )
    with pytest.raises(grpc.RpcError) as info:
        running.stub.ClassifyBatch(batch)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "requests: 1001 requests exceed the batch limit of 1000" in (info.value.details() or "")
    full = pb.ClassifyBatchRequest(requests=[pb.ClassifyRequest(descriptor=OK)] * limits.MAX_BATCH)
    assert len(running.stub.ClassifyBatch(full).responses) == limits.MAX_BATCH


def test_a_long_message_is_classified_on_its_prefix(
    make_ruleset: MakeRuleset, start_app: StartApp
) -> None:
    """Never refused: a pattern sees the first MAX_MESSAGE_CHARS characters, and only those."""
    root = make_ruleset(
        "rules:\n  - id: needle\n    when: {message: needle}\n    class: ToolError\n"
    )
    stub = start_app(root, watch=False).stub
    cut = limits.MAX_MESSAGE_CHARS
    early = "needle" + "." * 100_000
    late = "." * cut + "needle"
    edge = "." * (cut - len("needle")) + "needle" + "......"
    assert stub.Classify(_request(message=early)).class_name == "ToolError"
    assert stub.Classify(_request(message=edge)).class_name == "ToolError"
    answer = stub.Classify(_request(message=late, causes=[pb.Cause(type="c", message=late)]))
    assert (answer.class_name, answer.unknown_reason) == ("Unknown", pb.UNKNOWN_REASON_NO_MATCH)


def test_too_many_concurrent_calls_are_resource_exhausted(
    serving_rules: Path, start_app: StartApp
) -> None:
    """Past --max-concurrent-rpcs a unary call is refused, not queued for ever; past
    --max-streams a stream is refused; neither limit takes the other's capacity."""
    running = start_app(
        serving_rules,
        watch=False,
        threads=1,
        limits=ServerLimits(max_concurrent_rpcs=1, max_streams=2),
    )
    held = [_held_stream(running.stub) for _ in range(2)]
    with pytest.raises(grpc.RpcError) as info:
        next(running.stub.ClassifyStream(iter([pb.ClassifyRequest(descriptor=OK)]), timeout=10))
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "--max-streams (2)" in str(info.value.details())
    # the streams hold none of the unary lane (start-up's own calls have left it: cap 1)
    wait_for(lambda: running.app.server.lanes.unary.outstanding == 0)
    assert running.stub.Classify(pb.ClassifyRequest(descriptor=OK)).class_name == "RateLimited"
    release = _occupy(running.app.server.lanes.unary)
    try:
        err = _refused(running.stub, pb.ClassifyRequest(descriptor=OK))
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "--max-concurrent-rpcs (1)" in str(err.details())
    finally:
        release.set()
    for stream, gate in held:
        gate.set()
        assert list(stream) == []
    wait_for(lambda: running.metric("errorclass_rpcs_in_flight", rpc="ClassifyStream") == 0)
    wait_for(lambda: running.app.server.lanes.unary.outstanding == 0)
    assert running.stub.Classify(pb.ClassifyRequest(descriptor=OK)).class_name == "RateLimited"
    assert running.metric("errorclass_refused_total", rpc="Classify", reason="unary_full") == 1
    assert (
        running.metric("errorclass_refused_total", rpc="ClassifyStream", reason="stream_full") == 1
    )
    assert running.metric("errorclass_rpcs_total", rpc="Classify", code="RESOURCE_EXHAUSTED") == 1


def _occupy(lane: Any) -> threading.Event:
    """Hold every thread of a lane (as slow calls would) until the event is set."""
    release = threading.Event()
    started = threading.Barrier(lane.threads + 1)

    def hold() -> None:
        started.wait(10)
        release.wait(10)

    for _ in range(lane.threads):
        lane.submit(hold)
    started.wait(10)
    return release


def test_a_batch_stops_when_its_deadline_passes(
    make_ruleset: MakeRuleset, start_app: StartApp
) -> None:
    """The server gives up part-way (DEADLINE_EXCEEDED) instead of finishing work nobody awaits."""
    many = "rules:\n" + "".join(
        f"  - id: r{i}\n    when: {{message: 'needle {i} .*x'}}\n    class: ToolError\n"
        for i in range(300)
    )
    running = start_app(make_ruleset(many), watch=False)
    needles = " ".join(f"needle {i}" for i in range(300)) + " x"  # every pattern runs: slow
    slow = pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="x.Y", message=needles))
    batch = pb.ClassifyBatchRequest(requests=[slow] * limits.MAX_BATCH)
    with pytest.raises(grpc.RpcError) as info:
        running.stub.ClassifyBatch(batch, timeout=0.2)  # the whole batch takes seconds
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    wait_for(lambda: running.metric("errorclass_rpcs_in_flight", rpc="ClassifyBatch") == 0)
    given_up = running.metric(
        "errorclass_rpcs_total", rpc="ClassifyBatch", code="DEADLINE_EXCEEDED"
    )
    assert given_up == 1
    assert (
        running.metric(
            "errorclass_classifications_total",
            **{"class": "ToolError", "rule": "r0", "origin": "unspecified"},
        )
        == 0
    )


def test_a_call_whose_deadline_passed_in_the_queue_is_not_served(
    serving_rules: Path, start_app: StartApp
) -> None:
    """With every worker busy, a call that waits past its deadline is dropped unanswered."""
    running = start_app(serving_rules, watch=False, threads=1)
    release = _occupy(running.app.server.lanes.unary)
    try:
        future = running.stub.Classify.future(pb.ClassifyRequest(descriptor=OK), timeout=0.2)
        with pytest.raises(grpc.RpcError) as info:
            future.result()
        assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    finally:
        release.set()
    assert running.stub.Classify(pb.ClassifyRequest(descriptor=OK), timeout=5).class_name == (
        "RateLimited"
    )
    served = running.app.metrics.registry.get_sample_value(
        "errorclass_rpc_duration_seconds_count", {"rpc": "Classify"}
    )
    assert served == 1  # only the call just made: the expired one never reached the servicer


def test_a_cancelled_stream_frees_its_worker(serving_rules: Path, start_app: StartApp) -> None:
    """A client that cancels mid-stream leaves no stream open and no worker held."""
    running = start_app(serving_rules, watch=False, threads=1)
    stream, gate = _held_stream(running.stub)
    assert running.metric("errorclass_rpcs_in_flight", rpc="ClassifyStream") == 1
    stream.cancel()
    gate.set()
    wait_for(lambda: running.metric("errorclass_rpcs_in_flight", rpc="ClassifyStream") == 0)
    # Counted once, and as CANCELLED unless grpcio delivered the cancel as the end of the
    # request stream first (its receive and close events race; then the server saw a stream
    # that ended normally: 6 runs in 165 here)
    finished = {
        code: running.metric("errorclass_rpcs_total", rpc="ClassifyStream", code=code)
        for code in ("CANCELLED", "OK")
    }
    assert sorted(finished.values()) == [0, 1], finished
    assert running.stub.Classify(pb.ClassifyRequest(descriptor=OK), timeout=5).class_name == (
        "RateLimited"
    )


VANISHING_CLIENT = textwrap.dedent(
    """
    import sys, threading
    import grpc
    from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb, classifier_pb2_grpc as rpc

    def requests():
        yield pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="x.Y"))
        threading.Event().wait()

    stream = rpc.ErrorClassifierStub(grpc.insecure_channel(sys.argv[1])).ClassifyStream(requests())
    print(next(stream).class_name, flush=True)
    threading.Event().wait()
    """
)


def test_a_client_process_that_dies_mid_stream_frees_its_stream(
    serving_rules: Path, start_app: StartApp
) -> None:
    """SIGKILL a client holding a stream open: the server notices and lets the stream go."""
    running = start_app(serving_rules, watch=False, threads=1)
    client = subprocess.Popen(
        [sys.executable, "-c", VANISHING_CLIENT, running.app.address],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert client.stdout is not None
        assert client.stdout.readline().strip() == "Unknown"
        assert running.metric("errorclass_rpcs_in_flight", rpc="ClassifyStream") == 1
    finally:
        client.kill()
        client.wait()
        if client.stdout:
            client.stdout.close()
    wait_for(lambda: running.metric("errorclass_rpcs_in_flight", rpc="ClassifyStream") == 0)
    assert running.stub.Classify(pb.ClassifyRequest(descriptor=OK), timeout=5).class_name == (
        "RateLimited"
    )


def test_an_unexpected_server_error_is_internal_and_logged(
    bundled: Ruleset, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bug answers INTERNAL (no stack trace on the wire) and logs an rpc_error line."""
    broken = dataclasses.replace(bundled, index=None)  # type: ignore[arg-type]  # never compiled
    server = create_server(broken, "127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = pb_grpc.ErrorClassifierStub(channel)
            err = _refused(stub, pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="a")))
            assert err.code() == grpc.StatusCode.INTERNAL
            assert err.details() == "Classify failed in the server; see its log"
            assert stub.GetRuleset(pb.GetRulesetRequest()).name == bundled.name
    finally:
        server.stop(grace=0)
    logged = capsys.readouterr().err
    assert '"event": "rpc_error"' in logged
    assert "AttributeError" in logged
    assert (
        server.metrics.registry.get_sample_value(
            "errorclass_rpcs_total", {"rpc": "Classify", "code": "INTERNAL"}
        )
        == 1
    )


def test_rule_file_limits_are_documented_numbers(tmp_path: Path) -> None:
    """The rule-file and pattern limits the docs state are the ones the loader applies."""
    from classifier.engine.compiler import MAX_PATTERN_CHARS, RE2_MAX_MEM
    from classifier.source.loader import MAX_RULE_FILE_BYTES, MAX_RULE_FILES

    readme = (ROOT / "README.md").read_text()
    for value in (MAX_RULE_FILE_BYTES, MAX_RULE_FILES, MAX_PATTERN_CHARS, RE2_MAX_MEM):
        assert f"{value:,}" in readme


def test_explain_is_bounded_per_call(running: Running) -> None:
    """At most MAX_EXPLAINED_PER_CALL explained items a batch; an explanation's text is cut
    to MAX_EXPLANATION_CHARS and its long fields to MAX_EXPLAINED_TEXT_CHARS."""
    explained = pb.ClassifyRequest(descriptor=OK, explain=True)
    too_many = pb.ClassifyBatchRequest(requests=[explained] * (limits.MAX_EXPLAINED_PER_CALL + 1))
    with pytest.raises(grpc.RpcError) as info:
        running.stub.ClassifyBatch(too_many, timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    n = limits.MAX_EXPLAINED_PER_CALL
    assert f"{n + 1} requests ask for explain; at most {n} per call" in str(info.value.details())
    ok = running.stub.ClassifyBatch(
        pb.ClassifyBatchRequest(requests=[explained] * limits.MAX_EXPLAINED_PER_CALL), timeout=10
    )
    assert len(ok.responses) == limits.MAX_EXPLAINED_PER_CALL
    text = "y" * limits.MAX_MESSAGE_CHARS
    big = pb.ExceptionDescriptor(
        type="x.Y",
        message=text,
        causes=[pb.Cause(type=f"c{i}", message=text) for i in range(8)],
        attributes={f"k{i}": text for i in range(16)},
    )
    answer = running.stub.Classify(pb.ClassifyRequest(descriptor=big, explain=True), timeout=10)
    assert len(answer.explanation.text) <= limits.MAX_EXPLANATION_CHARS + 100
    assert answer.ByteSize() < 64 * 1024


def test_a_batch_of_many_bad_items_is_invalid_argument_with_a_capped_trailer(
    running: Running,
) -> None:
    """1,000 bad items: INVALID_ARGUMENT naming the first 20 and counting the rest."""
    bad = pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type=""))
    batch = pb.ClassifyBatchRequest(requests=[bad] * limits.MAX_BATCH)
    with pytest.raises(grpc.RpcError) as info:
        running.stub.ClassifyBatch(batch, timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = str(info.value.details())
    assert details.startswith("requests[0].descriptor.type: must not be empty")
    assert details.endswith("... and 980 more")
    assert len(details) < 4200


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"\xff\xff\xff", "(a truncated field tag)"),
        (b"\x0a\x05\x0a\x03\xff\xfe\xfd", "descriptor.type (not UTF-8 at byte 0)"),
        (b"\x0a\x10abc", "descriptor (length 16 runs past the end)"),
        (b"\x0b" * 200, "descriptor (wire type 3: groups and bad tags are not accepted)"),
    ],
)
def test_bytes_that_are_not_a_message_are_invalid_argument(
    running: Running, data: bytes, where: str
) -> None:
    """Malformed bytes are INVALID_ARGUMENT naming where, never INTERNAL or UNKNOWN; counted."""
    call: Any = running.channel.unary_unary("/errorclass.v1.ErrorClassifier/Classify")
    with pytest.raises(grpc.RpcError) as info:
        call(data, timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value.details()
    assert where.split(" ")[0] in str(info.value.details())
    assert running.metric("errorclass_refused_total", rpc="Classify", reason="malformed") == 1
    assert running.metric("errorclass_rpcs_total", rpc="Classify", code="INVALID_ARGUMENT") == 1


def test_a_bad_item_in_a_batch_or_a_stream_is_named(running: Running) -> None:
    good = pb.ClassifyRequest(descriptor=OK).SerializeToString()
    bad = b"\x0a\x05\x0a\x03\xff\xfe\xfd"
    batch = b"".join(b"\x0a" + bytes([len(x)]) + x for x in (good, good, bad))
    call: Any = running.channel.unary_unary("/errorclass.v1.ErrorClassifier/ClassifyBatch")
    with pytest.raises(grpc.RpcError) as info:
        call(batch, timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "requests[2].descriptor.type" in str(info.value.details())
    stream: Any = running.channel.stream_stream("/errorclass.v1.ErrorClassifier/ClassifyStream")
    with pytest.raises(grpc.RpcError) as info:
        list(stream(iter([good, bad]), timeout=10))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_explain_is_served_one_call_at_a_time(running: Running) -> None:
    """While one call is being explained, another asking for explain is refused at once."""
    budget = running.app.explaining.budget
    budget.take()
    try:
        with pytest.raises(grpc.RpcError) as info:
            running.stub.Classify(pb.ClassifyRequest(descriptor=OK, explain=True), timeout=10)
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "explain is served 1 call at a time" in str(info.value.details())
        assert running.stub.Classify(pb.ClassifyRequest(descriptor=OK)).class_name == "RateLimited"
    finally:
        budget.give()
    answer = running.stub.Classify(pb.ClassifyRequest(descriptor=OK, explain=True), timeout=10)
    assert answer.explanation.winner_rule_id
    explainer = running.app.explaining.process
    assert (explainer.forks, explainer.in_process) == (1, False)  # made in its own process


def test_explain_whose_process_failed_is_unavailable(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The explaining process failing is UNAVAILABLE, saying why, and holds nothing back."""

    def died(*_: object) -> None:
        raise ExplainRefusedError(Why.DIED, "the explaining process died; it is restarted")

    monkeypatch.setattr(running.app.explaining.process, "run", died)
    with pytest.raises(grpc.RpcError) as info:
        running.stub.Classify(pb.ClassifyRequest(descriptor=OK, explain=True), timeout=10)
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    assert info.value.details() == "no explanation: the explaining process died; it is restarted"
    assert not running.app.lanes.pushback.any()  # no connection held back
    running.app.explaining.budget.take()  # the slot was given back
    running.app.explaining.budget.give()


TOO_MANY_EXPLAINED = pb.ClassifyBatchRequest(
    requests=[pb.ClassifyRequest(descriptor=OK, explain=True)] * (limits.MAX_EXPLAINED_PER_CALL + 1)
)


def _connection(running: Running) -> tuple[grpc.Channel, pb_grpc.ErrorClassifierStub]:
    """A channel with a connection of its own, as another client would have."""
    ch = grpc.insecure_channel(running.app.address, options=[("grpc.use_local_subchannel_pool", 1)])
    return ch, pb_grpc.ErrorClassifierStub(ch)


def _timed_classify(stub: pb_grpc.ErrorClassifierStub) -> float:
    started = time.monotonic()
    assert stub.Classify(pb.ClassifyRequest(descriptor=OK), timeout=10).class_name == "RateLimited"
    return time.monotonic() - started


def test_a_connection_refused_explain_is_told_when_to_retry_and_held_until_then(
    running: Running,
) -> None:
    """Refused for the explain budget: RESOURCE_EXHAUSTED with grpc-retry-pushback-ms, and
    that connection's next call waits out the hold while another connection's does not."""
    budget = running.app.explaining.budget
    (a, stub_a), (b, stub_b) = _connection(running), _connection(running)
    with a, b:
        _timed_classify(stub_a), _timed_classify(stub_b)  # both connected
        budget.take()
        try:
            with pytest.raises(grpc.RpcError) as info:
                stub_a.Classify(pb.ClassifyRequest(descriptor=OK, explain=True), timeout=10)
        finally:
            budget.give()
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        pushback = trailer(info.value)["grpc-retry-pushback-ms"]
        assert pushback == str(round(limits.HOLD_MIN_SECONDS * 1000))
        assert _timed_classify(stub_b) < limits.HOLD_MIN_SECONDS
        assert _timed_classify(stub_a) >= limits.HOLD_MIN_SECONDS * 0.5
        assert _timed_classify(stub_a) < limits.HOLD_MIN_SECONDS  # the hold is over


def test_held_calls_wait_without_a_thread_and_others_are_served_meanwhile(
    running: Running,
) -> None:
    """A batch asking more explanations than any call may holds its connection for
    HOLD_MAX_SECONDS: eight calls on it (twice the lane's threads) wait out the hold, and
    another connection's calls are answered at once meanwhile."""
    (a, stub_a), (b, stub_b) = _connection(running), _connection(running)
    lane = running.app.server.lanes.unary
    with a, b:
        _timed_classify(stub_b)
        with pytest.raises(grpc.RpcError) as info:
            stub_a.ClassifyBatch(TOO_MANY_EXPLAINED, timeout=10)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        held_at = time.monotonic()
        futures_ = [
            stub_a.Classify.future(pb.ClassifyRequest(descriptor=OK), timeout=10) for _ in range(8)
        ]
        wait_for(lambda: lane.held == 8, timeout=limits.HOLD_MAX_SECONDS / 2, step=0.005)
        assert max(_timed_classify(stub_b) for _ in range(20)) < limits.HOLD_MAX_SECONDS / 2
        assert all(f.result().class_name == "RateLimited" for f in futures_)
        assert time.monotonic() - held_at >= limits.HOLD_MAX_SECONDS * 0.9
        assert lane.held == 0
        assert lane.held_total >= 8
        assert running.metric("errorclass_held_calls_total", lane="unary") == lane.held_total


def test_held_calls_are_answered_at_once_when_the_server_stops(
    serving_rules: Path, start_app: StartApp
) -> None:
    running = start_app(serving_rules, watch=False)
    ch, stub = _connection(running)
    with ch:
        with pytest.raises(grpc.RpcError):
            stub.ClassifyBatch(TOO_MANY_EXPLAINED, timeout=10)
        held_at = time.monotonic()
        call = stub.Classify.future(pb.ClassifyRequest(descriptor=OK), timeout=10)
        lane = running.app.server.lanes.unary
        wait_for(lambda: lane.held == 1, timeout=limits.HOLD_MAX_SECONDS / 2, step=0.005)
        stopping = threading.Thread(target=running.app.stop, kwargs={"grace": 5.0})
        stopping.start()
        try:
            assert call.result().class_name == "RateLimited"
            assert time.monotonic() - held_at < limits.HOLD_MAX_SECONDS * 0.9
        finally:
            stopping.join(timeout=15)


class _Call:
    """What grpcio's work item carries, as far as a lane reads it: the call's peer."""

    def peer(self) -> bytes:
        return b"ipv4:127.0.0.1:1"


class _Event:
    call = _Call()


def test_a_held_connection_past_the_cap_is_queued_as_any_other() -> None:
    """Pushback bounds what it keeps: past `cap` held calls, a held connection's call is
    queued at once rather than held (here through a real lane and its threads)."""
    holds = Pushback(cap=1)
    holds.hold("ipv4:127.0.0.1:1", 1.0)
    lane = Lane("t", 2, None, "test", holds)
    try:
        started = time.monotonic()
        first = lane.submit(lambda _event: time.monotonic(), _Event())
        second = lane.submit(lambda _event: time.monotonic(), _Event())
        assert second.result(timeout=5) - started < 0.5  # past the cap: not held
        assert first.result(timeout=5) - started >= 0.9  # held for its second
        assert (lane.held_total, holds.held) == (1, 0)
    finally:
        lane.shutdown()


def test_calls_released_together_are_served_on_every_thread() -> None:
    """Four held calls of 0.3 s each, released at once on a lane of four threads, end
    together, not one after another (submitted apart, so one idle thread holds them all:
    the lane starts the others as the calls come out of their hold)."""
    holds = Pushback()
    holds.hold("ipv4:127.0.0.1:1", limits.HOLD_MIN_SECONDS)
    lane = Lane("t", 4, None, "test", holds)
    try:
        started = time.monotonic()
        done = []
        for _ in range(4):
            done.append(lane.submit(lambda _event: time.sleep(0.3), _Event()))
            time.sleep(0.01)
        for future in done:
            future.result(timeout=5)
        assert lane.held_total == 4
        assert time.monotonic() - started < limits.HOLD_MIN_SECONDS + 0.3 * 2
    finally:
        lane.shutdown()
