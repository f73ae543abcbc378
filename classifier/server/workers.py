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
SIGHUP reloads every worker, and if a worker dies the others
are stopped and the parent exits with its status, so a supervisor
(Kubernetes, systemd) restarts the whole set. Workers whose parent is
killed outright stop by themselves.

A metrics port or a decision log cannot be shared between processes, so
they are refused with more than one worker; run one worker per container
and scale with replicas when those are needed.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import threading
import time
from multiprocessing.connection import wait
from types import FrameType

from classifier._signals import remember as remember_signal
from classifier.server.log import log
from classifier.server.runtime import Rulesets, ServeConfig, load_rulesets, serve

STOP_SECONDS = 30.0
"""How long the parent waits, beyond --grace, for workers it asked to stop; then it kills them."""
WAIT_STEP_SECONDS = 1.0
"""How often the supervising parent looks at the clock while it waits for workers."""
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


def serve_workers(config: ServeConfig, workers: int, rulesets: Rulesets | None = None) -> int:
    """Run `workers` forked servers on config's address until stopped; their worst exit code.

    Every worker starts serving `rulesets` (else load_rulesets(config), loaded here once).
    """
    if rulesets is None:
        rulesets = load_rulesets(config)
    context = multiprocessing.get_context("fork")
    shared = dataclasses.replace(config, reuse_port=True)
    processes = [
        context.Process(target=_worker, args=(shared, rulesets), name=f"classifier-worker-{i}")
        for i in range(workers)
    ]
    stopping = False

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        if signum != signal.SIGHUP:
            stopping = True
        for p in processes:
            if p.pid is not None and p.is_alive():
                os.kill(p.pid, signal.SIGHUP if signum == signal.SIGHUP else signal.SIGTERM)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    for p in processes:
        p.start()
    log("workers", count=workers, pids=[p.pid for p in processes], address=config.address)
    running = list(processes)
    deadline: float | None = None
    while running:
        # A step, not forever: a signal sets `stopping` without ending the wait.
        ended = wait([p.sentinel for p in running], WAIT_STEP_SECONDS)
        running = [p for p in running if p.sentinel not in ended]
        failed = [p for p in processes if p.exitcode not in (None, 0)]
        if running and not stopping and (failed or len(running) < workers):
            log("worker_exited", level="error", exit_codes=[p.exitcode for p in processes])
            forward(signal.SIGTERM, None)
        if stopping and deadline is None:
            deadline = time.monotonic() + config.grace + STOP_SECONDS
        if running and deadline is not None and time.monotonic() > deadline:
            log("worker_killed", level="error", pids=[p.pid for p in running])
            for p in running:
                p.kill()
            running = []
    for p in processes:
        p.join()
    return max(_status(p.exitcode) for p in processes)


def _status(exitcode: int | None) -> int:
    """A worker's exit as a shell reports it: killed by signal N is 128 + N."""
    if exitcode is None:
        return 1
    return 128 - exitcode if exitcode < 0 else exitcode


def _worker(config: ServeConfig, rulesets: Rulesets) -> None:
    # A fresh start for signals: the parent's handlers must not run in a worker; a
    # SIGHUP before the worker serves is remembered (and reloads once it does).
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, remember_signal)
    threading.Thread(
        target=_follow_parent, args=(os.getppid(),), name="follow-parent", daemon=True
    ).start()
    serve(config, rulesets)


def _follow_parent(parent: int) -> None:
    """Stop (gracefully) once the parent is gone: killed outright, it could not stop us."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)
