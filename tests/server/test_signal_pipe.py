"""SignalPipe: a signal handler must never write a log line itself, and a signal another
thread took is acted on at once.

The handler runs on the main thread between two bytecodes, possibly inside a
write to stderr; a log line written there raised "reentrant call inside
<_io.BufferedWriter name='<stderr>'>" and ended `classifier serve` on SIGTERM.
"""

from __future__ import annotations

import ctypes
import io
import os
import signal
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest

from benchmarks.attacks import serve
from classifier.server.runtime import SignalPipe
from classifier.server.shared.log import log
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.support import ROOT, ruleset_files, wait_for, write_folder


def test_a_storm_of_signals_during_stderr_writes_is_acted_on_off_the_main_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_end, write_end = os.pipe()
    drained = threading.Thread(
        target=lambda: [None for _ in iter(lambda: os.read(read_end, 65536), b"")]
    )
    drained.start()
    stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(write_end, "w"), buffer_size=64))
    monkeypatch.setattr(sys, "stderr", stderr)
    acted: list[tuple[str, int]] = []

    def on_stop(signum: int) -> None:
        log("shutdown", signal=signal.Signals(signum).name)  # the real handler's first act
        acted.append((threading.current_thread().name, signum))

    def on_reload() -> None:
        acted.append((threading.current_thread().name, signal.SIGHUP))

    pipe = SignalPipe(on_stop, on_reload)
    done = threading.Event()

    def send() -> None:
        for i in range(300):
            os.kill(os.getpid(), signal.SIGHUP if i % 3 == 0 else signal.SIGTERM)
            time.sleep(0.001)
        done.set()

    sender = threading.Thread(target=send)
    try:
        sender.start()
        lines = 0
        deadline = time.monotonic() + 30
        while not done.is_set() and time.monotonic() < deadline:
            log("busy", n=lines, padding="x" * 200)  # the main thread inside stderr writes
            lines += 1
        sender.join(timeout=10)
        deadline = time.monotonic() + 10
        while len({s for _, s in acted}) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        pipe.close()
        stderr.close()
        drained.join(timeout=10)
    assert done.is_set()
    assert lines > 0
    # Signals of one kind that arrive together are one to the kernel: not 300, but both kinds.
    assert {s for _, s in acted} == {signal.SIGHUP, signal.SIGTERM}
    assert {name for name, _ in acted} == {"signals"}  # never on the main thread


def test_close_puts_the_previous_handlers_back() -> None:
    before = {s: signal.getsignal(s) for s in SignalPipe.SIGNALS}
    pipe = SignalPipe(lambda _s: None, lambda: None)
    assert all(signal.getsignal(s) != before[s] for s in SignalPipe.SIGNALS)
    pipe.close()
    assert {s: signal.getsignal(s) for s in SignalPipe.SIGNALS} == before


def test_a_signal_another_thread_took_is_acted_on_while_the_main_thread_sleeps() -> None:
    """The kernel may hand the process's SIGHUP to any thread; Python runs its handlers only
    on the main thread, when it next runs. With the main thread asleep (as in `serve`),
    a SIGHUP taken by another thread must still reload at once, not when something
    wakes the main thread."""
    reloaded = threading.Event()
    pipe = SignalPipe(lambda _s: None, reloaded.set)
    park = threading.Event()
    other = threading.Thread(target=park.wait, args=(30,), name="other")
    other.start()
    try:
        assert other.ident is not None
        started = time.monotonic()
        signal.pthread_kill(other.ident, signal.SIGHUP)  # taken by `other`, not the main thread
        assert reloaded.wait(5)  # the main thread sleeps here, in C, until the reload
        took = time.monotonic() - started
    finally:
        park.set()
        other.join(timeout=10)
        pipe.close()
    assert took < 2


def test_serve_reloads_on_a_sighup_a_grpc_thread_took(tmp_path: Path) -> None:
    """The real server: a SIGHUP sent to one of gRPC's threads (as the kernel may deliver a
    process's signal) reloads the rules (the CI flake of test_sighup_reloads_the_rules)."""
    rules = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    served = serve(ROOT, tmp_path / "serve.log", rules=str(rules))
    try:
        pid = served.proc.pid
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid]
        names = {t: Path(f"/proc/{pid}/task/{t}/comm").read_text().strip() for t in tids}
        target = next(t for t in tids if names[t].startswith(("grpc", "event_engine")))
        write_folder(rules, ruleset_files("2.0.0", "ToolError"))
        with grpc.insecure_channel(served.address) as channel:
            stub = pb_grpc.ErrorClassifierStub(channel)
            assert stub.GetRuleset(pb.GetRulesetRequest(), timeout=10).version == "1.0.0"
            assert ctypes.CDLL(None, use_errno=True).tgkill(pid, target, signal.SIGHUP) == 0
            wait_for(lambda: stub.GetRuleset(pb.GetRulesetRequest(), timeout=10).version == "2.0.0")
    finally:
        code, _ = served.stop()
        served.kill()
    assert code == 0
