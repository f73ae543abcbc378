"""Around every classifier RPC: latency, status code and in-flight count; expired
deadlines refused before any work; unexpected errors logged and answered INTERNAL.

Kept out of the servicer so that it stays a thin adapter, and applied to
every method alike.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from classifier.server.observers.metrics import Metrics, RpcInstruments
from classifier.server.rpc.handlers import Continuation, Handler, RebuiltHandlers, rebuilt
from classifier.server.shared.log import log

INTERNAL_DETAILS = "{rpc} failed in the server; see its log"

UnaryBehavior = Callable[[Any, grpc.ServicerContext], Any]
StreamBehavior = Callable[[Iterator[Any], grpc.ServicerContext], Iterator[Any]]


class ObservingInterceptor(grpc.ServerInterceptor):
    """Observes the methods of one service (`/package.Service/`).

    gRPC asks for a handler on every call; the wrapped handler for a method
    is built once and reused while gRPC hands out the same handler.
    """

    def __init__(self, metrics: Metrics, service_name: str) -> None:
        self.metrics = metrics
        self.prefix = f"/{service_name}/"
        self._wrapped = RebuiltHandlers(self._wrap)

    def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler | None:
        handler = continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or not method.startswith(self.prefix):
            return handler
        return self._wrapped.get(method, handler)

    def _wrap(self, method: str, handler: Handler) -> Handler:
        rpc = method[len(self.prefix) :]
        if handler.unary_unary is not None:
            return rebuilt(
                handler, self._unary(rpc, handler.unary_unary), handler.request_deserializer
            )
        if handler.stream_stream is not None:
            return rebuilt(
                handler, self._stream(rpc, handler.stream_stream), handler.request_deserializer
            )
        return handler

    def _unary(self, rpc: str, behavior: UnaryBehavior) -> UnaryBehavior:
        instruments = self.metrics.rpc(rpc)
        took = instruments.took

        def observed(request: Any, context: grpc.ServicerContext) -> Any:
            start = time.perf_counter()
            try:
                with _Call(self, rpc, instruments, context):
                    if context.time_remaining() <= 0:
                        context.abort(
                            grpc.StatusCode.DEADLINE_EXCEEDED,
                            "the deadline expired before the call was served",
                        )
                    return behavior(request, context)
            finally:
                took(time.perf_counter() - start)

        return observed

    def _stream(self, rpc: str, behavior: StreamBehavior) -> StreamBehavior:
        instruments = self.metrics.rpc(rpc)
        took = instruments.took

        def observed(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
            received = time.perf_counter()

            def timed() -> Iterator[Any]:
                nonlocal received
                for request in requests:
                    received = time.perf_counter()
                    yield request

            with _Call(self, rpc, instruments, context):
                for response in behavior(timed(), context):
                    took(time.perf_counter() - received)
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


class _Call:
    """One call: counted in flight, then finished with its status code.

    A class rather than a generator-based context manager: it is entered on
    every call, and costs a third as much.
    """

    __slots__ = ("context", "instruments", "interceptor", "rpc")

    def __init__(
        self,
        interceptor: ObservingInterceptor,
        rpc: str,
        instruments: RpcInstruments,
        context: grpc.ServicerContext,
    ) -> None:
        self.interceptor = interceptor
        self.rpc = rpc
        self.instruments = instruments
        self.context = context

    def __enter__(self) -> None:
        self.instruments.started()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        code = "OK"
        try:
            if kind is not None and issubclass(kind, GeneratorExit):
                code = "CANCELLED"  # the server dropped a stream: its client went away
            elif isinstance(exc, Exception):
                code = self.interceptor._failed(self.rpc, self.context, exc)
                if code == "INTERNAL":
                    self.context.abort(
                        grpc.StatusCode.INTERNAL, INTERNAL_DETAILS.format(rpc=self.rpc)
                    )
        finally:  # counted before it leaves the gauge: one who sees 0 in flight sees its code
            self.interceptor.metrics.rpc_finished(self.rpc, code)
            self.instruments.ended()
