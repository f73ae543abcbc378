"""The client's protobuf conversion: descriptors survive the wire, newer enums do not break older clients."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import classifier.client
from classifier import Descriptor, build_descriptor
from classifier._proto.errorclass.v1 import classifier_pb2 as pb
from classifier.client import CauseInput, Effect, ErrorClass, Origin, UnknownReason
from classifier.client.wire import answer_from_proto, class_info_from_proto, descriptor_to_proto
from classifier.server.rpc.convert import descriptor_from_proto

names = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Zs"]), min_size=1, max_size=30
)
text = st.text(max_size=50)
statuses = st.none() | st.integers(100, 599)
grpc_codes = st.none() | st.integers(0, 16)
causes = st.builds(
    CauseInput,
    type=names,
    supertypes=st.lists(names, max_size=3),
    http_status=statuses,
    grpc_status=grpc_codes,
    code=names | st.just(""),
    message=text,
)


@st.composite
def descriptors(draw: st.DrawFn) -> Descriptor:
    return build_descriptor(
        type=draw(names),
        supertypes=draw(st.lists(names, max_size=4)),
        http_status=draw(statuses),
        grpc_status=draw(grpc_codes),
        origin=draw(st.sampled_from(Origin)),
        code=draw(names | st.just("")),
        message=draw(text),
        causes=draw(st.lists(causes, max_size=3)),
        language=draw(st.sampled_from(["", "python", "java", "dotnet", "go", "node"])),
        provider=draw(st.sampled_from(["", "openai", "anthropic"])),
        attributes=draw(st.dictionaries(names, text, max_size=3)),
    )


@given(descriptors())
def test_descriptor_round_trip(d: Descriptor) -> None:
    """What the client writes, the server reads back as the same descriptor (status 0 and unset stay apart)."""
    wire = pb.ExceptionDescriptor.FromString(descriptor_to_proto(d).SerializeToString())
    assert descriptor_from_proto(wire) == d


def test_a_newer_servers_class_is_kept_as_its_number() -> None:
    """A class number this client does not know stays a number (runtimes store it); unknown effects read as no claim."""
    response = pb.ClassifyResponse(class_name="ModelMisbehaved", rule_id="r", ruleset_version="9")
    response.error_class = 14  # type: ignore[assignment]
    response.effect = 7  # type: ignore[assignment]
    response.unknown_reason = 5  # type: ignore[assignment]
    a = answer_from_proto(pb.ClassifyResponse.FromString(response.SerializeToString()))
    assert (a.error_class, a.class_number, a.class_name) == (14, 14, "ModelMisbehaved")
    assert not isinstance(a.error_class, ErrorClass)
    assert (a.effect, a.unknown_reason, a.is_unknown) == (
        Effect.unspecified,
        UnknownReason.none,
        False,
    )
    info = pb.ClassInfo(name="ModelMisbehaved")
    info.error_class = 14  # type: ignore[assignment]
    assert class_info_from_proto(info).error_class == 14


def test_public_names_are_pinned() -> None:
    """classifier.client exports exactly these names; a change here is a change to its users."""
    assert sorted(classifier.client.__all__) == sorted(
        [
            "DEFAULT_ATTEMPTS",
            "DEFAULT_TIMEOUT",
            "TLS",
            "Answer",
            "CauseFields",
            "CauseInput",
            "ClassInfo",
            "Client",
            "Descriptor",
            "DescriptorError",
            "DescriptorFields",
            "Effect",
            "ErrorClass",
            "FieldViolation",
            "Origin",
            "ReloadInfo",
            "ReloadResult",
            "RulesetInfo",
            "RulesetLayer",
            "ServiceError",
            "UnknownReason",
            "describe_tool_failure",
            "descriptor_from_exception",
            "descriptor_from_finish_reason",
            "descriptor_from_response",
            "descriptor_from_span",
            "descriptor_from_span_event",
            "runtime_attributes",
        ]
    )
    assert all(hasattr(classifier.client, name) for name in classifier.client.__all__)


def test_a_newer_servers_effect_in_an_explanation_reads_as_no_claim() -> None:
    """An explained match with an effect number this client lacks reads as "" rather than raising."""
    response = pb.ClassifyResponse(class_name="Timeout")
    response.explanation.matches.add(rule_id="known", effect=pb.RUN_EFFECT_PAUSE)
    newer = response.explanation.matches.add(rule_id="newer")
    newer.effect = 9  # type: ignore[assignment]
    a = answer_from_proto(pb.ClassifyResponse.FromString(response.SerializeToString()))
    assert a.explanation is not None
    assert [(m.rule_id, m.effect) for m in a.explanation.matches] == [
        ("known", "pause"),
        ("newer", ""),
    ]
