"""Hostile clients and bad days, as functions: the fault suite (tests/server/test_faults.py)
asserts on them with generous bounds, and `python -m benchmarks.bench_faults` prints
their precise figures. Every attack is bounded in count and time and talks to
loopback only; every thread and process it starts is stopped before it returns.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc

PROBE = pb.ClassifyRequest(
    descriptor=pb.ExceptionDescriptor(
        type="openai.RateLimitError", http_status=429, origin=pb.ORIGIN_PROVIDER
    )
)
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]
"""Each channel opened with this has a connection of its own, as another client would."""
REFLECTION_METHOD = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"


def channel(address: str) -> grpc.Channel:
    return grpc.insecure_channel(address, options=OWN_CONNECTION)


@dataclass
class Latency:
    """Round trips of one Classify and one health Check, one after another."""

    seconds: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def percentile(self, p: float) -> float:
        if not self.seconds:
            return float("inf")
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]

    @property
    def p50(self) -> float:
        return self.percentile(50)

    @property
    def p99(self) -> float:
        return self.percentile(99)

    def line(self) -> str:
        return (
            f"{len(self.seconds)} probes, p50 {self.p50 * 1000:.2f} ms, "
            f"p99 {self.p99 * 1000:.2f} ms, {len(self.failures)} failed"
        )


def probe(address: str, calls: int = 200, timeout: float = 2.0, seconds: float = 20.0) -> Latency:
    """A well-behaved client on its own connection: Classify then health Check, `calls` times."""
    out = Latency()
    with channel(address) as ch:
        stub = pb_grpc.ErrorClassifierStub(ch)
        health: Any = health_pb2_grpc.HealthStub(ch)
        try:
            grpc.channel_ready_future(ch).result(timeout=10)
            stub.Classify(PROBE, timeout=5)  # warm
        except (grpc.RpcError, grpc.FutureTimeoutError) as err:
            out.failures.append(f"warm-up: {err!r}"[:200])
        until = time.monotonic() + seconds
        for _ in range(calls):
            if time.monotonic() > until:
                break
            started = time.perf_counter()
            try:
                stub.Classify(PROBE, timeout=timeout)
                health.Check(health_pb2.HealthCheckRequest(), timeout=timeout)
            except grpc.RpcError as err:
                out.failures.append(f"{err.code().name}: {err.details()}")
                continue
            out.seconds.append(time.perf_counter() - started)
    return out


class IdleStreams:
    """`count` streams spread over `connections` connections, each sending nothing (or
    `first` messages and then nothing), held open until closed."""

    def __init__(
        self,
        address: str,
        count: int,
        *,
        connections: int = 4,
        first: int = 0,
        method: str = "/errorclass.v1.ErrorClassifier/ClassifyStream",
        hold: float = 60.0,
    ) -> None:
        self._release = threading.Event()
        self._hold = hold
        self.channels = [channel(address) for _ in range(connections)]
        first_bytes = PROBE.SerializeToString()
        self.calls: list[Any] = []
        self.answers = 0
        self._readers: list[threading.Thread] = []
        for i in range(count):
            multi: Any = self.channels[i % connections].stream_stream(method)
            call = multi(self._requests(first, first_bytes))
            self.calls.append(call)
            reader = threading.Thread(target=self._read, args=(call,), daemon=True)
            reader.start()
            self._readers.append(reader)

    def _read(self, call: Any) -> None:
        """Take the answers, so that the status behind them is seen."""
        with contextlib.suppress(grpc.RpcError):
            for _ in call:
                self.answers += 1

    def _requests(self, first: int, data: bytes) -> Iterator[bytes]:
        yield from [data] * first
        self._release.wait(self._hold)

    def outcomes(self, wait: float = 5.0) -> dict[str, int]:
        """How each stream ended (status name), waiting up to `wait` seconds in all."""
        until = time.monotonic() + wait
        out: dict[str, int] = {}
        for call in self.calls:
            code = "OPEN"
            with contextlib.suppress(grpc.RpcError, grpc.FutureTimeoutError):
                if not call.done() and time.monotonic() < until:
                    call.exception(timeout=max(0.0, until - time.monotonic()))
            if call.done():
                c = call.code()
                code = c.name if c is not None else "OPEN"
            out[code] = out.get(code, 0) + 1
        return out

    def close(self) -> None:
        self._release.set()
        for call in self.calls:
            call.cancel()
        for reader in self._readers:
            reader.join(timeout=5)
        for ch in self.channels:
            ch.close()


def silent_connections(host: str, port: int, count: int) -> list[socket.socket]:
    """TCP connections that never send the HTTP/2 preface."""
    return [socket.create_connection((host, port), timeout=5) for _ in range(count)]


def closed_within(sockets: list[socket.socket], seconds: float) -> tuple[int, float]:
    """How many of the sockets the server closed within `seconds`, and when the last was."""
    deadline = time.monotonic() + seconds
    started = time.monotonic()
    closed = 0
    last = 0.0
    for s in sockets:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            s.settimeout(left)
            try:
                data = s.recv(65536)
            except (TimeoutError, OSError):
                break
            if not data:  # EOF: the server closed it (it sends SETTINGS and GOAWAY first)
                closed += 1
                last = time.monotonic() - started
                break
    for s in sockets:
        s.close()
    return closed, last


@dataclass
class Served:
    """A `classifier serve` process started from `source` (a checkout) on a free port."""

    proc: subprocess.Popen[bytes]
    address: str
    log: Path
    metrics: str | None

    def events(self) -> list[dict[str, Any]]:
        out = []
        for line in self.log.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
        return out

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> tuple[int, float]:
        """Signal the process; its exit code and how long it took to exit."""
        started = time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return -9, time.monotonic() - started
        return code, time.monotonic() - started

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch(
    source: Path, log: Path, *args: str, metrics: bool = False, rules: str | None = "rules"
) -> Served:
    """Start `python -m classifier serve --no-watch` in `source` on a free port, its stderr
    into `log`, in a session of its own; return at once (`serve` waits until it answers).
    `rules=None` serves the bundled library."""
    port = free_port()
    extra = ["--metrics-addr", f"127.0.0.1:{free_port()}"] if metrics else []
    folder = ["--rules", rules] if rules is not None else []
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "classifier", "serve", *folder, "--no-watch"),
                *("--addr", f"127.0.0.1:{port}", *extra, *args),
            ],
            cwd=source,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    return Served(proc, f"127.0.0.1:{port}", log, extra[1] if extra else None)


def serve(
    source: Path, log: Path, *args: str, metrics: bool = False, rules: str = "rules"
) -> Served:
    """Start `python -m classifier serve` in `source` and wait (up to 60 s) until it answers."""
    served = launch(source, log, *args, metrics=metrics, rules=rules)
    proc = served.proc
    until = time.monotonic() + 60
    while time.monotonic() < until:
        if proc.poll() is not None:
            raise RuntimeError(f"serve exited {proc.returncode}: {log.read_text()}")
        if any(e.get("event") == "start" for e in served.events()):
            with channel(served.address) as ch:
                try:
                    pb_grpc.ErrorClassifierStub(ch).Classify(PROBE, timeout=5)
                    return served
                except grpc.RpcError:
                    pass
        time.sleep(0.05)
    served.kill()
    raise RuntimeError("serve did not start within 60 s")


@dataclass
class InFlight:
    """Unary calls made by `clients` threads until told to stop, and how each ended."""

    outcomes: list[tuple[float, str]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self, address: str, clients: int = 8, max_calls: int = 20_000) -> None:
        def run() -> None:
            with channel(address) as ch:
                stub = pb_grpc.ErrorClassifierStub(ch)
                for _ in range(max_calls):
                    if self._stop.is_set():
                        return
                    sent = time.monotonic()
                    try:
                        outcome = stub.Classify(PROBE, timeout=10).class_name
                    except grpc.RpcError as err:
                        outcome = err.code().name
                    self.outcomes.append((sent, outcome))
                    if outcome != "RateLimited":
                        time.sleep(0.02)

        self._threads = [threading.Thread(target=run, daemon=True) for _ in range(clients)]
        for t in self._threads:
            t.start()

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=30)


def large_descriptor(tag: str = "") -> pb.ClassifyRequest:
    """The largest descriptor the limits allow, near enough: 32 causes and 64 attributes,
    each with 4,096 characters of text (about 400 KB on the wire)."""
    text = ("x" * 4090 + tag)[:4096]
    return pb.ClassifyRequest(
        descriptor=pb.ExceptionDescriptor(
            type="com.example.Huge",
            message=text,
            causes=[pb.Cause(type=f"c.C{i}", message=text) for i in range(32)],
            attributes={f"k{i}": text for i in range(64)},
        )
    )


def send(address: str, request: pb.ClassifyRequest, calls: int, clients: int = 4) -> list[str]:
    """`calls` Classify calls of `request` from `clients` threads; the failures' codes."""
    failures: list[str] = []
    per = max(1, calls // clients)

    def run() -> None:
        with channel(address) as ch:
            stub = pb_grpc.ErrorClassifierStub(ch)
            for _ in range(per):
                try:
                    stub.Classify(request, timeout=10)
                except grpc.RpcError as err:
                    failures.append(err.code().name)

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return failures


SECRETS = {
    "openai": "sk-proj-Abc123def456GHI789jkl012MNO345",
    "anthropic": "sk-ant-api03-AbCdEf123456_GhIjKl789012-xyz",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "aws_session": "ASIAY34FZKBOKMUTVV7A",
    "google": "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
    "github": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "github_pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig123",
    "basic": "dXNlcjpwYXNzd29yZDEyMw==",
    "email": "alice.smith@example.com",
    "hex": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
}


def secret_request() -> pb.ClassifyRequest:
    """A descriptor whose message, cause, code and attributes carry every built-in secret."""
    s = SECRETS
    return pb.ClassifyRequest(
        descriptor=pb.ExceptionDescriptor(
            type="openai.AuthenticationError",
            supertypes=["openai.APIStatusError"],
            http_status=401,
            origin=pb.ORIGIN_PROVIDER,
            message=f"Incorrect API key provided: {s['openai']}. Contact {s['email']}",
            causes=[
                pb.Cause(
                    type="httpx.HTTPStatusError",
                    message=f"Authorization: Bearer {s['bearer']} (basic: Basic {s['basic']})",
                )
            ],
            attributes={
                "anthropic": f"key={s['anthropic']}",
                "aws": f"{s['aws']} {s['aws_session']}",
                "google": s["google"],
                "github": f"{s['github']} and {s['github_pat']}",
                "digest": s["hex"],
            },
        )
    )


def sigterm_with_calls_in_flight(
    source: Path, log: Path, *, threads: int, grace: float = 2.0, timeout: float = 20.0
) -> tuple[list[str], int, float]:
    """SIGTERM to a server holding 4 idle streams while 8 clients call: the outcome of every
    call sent before the signal, the exit code, and how long the process took to exit."""
    served = serve(source, log, "--grace", f"{grace:g}", "--threads", str(threads))
    held = IdleStreams(served.address, 4, connections=1)
    calls = InFlight()
    try:
        calls.start(served.address, clients=8)
        time.sleep(1.0)
        at = time.monotonic()
        code, took = served.stop(signal.SIGTERM, timeout=timeout)
        calls.stop()
    finally:
        held.close()
        served.kill()
    return [outcome for sent, outcome in calls.outcomes if sent < at - 0.05], code, took


@dataclass(frozen=True)
class BlockedWriter:
    """What 300 of the largest descriptors did to a server whose decision log never drains."""

    start_rss_mb: float
    rss_mb: float
    failures: list[str]
    exit_code: int
    exit_seconds: float
    served: Served
    """The stopped server, for its log."""


def blocked_writer(source: Path, folder: Path, *, grace: float, timeout: float) -> BlockedWriter:
    """The decision log on a pipe that is open but never read (a writer blocked in the
    kernel), 300 calls of ~400 KB, then SIGTERM."""
    fifo = folder / "blocked.jsonl"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # open, never read
    try:
        served = serve(
            source, folder / "blocked.log", "--decision-log", str(fifo), "--grace", f"{grace:g}"
        )
        try:
            start_rss = served.rss_mb()
            failures = send(served.address, large_descriptor(), 300)
            rss = served.rss_mb()
            code, took = served.stop(timeout=timeout)
        finally:
            served.kill()
    finally:
        os.close(reader)
    return BlockedWriter(start_rss, rss, failures, code, took, served)
