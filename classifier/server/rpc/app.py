"""Build the gRPC server: the classifier, health checking and reflection, with its
limits, TLS, its lanes and the interceptors that put every call on its lane and
measure it.

The parts the server shares with the rest of the process (`ServerParts`: its limits,
the metrics, the lanes and their pushback, the explanations) are built and closed by
one owner: runtime.App, whose ExitStack holds them with the rest of the service, or
`create_server`, the factory of a server alone (tests, benchmarks), whose server
holds them and closes them when it stops. `bind_server` takes them as they are,
builds none and takes nothing they already say (its gRPC options come from the
limits the lanes were built from).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from classifier import limits
from classifier.defaults import (
    DEFAULT_ADDRESS,
    DEFAULT_GRACE_SECONDS,
    DEFAULT_MAX_CONCURRENT_RPCS,
    DEFAULT_MAX_STREAMS,
    DEFAULT_MAX_STREAMS_PER_CONNECTION,
    DEFAULT_STREAM_IDLE_SECONDS,
    DEFAULT_STREAM_MAX_AGE_SECONDS,
    DEFAULT_THREADS,
)
from classifier.engine.ruleset import Ruleset
from classifier.server.explain import Explaining
from classifier.server.observers.metrics import Metrics
from classifier.server.rpc.lane_interceptor import LaneInterceptor
from classifier.server.rpc.lanes import LaneLimits, Lanes
from classifier.server.rpc.observing_interceptor import ObservingInterceptor
from classifier.server.rpc.pushback import Pushback
from classifier.server.rpc.service import ClassifierService, Observer, Reporter
from classifier.server.rpc.tls import TlsFiles, server_credentials
from classifier.server.shared.serving_ruleset import RulesetHolder
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc

SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["ErrorClassifier"].full_name
KEEPALIVE_SECONDS = 60.0
"""How often the server pings a quiet connection; a peer that stops answering
(and the streams it held) is let go KEEPALIVE_TIMEOUT_SECONDS later."""
KEEPALIVE_TIMEOUT_SECONDS = 20.0
HANDSHAKE_TIMEOUT_SECONDS = 5.0
"""A connection that has not sent the HTTP/2 preface and SETTINGS (and finished TLS)
this long after connecting is closed: silent connections cannot pile up."""
QUIET_SECONDS = 0.1
"""On stop, calls are still taken until none has arrived for this long (or half the
grace has passed): calls already sent when SIGTERM came are answered, not refused."""


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """Limits the gRPC layer enforces before a request reaches the servicer.

    max_request_bytes: a larger request message is RESOURCE_EXHAUSTED (gRPC names both sizes).
    max_concurrent_rpcs: unary calls served or queued at once; past it, RESOURCE_EXHAUSTED.
        None: unbounded. Streams, health checks and reflection have lanes of their own
        (classifier.server.rpc.lanes), so none of them can take this capacity.
    max_streams: ClassifyStream calls open at once; max_streams_per_connection: calls
        open at once on one HTTP/2 connection (its SETTINGS limit).
    stream_idle_timeout, stream_max_age: seconds a stream may wait for its next message,
        and stay open in all; past them the server closes it (DEADLINE_EXCEEDED).
    handshake_timeout: seconds a new connection has to complete the HTTP/2 handshake.
    max_connection_age: seconds after which a client connection is asked to reconnect
        (GOAWAY, then as long again for calls to finish), so clients spread over new
        replicas. None: never.
    """

    max_request_bytes: int = limits.MAX_REQUEST_BYTES
    max_concurrent_rpcs: int | None = DEFAULT_MAX_CONCURRENT_RPCS
    max_connection_age: float | None = None
    max_streams: int = DEFAULT_MAX_STREAMS
    max_streams_per_connection: int = DEFAULT_MAX_STREAMS_PER_CONNECTION
    stream_idle_timeout: float | None = DEFAULT_STREAM_IDLE_SECONDS
    stream_max_age: float | None = DEFAULT_STREAM_MAX_AGE_SECONDS
    handshake_timeout: float = HANDSHAKE_TIMEOUT_SECONDS

    def lane_limits(self, threads: int) -> LaneLimits:
        return LaneLimits(
            threads=threads,
            max_queued=self.max_concurrent_rpcs,
            max_streams=self.max_streams,
            stream_idle_timeout=self.stream_idle_timeout or None,
            stream_max_age=self.stream_max_age or None,
        )

    def grpc_options(self, *, reuse_port: bool = False) -> list[tuple[str, Any]]:
        """Server options; `reuse_port` lets several processes bind one port (--workers)."""
        options: list[tuple[str, Any]] = [
            ("grpc.so_reuseport", 1 if reuse_port else 0),
            ("grpc.max_receive_message_length", self.max_request_bytes),
            ("grpc.keepalive_time_ms", int(KEEPALIVE_SECONDS * 1000)),
            ("grpc.keepalive_timeout_ms", int(KEEPALIVE_TIMEOUT_SECONDS * 1000)),
            ("grpc.max_concurrent_streams", self.max_streams_per_connection),
            ("grpc.server_handshake_timeout_ms", int(self.handshake_timeout * 1000)),
        ]
        if self.max_connection_age:
            age = int(self.max_connection_age * 1000)
            options += [
                ("grpc.max_connection_age_ms", age),
                ("grpc.max_connection_age_grace_ms", age),
            ]
        return options


@dataclass(frozen=True, slots=True)
class ServerParts:
    """What the gRPC port shares with the rest of the process: its limits (the lanes were
    built from them, the port's gRPC options come from them), the metrics, the lanes
    (with the pushback, built here and nowhere else) and the explanations (the owner's,
    shared with the console). Made by `enter`, which hands the lanes' closing to the
    owner's ExitStack."""

    limits: ServerLimits
    metrics: Metrics
    lanes: Lanes
    explaining: Explaining

    @classmethod
    def enter(
        cls,
        stack: contextlib.ExitStack,
        limits: ServerLimits,
        threads: int,
        metrics: Metrics,
        explaining: Explaining,
    ) -> ServerParts:
        """The parts, the lanes (`threads` within `limits`) closed by `stack`. `explaining`
        was entered into it before, so it is closed after the lanes stop (the console may
        still be explaining then)."""
        built = Lanes(limits.lane_limits(threads), metrics, Pushback())
        stack.callback(built.stop)
        return cls(limits, metrics, built, explaining)


class GrpcServer:
    """The classifier's gRPC port, bound, and the parts an operator (or a test) needs to
    reach; `runtime.App` is the whole service around it. `owned` is what closes the parts
    when this server stops, for a server made alone (`create_server`); None when an owner
    (runtime.App) closes them."""

    def __init__(
        self,
        grpc_server: grpc.Server,
        port: int,
        health: health.HealthServicer,
        parts: ServerParts,
        interceptor: LaneInterceptor,
    ) -> None:
        self.grpc_server = grpc_server
        self.port = port
        self.health = health
        self.metrics = parts.metrics
        self.lanes = parts.lanes
        self.interceptor = interceptor
        self.owned: contextlib.ExitStack | None = None
        self.ready = False

    def start(self) -> None:
        self.grpc_server.start()
        self.lanes.start()
        self.health.set("", health_pb2.HealthCheckResponse.SERVING)
        self.health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        self.ready = True

    def drain(self) -> None:
        """Tell health checks that this server is going away (NOT_SERVING), still serving."""
        self.ready = False
        self.health.enter_graceful_shutdown()
        self.lanes.release_held()

    def can_answer(self) -> bool:
        """Whether a unary call would be taken now (serving, and its lane not full)."""
        return self.ready and not self.lanes.unary.full()

    def stop(self, grace: float | None = DEFAULT_GRACE_SECONDS) -> None:
        """Stop taking calls; in-flight calls get `grace` seconds to finish.

        Calls that were on their way when the stop began are still taken until the
        server has been quiet for QUIET_SECONDS (at most half the grace), so they are
        answered rather than refused; then the port closes, and calls still running
        after the rest of the grace are cancelled.
        """
        started = time.monotonic()
        self.drain()
        if grace:
            self._quiet(started + grace / 2)
        left = None if grace is None else max(0.0, grace - (time.monotonic() - started))
        self.grpc_server.stop(left).wait(None if left is None else left + 2.0)
        if self.owned is not None:
            self.owned.close()

    def _quiet(self, until: float) -> None:
        lanes = (self.lanes.unary, self.lanes.health)
        for _ in range(10_000):  # bounded: a step is 10 ms, and `until` comes first
            now = time.monotonic()
            if now >= until:
                return
            busy = any(lane.outstanding or lane.held for lane in lanes)
            if not busy and now - self.interceptor.last_call >= QUIET_SECONDS:
                return
            time.sleep(0.01)


def create_server(
    ruleset: Ruleset | RulesetHolder,
    address: str = DEFAULT_ADDRESS,
    *,
    threads: int = DEFAULT_THREADS,
    candidate: RulesetHolder | None = None,
    observers: Sequence[Observer] = (),
    reporters: Sequence[Reporter] = (),
    tls: TlsFiles | None = None,
    limits: ServerLimits | None = None,
    reuse_port: bool = False,
) -> GrpcServer:
    """A server alone (tests, benchmarks, the clients' tests), bound to `address` (port 0
    picks a free port), not yet started: it builds its own parts (lanes of `threads` within
    `limits`, its own metrics and explanations) and closes them when it stops."""
    holder = ruleset if isinstance(ruleset, RulesetHolder) else RulesetHolder(ruleset)
    with contextlib.ExitStack() as stack:
        explaining = stack.enter_context(Explaining())
        parts = ServerParts.enter(stack, limits or ServerLimits(), threads, Metrics(), explaining)
        server = bind_server(
            holder,
            address,
            parts,
            candidate=candidate,
            observers=observers,
            reporters=reporters,
            tls=tls,
            reuse_port=reuse_port,
        )
        server.owned = stack.pop_all()
    return server


def bind_server(
    holder: RulesetHolder,
    address: str,
    parts: ServerParts,
    *,
    candidate: RulesetHolder | None = None,
    observers: Sequence[Observer] = (),
    reporters: Sequence[Reporter] = (),
    tls: TlsFiles | None = None,
    reuse_port: bool = False,
) -> GrpcServer:
    """A server on `parts`, bound to `address`, not yet started; its owner closes the parts.

    Metrics always count every answer and every reported decision; `observers` (the
    decision log, the shadow) are told of answers after them, `reporters` (the decision
    log, the live Unknown sample) of reported decisions. The gRPC options come from
    `parts.limits`, the lanes' own.
    """
    metrics, lanes = parts.metrics, parts.lanes
    credentials = server_credentials(tls) if tls else None
    lane_interceptor = LaneInterceptor(lanes, f"/{SERVICE_NAME}/", metrics)
    grpc_server = grpc.server(
        lanes.unary,  # every method has a lane; this pool is for anything unforeseen
        interceptors=[lane_interceptor, ObservingInterceptor(metrics, SERVICE_NAME)],
        options=parts.limits.grpc_options(reuse_port=reuse_port),
        maximum_concurrent_rpcs=None,  # the lanes bound each kind of call instead
    )
    service = ClassifierService(
        holder,
        explaining=parts.explaining,
        pushback=lanes.pushback,
        candidate=candidate,
        observers=[metrics, *observers],
        reporters=[metrics, *reporters],
    )
    pb_grpc.add_ErrorClassifierServicer_to_server(service, grpc_server)
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, grpc_server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), grpc_server
    )
    try:
        port = (
            grpc_server.add_secure_port(address, credentials)
            if credentials
            else grpc_server.add_insecure_port(address)
        )
    except RuntimeError as exc:
        raise OSError(f"cannot bind {address}: {exc}") from exc
    if port == 0:
        raise OSError(f"cannot bind {address}")
    return GrpcServer(grpc_server, port, health_servicer, parts, lane_interceptor)
