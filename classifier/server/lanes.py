"""Capacity by kind of call, so that no client can starve another kind.

grpcio's sync server runs each call on a thread of a pool and keeps that
thread for as long as the call is open; a stream that sends nothing holds
one for ever. With one shared pool, four idle streams took all four workers
and every unary call and health check waited behind them. So every method
gets a *lane*: a thread pool of its own (grpcio's `experimental_thread_pool`
on the handler), with a bound on the calls it holds.

    unary       Classify, ClassifyBatch, GetRuleset, ListClasses, and whatever else
                is unary: --threads workers, --max-concurrent-rpcs calls queued or served
    health      grpc.health.v1 Check: threads of its own, so probes never queue
                behind classification
    stream      ClassifyStream: one thread per open stream, up to --max-streams
    reflection  server reflection streams (what grpcurl opens): a few
    watch       grpc.health.v1 Watch: a few
    refuse      answers what a full lane refuses, at once

A connection the server told to wait (refused an explanation: `holds`) has
its unary calls and streams wait in their lane's queue until then, holding no
thread, counted in `errorclass_held_calls_total{lane}`; they are not counted
against the lane's bound, so a held client cannot fill it for the others.

A call a full lane cannot take is answered RESOURCE_EXHAUSTED naming the
limit, counted in `errorclass_refused_total{rpc, reason}` and logged
(`refused`, at most once per REFUSED_LOG_SECONDS per reason, with a count).
Threads are started as calls need them, so an idle lane costs nothing, and a
thread waiting for a stream's next message sleeps in the kernel without the GIL.

A stream that sends nothing for --stream-idle-timeout seconds, or lives past
--stream-max-age, is closed by the reaper with DEADLINE_EXCEEDED and a
message saying which limit. On shutdown, open streams are answered for the
grace period like every other call, then cancelled.

Every request is parsed here, not by grpcio: bytes that are not a valid
message are answered INVALID_ARGUMENT naming the field where it can be found
(grpcio's own path answers INTERNAL or UNKNOWN), counted and logged.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from classifier.server.holds import Holds
from classifier.server.log import RateLimitedLog
from classifier.server.metrics import Metrics
from classifier.server.wire_errors import locate_decode_error

HEALTH_CHECK = "/grpc.health.v1.Health/Check"
HEALTH_WATCH = "/grpc.health.v1.Health/Watch"
REFLECTION_PREFIX = "/grpc.reflection."
REFUSED_LOG_SECONDS = 10.0
REAPER_STEP_SECONDS = 0.25

DEFAULT_MAX_STREAMS = 512
"""Open ClassifyStream calls at once (each holds a thread, asleep while idle)."""
DEFAULT_MAX_STREAMS_PER_CONNECTION = 100
"""HTTP/2 concurrent streams on one connection (the SETTINGS limit), every call included."""
DEFAULT_STREAM_IDLE_SECONDS = 60.0
DEFAULT_STREAM_MAX_AGE_SECONDS = 3600.0
HEALTH_THREADS = 2
HEALTH_QUEUE = 64
REFLECTION_STREAMS = 16
WATCH_STREAMS = 16
REFUSE_THREADS = 2


@dataclass(frozen=True, slots=True)
class LaneLimits:
    """How much of the server each kind of call may hold (see the module docstring)."""

    threads: int = 4
    max_queued: int | None = 256
    max_streams: int = DEFAULT_MAX_STREAMS
    stream_idle_timeout: float | None = DEFAULT_STREAM_IDLE_SECONDS
    stream_max_age: float | None = DEFAULT_STREAM_MAX_AGE_SECONDS


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


def _connection_of(args: tuple[Any, ...]) -> str | None:
    """The peer of the call grpcio submits (its work item's arguments carry the call)."""
    for arg in args[:3]:
        call = getattr(arg, "call", None)
        if call is not None:
            try:
                peer = call.peer()
            except Exception:  # pragma: no cover  (the call ended meanwhile)
                return None
            return peer.decode(errors="replace") if isinstance(peer, bytes) else str(peer)
    return None


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
        holds: Holds | None = None,
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
        self.holds = holds
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
        holds = self.holds
        until = holds.until(_connection_of(args)) if holds is not None and holds.any() else 0.0
        with self._cond:
            if self._closed:
                raise RuntimeError(f"lane {self.name} is stopped")
            if until > time.monotonic() and holds is not None and holds.admit():
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
            if self.holds is not None:
                self.holds.released()
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


class _Open:
    """One open stream, as the reaper sees it."""

    __slots__ = ("context", "idle_limit", "last", "opened", "rpc", "waiting")

    def __init__(self, rpc: str, context: grpc.ServicerContext, idle_limit: bool) -> None:
        self.rpc = rpc
        self.context = context
        self.opened = self.last = time.monotonic()
        self.idle_limit = idle_limit
        self.waiting = False
        """True while the stream waits for the client's next message."""


class Reaper:
    """Closes streams idle past the idle timeout, or open past the maximum age."""

    def __init__(
        self, idle: float | None, max_age: float | None, closed: Callable[[str, str], None]
    ) -> None:
        self.idle = idle
        self.max_age = max_age
        self._closed = closed
        self._open: dict[int, _Open] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stream-reaper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def add(self, rpc: str, context: grpc.ServicerContext, idle_limit: bool) -> int:
        key = next(self._ids)
        entry = _Open(rpc, context, idle_limit)
        with self._lock:
            self._open[key] = entry
        return key

    def remove(self, key: int) -> None:
        with self._lock:
            self._open.pop(key, None)

    def waiting(self, key: int, waiting: bool) -> None:
        """A stream starts (True) or stops (False) waiting for the client's next message."""
        with self._lock:
            entry = self._open.get(key)
            if entry is None:
                return
            entry.waiting = waiting
            entry.last = time.monotonic()

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._open)

    def _run(self) -> None:
        while not self._stop.wait(REAPER_STEP_SECONDS):
            self.sweep()

    def sweep(self) -> None:
        now = time.monotonic()
        expired: list[tuple[_Open, str, str]] = []
        with self._lock:
            for entry in self._open.values():
                if self.max_age and now - entry.opened > self.max_age:
                    expired.append(
                        (
                            entry,
                            "max_age",
                            f"the stream was open for {self.max_age:g} s, the limit "
                            "(--stream-max-age); open a new one",
                        )
                    )
                elif (
                    self.idle
                    and entry.idle_limit
                    and entry.waiting
                    and now - entry.last > self.idle
                ):
                    expired.append(
                        (
                            entry,
                            "idle",
                            f"no message for {self.idle:g} s (--stream-idle-timeout); "
                            "the stream is closed",
                        )
                    )
            for entry, _, _ in expired:
                entry.last = now + 3600.0  # closed: not again
                entry.opened = now
        for entry, reason, details in expired:
            self._close(entry, grpc.StatusCode.DEADLINE_EXCEEDED, details)
            self._closed(entry.rpc, reason)

    @staticmethod
    def _close(entry: _Open, code: grpc.StatusCode, details: str) -> None:
        _cancel(entry.context, code, details)


def _cancel(context: grpc.ServicerContext, code: grpc.StatusCode, details: str) -> None:
    """End a call from another thread with a status (grpcio's core call can; the API cannot)."""
    call = getattr(getattr(context, "_rpc_event", None), "call", None)
    try:
        if call is not None:
            call.cancel(code.value[0], details)
        else:  # pragma: no cover  (another grpcio)
            context.cancel()
    except Exception:  # pragma: no cover  (the call ended meanwhile)
        pass


class Lanes:
    """The server's lanes, the reaper, and the interceptor that puts each call in its lane."""

    def __init__(self, limits: LaneLimits, metrics: Metrics) -> None:
        self.limits = limits
        self.metrics = metrics
        self.holds = Holds()
        self.unary = Lane(
            "unary",
            limits.threads,
            limits.max_queued,
            f"--max-concurrent-rpcs ({limits.max_queued}) calls queued or served",
            self.holds,
            metrics.held.labels("unary").inc,
        )
        self.health = Lane("health", HEALTH_THREADS, HEALTH_QUEUE, f"{HEALTH_QUEUE} health checks")
        self.stream = Lane(
            "stream",
            limits.max_streams,
            limits.max_streams,
            f"--max-streams ({limits.max_streams}) open streams",
            self.holds,
            metrics.held.labels("stream").inc,
        )
        self.reflection = Lane(
            "reflection",
            REFLECTION_STREAMS,
            REFLECTION_STREAMS,
            f"{REFLECTION_STREAMS} open reflection streams",
        )
        self.watch = Lane(
            "watch", WATCH_STREAMS, WATCH_STREAMS, f"{WATCH_STREAMS} open health watches"
        )
        self.refuse = Lane("refuse", REFUSE_THREADS, None, "")
        self.reaper = Reaper(limits.stream_idle_timeout, limits.stream_max_age, self._reaped)
        self._log = RateLimitedLog(REFUSED_LOG_SECONDS)

    def all(self) -> tuple[Lane, ...]:
        return (self.unary, self.health, self.stream, self.reflection, self.watch, self.refuse)

    def lane_for(self, method: str, handler: grpc.RpcMethodHandler[Any, Any]) -> Lane:
        if method == HEALTH_CHECK:
            return self.health
        if method == HEALTH_WATCH:
            return self.watch
        if method.startswith(REFLECTION_PREFIX):
            return self.reflection
        if handler.request_streaming or handler.response_streaming:
            return self.stream
        return self.unary

    def start(self) -> None:
        self.reaper.start()

    def stop(self) -> None:
        self.reaper.stop()
        for lane in self.all():
            lane.shutdown(wait=False, cancel_futures=True)

    def release_held(self) -> None:
        """Hold no call from now on, and queue those held (the server is stopping)."""
        self.holds.release_all()
        for lane in self.all():
            lane.release_held()

    def refused(self, rpc: str, reason: str, details: str) -> None:
        self.metrics.refused.labels(rpc, reason).inc()
        self._log.log(
            "refused", (rpc, reason), level="warning", rpc=rpc, reason=reason, details=details
        )

    def _reaped(self, rpc: str, reason: str) -> None:
        self.metrics.streams_closed.labels(rpc, reason).inc()
        self._log.log("stream_closed", (rpc, reason), rpc=rpc, reason=reason)


def _rpc_name(method: str) -> str:
    return method.rsplit("/", 1)[-1]


class LaneInterceptor(grpc.ServerInterceptor):
    """Outermost interceptor: puts each method on its lane, refuses calls a full lane
    cannot take, parses requests itself, and registers streams with the reaper."""

    def __init__(self, lanes: Lanes, counted_prefix: str) -> None:
        self.lanes = lanes
        self.counted_prefix = counted_prefix
        """Methods under this prefix (the classifier's) are also counted in rpcs_total."""
        self._wrapped: dict[str, tuple[Any, grpc.RpcMethodHandler[Any, Any]]] = {}
        self._refusers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
        self.last_call = 0.0
        """When the last call arrived (monotonic seconds): a stopping server waits for quiet."""

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler[Any, Any] | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        self.last_call = time.monotonic()
        cached = self._wrapped.get(method)
        if cached is None or cached[0] is not handler:
            cached = (handler, self._wrap(method, handler))
            self._wrapped[method] = cached
        wrapped = cached[1]
        lane = self.lanes.lane_for(method, handler)
        if lane.full():  # the server's loop thread asks, one call at a time: no race to admit
            return self._refuser(method, handler, lane)
        return wrapped

    def _counted(self, method: str) -> bool:
        return method.startswith(self.counted_prefix)

    def _refuser(
        self, method: str, handler: grpc.RpcMethodHandler[Any, Any], lane: Lane
    ) -> grpc.RpcMethodHandler[Any, Any]:
        found = self._refusers.get(method)
        if found is not None:
            return found
        rpc = _rpc_name(method)
        details = f"{rpc} refused: the server holds {lane.what}; retry later"
        counted = self._counted(method)
        reason = f"{lane.name}_full"

        def refuse(_request: Any, context: grpc.ServicerContext) -> Any:
            self.lanes.refused(rpc, reason, details)
            if counted:
                self.lanes.metrics.rpc_finished(rpc, "RESOURCE_EXHAUSTED")
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, details)

        refuse.experimental_thread_pool = self.lanes.refuse  # type: ignore[attr-defined]
        made = _handler_like(handler, refuse, None)
        self._refusers[method] = made
        return made

    def _wrap(
        self, method: str, handler: grpc.RpcMethodHandler[Any, Any]
    ) -> grpc.RpcMethodHandler[Any, Any]:
        lane = self.lanes.lane_for(method, handler)
        rpc = _rpc_name(method)
        parse = handler.request_deserializer
        counted = self._counted(method)
        lanes = self.lanes
        reaper = lanes.reaper
        behavior = _behavior(handler)

        def malformed(context: grpc.ServicerContext, data: bytes, exc: Exception) -> Any:
            where = locate_decode_error(parse, data)
            details = f"malformed request{f' at {where}' if where else ''}: {exc}"
            lanes.refused(rpc, "malformed", details)
            if counted and not handler.request_streaming:  # a stream's end is counted inside
                lanes.metrics.rpc_finished(rpc, "INVALID_ARGUMENT")
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, details)

        def parsed(data: Any, context: grpc.ServicerContext) -> Any:
            if parse is None or not isinstance(data, bytes):
                return data
            try:
                return parse(data)
            except (DecodeError, ValueError, RuntimeError, UnicodeDecodeError) as exc:
                malformed(context, data, exc)

        if not handler.request_streaming and not handler.response_streaming:

            def unary(request: Any, context: grpc.ServicerContext) -> Any:
                return behavior(parsed(request, context), context)

            run: Any = unary
        else:
            idle_limit = handler.request_streaming
            request_streaming = handler.request_streaming

            def streaming(request: Any, context: grpc.ServicerContext) -> Any:
                key = reaper.add(rpc, context, idle_limit)
                try:
                    if request_streaming:
                        request = _watched(request, context, key, reaper, parsed)
                    else:
                        request = parsed(request, context)
                    result = behavior(request, context)
                    if handler.response_streaming:
                        yield from result
                    else:  # pragma: no cover  (no stream-unary method is served)
                        yield result
                finally:
                    reaper.remove(key)

            run = streaming
            if not handler.response_streaming:  # pragma: no cover
                raise TypeError(f"{method}: client-streaming unary calls are not served")

        run.experimental_thread_pool = lane
        return _handler_like(handler, run, None)


def _watched(
    requests: Iterator[Any],
    context: grpc.ServicerContext,
    key: int,
    reaper: Reaper,
    parsed: Callable[[Any, grpc.ServicerContext], Any],
) -> Iterator[Any]:
    while True:
        reaper.waiting(key, True)
        try:
            data = next(requests)
        except StopIteration:
            return
        finally:
            reaper.waiting(key, False)
        yield parsed(data, context)


def _behavior(handler: grpc.RpcMethodHandler[Any, Any]) -> Callable[..., Any]:
    for name in ("unary_unary", "unary_stream", "stream_unary", "stream_stream"):
        found = getattr(handler, name)
        if found is not None:
            return found  # type: ignore[no-any-return]
    raise TypeError("a handler without a behavior")  # pragma: no cover


def _handler_like(
    handler: grpc.RpcMethodHandler[Any, Any],
    behavior: Callable[..., Any],
    request_deserializer: Callable[[bytes], Any] | None,
) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler of the same arity as `handler`, with another behavior and deserializer."""
    serialize = handler.response_serializer
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(behavior, request_deserializer, serialize)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(behavior, request_deserializer, serialize)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(behavior, request_deserializer, serialize)
    return grpc.unary_unary_rpc_method_handler(behavior, request_deserializer, serialize)
