"""`classifier serve --workers N`: N server processes sharing one port, for more than one core.

A Python process answers on about one core (the GIL), so a machine with
more cores runs several. As in gRPC's own multiprocessing example, each
worker is a forked process with its own gRPC server bound to the same
address with SO_REUSEPORT, and the kernel spreads new connections among
them. Workers are forked before any gRPC object exists (gRPC does not
survive a fork after it has started) but after the parent has loaded the
rules, so every worker starts on the same ruleset; each then watches and
reloads the rules itself, so they converge on later changes.

The parent only supervises: SIGTERM and SIGINT stop every worker
gracefully (one still running STOP_SECONDS after its --grace is killed),
SIGHUP reloads every worker. A worker that dies is replaced by a new one,
forked from the parent with the rules it loaded at start (the new worker then
watches and reloads them itself), while the others keep serving; so is a
worker that stops answering: each worker's heartbeat thread writes to a pipe
every HEARTBEAT_SECONDS, and one silent for STALL_SECONDS (SIGSTOPped, or
stuck holding the GIL) is killed and replaced. More than MAX_RESTARTS
replacements within RESTART_WINDOW_SECONDS is a crash loop: the parent stops
every worker and exits with the last one's status, so a supervisor
(Kubernetes, systemd) sees it. Workers whose parent is killed outright stop by
themselves.

A metrics port or a decision log cannot be shared between processes, so
they are refused with more than one worker; run one worker per container
and scale with replicas when those are needed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import signal
import threading
import time
from multiprocessing.connection import wait
from types import FrameType
from typing import Any

from classifier._signals import remember as remember_signal
from classifier.server.runtime import (
    Rulesets,
    ServeConfig,
    load_rulesets,
    serve,
    serving_bundle,
)
from classifier.server.shared.log import log
from classifier.server.shared.serving_bundle import ServingBundle

STOP_SECONDS = 30.0
"""How long the parent waits, beyond --grace, for workers it asked to stop; then it kills them."""
WAIT_STEP_SECONDS = 0.5
"""How often the supervising parent looks at the clock while it waits for workers."""
HEARTBEAT_SECONDS = 0.5
"""How often a worker tells the parent it is alive."""
STALL_SECONDS = 5.0
"""A worker silent this long (stopped, or stuck) is killed and replaced."""
MAX_RESTARTS = 5
RESTART_WINDOW_SECONDS = 30.0
PARENT_CHECK_SECONDS = 0.5


def check_workers(config: ServeConfig, workers: int) -> str | None:
    """Why `workers` processes cannot serve this configuration, or None when they can."""
    if workers < 1:
        return "--workers must be at least 1"
    if workers == 1:
        return None
    if config.address.rsplit(":", 1)[-1] == "0":
        return "--workers needs a fixed port (with port 0 each worker would pick its own)"
    if config.metrics_address:
        return "--workers cannot share --metrics-addr; run one worker per container instead"
    if config.decision_log:
        return "--workers cannot share --decision-log; run one worker per container instead"
    return None


class _Worker:
    """One worker process and the read end of its heartbeat pipe."""

    def __init__(
        self,
        context: Any,
        config: ServeConfig,
        rulesets: Rulesets,
        bundle: ServingBundle,
        index: int,
    ) -> None:
        read, write = os.pipe()
        os.set_blocking(read, False)
        self.beats = read
        self.process = context.Process(
            target=_worker,
            args=(config, rulesets, bundle, write),
            name=f"classifier-worker-{index}",
        )
        self.process.start()
        os.close(write)
        self.last_beat = time.monotonic()

    @property
    def pid(self) -> int | None:
        pid: int | None = self.process.pid
        return pid

    def read_beats(self) -> None:
        try:
            while os.read(self.beats, 4096):
                self.last_beat = time.monotonic()
        except (BlockingIOError, OSError):
            pass

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.beats)


def serve_workers(
    config: ServeConfig,
    workers: int,
    rulesets: Rulesets | None = None,
    bundle: ServingBundle | None = None,
) -> int:
    """Run `workers` forked servers on config's address until stopped; their worst exit code.

    Every worker starts serving `rulesets` (else load_rulesets(config), loaded here once)
    and their `bundle` (else serving_bundle(config, rulesets), built here once).
    """
    if rulesets is None:
        rulesets = load_rulesets(config)
    if bundle is None:
        bundle = serving_bundle(config, rulesets)
    context = multiprocessing.get_context("fork")
    shared = dataclasses.replace(config, reuse_port=True)
    running: list[_Worker] = []
    stopping = False

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        if signum != signal.SIGHUP:
            stopping = True
        for w in running:
            if w.pid is not None and w.process.is_alive():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(w.pid, signal.SIGHUP if signum == signal.SIGHUP else signal.SIGTERM)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    started = 0
    for _ in range(workers):
        running.append(_Worker(context, shared, rulesets, bundle, started))
        started += 1
    log("workers", count=workers, pids=[w.pid for w in running], address=config.address)
    restarts: list[float] = []
    worst = 0
    deadline: float | None = None
    while running:
        # A step, not forever: a signal sets `stopping` without ending the wait.
        ready = wait(
            [w.process.sentinel for w in running] + [w.beats for w in running], WAIT_STEP_SECONDS
        )
        now = time.monotonic()
        for w in list(running):
            if w.beats in ready:
                w.read_beats()
            if w.process.sentinel in ready or not w.process.is_alive():
                w.process.join()
                running.remove(w)
                w.close()
                code = _status(w.process.exitcode)
                if stopping:
                    worst = max(worst, code)
                else:
                    log("worker_exited", level="error", pid=w.pid, exit_code=code)
                    restarts.append(now)
            elif not stopping and now - w.last_beat > STALL_SECONDS:
                log("worker_stalled", level="error", pid=w.pid, silent_seconds=STALL_SECONDS)
                w.process.kill()  # the sentinel ends it next round, and it is replaced
                w.last_beat = now
        restarts = [t for t in restarts if now - t < RESTART_WINDOW_SECONDS]
        if not stopping and len(restarts) > MAX_RESTARTS:
            log("workers_crash_loop", level="error", restarts=len(restarts))
            worst = max(worst, 1)
            forward(signal.SIGTERM, None)
        if not stopping:
            while len(running) < workers:
                replacement = _Worker(context, shared, rulesets, bundle, started)
                started += 1
                running.append(replacement)
                log("worker_replaced", pid=replacement.pid)
        if stopping and deadline is None:
            deadline = time.monotonic() + config.grace + STOP_SECONDS
        if running and deadline is not None and time.monotonic() > deadline:
            log("worker_killed", level="error", pids=[w.pid for w in running])
            for w in running:
                w.process.kill()
            for w in running:
                w.process.join()
                worst = max(worst, _status(w.process.exitcode))
                w.close()
            running = []
    return worst


def _status(exitcode: int | None) -> int:
    """A worker's exit as a shell reports it: killed by signal N is 128 + N."""
    if exitcode is None:
        return 1
    return 128 - exitcode if exitcode < 0 else exitcode


def _worker(config: ServeConfig, rulesets: Rulesets, bundle: ServingBundle, beats: int) -> None:
    # A fresh start for signals: the parent's handlers must not run in a worker; a
    # SIGHUP before the worker serves is remembered (and reloads once it does).
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, remember_signal)
    threading.Thread(
        target=_follow_parent, args=(os.getppid(), beats), name="follow-parent", daemon=True
    ).start()
    serve(config, rulesets, bundle)


def _follow_parent(parent: int, beats: int) -> None:
    """Tell the parent we are alive; stop (gracefully) once it is gone: killed outright, it
    could not stop us."""
    os.set_blocking(beats, False)
    while os.getppid() == parent:
        with contextlib.suppress(OSError):  # a full pipe: the parent is busy, not gone
            os.write(beats, b".")
        time.sleep(HEARTBEAT_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)
