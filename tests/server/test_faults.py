"""The fault suite (issue 14): each attack a hostile client or a bad day makes, performed
on loopback against a real `classifier serve`, bounded in count and time.

The bounds are generous (this machine is shared and its load moves): a test
fails when the behaviour regresses (calls fail, a cliff appears, the process
hangs), not when a figure moves by tens of percent. `python -m benchmarks.bench_faults`
prints the precise figures; `pytest -s` prints these runs' too.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from benchmarks import attacks
from benchmarks.attacks import (
    PROBE,
    REFLECTION_METHOD,
    SECRETS,
    IdleStreams,
    Served,
    channel,
    closed_within,
    free_port,
    launch,
    probe,
    secret_request,
    send,
    serve,
    sigterm_with_calls_in_flight,
    silent_connections,
)
from classifier import limits
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.conftest import StartApp
from tests.support import ROOT, trailer, wait_for

SLOWER = 4.0
"""p99 under attack may be this many times the idle figure (plus FLOOR) before a test
fails; the issue's target is 2x, which the benchmark measures."""
FLOOR = 0.02


def _bound(idle: float) -> float:
    return SLOWER * idle + FLOOR


@pytest.fixture(scope="module")
def default_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`classifier serve` with its defaults, the bundled rules."""
    log = tmp_path_factory.mktemp("faults") / "serve.log"
    served = serve(ROOT, log)
    yield served
    served.kill()


def test_idle_and_stalled_streams_leave_unary_calls_and_health_alone(
    default_server: Served,
) -> None:
    """300 streams from 4 connections, 250 sending nothing and 50 one message then nothing:
    another client's Classify and health Check keep their latency and never fail."""
    idle = probe(default_server.address, calls=150)
    held = IdleStreams(default_server.address, 250, connections=4)
    stalled = IdleStreams(default_server.address, 50, connections=2, first=1)
    try:
        time.sleep(0.5)
        attacked = probe(default_server.address, calls=150)
        opened = held.outcomes(wait=0)
    finally:
        held.close()
        stalled.close()
    print(f"\nidle server: {idle.line()}\n300 idle/stalled streams: {attacked.line()}")
    assert attacked.failures == []
    assert opened == {"OPEN": 250}
    assert attacked.p99 <= _bound(idle.p99), (idle.line(), attacked.line())


def test_idle_reflection_streams_cannot_starve_anything(default_server: Served) -> None:
    """What grpcurl opens, held idle past the reflection lane: the excess is refused at once,
    and unary calls and health checks carry on."""
    idle = probe(default_server.address, calls=100)
    held = IdleStreams(default_server.address, 24, connections=2, method=REFLECTION_METHOD)
    try:
        time.sleep(0.5)
        attacked = probe(default_server.address, calls=100)
        outcomes = held.outcomes(wait=1.0)
    finally:
        held.close()
    print(f"\nreflection: {outcomes}; {attacked.line()}")
    assert attacked.failures == []
    assert outcomes == {"OPEN": 16, "RESOURCE_EXHAUSTED": 8}
    assert attacked.p99 <= _bound(idle.p99)


def test_an_idle_stream_is_closed_with_a_clear_status(tmp_path: Path) -> None:
    served = serve(ROOT, tmp_path / "serve.log", "--stream-idle-timeout", "1")
    try:
        held = IdleStreams(served.address, 10, connections=1, first=1)
        try:
            outcomes = held.outcomes(wait=6.0)
            details = {c.details() for c in held.calls if c.done()}
        finally:
            held.close()
    finally:
        code, _ = served.stop()
    assert outcomes == {"DEADLINE_EXCEEDED": 10}
    assert details == {"no message for 1 s (--stream-idle-timeout); the stream is closed"}
    assert code == 0


def test_sigterm_with_streams_open_answers_every_call_in_flight(tmp_path: Path) -> None:
    """4 idle streams and 8 clients calling when SIGTERM comes (--grace 2): every call sent
    before the signal is answered, and the process exits within the grace plus 2 s."""
    before, code, took = sigterm_with_calls_in_flight(
        ROOT, tmp_path / "serve.log", threads=4, timeout=10
    )
    wrong = {o for o in before if o != "RateLimited"}
    print(f"\nSIGTERM: {len(before)} calls before it, {len(wrong)} not answered, exit {took:.2f} s")
    assert wrong == set()
    assert len(before) > 8
    assert code == 0
    assert took < 2 + 2


def _events(served: Served, event: str) -> list[dict[str, object]]:
    return [e for e in served.events() if e.get("event") == event]


def test_a_blocked_decision_log_writer_holds_at_most_its_byte_cap(tmp_path: Path) -> None:
    """The decision log on a pipe nobody reads (a writer blocked in the kernel), 300 of the
    largest descriptors: the process stays small, calls never fail, and SIGTERM with
    --grace 1 exits within the grace plus 2 s although the writer never returns."""
    run = attacks.blocked_writer(ROOT, tmp_path, grace=1, timeout=20)
    failures, rss, code, took = run.failures, run.rss_mb, run.exit_code, run.exit_seconds
    print(f"\nblocked writer: 300 calls of ~400 KB, RSS {rss:.0f} MB, SIGTERM exit in {took:.2f} s")
    assert failures == []
    assert rss < 200
    assert code == 0
    assert took < 1 + 2
    assert len(_events(run.served, "decision_log_abandoned")) == 1


def test_a_full_disk_logs_a_handful_of_lines_and_writing_resumes(tmp_path: Path) -> None:
    """The decision log on /dev/full (ENOSPC on every write), then on a disk with room."""
    path = tmp_path / "d.jsonl"
    path.symlink_to("/dev/full")
    served = serve(ROOT, tmp_path / "serve.log", "--decision-log", str(path))
    try:
        assert send(served.address, PROBE, 400) == []
        time.sleep(1.5)
        assert send(served.address, PROBE, 400) == []
        errors = _events(served, "decision_log_error")
        path.unlink()  # room again: the writer reopens the path and carries on
        wait_for(lambda: bool(_events(served, "decision_log_recovered")), timeout=10)
        assert send(served.address, PROBE, 20) == []
        wait_for(lambda: path.is_file() and len(path.read_text().splitlines()) >= 20)
    finally:
        code, _ = served.stop()
        served.kill()
    stderr = served.log.read_text()
    print(f"\nENOSPC: {len(stderr.splitlines())} stderr lines, {len(errors)} decision_log_error")
    assert len(errors) == 1
    assert "ENOSPC" in str(errors[0]["error"])
    assert len(stderr.splitlines()) <= 6  # start, one error, recovered, shutdown, stopped
    assert "Traceback" not in stderr
    assert code == 0


def test_a_torn_last_line_replays_every_whole_line(tmp_path: Path) -> None:
    """A log cut mid-line (and mid UTF-8 sequence) by a full disk: diff replays the rest."""
    whole = json.dumps({"descriptor": {"type": "com.example.Weird", "message": "é"}})
    torn = whole.encode()[: whole.encode().index(b"\\u00e9") + 3] + b"\xc3"
    log = tmp_path / "d.jsonl"
    log.write_bytes((whole + "\n").encode() * 5 + torn)
    args = [sys.executable, "-m", "classifier", "diff", "--base", "rules", "--head", "rules"]
    out = subprocess.run([*args, str(log)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "0 of 5 descriptors" in out.stdout
    assert "d.jsonl:6: not JSON" in out.stderr or "d.jsonl:6: not UTF-8" in out.stderr
    strict = subprocess.run(
        [*args, "--strict", str(log)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert strict.returncode == 2


def test_no_built_in_secret_reaches_any_file(tmp_path: Path, serving_rules: Path) -> None:
    """Every built-in kind of secret in a descriptor's message, cause and attributes: none
    reaches the decision log or the shadow examples, and the lines say what was masked;
    the answer is the one the unmasked descriptor gets."""
    log = tmp_path / "d.jsonl"
    served = serve(
        ROOT,
        tmp_path / "serve.log",
        "--decision-log",
        str(log),
        "--candidate",
        str(serving_rules),
    )
    try:
        with channel(served.address) as ch:
            answer = pb_grpc.ErrorClassifierStub(ch).Classify(secret_request(), timeout=10)
        wait_for(lambda: "AuthenticationError" in log.read_text())
    finally:
        served.stop()
        served.kill()
    assert answer.class_name != "Unknown"
    written = [p.read_bytes().decode(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    found = {name for name, secret in SECRETS.items() for text in written if secret in text}
    assert found == set()
    [line] = [json.loads(x) for x in log.read_text().splitlines() if "AuthenticationError" in x]
    assert set(line["redacted"]["fields"]) >= {
        "descriptor.message",
        "descriptor.causes[0].message",
        "descriptor.attributes.aws",
    }
    shadows = _events(served, "shadow_disagreement")
    assert any("redacted" in e for e in shadows)


def test_sighup_at_any_moment_never_kills_and_a_burst_reloads_once_or_twice(
    tmp_path: Path,
) -> None:
    """SIGHUPs while the server imports, loads and starts (from 0.4 s after exec: before
    that only the interpreter's own start-up runs), then 50 at once: it never dies, and
    the burst is one or two reloads, not fifty."""
    served = launch(ROOT, tmp_path / "serve.log", rules=None)
    proc = served.proc
    try:
        started = time.monotonic()
        for at in (0.4, 0.6, 0.8, 1.0, 1.3, 1.6, 2.0):
            time.sleep(max(0.0, started + at - time.monotonic()))
            assert proc.poll() is None, served.log.read_text()
            proc.send_signal(signal.SIGHUP)
        wait_for(lambda: bool(_events(served, "start")), timeout=30)
        assert probe(served.address, calls=3).failures == []
        wait_for(lambda: bool(_events(served, "reload")), timeout=10)
        time.sleep(0.5)
        before = len(_events(served, "reload"))
        for _ in range(50):
            proc.send_signal(signal.SIGHUP)
        wait_for(lambda: len(_events(served, "reload")) > before, timeout=15)  # a loaded CI
        time.sleep(2.0)  # room for the reloads a burst must not cause
        burst = len(_events(served, "reload")) - before
        assert proc.poll() is None
        code, _ = served.stop()
    finally:
        served.kill()
    print(f"\nSIGHUP: 7 before and while starting, then 50 at once: {burst} reloads")
    assert 1 <= burst <= 3  # the kernel merges signals sent at once; the server, the rest
    assert code == 0


def _sighup_blocked(pid: int) -> bool:
    """Whether the process holds SIGHUP back (its SigBlk mask in /proc has bit 1 set)."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigBlk:"))
    return bool(int(mask, 16) & (1 << (signal.SIGHUP - 1)))


def _image_entrypoint() -> list[str]:
    """The container image's ENTRYPOINT, as deploy/Dockerfile writes it."""
    for line in (ROOT / "deploy" / "Dockerfile").read_text().splitlines():
        if line.startswith("ENTRYPOINT "):
            entrypoint: list[str] = json.loads(line.removeprefix("ENTRYPOINT "))
            return entrypoint
    raise AssertionError("deploy/Dockerfile has no ENTRYPOINT")


@pytest.mark.parametrize("launcher", ["image entrypoint", "parent blocks SIGHUP"])
def test_a_sighup_in_the_first_milliseconds_after_exec_is_held_and_becomes_a_reload(
    tmp_path: Path, launcher: str
) -> None:
    """Before the interpreter runs any code no program can catch a signal; a launcher that
    holds SIGHUP back across the exec (the image's `env --block-signal=HUP`, or a process
    manager's sigprocmask before spawning) closes that window: a SIGHUP sent as soon as it
    is held, while the interpreter is still starting, never kills, and is one reload once
    the server can take it."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    port = free_port()
    serve_args = ["serve", "--no-watch", "--addr", f"127.0.0.1:{port}"]
    if launcher == "image entrypoint":
        command = [*_image_entrypoint(), *serve_args]
    else:
        command = [os.path.join(bin_dir, "classifier"), *serve_args]
    log = tmp_path / "serve.log"
    with log.open("wb") as err:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
        try:
            if launcher == "image entrypoint":
                signal.pthread_sigmask(signal.SIG_SETMASK, held)  # the launcher does it itself
            proc = subprocess.Popen(
                command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=err,
                start_new_session=True,
            )  # fmt: skip
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    served = Served(proc, f"127.0.0.1:{port}", log, None)
    try:
        wait_for(lambda: _sighup_blocked(proc.pid), timeout=5, step=0.0005)  # env ran, or exec'd
        proc.send_signal(signal.SIGHUP)  # the interpreter is still starting: ~25 ms to go
        wait_for(lambda: bool(_events(served, "start")), timeout=30)
        wait_for(lambda: bool(_events(served, "reload")), timeout=10)
        assert proc.poll() is None, log.read_text()
        [reload] = _events(served, "reload")
        assert reload["trigger"] == "signal", reload
        assert probe(served.address, calls=3).failures == []
        proc.send_signal(signal.SIGHUP)  # not left blocked: later SIGHUPs reload too
        wait_for(lambda: len(_events(served, "reload")) == 2, timeout=10)
        code, _ = served.stop()
    finally:
        served.kill()
    assert code == 0


def test_an_explain_flood_leaves_other_callers_answered(default_server: Served) -> None:
    """8 clients sending explained batches as fast as they are answered: other callers are
    all answered and no cliff appears (before the budget, their p50 passed a second); the
    flood is served one explanation at a time, the rest refused at once with the time to
    retry, and each refused client's next call is held back until then."""
    text = "x" * 4096
    descriptor = pb.ExceptionDescriptor(
        type="com.example.Weird",
        message=text,
        causes=[pb.Cause(type="c.C", message=text) for _ in range(4)],
    )
    batch = pb.ClassifyBatchRequest(
        requests=[pb.ClassifyRequest(descriptor=descriptor, explain=True)] * 4
    )
    idle = probe(default_server.address, calls=100)
    stop = threading.Event()
    ends: list[list[tuple[str, float]]] = [[] for _ in range(8)]
    pushbacks: list[str] = []

    def flood(mine: list[tuple[str, float]]) -> None:
        with channel(default_server.address) as ch:
            stub = pb_grpc.ErrorClassifierStub(ch)
            for _ in range(2000):
                if stop.is_set():
                    return
                try:
                    stub.ClassifyBatch(batch, timeout=10)
                    mine.append(("OK", time.monotonic()))
                except grpc.RpcError as err:
                    mine.append((err.code().name, time.monotonic()))
                    pushbacks.append(trailer(err).get("grpc-retry-pushback-ms", ""))

    threads = [threading.Thread(target=flood, args=(mine,)) for mine in ends]
    for t in threads:
        t.start()
    try:
        time.sleep(0.3)
        attacked = probe(default_server.address, calls=100)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    codes = [code for mine in ends for code, _ in mine]
    after_refusal = [
        later - refused
        for mine in ends
        for (code, refused), (_, later) in itertools.pairwise(mine)
        if code == "RESOURCE_EXHAUSTED"
    ]
    print(
        f"\nexplain flood: idle {idle.line()}; flooded {attacked.line()}; flood {len(codes)}, "
        f"{codes.count('OK')} explained; a refused client's next answer came "
        f"{min(after_refusal, default=0) * 1000:.0f} ms later at the soonest"
    )
    assert attacked.failures == []
    assert set(codes) <= {"OK", "RESOURCE_EXHAUSTED"}
    assert "OK" in codes
    assert after_refusal, "the budget never refused"
    # The gap is measured on the client's clock from when its thread saw the refusal: on a
    # loaded machine a thread scheduled late sees one late and its gap looks short (34 ms of
    # a 100 ms hold once in CI-like load), so the floor is on the tenth percentile, and the
    # median must be most of a hold: calls that were not held back fail both.
    gaps = sorted(after_refusal)
    assert gaps[len(gaps) // 10] >= limits.HOLD_MIN_SECONDS * 0.5, gaps
    assert gaps[len(gaps) // 2] >= limits.HOLD_MIN_SECONDS * 0.8, gaps
    assert pushbacks
    assert all(int(ms) >= limits.HOLD_MIN_SECONDS * 1000 for ms in pushbacks)
    assert attacked.p99 <= max(10 * idle.p99, idle.p99 + 0.25)


def test_connections_that_never_speak_are_closed(serving_rules: Path, start_app: StartApp) -> None:
    """50 TCP connections to the gRPC port that never send the HTTP/2 preface, and 20 to
    the side port that never send a request: the probes and /metrics answer meanwhile,
    and every such connection is closed within seconds."""
    running = start_app(serving_rules, watch=False)
    assert running.app.admin is not None
    grpc_host, grpc_port = running.app.address.rsplit(":", 1)
    host, port = running.app.admin.address.rsplit(":", 1)
    sockets = silent_connections(grpc_host, int(grpc_port), 50)
    sockets += silent_connections(host, int(port), 20)
    assert running.http("/-/ready") == (200, "ready\n")
    assert running.http("/metrics")[0] == 200
    assert probe(running.app.address, calls=5).failures == []
    closed, last = closed_within(sockets, 12.0)
    print(f"\nsilent connections: {closed} of 70 closed, the last after {last:.1f} s")
    assert closed == 70
    assert last < 10.0


def test_health_watch_still_works_on_its_lane(serving_rules: Path, start_app: StartApp) -> None:
    """grpc.health.v1 Watch (a server stream) on the watch lane: SERVING, then held open."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    running = start_app(serving_rules, watch=False)
    stub: Any = health_pb2_grpc.HealthStub(running.channel)
    watch = stub.Watch(health_pb2.HealthCheckRequest(), timeout=1.0)
    first = next(watch)
    assert first.status == health_pb2.HealthCheckResponse.SERVING
    with pytest.raises(grpc.RpcError) as info:
        next(watch)
    assert info.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
