"""The outage harness of clients/spec/vectors/outage.json: a server that cannot answer.

`server: stopped` is a loopback port nothing listens on (bound, then closed);
`server: unavailable` a real gRPC server on loopback answering every call of the service
UNAVAILABLE and counting the attempts it sees. The calls are made with the client's
defaults (deadline, attempts, the service config's retry throttling), the breaker on or
off as the vector says.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc

from errorclass_client import Client, Unclassified, facts
from errorclass_client.descriptor import descriptor_fields
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb


def stopped_address() -> str:
    """A loopback port that was free a moment ago and has nothing listening on it now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return f"127.0.0.1:{port}"


@dataclass
class Unavailable:
    """Counts every attempt that reached it; answers each UNAVAILABLE."""

    attempts: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            self.attempts += 1
        context.abort(grpc.StatusCode.UNAVAILABLE, "unavailable (the outage harness)")


@contextmanager
def unavailable_server() -> Iterator[tuple[str, Unavailable]]:
    """A real gRPC server on a free loopback port whose service answers every call UNAVAILABLE."""
    counter = Unavailable()
    messages: dict[str, tuple[Any, Any]] = {
        "Classify": (pb.ClassifyRequest, pb.ClassifyResponse),
        "ClassifyBatch": (pb.ClassifyBatchRequest, pb.ClassifyBatchResponse),
        "GetRuleset": (pb.GetRulesetRequest, pb.RulesetInfo),
        "ListClasses": (pb.ListClassesRequest, pb.ListClassesResponse),
        "GetBundle": (pb.GetBundleRequest, pb.GetBundleResponse),
        "ReportDecisions": (pb.ReportDecisionsRequest, pb.ReportDecisionsResponse),
    }
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            counter.answer,
            request_deserializer=request.FromString,
            response_serializer=response.SerializeToString,
        )
        for name, (request, response) in messages.items()
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler(facts.SERVICE_NAME, handlers)]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}", counter
    finally:
        server.stop(0)


ATTEMPTED = (grpc.ChannelConnectivity.READY, grpc.ChannelConnectivity.TRANSIENT_FAILURE)


def first_attempt_made(channel: grpc.Channel, within: float = 5.0) -> None:
    """Wait (at most `within` seconds) until the channel has made its first connection
    attempt, connected or refused: the one-time start-up cost is not what is timed."""
    done = threading.Event()

    def seen(state: grpc.ChannelConnectivity) -> None:
        if state in ATTEMPTED:
            done.set()

    channel.subscribe(seen, try_to_connect=True)
    try:
        done.wait(within)
    finally:
        channel.unsubscribe(seen)


def _call(client: Client, call: str, descriptors: list[dict[str, Any]]) -> Unclassified | None:
    try:
        if call == "classify":
            client.classify(descriptors[0])
        elif call == "classify_batch":
            client.classify_batch(descriptors)
        else:
            raise AssertionError(f"call: {call!r} is not a call this harness knows")
    except Unclassified as outage:
        return outage
    return None


@contextmanager
def _server(kind: str) -> Iterator[tuple[str, Unavailable | None]]:
    if kind == "stopped":
        yield stopped_address(), None
    elif kind == "unavailable":
        with unavailable_server() as (address, counter):
            yield address, counter
    else:
        raise AssertionError(f"server: {kind!r} is not a server this harness knows")


def run(where: str, vector: dict[str, Any]) -> None:
    """Make the vector's calls against the server it names; assert its `want`, naming
    `where` (file and vector) and the field that differs."""
    given, want = vector["input"], vector["want"]
    descriptors: list[dict[str, Any]] = given["descriptors"]
    with (
        _server(given["server"]) as (address, counter),
        Client(address, breaker=given["breaker"]) as client,  # made at start-up, as a runtime does
    ):
        if given.get("warm_up"):
            with Client(address, attempts=1, breaker=False) as other:
                _call(other, given["call"], descriptors)
            first_attempt_made(client.channel)
        seen_before = counter.attempts if counter is not None else 0
        for i in range(given["calls"]):
            attempts_before = counter.attempts if counter is not None else 0
            started = time.monotonic()
            outcome = _call(client, given["call"], descriptors)
            elapsed_ms = (time.monotonic() - started) * 1000
            at = f"{where}: call {i + 1}"
            assert want["outcome"] == "unclassified", f"{where}: outcome {want['outcome']!r}"
            assert outcome is not None, f"{at}: outcome: want unclassified, got an answer"
            if want.get("keeps_descriptors"):
                kept = [descriptor_fields(d) for d in outcome.descriptors]
                assert kept == descriptors, f"{at}: keeps_descriptors: got {kept}"
            if "within_ms" in want:
                bound = want["within_ms"] + want.get("slack_ms", 0)
                assert elapsed_ms <= bound, f"{at}: within_ms: took {elapsed_ms:.0f} ms"
            if "breaker_open_after" in want:
                opened = want["breaker_open_after"]
                assert outcome.short_circuited == (i >= opened), (
                    f"{at}: breaker_open_after {opened}: short_circuited is "
                    f"{outcome.short_circuited}"
                )
                assert client.breaker is not None
                assert client.breaker.is_open == (i + 1 >= opened), (
                    f"{at}: breaker_open_after {opened}: open is {client.breaker.is_open}"
                )
                if outcome.short_circuited and counter is not None:
                    assert counter.attempts == attempts_before, (
                        f"{at}: a short-circuited call reached the server"
                    )
        if counter is not None:
            attempts = counter.attempts - seen_before
            low, high = want.get("attempts_at_least"), want.get("attempts_at_most")
            assert low is None or attempts >= low, (
                f"{where}: attempts_at_least {low}: saw {attempts}"
            )
            assert high is None or attempts <= high, (
                f"{where}: attempts_at_most {high}: saw {attempts}"
            )
