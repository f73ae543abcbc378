"""Explanations in a process of their own, so that they never hold the serving interpreter.

An explanation is all Python: a couple of milliseconds of interpreter per
descriptor, a hundred times an answer. Run on a thread of the server, every
other caller's call waited for the interpreter at each of its steps (the
server's loop, the lane, the handler) while one was running: one explain
flood moved other callers' p99 by 6x even within the CPU budget. In a
process of its own, an explanation is preempted by the kernel like any
other program and the server's interpreter is free.

The process is forked from the server with the serving ruleset in memory
(nothing to load or send), on the first explanation after a reload, and
replaced when the ruleset changes; it runs at nice 19, so an explanation
takes a core only when the server does not need it. Work goes in as plain
data (gRPC requests as wire bytes, the console's form as text) and comes
back the same way, with the CPU time it took for the explain budget to
charge. One process is enough: the budget serves one explanation at a time.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import signal
import stat
import threading
import time
from collections.abc import Callable
from concurrent import futures
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from classifier.engine.ruleset import Ruleset
from classifier.server.explain.refusal import ExplainRefusedError, Why
from classifier.server.shared.internals import processes_of
from classifier.server.shared.log import log

_serving: Ruleset | None = None
"""In the explaining process: the ruleset it was forked with."""


T = TypeVar("T")


def _run_here(work: Callable[..., T], args: tuple[Any, ...]) -> tuple[T, float]:
    """In the explaining process: `work(ruleset, *args)`, and the CPU seconds it took."""
    started = time.process_time()
    assert _serving is not None
    return work(_serving, *args), time.process_time() - started


def _start_here(server: int) -> None:
    """The explaining process dies with the server, lets go of the server's sockets, yields
    the CPU to it (nice 19: an explanation runs when a core is free) and leaves signals to
    it: SIGTERM ends it, the rest are ignored (a process group's SIGHUP must not run the
    server's reload in here)."""
    _die_with(server)
    _close_sockets()
    gc.freeze()  # never collect what the server left here (gRPC's objects among it)
    with contextlib.suppress(OSError):
        os.nice(19)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_IGN)


PR_SET_PDEATHSIG = 1


def _die_with(server: int) -> None:
    """SIGKILL this process when the server's thread that forked it ends (Linux), or at
    once when the server is gone already: an explaining process that outlived a killed
    server held its port and its stderr open, and nothing would ever stop it."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != server:
        os._exit(0)


def _close_sockets() -> None:
    """Close the server's sockets here (its port, its connections): this process never
    uses them, and a copy kept the port's connections open past the server's own close."""
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.close(fd)


FORK_ATTEMPTS = 3
START_SECONDS = 10.0
"""How long a new explaining process may take to answer its first (empty) task."""


class ExplainingProcess:
    """The explaining process of one server (one part of `Explaining`); `run` from any
    thread.

    When the process cannot be started (FORK_ATTEMPTS in a row died or hung at
    start: gRPC's fork handlers were left on, see classifier._fork), the
    explanations are made in the calling thread, as before there was a process,
    and the server says so once in its log.
    """

    def __init__(
        self, attempts: int = FORK_ATTEMPTS, start: Callable[[int], None] | None = None
    ) -> None:
        self.attempts = attempts
        self.start = start or _start_here
        """What the process runs first, given the server's pid (the default: `_start_here`)."""
        self._lock = threading.Lock()
        self._forker = futures.ThreadPoolExecutor(1, thread_name_prefix="explainer-fork")
        """Forks every explaining process: the process dies when the thread that forked it
        ends (`_die_with`), so that thread must live as long as this object; a lane or
        console thread may not (the console's ends with its request)."""
        self._pool: futures.ProcessPoolExecutor | None = None
        self._ruleset: Ruleset | None = None
        self.forks = 0
        """Explaining processes started (one per ruleset explained, plus any replaced)."""
        self.in_process = False
        """True once the process could not be started: explanations run here."""

    def run(
        self, ruleset: Ruleset, work: Callable[..., T], args: tuple[Any, ...], timeout: float | None
    ) -> tuple[T, float]:
        """`work(ruleset, *args)` in the explaining process, and the CPU seconds it took
        there (0 when it ran in this thread: the budget measures this thread itself).

        `work` is a module-level function (it is sent by name), its arguments and
        result plain data; what it raises is raised here. ExplainRefusedError (why:
        DIED or LATE): the process died (it is replaced) or ran past `timeout`.
        """
        pool = self._pool_for(ruleset)
        if pool is None:
            return work(ruleset, *args), 0.0
        try:
            return pool.submit(_run_here, work, args).result(timeout=timeout)
        except futures.TimeoutError:
            self._replace(pool)
            raise ExplainRefusedError(
                Why.LATE, "the explanation ran past the call's deadline"
            ) from None
        except BrokenProcessPool:
            self._replace(pool)
            raise ExplainRefusedError(
                Why.DIED, "the explaining process died; it is restarted"
            ) from None

    def _pool_for(self, ruleset: Ruleset) -> futures.ProcessPoolExecutor | None:
        with self._lock:
            if self.in_process:
                return None
            if self._pool is not None and self._ruleset is ruleset:
                return self._pool
            old, self._pool = self._pool, None
            if old is not None:
                _stop(old)
            for _ in range(self.attempts):
                try:
                    pool = self._forker.submit(_started, ruleset, self.start).result()
                except RuntimeError:  # closed: the server is stopping
                    return None
                self.forks += 1
                if pool is not None:
                    self._pool, self._ruleset = pool, ruleset
                    return pool
            self.in_process = True
        log(
            "explainer_in_process",
            level="warning",
            reason=f"the explaining process did not start ({self.attempts} attempts); "
            "explanations run in the server's interpreter",
        )
        return None

    def _replace(self, pool: futures.ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = self._ruleset = None
        _stop(pool)

    def close(self) -> None:
        with self._lock:
            pool, self._pool, self._ruleset = self._pool, None, None
        if pool is not None:
            _stop(pool)
        self._forker.shutdown(wait=False)


def _started(ruleset: Ruleset, start: Callable[[int], None]) -> futures.ProcessPoolExecutor | None:
    """A new explaining process forked with `ruleset`, answering; None if it died or hung."""
    global _serving
    _serving = ruleset
    pool = futures.ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("fork"),
        initializer=start,
        initargs=(os.getpid(),),
    )
    try:
        pool.submit(int).result(timeout=START_SECONDS)  # fork now, with the ruleset set above
    except (BrokenProcessPool, futures.TimeoutError):
        _stop(pool)
        return None
    finally:
        _serving = None  # the process has its copy; this one keeps no old ruleset
    return pool


def _stop(pool: futures.ProcessPoolExecutor) -> None:
    """Stop a pool now, its process included (it may be busy with an explanation)."""
    processes = processes_of(pool)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=2)
        if process.is_alive():  # pragma: no cover  (SIGTERM ignored)
            process.kill()
