"""The fault suite (issue 14): each attack a hostile client or a bad day makes, performed
on loopback against a real `classifier serve`, bounded in count and time.

The bounds are generous (this machine is shared and its load moves): a test
fails when the behaviour regresses (calls fail, a cliff appears, the process
hangs), not when a figure moves by tens of percent. `python -m benchmarks.bench_faults`
prints the precise figures; `pytest -s` prints these runs' too.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.attacks import (
    REFLECTION_METHOD,
    IdleStreams,
    InFlight,
    Served,
    closed_within,
    probe,
    serve,
    silent_connections,
)
from tests.support import ROOT

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


def test_connections_that_never_speak_are_closed(default_server: Served) -> None:
    """50 TCP connections that never send the HTTP/2 preface are closed within seconds."""
    host, port = default_server.address.rsplit(":", 1)
    sockets = silent_connections(host, int(port), 50)
    closed, last = closed_within(sockets, 12.0)
    print(f"\nsilent connections: {closed} of 50 closed, the last after {last:.1f} s")
    assert closed == 50
    assert last < 10.0
    assert probe(default_server.address, calls=5).failures == []


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
    served = serve(ROOT, tmp_path / "serve.log", "--grace", "2", "--threads", "4")
    held = IdleStreams(served.address, 4, connections=1)
    calls = InFlight()
    try:
        calls.start(served.address, clients=8)
        time.sleep(1.0)
        at = time.monotonic()
        code, took = served.stop(signal.SIGTERM, timeout=10)
        calls.stop()
    finally:
        held.close()
        served.kill()
    before = [outcome for sent, outcome in calls.outcomes if sent < at - 0.05]
    wrong = {o for o in before if o != "RateLimited"}
    print(f"\nSIGTERM: {len(before)} calls before it, {len(wrong)} not answered, exit {took:.2f} s")
    assert wrong == set()
    assert len(before) > 8
    assert code == 0
    assert took < 2 + 2
