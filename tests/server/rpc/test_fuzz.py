"""Fuzzed descriptors over gRPC: every one gets an answer or INVALID_ARGUMENT naming its
fields, exactly as the library decides, and nothing else (no crash, no other status)."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from classifier import Ruleset
from classifier.engine.evaluate import classify
from classifier.errors import DescriptorError
from classifier.server.rpc.convert import descriptor_from_proto
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc

TYPES = [
    "openai.RateLimitError",
    "System.Threading.Tasks.TaskCanceledException",
    "System.TimeoutException",
    "System.OperationCanceledException",
    "java.net.SocketTimeoutException",
    "Exception",
]
names = st.one_of(
    st.sampled_from(TYPES),
    st.text(max_size=30),
    st.just(""),
    st.just("   "),
    st.text(min_size=1020, max_size=1030, alphabet="ab"),
)
http = st.one_of(st.none(), st.sampled_from([408, 429, 500, 503, 529]), st.integers(-5, 1000))
grpc_codes = st.one_of(st.none(), st.integers(-3, 20))
short = st.text(max_size=20)


@st.composite
def causes(draw: st.DrawFn) -> pb.Cause:
    cause = pb.Cause(
        type=draw(names),
        supertypes=draw(st.lists(names, max_size=3)),
        code=draw(short),
        message=draw(st.text(max_size=50)),
    )
    if (status := draw(http)) is not None:
        cause.http_status = status
    if (code := draw(grpc_codes)) is not None:
        cause.grpc_status = code
    return cause


@st.composite
def descriptors(draw: st.DrawFn) -> pb.ExceptionDescriptor:
    d = pb.ExceptionDescriptor(
        type=draw(names),
        supertypes=draw(st.one_of(st.lists(names, max_size=4), st.just(["a.B"] * 65))),
        origin=draw(st.integers(0, 9)),  # type: ignore[arg-type]
        code=draw(st.one_of(short, st.sampled_from(["rate_limit_exceeded", "x" * 300]))),
        message=draw(st.one_of(st.text(max_size=80), st.just("y" * 5000))),
        causes=draw(st.one_of(st.lists(causes(), max_size=3), st.just([pb.Cause(type="c")] * 33))),
        language=draw(st.one_of(short, st.sampled_from(["dotnet", "Python"]))),
        provider=draw(st.one_of(short, st.sampled_from(["openai", "Anthropic"]))),
        attributes=draw(
            st.one_of(
                st.dictionaries(short, st.text(max_size=20), max_size=4),
                st.just({f"k{i}": "v" for i in range(65)}),
            )
        ),
    )
    if (status := draw(http)) is not None:
        d.http_status = status
    if (code := draw(grpc_codes)) is not None:
        d.grpc_status = code
    return d


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(descriptor=descriptors())
def test_any_descriptor_gets_the_librarys_answer_or_its_violations(
    stub: pb_grpc.ErrorClassifierStub, bundled: Ruleset, descriptor: pb.ExceptionDescriptor
) -> None:
    """The wire answer equals classify() locally; a refusal lists exactly the library's violations."""
    try:
        expected = descriptor_from_proto(descriptor)
    except DescriptorError as exc:
        with_fields = [(v.field, v.message) for v in exc.violations]
        with pytest.raises(grpc.RpcError) as info:
            stub.Classify(pb.ClassifyRequest(descriptor=descriptor), timeout=10)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        status = rpc_status.from_call(info.value)  # type: ignore[arg-type]
        assert status is not None
        detail = error_details_pb2.BadRequest()
        assert status.details[0].Unpack(detail)
        assert [(v.field, v.description) for v in detail.field_violations] == with_fields
        return
    answer = stub.Classify(pb.ClassifyRequest(descriptor=descriptor), timeout=10)
    local = classify(bundled, expected)
    assert (answer.error_class, answer.rule_id, answer.unknown_reason) == (
        int(local.error_class),
        local.rule_id,
        int(local.unknown_reason),
    )
    assert (answer.effect, answer.retryable, answer.action.id) == (
        int(local.effect),
        local.retryable,
        local.action.id,
    )
    assert (answer.ruleset_version, answer.ruleset_digest) == (bundled.version, bundled.digest)
