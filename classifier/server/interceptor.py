"""Around every classifier RPC: latency, status code and in-flight count; expired
deadlines refused before any work; unexpected errors logged and answered INTERNAL.

Kept out of the servicer so that it stays a thin adapter, and applied to
every method alike.
"""

from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from classifier.server.log import log
from classifier.server.metrics import Metrics

INTERNAL_DETAILS = "{rpc} failed in the server; see its log"

UnaryBehavior = Callable[[Any, grpc.ServicerContext], Any]
StreamBehavior = Callable[[Iterator[Any], grpc.ServicerContext], Iterator[Any]]


class ObservingInterceptor(grpc.ServerInterceptor):
    """Observes the methods of one service (`/package.Service/`)."""

    def __init__(self, metrics: Metrics, service_name: str) -> None:
        self.metrics = metrics
        self.prefix = f"/{service_name}/"

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler[Any, Any] | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or not method.startswith(self.prefix):
            return handler
        rpc = method[len(self.prefix) :]
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(rpc, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_stream is not None:
            return grpc.stream_stream_rpc_method_handler(
                self._stream(rpc, handler.stream_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler

    @contextlib.contextmanager
    def _call(self, rpc: str, context: grpc.ServicerContext) -> Iterator[None]:
        """Count the call in flight, then finished with its status code."""
        in_flight = self.metrics.in_flight.labels(rpc)
        in_flight.inc()
        code = "OK"
        try:
            yield
        except GeneratorExit:  # the server dropped a stream: its client went away
            code = "CANCELLED"
            raise
        except Exception as exc:
            code = self._failed(rpc, context, exc)
            if code == "INTERNAL":
                context.abort(grpc.StatusCode.INTERNAL, INTERNAL_DETAILS.format(rpc=rpc))
            raise
        finally:
            in_flight.dec()
            self.metrics.rpc_finished(rpc, code)

    def _unary(self, rpc: str, behavior: UnaryBehavior) -> UnaryBehavior:
        duration = self.metrics.rpc_duration.labels(rpc)

        def observed(request: Any, context: grpc.ServicerContext) -> Any:
            with duration.time(), self._call(rpc, context):
                if context.time_remaining() <= 0:
                    context.abort(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        "the deadline expired before the call was served",
                    )
                return behavior(request, context)

        return observed

    def _stream(self, rpc: str, behavior: StreamBehavior) -> StreamBehavior:
        duration = self.metrics.rpc_duration.labels(rpc)

        def observed(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
            received = time.perf_counter()

            def timed() -> Iterator[Any]:
                nonlocal received
                for request in requests:
                    received = time.perf_counter()
                    yield request

            with self._call(rpc, context):
                for response in behavior(timed(), context):
                    duration.observe(time.perf_counter() - received)
                    yield response

        return observed

    def _failed(self, rpc: str, context: grpc.ServicerContext, exc: Exception) -> str:
        """The status a failed call ends with; an unexpected error is logged as INTERNAL."""
        code = context.code()  # type: ignore[attr-defined]  # grpcio has it; the stubs lag
        if code is not None and code is not grpc.StatusCode.OK:
            return str(code.name)
        if isinstance(exc, grpc.RpcError) or not context.is_active():
            return "CANCELLED"
        log(
            "rpc_error",
            level="error",
            rpc=rpc,
            error=repr(exc),
            traceback=traceback.format_exception(exc),
        )
        return "INTERNAL"
