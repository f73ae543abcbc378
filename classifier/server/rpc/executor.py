"""A lane's executor: a thread pool for one kind of call, bounded, that keeps back the
calls of a connection told to wait.

grpcio runs a method on its handler's pool when that pool is a
ThreadPoolExecutor (classifier.server.shared.internals.run_on), so a lane is one by
type; its own queue and threads are never used. A connection the server told
to wait (`pushback`) has its calls wait here until then, holding no thread,
and not counted against the lane's bound, so a held client cannot fill it for
the others.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent import futures
from typing import Any

from classifier.server.rpc.pushback import Pushback
from classifier.server.shared.internals import peer_of_work


class _Work:
    __slots__ = ("args", "fn", "future", "kwargs")

    def __init__(
        self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        self.future: futures.Future[Any] = futures.Future()
        self.fn = fn
        self.args = args
        self.kwargs = kwargs

    def __lt__(self, other: _Work) -> bool:  # a tie in the hold heap: either first
        return False

    def run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        try:
            result = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:
            self.future.set_exception(exc)
        else:
            self.future.set_result(result)


class Lane(futures.ThreadPoolExecutor):
    """A pool of threads for one kind of call that knows how many calls it holds (queued
    or running), and keeps the calls of a held connection back until its hold ends.

    Threads start as calls need them, up to `threads`. Held calls are not counted
    against `cap`: a held client must not fill the lane for everyone else; they
    are bounded by MAX_HELD_CALLS over all connections instead. A ThreadPoolExecutor
    by type only (grpcio takes a handler's pool only if it is one); its own queue
    and threads are never used.
    """

    def __init__(
        self,
        name: str,
        threads: int,
        cap: int | None,
        what: str,
        pushback: Pushback | None = None,
        counted: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(max_workers=threads, thread_name_prefix=f"lane-{name}")
        self.counted = counted
        """Told of each call held (the metric)."""
        self.name = name
        self.threads = threads
        self.cap = cap
        self.what = what
        """The limit in words, for the refusal: `--max-streams (512) open streams`."""
        self.pushback = pushback
        self.outstanding = 0
        self.held_total = 0
        self._ready: deque[_Work] = deque()
        self._waiting: list[tuple[float, _Work]] = []
        """Held calls, a heap by the end of their hold."""
        self._cond = threading.Condition()
        self._workers: list[threading.Thread] = []
        self._idle = 0
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> futures.Future[Any]:
        work = _Work(fn, args, kwargs)
        pushback = self.pushback
        until = (
            pushback.until(peer_of_work(args)) if pushback is not None and pushback.any() else 0.0
        )
        with self._cond:
            if self._closed:
                raise RuntimeError(f"lane {self.name} is stopped")
            if until > time.monotonic() and pushback is not None and pushback.admit():
                heapq.heappush(self._waiting, (until, work))
                self.held_total += 1
                if self.counted is not None:
                    self.counted()
            else:
                self._ready.append(work)
                self.outstanding += 1
            self._staff()
            self._cond.notify()
        return work.future

    def _staff(self) -> None:
        """Start a thread when queued calls outnumber idle threads, or held calls have no
        idle thread to release them (under the lock; up to `threads`)."""
        wanted = len(self._ready) > self._idle or (self._waiting and not self._idle)
        if wanted and len(self._workers) < self.threads:
            thread = threading.Thread(
                target=self._work, name=f"lane-{self.name}_{len(self._workers)}", daemon=True
            )
            self._workers.append(thread)
            thread.start()

    @property
    def held(self) -> int:
        """Calls held now."""
        return len(self._waiting)

    def _release(self, now: float, everything: bool = False) -> float | None:
        """Move held calls whose hold ended to the queue; when the next one ends."""
        waiting = self._waiting
        while waiting and (everything or waiting[0][0] <= now):
            self._ready.append(heapq.heappop(waiting)[1])
            self.outstanding += 1
            if self.pushback is not None:
                self.pushback.released()
        return waiting[0][0] if waiting else None

    def _next(self) -> _Work | None:
        with self._cond:
            while not self._closed:
                wake = self._release(time.monotonic()) if self._waiting else None
                if self._ready:
                    work = self._ready.popleft()
                    if self._ready:  # released calls: wake or start the threads to serve them
                        self._staff()
                        self._cond.notify(len(self._ready))
                    return work
                self._idle += 1
                self._cond.wait(None if wake is None else max(0.0, wake - time.monotonic()))
                self._idle -= 1
            return None

    def _work(self) -> None:
        while (work := self._next()) is not None:
            try:
                work.run()
            finally:
                with self._cond:
                    self.outstanding -= 1

    def release_held(self) -> None:
        """Queue every held call now (the server is stopping and answers them all)."""
        with self._cond:
            self._release(time.monotonic(), everything=True)
            self._cond.notify_all()

    def full(self) -> bool:
        return self.cap is not None and self.outstanding >= self.cap

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._cond:
            self._closed = True
            if cancel_futures:
                self._release(time.monotonic(), everything=True)
                while self._ready:
                    self._ready.popleft().future.cancel()
                    self.outstanding -= 1
            self._cond.notify_all()
        if wait:
            for thread in self._workers:
                thread.join()
