"""The client's protobuf conversion and validation against the server's own: descriptors
survive the wire, the client refuses what the service refuses, and newer enums do not
break older clients."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import errorclass_client
from classifier.descriptor import as_descriptor
from classifier.errors import DescriptorError as ServerDescriptorError
from classifier.server.rpc.convert import descriptor_from_proto
from errorclass_client import (
    CauseInput,
    Descriptor,
    DescriptorError,
    Effect,
    ErrorClass,
    Origin,
    UnknownReason,
    validate,
)
from errorclass_client.descriptor import descriptor_fields
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.wire import answer_from_proto, class_info_from_proto, descriptor_to_proto
from tools.spec.vectors import vector_fields

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
    return Descriptor(
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
    """What the client sends, the server reads back as the same descriptor (status 0 and unset stay apart)."""
    sent = validate(d)
    wire = pb.ExceptionDescriptor.FromString(descriptor_to_proto(sent).SerializeToString())
    assert vector_fields(descriptor_from_proto(wire)) == descriptor_fields(sent)


loose = st.text(st.sampled_from("aZ. _\t\u3000\u00c9"), max_size=6)
"""Names with spaces around and inside, and empty ones."""


@st.composite
def loose_descriptors(draw: st.DrawFn) -> Descriptor:
    cause = st.builds(
        CauseInput,
        type=loose,
        supertypes=st.lists(loose, max_size=2),
        http_status=st.none() | st.integers(0, 700),
        grpc_status=st.none() | st.integers(-1, 18),
        code=loose,
    )
    return Descriptor(
        type=draw(loose),
        supertypes=draw(st.lists(loose, max_size=3)),
        http_status=draw(st.none() | st.integers(0, 700)),
        grpc_status=draw(st.none() | st.integers(-1, 18)),
        origin=draw(st.sampled_from(Origin)),
        code=draw(loose),
        causes=draw(st.lists(cause, max_size=2)),
        language=draw(loose),
        provider=draw(loose),
        attributes=draw(st.dictionaries(loose, loose, max_size=2)),
    )


@given(loose_descriptors())
def test_the_clients_validation_is_the_services(d: Descriptor) -> None:
    """On any descriptor, the client's `validate` accepts what the service accepts, normalised
    alike, and refuses what it refuses naming the same fields (the vectors pin the limits)."""
    mine: dict[str, Any]
    theirs: dict[str, Any]
    try:
        mine = {"descriptor": descriptor_fields(validate(d))}
    except DescriptorError as exc:
        mine = {"violations": [v.field for v in exc.violations]}
    try:
        theirs = {"descriptor": vector_fields(as_descriptor(d))}
    except ServerDescriptorError as exc:
        theirs = {"violations": [v.field for v in exc.violations]}
    assert mine == theirs


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
    """errorclass_client exports exactly these names; a change here is a change to its users."""
    assert sorted(errorclass_client.__all__) == sorted(
        [
            "DEFAULT_ATTEMPTS",
            "DEFAULT_TIMEOUT",
            "TLS",
            "Action",
            "Answer",
            "BodyEvidence",
            "Breaker",
            "BreakerState",
            "Cause",
            "CauseFields",
            "CauseInput",
            "ClassInfo",
            "Client",
            "ClientError",
            "Descriptor",
            "DescriptorError",
            "DescriptorFields",
            "DescriptorInput",
            "Effect",
            "ErrorClass",
            "Explanation",
            "Fallback",
            "FieldViolation",
            "NearMiss",
            "Origin",
            "PrecedenceDecision",
            "ReloadInfo",
            "ReloadResult",
            "RuleMatch",
            "RuleVerdict",
            "RulesetInfo",
            "RulesetLayer",
            "RuntimeFactError",
            "ServiceError",
            "Unclassified",
            "UnknownReason",
            "__version__",
            "describe_tool_failure",
            "descriptor_from_exception",
            "descriptor_from_finish_reason",
            "descriptor_from_mapping",
            "descriptor_from_response",
            "descriptor_from_span",
            "descriptor_from_span_event",
            "evidence",
            "fit",
            "runtime_attributes",
            "stream_error",
            "validate",
        ]
    )
    assert all(hasattr(errorclass_client, name) for name in errorclass_client.__all__)


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
