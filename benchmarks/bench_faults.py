"""The attacks of issue 14, measured: what each costs the server and its other callers.

    python -m benchmarks.bench_faults                    # against this checkout
    python -m benchmarks.bench_faults --source ../main   # the same attacks on another checkout
    python -m benchmarks.bench_faults --only streams,explain

Each attack starts its own `classifier serve` (from --source, default flags unless
the attack is about one), performs the attack on loopback, bounded in count and
time, prints one line of figures, and stops everything it started. The fault
suite (tests/server/test_faults.py) performs the same attacks with generous bounds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

from benchmarks import attacks
from benchmarks.attacks import (
    PROBE,
    SECRETS,
    IdleStreams,
    channel,
    closed_within,
    probe,
    secret_request,
    send,
    serve,
    sigterm_with_calls_in_flight,
    silent_connections,
)
from benchmarks.load import median
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
PROBE_CALLS = 1000
PROBE_TIMEOUT = 1.0
PROBE_SECONDS = 15.0


def _probe(address: str) -> attacks.Latency:
    return probe(address, calls=PROBE_CALLS, timeout=PROBE_TIMEOUT, seconds=PROBE_SECONDS)


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b and b != float("inf") and a != float("inf") else "n/a"


ROUNDS = 3


def _rounds(address: str, start: Callable[[], Any], stop: Callable[[Any], str]) -> str:
    """Idle and attacked probes, alternated ROUNDS times (the machine's load moves): the
    median p50 and p99 of each, their ratio, and what the attack saw."""
    idle: list[attacks.Latency] = []
    attacked: list[attacks.Latency] = []
    seen = ""
    for _ in range(ROUNDS):
        idle.append(_probe(address))
        handle = start()
        try:
            time.sleep(0.5)
            attacked.append(_probe(address))
        finally:
            seen = stop(handle)
    i99, a99 = median([x.p99 for x in idle]), median([x.p99 for x in attacked])
    i50, a50 = median([x.p50 for x in idle]), median([x.p50 for x in attacked])
    failed = sum(len(x.failures) for x in attacked)
    calls = sum(len(x.seconds) + len(x.failures) for x in attacked)
    return (
        f"idle p50 {i50 * 1e3:.2f} p99 {i99 * 1e3:.2f} ms; attacked p50 {a50 * 1e3:.2f} "
        f"p99 {a99 * 1e3:.2f} ms (p99 {_ratio(a99, i99)}); {failed} of {calls} probes failed; "
        f"{seen}"
    )


def streams(source: Path, tmp: Path) -> str:
    served = serve(source, tmp / "streams.log")

    def start() -> tuple[IdleStreams, IdleStreams]:
        return (
            IdleStreams(served.address, 250, connections=4),
            IdleStreams(served.address, 50, connections=2, first=1),
        )

    def stop(handle: tuple[IdleStreams, IdleStreams]) -> str:
        outcomes = handle[0].outcomes(wait=0)
        for h in handle:
            h.close()
        return f"the 250 idle streams: {outcomes}"

    try:
        return "300 idle/stalled streams, 4 connections: " + _rounds(served.address, start, stop)
    finally:
        served.kill()


def reflection(source: Path, tmp: Path) -> str:
    served = serve(source, tmp / "reflection.log")

    def start() -> IdleStreams:
        return IdleStreams(served.address, 24, connections=2, method=attacks.REFLECTION_METHOD)

    def stop(handle: IdleStreams) -> str:
        outcomes = handle.outcomes(wait=1.0)
        handle.close()
        return f"streams {outcomes}"

    try:
        return "24 idle reflection streams: " + _rounds(served.address, start, stop)
    finally:
        served.kill()


def _explain_batch(items: int, text_chars: int) -> pb.ClassifyBatchRequest:
    text = "x" * text_chars
    d = pb.ExceptionDescriptor(
        type="com.example.Weird",
        message=text,
        causes=[pb.Cause(type="c.C", message=text) for _ in range(4)],
    )
    return pb.ClassifyBatchRequest(
        requests=[pb.ClassifyRequest(descriptor=d, explain=True) for _ in range(items)]
    )


FLOOD = """
import json, sys, threading, time
import grpc
sys.path.insert(0, sys.argv[4])
from benchmarks.bench_faults import _explain_batch
address, items, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
batch = _explain_batch(items, 4096)
codes, cost = {}, []
until = time.monotonic() + seconds
def flood():
    with grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) as ch:
        call = ch.unary_unary("/errorclass.v1.ErrorClassifier/ClassifyBatch")
        data = batch.SerializeToString()
        while time.monotonic() < until:
            t = time.perf_counter()
            try:
                call(data, timeout=30)
                code = "OK"
            except grpc.RpcError as err:
                code = err.code().name
            cost.append(time.perf_counter() - t)
            codes[code] = codes.get(code, 0) + 1
threads = [threading.Thread(target=flood) for _ in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps({"codes": codes, "mean_ms": 1000 * sum(cost) / max(1, len(cost))}))
"""


def explain(source: Path, tmp: Path) -> str:
    """Eight clients (in a process of their own) sending explained batches as fast as they
    are answered, while another client probes; then the same client probes a second server
    that nobody floods (a control), so the line tells what the flood costs the attacked
    server's callers apart from what its load costs every program on the machine."""
    served = serve(source, tmp / "explain.log")
    control = serve(source, tmp / "control.log")
    out = []
    try:
        for items in (100, 4):
            size = len(_explain_batch(items, 4096).SerializeToString()) // 1024
            controls: list[attacks.Latency] = []

            def start(items: int = items) -> subprocess.Popen[str]:
                return subprocess.Popen(
                    [sys.executable, "-c", FLOOD, served.address, str(items), "8", str(ROOT)],
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    text=True,
                )

            def stop(
                proc: subprocess.Popen[str], controls: list[attacks.Latency] = controls
            ) -> str:
                controls.append(_probe(control.address))
                try:
                    stdout, _ = proc.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    stdout, _ = proc.communicate()
                try:
                    seen = json.loads(stdout)
                except ValueError:
                    return "flood: no report"
                return f"flood calls {seen['codes']}, {seen['mean_ms']:.0f} ms each"

            line = _rounds(served.address, start, stop)
            c99 = median([x.p99 for x in controls])
            out.append(
                f"8 clients x {items} explained items ({size} KiB): {line}; "
                f"meanwhile an unflooded server on this machine: p99 {c99 * 1e3:.2f} ms"
            )
    finally:
        served.kill()
        control.kill()
    return " | ".join(out)


def blocked_writer(source: Path, tmp: Path) -> str:
    run = attacks.blocked_writer(source, tmp, grace=2, timeout=25)
    start_rss, rss, failures = run.start_rss_mb, run.rss_mb, run.failures
    code, took = run.exit_code, run.exit_seconds
    return (
        f"300 calls of ~400 KB behind a blocked writer: RSS {start_rss:.0f} -> {rss:.0f} MB, "
        f"{len(failures)} failed; SIGTERM --grace 2: exit {code} after {took:.1f} s"
    )


def enospc(source: Path, tmp: Path) -> str:
    path = tmp / "full.jsonl"
    path.symlink_to("/dev/full")
    served = serve(source, tmp / "full.log", "--decision-log", str(path))
    try:
        failures = send(served.address, PROBE, 2000)
        time.sleep(1.0)
        lines = len(served.log.read_text(errors="replace").splitlines())
        size = served.log.stat().st_size
        path.unlink()
        time.sleep(2.5)
        send(served.address, PROBE, 20)
        time.sleep(1.5)
        written = len(path.read_text().splitlines()) if path.is_file() else 0
    finally:
        served.kill()
    return (
        f"2,000 calls on /dev/full: {lines} stderr lines ({size / 1024:.0f} KiB), "
        f"{len(failures)} calls failed; then room again: {written} lines written"
    )


def torn(source: Path, tmp: Path) -> str:
    whole = json.dumps({"descriptor": {"type": "com.example.Weird", "message": "é"}})
    log = tmp / "torn.jsonl"
    log.write_bytes((whole + "\n").encode() * 5 + whole.encode()[:-8] + b"\xc3")
    args = [sys.executable, "-m", "classifier", "diff", "--base", "rules", "--head", "rules"]
    out = subprocess.run([*args, str(log)], cwd=source, capture_output=True, text=True, timeout=120)
    replayed = next((ln for ln in out.stdout.splitlines() if "descriptors" in ln), "")
    return f"5 whole lines and a torn one: exit {out.returncode}; {replayed or out.stderr[-120:]}"


def secrets(source: Path, tmp: Path) -> str:
    log = tmp / "secrets.jsonl"
    served = serve(source, tmp / "secrets.log", "--decision-log", str(log))
    try:
        with channel(served.address) as ch:
            pb_grpc.ErrorClassifierStub(ch).Classify(secret_request(), timeout=10)
        time.sleep(1.0)
    finally:
        served.stop()
        served.kill()
    text = log.read_text(errors="replace") + served.log.read_text(errors="replace")
    found = sorted(name for name, secret in SECRETS.items() if secret in text)
    return f"{len(found)} of {len(SECRETS)} built-in secrets on disk: {found}"


MALFORMED: list[bytes] = [
    b"\xff",
    b"\xff\xff\xff\xff",
    b"\x0a",
    b"\x0a\x7f",
    b"\x0a\x05\x0a\x03\xff\xfe\xfd",
    b"\x0a\x03\x0a\x01\x80",
    b"\x0b" * 300,
    b"\x0a\xff\xff\xff\xff\x0f",
    b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
    b"\x0a\x06\x32\x04\x0a\x02\xc3\x28",
    b"\x0a\x04\x42\x02\x0a\xff",
] + [bytes([i]) * 5 for i in range(0, 256, 6)]


def malformed(source: Path, tmp: Path) -> str:
    served = serve(source, tmp / "malformed.log", metrics=True)
    codes: dict[str, int] = {}
    try:
        with channel(served.address) as ch:
            call: Any = ch.unary_unary("/errorclass.v1.ErrorClassifier/Classify")
            for data in MALFORMED:
                try:
                    call(data, timeout=5)
                    code = "OK"
                except grpc.RpcError as err:
                    code = err.code().name
                codes[code] = codes.get(code, 0) + 1
            bad = pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type=""))
            try:
                pb_grpc.ErrorClassifierStub(ch).ClassifyBatch(
                    pb.ClassifyBatchRequest(requests=[bad] * 1000), timeout=10
                )
                batch = "OK"
            except grpc.RpcError as err:
                batch = f"{err.code().name} ({len(err.details() or '')} characters)"
    finally:
        served.kill()
    return f"{len(MALFORMED)} malformed requests: {codes}; a batch of 1,000 bad items: {batch}"


def silent(source: Path, tmp: Path) -> str:
    served = serve(source, tmp / "silent.log")
    try:
        host, port = served.address.rsplit(":", 1)
        sockets = silent_connections(host, int(port), 50)
        closed, last = closed_within(sockets, 15.0)
    finally:
        served.kill()
    return f"50 connections that never speak: {closed} closed within 15 s (last at {last:.1f} s)"


def sigterm(source: Path, tmp: Path) -> str:
    before, code, took = sigterm_with_calls_in_flight(source, tmp / "sigterm.log", threads=16)
    wrong: dict[str, int] = {}
    for o in before:
        if o != "RateLimited":
            wrong[o] = wrong.get(o, 0) + 1
    return (
        f"--threads 16 --grace 2, 4 idle streams, 8 clients: exit {code} after {took:.1f} s; "
        f"{len(before)} calls sent before SIGTERM, not answered: {wrong or 0}"
    )


def sighup(source: Path, tmp: Path) -> str:
    out = []
    for delay in (0.3, 0.05):
        proc = attacks.launch(source, tmp / f"hup-{delay}.log", rules=None).proc
        time.sleep(delay)
        proc.send_signal(signal.SIGHUP)
        time.sleep(2.0)
        alive = proc.poll() is None
        out.append(
            f"SIGHUP {delay:g} s after exec: {'alive' if alive else f'died {proc.returncode}'}"
        )
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    served = serve(source, tmp / "burst.log")
    try:
        for _ in range(50):  # spread over a second: signals sent at once merge in the kernel
            served.proc.send_signal(signal.SIGHUP)
            time.sleep(0.02)
        time.sleep(1.0)
        first = sum(1 for e in served.events() if e.get("event") == "reload")
        time.sleep(4.0)
        reloads = sum(1 for e in served.events() if e.get("event") == "reload")
    finally:
        served.kill()
    out.append(f"50 SIGHUPs in 1 s: {first} reloads 1 s after, {reloads} 5 s after")
    return "; ".join(out)


def workers(source: Path, tmp: Path) -> str:
    launched = attacks.launch(source, tmp / "workers.log", "--workers", "2")
    proc, log, port = launched.proc, launched.log, launched.address.rsplit(":", 1)[1]
    outcomes: list[str] = []
    try:
        until = time.monotonic() + 60
        while time.monotonic() < until and log.read_text().count('"start"') < 2:
            time.sleep(0.1)
        pids = next(
            json.loads(ln)["pids"] for ln in log.read_text().splitlines() if '"workers"' in ln
        )
        stop = threading.Event()

        def hammer() -> None:
            for _ in range(5000):
                if stop.is_set():
                    return
                with channel(f"127.0.0.1:{port}") as ch:
                    try:
                        pb_grpc.ErrorClassifierStub(ch).Classify(PROBE, timeout=2)
                        outcomes.append("ok")
                    except grpc.RpcError as err:
                        outcomes.append(err.code().name)

        thread = threading.Thread(target=hammer)
        thread.start()
        time.sleep(0.5)
        os.kill(int(pids[0]), signal.SIGKILL)
        time.sleep(3.0)
        stop.set()
        thread.join(timeout=60)
        alive = proc.poll() is None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    failed = len([o for o in outcomes if o != "ok"])
    return (
        f"kill -9 of 1 of 2 workers: {len(outcomes)} calls on new connections over 3.5 s, "
        f"{failed} failed; parent {'still serving' if alive else f'exited {proc.returncode}'}"
    )


CLIENT = """
import socket, sys, threading, time
from errorclass_client import Client, ServiceError
listener = socket.socket(); listener.bind(("127.0.0.1", 0)); listener.listen(64)
held = []
threading.Thread(target=lambda: [held.append(listener.accept()[0]) for _ in range(64)],
                 daemon=True).start()
with Client(f"127.0.0.1:{listener.getsockname()[1]}", attempts=1) as c:
    waits = []
    for _ in range(10):
        t = time.monotonic()
        try:
            c.classify(type="x.Y")
        except ServiceError:
            pass
        waits.append(time.monotonic() - t)
print(f"10 failed runs against a hung server: {sum(waits):.2f} s in all, "
      f"the first {waits[0]:.2f} s, the last {waits[-1] * 1000:.1f} ms")
"""


def client(source: Path, tmp: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-c", CLIENT], cwd=source, capture_output=True, text=True, timeout=120
    )
    return out.stdout.strip() or out.stderr.strip()[-200:]


ATTACKS: dict[str, Callable[[Path, Path], str]] = {
    "streams": streams,
    "reflection": reflection,
    "explain": explain,
    "blocked-writer": blocked_writer,
    "enospc": enospc,
    "torn": torn,
    "secrets": secrets,
    "malformed": malformed,
    "silent": silent,
    "sigterm": sigterm,
    "sighup": sighup,
    "workers": workers,
    "client": client,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--source", type=Path, default=ROOT, help="the checkout to serve from")
    parser.add_argument("--only", default="", help="comma-separated attacks (default: all)")
    args = parser.parse_args(argv)
    chosen = [a for a in args.only.split(",") if a] or list(ATTACKS)
    print(f"source: {args.source.resolve()}; load average {os.getloadavg()[0]:.2f}")
    for name in chosen:
        with tempfile.TemporaryDirectory(prefix=f"faults-{name}-") as tmp:
            started = time.monotonic()
            try:
                result = ATTACKS[name](args.source.resolve(), Path(tmp))
            except Exception as exc:  # one attack failing must not hide the others
                result = f"could not run: {exc!r}"[:300]
            print(f"{name:15} {result}  [{time.monotonic() - started:.0f} s]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
