"""SignalPipe: a signal handler must never write a log line itself.

The handler runs on the main thread between two bytecodes, possibly inside a
write to stderr; a log line written there raised "reentrant call inside
<_io.BufferedWriter name='<stderr>'>" and ended `classifier serve` on SIGTERM.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
import time

import pytest

from classifier.server.log import log
from classifier.server.runtime import SignalPipe


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
