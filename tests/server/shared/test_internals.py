"""Each private detail of grpcio (and of concurrent.futures) the server relies on, asserted
for the installed release, and grpcio pinned to the releases these tests ran on."""

from __future__ import annotations

import multiprocessing
import os
import re
import threading
import tomllib
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from classifier.server.shared import internals
from tests.support import ROOT, wait_for

METHOD = "/internals.Probe/Call"
STREAM = "/internals.Probe/Stream"


class Recording(futures.ThreadPoolExecutor):
    """A pool that notes the peer grpcio's work item carries, and runs the work."""

    def __init__(self) -> None:
        super().__init__(max_workers=2, thread_name_prefix="recording")
        self.peers: list[str | None] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> futures.Future[Any]:
        self.peers.append(internals.peer_of_work(args))
        return super().submit(fn, *args, **kwargs)


class Probe:
    """A real server on loopback with one unary method on `pool`, one stream on the server's
    own pool; what the handlers saw."""

    def __init__(self, pool: futures.ThreadPoolExecutor) -> None:
        self.threads: list[str] = []
        self.peers: list[str] = []
        self.contexts: list[grpc.ServicerContext] = []
        self.opened = threading.Event()

        def call(request: bytes, context: grpc.ServicerContext) -> bytes:
            self.threads.append(threading.current_thread().name)
            self.peers.append(context.peer())
            return request

        def stream(requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
            self.contexts.append(context)
            self.opened.set()
            yield from requests

        internals.run_on(call, pool)
        handler = grpc.method_handlers_generic_handler(
            "internals.Probe",
            {
                "Call": grpc.unary_unary_rpc_method_handler(call),
                "Stream": grpc.stream_stream_rpc_method_handler(stream),
            },
        )
        self.default = futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="default")
        self.server = grpc.server(self.default, handlers=[handler])
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()


@pytest.fixture
def recording() -> Iterator[Recording]:
    pool = Recording()
    yield pool
    pool.shutdown()


@pytest.fixture
def probe(recording: Recording) -> Iterator[Probe]:
    made = Probe(recording)
    yield made
    made.server.stop(None)
    made.default.shutdown()


def test_grpcio_runs_a_behavior_on_its_experimental_thread_pool(
    probe: Probe, recording: Recording
) -> None:
    """`behavior.experimental_thread_pool` (a ThreadPoolExecutor): the call is submitted to
    it, not to the server's pool, and runs on its threads."""
    with grpc.insecure_channel(f"127.0.0.1:{probe.port}") as channel:
        call: Any = channel.unary_unary(METHOD)
        assert call(b"ping", timeout=10) == b"ping"
    assert len(recording.peers) == 1
    assert probe.threads[0].startswith("recording")


def test_the_work_item_grpcio_submits_carries_the_call_and_its_peer(
    probe: Probe, recording: Recording
) -> None:
    """One of the first three arguments of the submitted work is the rpc event, whose
    `call.peer()` is the connection `context.peer()` names in the handler."""
    with grpc.insecure_channel(f"127.0.0.1:{probe.port}") as channel:
        call: Any = channel.unary_unary(METHOD)
        call(b"a", timeout=10)
        call(b"b", timeout=10)
    assert recording.peers == probe.peers
    assert all(re.fullmatch(r"ipv4:127\.0\.0\.1:\d+", p) for p in probe.peers)


def test_the_servicer_context_carries_its_core_call_that_ends_with_any_status(
    probe: Probe,
) -> None:
    """`context._rpc_event.call.cancel(code, details)` from another thread ends an open
    stream with that status and details (the public `context.cancel()` cannot)."""
    assert getattr(getattr(object(), "_rpc_event", None), "call", None) is None
    with grpc.insecure_channel(f"127.0.0.1:{probe.port}") as channel:
        quiet = threading.Event()

        def never_sends() -> Iterator[bytes]:
            quiet.wait(10)
            yield from ()

        stream: Any = channel.stream_stream(STREAM)
        responses = stream(never_sends(), timeout=10)
        assert probe.opened.wait(10)
        context = probe.contexts[0]
        assert getattr(getattr(context, "_rpc_event", None), "call", None) is not None
        internals.cancel_call(context, grpc.StatusCode.DEADLINE_EXCEEDED, "closed by the test")
        with pytest.raises(grpc.RpcError) as info:
            list(responses)
        quiet.set()
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert info.value.details() == "closed by the test"


def _pid() -> int:
    return os.getpid()


def test_a_process_pool_lists_its_processes() -> None:
    """`ProcessPoolExecutor._processes` (pid to process): the worker processes it started,
    alive while the pool is, that `processes_of` finds to stop at once."""
    pool = futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    processes: list[Any] = []
    try:
        pid = pool.submit(_pid).result(timeout=30)
        processes = internals.processes_of(pool)
        assert [p.pid for p in processes] == [pid]
        assert pid != os.getpid()
        assert processes[0].is_alive()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
            process.join(timeout=5)
    wait_for(lambda: not processes[0].is_alive())


def test_grpcio_is_pinned_to_the_releases_these_tests_ran_on() -> None:
    """pyproject.toml allows exactly the grpcio minor release asserted here, and that is
    the one installed."""
    installed = tuple(int(part) for part in grpc.__version__.split(".")[:2])
    assert installed == internals.GRPCIO_TESTED
    major, minor = internals.GRPCIO_TESTED
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = f"grpcio>={major}.{minor},<{major}.{minor + 1}"
    assert wanted in project["project"]["dependencies"]
