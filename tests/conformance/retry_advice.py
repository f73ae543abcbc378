"""The service's retry advice for one descriptor, read from the wire (ClassifyResponse fields
11 and 12: `retry_after`, `retry_after_source`).

The conformance judges compare the wait the service advises with the one the fake provider
asked for. errorclass_client's `Answer` does not carry the wait yet, so the judges ask the
same server on the client's own channel and read the response message themselves; the
class, action and rule come from the same response through the client's own conversion
(`wire.answer_from_proto`), after the client's own validation (`validate`), so nothing is
classified twice and a descriptor the client would refuse is refused here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from errorclass_client import Answer, Client, Descriptor, wire
from errorclass_client.client import SERVICE
from errorclass_client.descriptor import validate
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb

CALL_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Advice:
    answer: Answer
    retry_after: float | None
    """Seconds to wait before a retry, as the service advises; None when it advises none."""
    source: str
    """Which attribute it came from (` (capped)` when the ruleset's cap cut it); "" for none."""


def classify(client: Client, d: Descriptor) -> Advice:
    call = client.channel.unary_unary(
        f"/{SERVICE}/Classify",
        request_serializer=pb.ClassifyRequest.SerializeToString,
        response_deserializer=pb.ClassifyResponse.FromString,
    )
    request = wire.request(validate(d), False)  # refused as Client.classify refuses it
    response: pb.ClassifyResponse = call(request, timeout=CALL_TIMEOUT_S)
    wait = (
        response.retry_after.ToTimedelta().total_seconds()
        if response.HasField("retry_after")
        else None
    )
    return Advice(wire.answer_from_proto(response), wait, response.retry_after_source)
