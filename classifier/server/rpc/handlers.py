"""Handlers rebuilt around another behavior: what both interceptors do to every method.

An interceptor cannot change a handler in place (grpcio's handlers are named
tuples); it makes one of the same arity with its own behavior, once per
method: grpcio asks for the handler on every call, and the rebuilt one is
reused for as long as grpcio hands out the same handler.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import grpc

Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"  # subscriptable only in the stubs
Continuation: TypeAlias = "Callable[[grpc.HandlerCallDetails], Handler | None]"
"""What an interceptor's `intercept_service` is given to find the next handler."""


class RebuiltHandlers:
    """Each method's handler as `build(method, handler)` rebuilt it, made once per handler."""

    __slots__ = ("_build", "_by_method")

    def __init__(self, build: Callable[[str, Handler], Handler]) -> None:
        self._build = build
        self._by_method: dict[str, tuple[Handler, Handler]] = {}

    def get(self, method: str, handler: Handler) -> Handler:
        cached = self._by_method.get(method)
        if cached is None or cached[0] is not handler:
            cached = (handler, self._build(method, handler))
            self._by_method[method] = cached
        return cached[1]


def behavior_of(handler: grpc.RpcMethodHandler[Any, Any]) -> Callable[..., Any]:
    for name in ("unary_unary", "unary_stream", "stream_unary", "stream_stream"):
        found = getattr(handler, name)
        if found is not None:
            return found  # type: ignore[no-any-return]
    raise TypeError("a handler without a behavior")  # pragma: no cover


def rebuilt(
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
