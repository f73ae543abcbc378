"""When the service cannot answer: Unclassified keeps the descriptors, never Unknown.

The vectors of clients/spec/vectors/outage.json (every language's one behaviour: a
stopped server and one answering UNAVAILABLE, the deadline, the breaker, retry
throttling) run in test_vectors through outage_harness; these are the Python client's
own cases around them: a stream, the fallback, and the calls that classify nothing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import grpc
import outage_harness
import pytest

from errorclass_client import Answer, Client, Descriptor, ServiceError, Unclassified, validate
from errorclass_client.descriptor import descriptor_fields

SPEC = Path(__file__).parents[2] / "spec"
DESCRIPTORS: list[dict[str, Any]] = json.loads(
    (SPEC / "vectors" / "outage.json").read_text(encoding="utf-8")
)["vectors"][1]["input"]["descriptors"]
"""The three descriptors of the batch vector: an openai connection error, timeout, httpx's."""


class Answering:
    """A fallback that answers every descriptor (as LocalFallback does, with no ruleset)."""

    def __init__(self) -> None:
        self.asked: list[Descriptor] = []

    def classify(self, descriptor: Descriptor) -> Answer:
        from errorclass_client import Action, Effect, ErrorClass

        self.asked.append(descriptor)
        return Answer(
            error_class=ErrorClass.ProviderError,
            class_name="ProviderError",
            action=Action("local", "answered in process"),
            effect=Effect.fail,
            retryable=True,
            rule_id="local",
            ruleset_version="1",
            ruleset_digest="sha256:local",
            local=True,
        )


def test_the_outage_vectors_are_every_kind_of_server() -> None:
    """The harness knows every server and call the vectors name (test_vectors runs them)."""
    vectors = json.loads((SPEC / "vectors" / "outage.json").read_text(encoding="utf-8"))
    assert {v["input"]["server"] for v in vectors["vectors"]} == {"stopped", "unavailable"}
    assert {v["input"]["call"] for v in vectors["vectors"]} <= {"classify", "classify_batch"}


def test_a_stream_keeps_what_it_sent_and_was_not_answered() -> None:
    """A stream to a server that cannot answer: Unclassified with the descriptors it sent."""
    with Client(outage_harness.stopped_address(), breaker=False) as client:
        started = time.monotonic()
        with pytest.raises(Unclassified) as err:
            list(client.classify_stream(iter(DESCRIPTORS), timeout=2))
    assert time.monotonic() - started < 2.5
    assert err.value.code is grpc.StatusCode.UNAVAILABLE
    kept = [descriptor_fields(d) for d in err.value.descriptors]
    assert kept
    assert kept == DESCRIPTORS[: len(kept)]  # the rest were never taken from the iterator


def test_the_fallback_answers_what_the_service_cannot() -> None:
    """With a fallback, an outage is answered in process (`local`), a batch descriptor by
    descriptor, the breaker's short-circuited calls too; nothing is Unclassified."""
    fallback = Answering()
    with Client(outage_harness.stopped_address(), fallback=fallback) as client:
        answers = [client.classify(DESCRIPTORS[0]) for _ in range(4)]
        answers += client.classify_batch(DESCRIPTORS)
        assert client.counters == {"server": 0, "local": 5, "failed": 0, "short_circuited": 2}
    assert all(a.local for a in answers)
    assert [descriptor_fields(d) for d in fallback.asked] == [DESCRIPTORS[0]] * 4 + DESCRIPTORS
    assert fallback.asked[0] == validate(DESCRIPTORS[0])


def test_calls_that_classify_nothing_fail_as_service_errors() -> None:
    """get_ruleset and list_classes have no descriptor to keep: a plain ServiceError."""
    with outage_harness.unavailable_server() as (address, counter), Client(address) as client:
        for call in (client.get_ruleset, client.list_classes):
            with pytest.raises(ServiceError) as err:
                call()
            assert not isinstance(err.value, Unclassified)
            assert err.value.code is grpc.StatusCode.UNAVAILABLE
    assert counter.attempts >= 2


def test_unclassified_is_not_an_answer_of_unknown() -> None:
    """What a runtime stores from an outage is the descriptors, with the reason: the error
    says unclassified and how many it kept, and carries no class at all."""
    with (
        Client(outage_harness.stopped_address(), breaker=False) as client,
        pytest.raises(Unclassified) as err,
    ):
        client.classify_batch(DESCRIPTORS)
    assert len(err.value.descriptors) == 3
    assert not hasattr(err.value, "error_class")
    assert str(err.value).startswith("UNAVAILABLE")
