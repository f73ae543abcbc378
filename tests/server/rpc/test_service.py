"""Every RPC over a real server on a loopback port, with a real channel."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

from classifier import ErrorClass, Ruleset
from classifier.server import SERVICE_NAME
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc

RATE_LIMIT = pb.ExceptionDescriptor(
    type="openai.RateLimitError",
    supertypes=["openai.APIStatusError", "openai.APIError", "openai.OpenAIError", "Exception"],
    http_status=429,
    origin=pb.ORIGIN_PROVIDER,
    code="rate_limit_exceeded",
    provider="openai",
    language="python",
)
DOTNET_TIMEOUT = pb.ExceptionDescriptor(
    type="System.Threading.Tasks.TaskCanceledException",
    supertypes=["System.OperationCanceledException", "System.SystemException", "System.Exception"],
    origin=pb.ORIGIN_PROVIDER,
    causes=[pb.Cause(type="System.TimeoutException", supertypes=["System.SystemException"])],
    language="dotnet",
)
WEIRD = pb.ExceptionDescriptor(type="com.example.Weird")


def _bad_request(err: grpc.RpcError) -> list[tuple[str, str]]:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    detail = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(detail)
    return [(v.field, v.description) for v in detail.field_violations]


def test_classify_rate_limit(stub: pb_grpc.ErrorClassifierStub, bundled: Ruleset) -> None:
    r = stub.Classify(pb.ClassifyRequest(descriptor=RATE_LIMIT))
    assert (r.error_class, r.class_name) == (3, "RateLimited")
    assert r.effect == pb.RUN_EFFECT_FAIL
    assert r.retryable
    assert r.action.id == "provider.backoff"
    assert r.action.summary
    assert r.rule_id
    assert (r.ruleset_version, r.ruleset_digest) == (bundled.version, bundled.digest)
    assert r.unknown_reason == pb.UNKNOWN_REASON_UNSPECIFIED
    assert not r.HasField("explanation")


def test_classify_dotnet_httpclient_timeout(stub: pb_grpc.ErrorClassifierStub) -> None:
    r = stub.Classify(pb.ClassifyRequest(descriptor=DOTNET_TIMEOUT))
    assert (r.error_class, r.class_name) == (pb.RUN_ERROR_CLASS_TIMEOUT, "Timeout")


def test_unknown_is_an_answer_with_a_reason(stub: pb_grpc.ErrorClassifierStub) -> None:
    r = stub.Classify(pb.ClassifyRequest(descriptor=WEIRD))
    assert (r.error_class, r.class_name, r.rule_id) == (0, "Unknown", "")
    assert r.unknown_reason == pb.UNKNOWN_REASON_NO_MATCH
    assert r.effect == pb.RUN_EFFECT_UNSPECIFIED
    assert r.action.id == "rules.add"


def test_explain_flag_returns_the_explanation(stub: pb_grpc.ErrorClassifierStub) -> None:
    descriptor = pb.ExceptionDescriptor()
    descriptor.CopyFrom(DOTNET_TIMEOUT)
    descriptor.origin = pb.ORIGIN_USER
    r = stub.Classify(pb.ClassifyRequest(descriptor=descriptor, explain=True))
    assert r.class_name == "Timeout"
    e = r.explanation
    assert e.winner_rule_id == r.rule_id
    assert e.matches[0].rule_id == r.rule_id
    assert e.matches[0].type_depth == 0
    assert any(d.step == "type_depth" for d in e.decisions)
    assert "matched rules" in e.text
    assert r.rule_id in e.text


def test_batch_answers_in_order(stub: pb_grpc.ErrorClassifierStub) -> None:
    descriptors = [RATE_LIMIT, WEIRD, DOTNET_TIMEOUT] * 10
    r = stub.ClassifyBatch(
        pb.ClassifyBatchRequest(requests=[pb.ClassifyRequest(descriptor=d) for d in descriptors])
    )
    assert [x.class_name for x in r.responses] == ["RateLimited", "Unknown", "Timeout"] * 10


def test_stream_answers_in_order(stub: pb_grpc.ErrorClassifierStub) -> None:
    descriptors = [WEIRD, DOTNET_TIMEOUT, RATE_LIMIT] * 20
    answers = stub.ClassifyStream(iter([pb.ClassifyRequest(descriptor=d) for d in descriptors]))
    assert [x.class_name for x in answers] == ["Unknown", "Timeout", "RateLimited"] * 20


def test_get_ruleset_describes_the_serving_ruleset(
    stub: pb_grpc.ErrorClassifierStub, bundled: Ruleset
) -> None:
    info = stub.GetRuleset(pb.GetRulesetRequest())
    assert (info.name, info.version, info.digest) == (bundled.name, bundled.version, bundled.digest)
    assert info.rule_count == len(bundled.rules) > 0
    assert info.loaded_at.endswith("Z")
    assert info.source.endswith("rules")


def test_list_classes_gives_every_class_with_its_defaults(
    stub: pb_grpc.ErrorClassifierStub,
) -> None:
    classes = stub.ListClasses(pb.ListClassesRequest()).classes
    assert [(c.error_class, c.name) for c in classes] == [(c.value, c.name) for c in ErrorClass]
    by_name = {c.name: c for c in classes}
    assert by_name["ContentBlocked"].default_effect == pb.RUN_EFFECT_PAUSE
    assert by_name["ToolError"].default_effect == pb.RUN_EFFECT_CONTINUE
    assert by_name["Unknown"].default_effect == pb.RUN_EFFECT_UNSPECIFIED
    assert all(c.description and c.default_action.id for c in classes)


def test_health_reports_serving(channel: grpc.Channel) -> None:
    health: Any = health_pb2_grpc.HealthStub(channel)  # the typeshed stub lacks Check
    for service in ("", SERVICE_NAME):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_service(channel: grpc.Channel) -> None:
    stub: Any = reflection_pb2_grpc.ServerReflectionStub(channel)
    [reply] = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    names = {s.name for s in reply.list_services_response.service}
    assert {SERVICE_NAME, "grpc.health.v1.Health"} <= names
    [reply] = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(file_containing_symbol=SERVICE_NAME)])
    )
    assert reply.file_descriptor_response.file_descriptor_proto


@pytest.mark.parametrize(
    ("request_", "violations"),
    [
        (pb.ClassifyRequest(), [("descriptor", "is required")]),
        (
            pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="  ")),
            [("descriptor.type", "must not be empty")],
        ),
        (
            pb.ClassifyRequest(
                descriptor=pb.ExceptionDescriptor(type="a.B", http_status=42, grpc_status=99)
            ),
            [
                ("descriptor.http_status", "42 is not an HTTP status (100-599)"),
                ("descriptor.grpc_status", "99 is not a gRPC status code (0-16)"),
            ],
        ),
        (
            pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="a.B", origin=99)),  # type: ignore[arg-type]
            [("descriptor.origin", "99 is not a known origin (0-7)")],
        ),
        (
            pb.ClassifyRequest(
                descriptor=pb.ExceptionDescriptor(
                    type="a.B", supertypes=["x", ""], causes=[pb.Cause(type="c"), pb.Cause()]
                )
            ),
            [
                ("descriptor.supertypes[1]", "must not be empty"),
                ("descriptor.causes[1].type", "must not be empty"),
            ],
        ),
    ],
)
def test_bad_descriptors_get_invalid_argument_naming_the_field(
    stub: pb_grpc.ErrorClassifierStub,
    request_: pb.ClassifyRequest,
    violations: list[tuple[str, str]],
) -> None:
    with pytest.raises(grpc.RpcError) as info:
        stub.Classify(request_)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _bad_request(info.value) == violations
    assert violations[0][0] in (info.value.details() or "")


def test_a_bad_batch_item_is_named_by_its_index(stub: pb_grpc.ErrorClassifierStub) -> None:
    batch = pb.ClassifyBatchRequest(
        requests=[
            pb.ClassifyRequest(descriptor=RATE_LIMIT),
            pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor()),
        ]
    )
    with pytest.raises(grpc.RpcError) as info:
        stub.ClassifyBatch(batch)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _bad_request(info.value) == [("requests[1].descriptor.type", "must not be empty")]


def test_a_bad_stream_message_is_named_by_its_position(stub: pb_grpc.ErrorClassifierStub) -> None:
    requests = [pb.ClassifyRequest(descriptor=RATE_LIMIT), pb.ClassifyRequest()]
    answers = stub.ClassifyStream(iter(requests))
    assert next(answers).class_name == "RateLimited"
    with pytest.raises(grpc.RpcError) as info:
        next(answers)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _bad_request(info.value) == [("stream[1].descriptor", "is required")]


def test_the_server_keeps_serving_after_bad_requests(stub: pb_grpc.ErrorClassifierStub) -> None:
    for _ in range(20):
        with pytest.raises(grpc.RpcError):
            stub.Classify(pb.ClassifyRequest())
    assert stub.Classify(pb.ClassifyRequest(descriptor=RATE_LIMIT)).class_name == "RateLimited"
