"""The client fails fast and remembers: a hung service costs one deadline, then the breaker
answers at once (or the local fallback does) until a background probe finds it back."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import pytest

from classifier.client.local import LocalFallback
from classifier.engine.ruleset import Ruleset
from classifier.server import create_server
from errorclass_client import DEFAULT_TIMEOUT, Client, ErrorClass, ServiceError, Unclassified
from tests.support import BUNDLED_RULES, wait_for


@contextmanager
def hung_server() -> Iterator[str]:
    """Accepts TCP connections and never says a word (not even the HTTP/2 handshake)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        for s in held:
            s.close()
        listener.close()


def test_the_default_deadline_is_short() -> None:
    assert DEFAULT_TIMEOUT <= 0.5


def test_a_hung_server_costs_one_deadline_then_calls_fail_at_once() -> None:
    with hung_server() as addr, Client(addr, attempts=1) as client:
        started = time.monotonic()
        with pytest.raises(ServiceError) as first:
            client.classify(type="x.Y")
        took = time.monotonic() - started
        assert first.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
        assert took < DEFAULT_TIMEOUT + 0.5
        started = time.monotonic()
        for _ in range(20):
            with pytest.raises(Unclassified) as later:
                client.classify(type="x.Y")
            assert later.value.code is grpc.StatusCode.UNAVAILABLE
            assert "circuit open" in later.value.details
            assert later.value.short_circuited
            assert [d.type for d in later.value.descriptors] == ["x.Y"]
        fast = time.monotonic() - started
        print(
            f"\nhung server: first call {took * 1000:.0f} ms, then 20 calls in {fast * 1000:.1f} ms"
        )
        assert fast < DEFAULT_TIMEOUT  # twenty calls in less than one deadline
        assert client.counters == {"server": 0, "local": 0, "failed": 21, "short_circuited": 20}


def test_the_fallback_answers_locally_and_says_so(bundled: Ruleset) -> None:
    fallback = LocalFallback(bundled)
    with hung_server() as addr, Client(addr, attempts=1, fallback=fallback) as client:
        for _ in range(5):
            answer = client.classify(type="openai.RateLimitError", http_status=429)
            assert answer.local
            assert answer.error_class is ErrorClass.RateLimited
            assert answer.ruleset_digest == bundled.digest
        assert client.counters == {"server": 0, "local": 5, "failed": 0, "short_circuited": 4}
        assert [a.local for a in client.classify_batch([])] == []


def test_the_breaker_closes_when_the_service_comes_back(bundled: Ruleset) -> None:
    """Down (nothing listens), then up on the same port: a probe closes the breaker."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"127.0.0.1:{port}"
    with Client(address, attempts=1) as client:
        client.breaker.reset_after = 0.2  # type: ignore[union-attr]
        for _ in range(3):
            with pytest.raises(ServiceError):
                client.classify(type="x.Y")
        assert client.breaker is not None
        assert client.breaker.is_open
        server = create_server(bundled, address)
        server.start()
        try:
            wait_for(lambda: not client.breaker.is_open, timeout=15)  # type: ignore[union-attr]
            assert not client.classify(type="openai.RateLimitError", http_status=429).local
            assert client.counters["server"] == 1
        finally:
            server.stop(grace=0)


def test_the_local_fallback_is_loaded_only_when_imported() -> None:
    assert LocalFallback.from_folder(BUNDLED_RULES).digest.startswith("sha256:")
