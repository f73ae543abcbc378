"""The floor: a gRPC service that does nothing but echo a descriptor-shaped message.

It is served the way the classifier is (same grpcio, same server options and
concurrency limit, same thread pool, or grpc.aio to compare server models), so what it
reaches is what gRPC on Python allows, and the classifier is measured
against it. Two methods, both echoing what they receive:

    /bench.Echo/Echo         ClassifyRequest -> the same (unary)
    /bench.Echo/EchoStream   stream ClassifyBatchRequest -> the same, message by message

Run: `python -m benchmarks.echo --port 0 [--threads N | --aio]`; prints the
bound port on stdout, then serves until killed.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from concurrent import futures
from typing import Any

import grpc

from classifier.server.rpc.app import ServerLimits
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb

SERVICE = "bench.Echo"
LIMITS = ServerLimits()
OPTIONS = LIMITS.grpc_options()
"""The classifier's own server options (message size, keepalive, no port sharing)."""


def _same(request: Any, context: Any) -> Any:
    return request


def _stream(requests: Iterator[Any], context: Any) -> Iterator[Any]:
    yield from requests


async def _same_async(request: Any, context: Any) -> Any:
    return request


async def _stream_async(requests: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:
    async for request in requests:
        yield request


def _handlers(*, aio: bool) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
    same = _same_async if aio else _same
    stream = _stream_async if aio else _stream
    return {
        "Echo": grpc.unary_unary_rpc_method_handler(
            same,
            request_deserializer=pb.ClassifyRequest.FromString,
            response_serializer=pb.ClassifyRequest.SerializeToString,
        ),
        "EchoStream": grpc.stream_stream_rpc_method_handler(
            stream,
            request_deserializer=pb.ClassifyBatchRequest.FromString,
            response_serializer=pb.ClassifyBatchRequest.SerializeToString,
        ),
    }


def _register(server: Any, *, aio: bool) -> None:
    """As generated code registers a service: generic lookup and registered methods."""
    handlers = _handlers(aio=aio)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    server.add_registered_method_handlers(SERVICE, handlers)


def serve_sync(port: int, threads: int) -> None:
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=threads),
        options=OPTIONS,
        maximum_concurrent_rpcs=LIMITS.max_concurrent_rpcs,
    )
    _register(server, aio=False)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    print(bound, flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    server.stop(0)


async def serve_aio(port: int) -> None:
    server = grpc.aio.server(options=OPTIONS, maximum_concurrent_rpcs=LIMITS.max_concurrent_rpcs)
    _register(server, aio=True)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print(bound, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--aio", action="store_true", help="serve with grpc.aio")
    args = parser.parse_args(argv)
    if args.aio:
        asyncio.run(serve_aio(args.port))
    else:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        serve_sync(args.port, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
