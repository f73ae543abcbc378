"""Capacity by kind of call, so that no client can starve another kind.

grpcio's sync server runs each call on a thread of a pool and keeps that
thread for as long as the call is open; a stream that sends nothing holds
one for ever. With one shared pool, four idle streams took all four workers
and every unary call and health check waited behind them. So every method
gets a *lane*: a thread pool of its own (grpcio's `experimental_thread_pool`
on the handler, set by classifier.server.shared.internals.run_on), with a bound on
the calls it holds.

    unary       Classify, ClassifyBatch, GetRuleset, ListClasses, GetBundle,
                ReportDecisions, and whatever else is unary: --threads workers,
                --max-concurrent-rpcs calls queued or served
    health      grpc.health.v1 Check: threads of its own, so probes never queue
                behind classification
    stream      ClassifyStream: one thread per open stream, up to --max-streams
    reflection  server reflection streams (what grpcurl opens): a few
    watch       grpc.health.v1 Watch: a few
    refuse      answers what a full lane refuses, at once

A connection the server told to wait (refused an explanation: `pushback`) has
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

The lanes are executors (classifier.server.rpc.executor), the reaper closes
streams (classifier.server.rpc.reaper), and the lane interceptor puts each
call on its lane (classifier.server.rpc.lane_interceptor).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from prometheus_client import CollectorRegistry, Counter

from classifier.defaults import (
    DEFAULT_MAX_STREAMS,
    DEFAULT_STREAM_IDLE_SECONDS,
    DEFAULT_STREAM_MAX_AGE_SECONDS,
)
from classifier.server.observers.metrics import Metrics
from classifier.server.rpc.executor import Lane
from classifier.server.rpc.pushback import Pushback
from classifier.server.rpc.reaper import Reaper
from classifier.server.shared.log import RateLimitedLog

HEALTH_CHECK = "/grpc.health.v1.Health/Check"
HEALTH_WATCH = "/grpc.health.v1.Health/Watch"
REFLECTION_PREFIX = "/grpc.reflection."
REFUSED_LOG_SECONDS = 10.0

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


class LaneMetrics:
    """The lanes' instruments, declared on the registry they are handed and moved only
    through these methods."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._refused = Counter(
            "errorclass_refused",
            "Calls refused before they were served, by RPC and reason (a full lane: "
            "unary_full, stream_full, ...; malformed: bytes that are not a valid message; "
            "explain_budget).",
            ("rpc", "reason"),
            registry=registry,
        )
        self._held = Counter(
            "errorclass_held_calls",
            "Calls held back in their lane's queue because their connection was refused an "
            "explanation and told when to retry, by lane.",
            ("lane",),
            registry=registry,
        )
        self._streams_closed = Counter(
            "errorclass_streams_closed",
            "Streams the server closed, by RPC and reason (idle, max_age).",
            ("rpc", "reason"),
            registry=registry,
        )

    def holder(self, lane: str) -> Callable[[], None]:
        """What a lane calls for each call it holds back."""
        return self._held.labels(lane).inc

    def refused(self, rpc: str, reason: str) -> None:
        self._refused.labels(rpc, reason).inc()

    def stream_closed(self, rpc: str, reason: str) -> None:
        self._streams_closed.labels(rpc, reason).inc()


class Lanes:
    """The server's lanes, the stream reaper, and which lane each method takes."""

    def __init__(self, limits: LaneLimits, metrics: Metrics, pushback: Pushback) -> None:
        self.limits = limits
        self.instruments = LaneMetrics(metrics.registry)
        self.pushback = pushback
        self.unary = Lane(
            "unary",
            limits.threads,
            limits.max_queued,
            f"--max-concurrent-rpcs ({limits.max_queued}) calls queued or served",
            self.pushback,
            self.instruments.holder("unary"),
        )
        self.health = Lane("health", HEALTH_THREADS, HEALTH_QUEUE, f"{HEALTH_QUEUE} health checks")
        self.stream = Lane(
            "stream",
            limits.max_streams,
            limits.max_streams,
            f"--max-streams ({limits.max_streams}) open streams",
            self.pushback,
            self.instruments.holder("stream"),
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
        self.pushback.release_all()
        for lane in self.all():
            lane.release_held()

    def refused(self, rpc: str, reason: str, details: str) -> None:
        self.instruments.refused(rpc, reason)
        self._log.log(
            "refused", (rpc, reason), level="warning", rpc=rpc, reason=reason, details=details
        )

    def _reaped(self, rpc: str, reason: str) -> None:
        self.instruments.stream_closed(rpc, reason)
        self._log.log("stream_closed", (rpc, reason), rpc=rpc, reason=reason)
