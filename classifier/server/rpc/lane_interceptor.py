"""The outermost interceptor: puts each call on its lane, refuses at once what a full lane
cannot take, parses every request itself, and registers streams with the reaper.

Every request is parsed here, not by grpcio: bytes that are not a valid
message are answered INVALID_ARGUMENT naming the field where it can be found
(grpcio's own path answers INTERNAL or UNKNOWN), counted and logged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from classifier.server.observers.metrics import Metrics
from classifier.server.rpc.executor import Lane
from classifier.server.rpc.handlers import (
    Continuation,
    Handler,
    RebuiltHandlers,
    behavior_of,
    rebuilt,
)
from classifier.server.rpc.lanes import Lanes
from classifier.server.rpc.reaper import Reaper
from classifier.server.rpc.wire_errors import locate_decode_error
from classifier.server.shared.internals import run_on


def _rpc_name(method: str) -> str:
    return method.rsplit("/", 1)[-1]


class LaneInterceptor(grpc.ServerInterceptor):
    """Outermost interceptor: puts each method on its lane, refuses calls a full lane
    cannot take, parses requests itself, and registers streams with the reaper."""

    def __init__(self, lanes: Lanes, counted_prefix: str, metrics: Metrics) -> None:
        self.lanes = lanes
        self.metrics = metrics
        """Where a refused call of the classifier's ends (rpcs_total)."""
        self.counted_prefix = counted_prefix
        """Methods under this prefix (the classifier's) are also counted in rpcs_total."""
        self._wrapped = RebuiltHandlers(self._wrap)
        self._refusers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
        self.last_call = 0.0
        """When the last call arrived (monotonic seconds): a stopping server waits for quiet."""

    def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler | None:
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        self.last_call = time.monotonic()
        wrapped = self._wrapped.get(method, handler)
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
                self.metrics.rpc_finished(rpc, "RESOURCE_EXHAUSTED")
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, details)

        run_on(refuse, self.lanes.refuse)
        made = rebuilt(handler, refuse, None)
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
        behavior = behavior_of(handler)

        def malformed(context: grpc.ServicerContext, data: bytes, exc: Exception) -> Any:
            where = locate_decode_error(parse, data)
            details = f"malformed request{f' at {where}' if where else ''}: {exc}"
            lanes.refused(rpc, "malformed", details)
            if counted and not handler.request_streaming:  # a stream's end is counted inside
                self.metrics.rpc_finished(rpc, "INVALID_ARGUMENT")
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

        run_on(run, lane)
        return rebuilt(handler, run, None)


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
