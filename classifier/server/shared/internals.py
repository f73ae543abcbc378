"""Every private detail of grpcio (and one of concurrent.futures) the server relies on.

The server does three things grpcio's public API does not offer: it runs each
method on a thread pool of its own (a lane), it knows a call's connection
before the call takes a thread (to hold back a connection told to wait), and
it ends a call from another thread with a status of its choosing (the stream
reaper). The explaining process is stopped at once, busy or not, which
concurrent.futures does not offer either. Each rests on a detail that a new
release may change; they are all here, each asserted for the installed
grpcio by tests/server/shared/test_internals.py, and grpcio is pinned in
pyproject.toml to the releases those tests were run on.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent import futures
from multiprocessing.process import BaseProcess
from typing import Any

import grpc

GRPCIO_TESTED = (1, 85)
"""The grpcio release (major, minor) these details were asserted on; pyproject.toml pins
`grpcio>=1.85,<1.86` to it."""


def run_on(behavior: Callable[..., Any], pool: futures.ThreadPoolExecutor) -> None:
    """Have grpcio run a handler's `behavior` on `pool` rather than the server's pool.

    grpcio (`_server._select_thread_pool_for_behavior`) submits a call to the
    behavior's `experimental_thread_pool` when it is a ThreadPoolExecutor.
    """
    behavior.experimental_thread_pool = pool  # type: ignore[attr-defined]


def peer_of_work(args: tuple[Any, ...]) -> str | None:
    """The connection (peer) of a call grpcio submits to a pool, from the work item's
    arguments: one of the first three is grpcio's rpc event, whose `call` has `peer()`.
    None when no argument carries a call."""
    for arg in args[:3]:
        call = getattr(arg, "call", None)
        if call is not None:
            try:
                peer = call.peer()
            except Exception:  # pragma: no cover  (the call ended meanwhile)
                return None
            return peer.decode(errors="replace") if isinstance(peer, bytes) else str(peer)
    return None


def cancel_call(context: grpc.ServicerContext, code: grpc.StatusCode, details: str) -> None:
    """End a call from another thread with a status: the servicer context's core call
    (`context._rpc_event.call`) can; the public `context.cancel()` only says CANCELLED."""
    call = getattr(getattr(context, "_rpc_event", None), "call", None)
    try:
        if call is not None:
            call.cancel(code.value[0], details)
        else:  # pragma: no cover  (another grpcio)
            context.cancel()
    except Exception:  # pragma: no cover  (the call ended meanwhile)
        pass


def processes_of(pool: futures.ProcessPoolExecutor) -> list[BaseProcess]:
    """The worker processes of a process pool (its private `_processes`, pid to process),
    so that a pool busy with a task can be stopped at once: `shutdown` waits for it."""
    return list((getattr(pool, "_processes", None) or {}).values())
