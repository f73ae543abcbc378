"""errorclass_client.Client against a real classifier server on a loopback port, its answers
compared with the server package's own engine."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from typing import Any

import grpc
import pytest

from classifier import (
    Descriptor,
    Ruleset,
    build_descriptor,
    classify,
    descriptor_from_data,
    explain,
)
from classifier.answer import Classification
from classifier.engine.explain import render_explanation
from classifier.server import GrpcServer
from classifier.server.explain import Explaining
from classifier.server.rpc.pushback import Pushback
from classifier.server.rpc.service import ClassifierService
from classifier.server.shared.serving_ruleset import RulesetHolder
from errorclass_client import (
    Answer,
    CauseInput,
    Client,
    DescriptorError,
    Effect,
    ErrorClass,
    FieldViolation,
    Origin,
    ServiceError,
    Unclassified,
    UnknownReason,
)
from errorclass_client.client import _error
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from errorclass_client.wire import descriptor_to_proto

DESCRIPTORS: list[dict[str, Any]] = [
    {
        "type": "openai.RateLimitError",
        "supertypes": [
            "openai.APIStatusError",
            "openai.APIError",
            "openai.OpenAIError",
            "Exception",
        ],
        "http_status": 429,
        "origin": "provider",
        "code": "rate_limit_exceeded",
        "provider": "openai",
    },
    {
        "type": "System.Threading.Tasks.TaskCanceledException",
        "supertypes": [
            "System.OperationCanceledException",
            "System.SystemException",
            "System.Exception",
        ],
        "causes": [{"type": "System.TimeoutException"}],
    },
    {"type": "com.example.Weird"},
    {"type": "io.grpc.StatusRuntimeException", "grpc_status": "DEADLINE_EXCEEDED"},
    {"type": "System.OperationCanceledException", "origin": "user"},
    {"type": "Error", "origin": "reconciler", "attributes": {"provider_calls": "0"}},
]


@pytest.fixture(scope="module")
def client(server: GrpcServer) -> Iterator[Client]:
    """One client for the answer tests, with a deadline a loaded machine never reaches (the
    first explanation starts the server's explaining process): these tests are about
    answers, and one call past the default deadline would open the breaker for the rest.
    The deadline's own tests make clients of their own."""
    with Client(f"127.0.0.1:{server.port}", timeout=30) as c:
        yield c


def same(answer: Answer, local: Classification) -> None:
    """The remote answer says what the in-process engine says, field by field (the client's
    types are its own: compared by number and by fields)."""
    assert answer.error_class == local.error_class
    assert isinstance(answer.error_class, ErrorClass)
    assert answer.class_name == local.error_class.name
    assert (dataclasses.asdict(answer.action), int(answer.effect), answer.retryable) == (
        dataclasses.asdict(local.action),
        int(local.effect),
        local.retryable,
    )
    assert (answer.rule_id, int(answer.unknown_reason)) == (
        local.rule_id,
        int(local.unknown_reason),
    )
    assert (answer.ruleset_version, answer.ruleset_digest) == (
        local.ruleset_version,
        local.ruleset_digest,
    )


def test_classify_from_keywords(client: Client) -> None:
    """Keywords build and validate the descriptor; the answer is typed with the taxonomy's enums."""
    a = client.classify(type="openai.RateLimitError", http_status=429, origin=Origin.provider)
    assert a.error_class is ErrorClass.RateLimited
    assert (a.class_name, a.class_number, a.effect, a.retryable) == (
        "RateLimited",
        3,
        Effect.fail,
        True,
    )
    assert a.action.id == "provider.backoff"
    assert not a.is_unknown
    assert a.explanation is None


def test_unknown_is_an_answer(client: Client) -> None:
    """An unmatched descriptor is Unknown with reason no_match and no effect claimed."""
    a = client.classify(type="com.example.Weird")
    assert (a.error_class, a.unknown_reason, a.effect, a.rule_id) == (
        ErrorClass.Unknown,
        UnknownReason.no_match,
        Effect.unspecified,
        "",
    )
    assert a.is_unknown


@pytest.mark.parametrize("data", DESCRIPTORS, ids=lambda d: str(d["type"]))
def test_answers_match_the_engine(client: Client, bundled: Ruleset, data: dict[str, Any]) -> None:
    """Every answer over the wire equals the in-process engine's for the same descriptor."""
    d = descriptor_from_data(data)
    same(client.classify(d), classify(bundled, d))


def test_explain_matches_the_engine(client: Client, bundled: Ruleset) -> None:
    """explain=True brings back the engine's own explanation and its rendered text."""
    d = descriptor_from_data(DESCRIPTORS[1])
    a = client.classify(d, explain=True)
    local = explain(bundled, d)
    assert a.explanation is not None
    assert local.explanation is not None
    assert dataclasses.asdict(a.explanation) == dataclasses.asdict(local.explanation)
    assert a.explanation_text == render_explanation(d, local)


def test_batch_answers_in_order(client: Client, bundled: Ruleset) -> None:
    """classify_batch returns one answer per descriptor, in request order."""
    ds = [descriptor_from_data(d) for d in DESCRIPTORS]
    answers = client.classify_batch(ds)
    assert len(answers) == len(ds)
    for a, d in zip(answers, ds, strict=True):
        same(a, classify(bundled, d))


def test_stream_answers_in_order(client: Client, bundled: Ruleset) -> None:
    """classify_stream yields one answer per descriptor, in order, from a lazy input."""
    ds = [descriptor_from_data(d) for d in DESCRIPTORS * 3]
    answers = list(client.classify_stream(iter(ds), explain=True))
    assert [a.class_name for a in answers] == [classify(bundled, d).error_class.name for d in ds]
    assert all(a.explanation is not None for a in answers)


def test_get_ruleset_and_list_classes(client: Client, bundled: Ruleset) -> None:
    """The serving ruleset's identity, and every class with the ruleset's defaults."""
    info = client.get_ruleset()
    assert (info.name, info.version, info.digest, info.rule_count) == (
        bundled.name,
        bundled.version,
        bundled.digest,
        len(bundled.rules),
    )
    classes = client.list_classes()
    assert [c.error_class for c in classes] == list(ErrorClass)
    for c, server_class in zip(classes, bundled.defaults, strict=True):
        assert isinstance(c.error_class, ErrorClass)
        default = bundled.defaults[server_class]
        assert (c.name, dataclasses.asdict(c.default_action), int(c.default_effect)) == (
            server_class.name,
            dataclasses.asdict(default.action),
            int(default.effect),
        )
        assert c.default_retryable == default.retryable


def test_bad_keywords_fail_before_any_call() -> None:
    """A malformed descriptor from keywords raises DescriptorError locally: no server is needed."""
    with Client("127.0.0.1:1", timeout=0.5, attempts=1) as c, pytest.raises(DescriptorError) as err:
        c.classify(type=" ", causes=[CauseInput(type="")], http_status=42)
    assert [v.field for v in err.value.violations] == [
        "descriptor.type",
        "descriptor.causes[0].type",
        "descriptor.http_status",
    ]


def test_causes_given_as_dicts_answer_as_cause_inputs_do(client: Client) -> None:
    """`causes=[{"type": ...}]`, as a descriptor file writes them, is the same descriptor."""
    fields: dict[str, Any] = {
        "type": "System.Threading.Tasks.TaskCanceledException",
        "supertypes": ["System.OperationCanceledException", "System.Exception"],
        "origin": Origin.user,
    }
    as_dicts = client.classify(
        **fields, causes=[{"type": "System.TimeoutException", "supertypes": ["System.Exception"]}]
    )
    as_inputs = client.classify(
        **fields, causes=[CauseInput("System.TimeoutException", ["System.Exception"])]
    )
    assert as_dicts == as_inputs
    assert (as_dicts.class_name, as_dicts.rule_id) == ("Timeout", "dotnet.httpclient-timeout")


def test_a_cause_that_is_no_cause_is_refused_naming_it() -> None:
    """An unknown key, a dict without `type`, a bare string: DescriptorError, before any call."""
    with Client("127.0.0.1:1", timeout=0.5, attempts=1) as c, pytest.raises(DescriptorError) as err:
        c.classify(
            type="x",
            causes=[{"type": "a", "status": 429}, {"code": "E"}, "TimeoutError"],  # type: ignore[list-item]
        )
    assert [(v.field, v.message) for v in err.value.violations] == [
        (
            "descriptor.causes[0]",
            "unknown key 'status'; a cause has type, supertypes, http_status, grpc_status, "
            "code, message",
        ),
        ("descriptor.causes[1].type", "is required"),
        (
            "descriptor.causes[2]",
            "a cause is a Cause or a mapping of its fields ({'type': ...}), not str",
        ),
    ]


def test_server_violations_become_descriptor_errors(client: Client, server: GrpcServer) -> None:
    """What the server refuses arrives as the same DescriptorError the client raises itself:
    the fields from the BadRequest detail of the call's trailers (decoded in a private
    descriptor pool, without googleapis-common-protos)."""
    unchecked = Descriptor(type="x", http_status=42, causes=())
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = pb_grpc.ErrorClassifierStub(channel)
        with pytest.raises(grpc.RpcError) as raw:
            stub.Classify(pb.ClassifyRequest(descriptor=descriptor_to_proto(unchecked)), timeout=10)
    error = _error(raw.value, [])
    assert isinstance(error, DescriptorError)
    assert error.violations == [
        FieldViolation("descriptor.http_status", "42 is not an HTTP status (100-599)")
    ]
    with pytest.raises(DescriptorError) as err:  # found by the client, named as the server does
        client.classify(unchecked)
    assert err.value.violations == error.violations


def test_batch_and_stream_name_the_bad_descriptor_as_the_server_does(client: Client) -> None:
    """A batch is validated whole before the call (`requests[i].descriptor...`); a stream
    answers what came before a bad descriptor, then refuses it (`stream[i].descriptor...`)."""
    with pytest.raises(DescriptorError) as err:
        client.classify_batch([build_descriptor(type="ok"), Descriptor(type="")])
    assert [v.field for v in err.value.violations] == ["requests[1].descriptor.type"]
    answered: list[Answer] = []
    with pytest.raises(DescriptorError) as err:
        answered.extend(
            client.classify_stream(
                [build_descriptor(type="ok"), Descriptor(type="", grpc_status=99)]
            )
        )
    assert [v.field for v in err.value.violations] == [
        "stream[1].descriptor.type",
        "stream[1].descriptor.grpc_status",
    ]
    assert [a.class_name for a in answered] == ["Unknown"]


def test_a_batch_over_the_limit_is_refused_before_any_call() -> None:
    """More than MAX_BATCH descriptors: refused as the server refuses it, naming `requests`."""
    from errorclass_client import facts

    with Client("127.0.0.1:1", attempts=1) as c, pytest.raises(DescriptorError) as err:
        c.classify_batch([{"type": "x"}] * (facts.MAX_BATCH + 1))
    assert err.value.violations == [
        FieldViolation("requests", f"{facts.MAX_BATCH + 1} requests exceed the batch limit of 1000")
    ]
    assert c.counters["failed"] == 0  # never sent


def test_mappings_are_descriptors_everywhere(client: Client, bundled: Ruleset) -> None:
    """Issue 30: a plain mapping of the fields (origin and gRPC status by name, causes as
    mappings) is taken by classify, classify_batch and classify_stream alike."""
    answers = [client.classify(data) for data in DESCRIPTORS]
    assert client.classify_batch(DESCRIPTORS) == answers
    assert list(client.classify_stream(iter(DESCRIPTORS))) == answers
    for a, data in zip(answers, DESCRIPTORS, strict=True):
        same(a, classify(bundled, descriptor_from_data(data)))
    with pytest.raises(DescriptorError) as err:
        client.classify_batch([{"type": "ok"}, {"type": "x", "origin": "nowhere"}])
    assert [v.field for v in err.value.violations] == ["requests[1].descriptor.origin"]


def test_a_client_descriptor_is_built_with_its_origin_checked() -> None:
    """Issue 30: `Descriptor(origin="tool")` is the origin tool; an unknown name is refused
    when the descriptor is built, naming the field, never later with a ValueError."""
    from errorclass_client import Descriptor as ClientDescriptor

    assert ClientDescriptor(type="TimeoutError", origin="tool").origin is Origin.tool
    assert ClientDescriptor(type="x", origin="caller").origin is Origin.user
    with pytest.raises(DescriptorError) as err:
        ClientDescriptor(type="TimeoutError", origin="toll")
    assert [v.field for v in err.value.violations] == ["descriptor.origin"]


def test_batch_and_stream_take_dicts_of_fields_as_classify_takes_keywords(
    client: Client, bundled: Ruleset
) -> None:
    """`classify_batch([{...}])` and `classify_stream` read a dict as `classify(**fields)`
    reads keywords (an origin by name, causes as dicts), beside built descriptors."""
    # The keyword form takes a gRPC status by number (a descriptor file also by name).
    fields = [d for d in DESCRIPTORS if not isinstance(d.get("grpc_status"), str)]
    assert len(fields) == len(DESCRIPTORS) - 1
    answers = client.classify_batch([*fields, descriptor_from_data(fields[0])])
    want = [classify(bundled, descriptor_from_data(d)) for d in [*fields, fields[0]]]
    for answer, local in zip(answers, want, strict=True):
        same(answer, local)
    assert answers[0].rule_id == "python.openai.rate-limited"
    streamed = list(client.classify_stream(iter(fields)))
    assert [a.rule_id for a in streamed] == [a.rule_id for a in answers[:-1]]
    assert client.classify_batch([dict(DESCRIPTORS[1])])[0].class_name == "Timeout"


def test_a_malformed_dict_in_a_batch_is_named_by_its_place_before_any_call() -> None:
    """Every bad item of a batch at once, each under `requests[i].descriptor` as the server
    names them: an unknown key, no type, an unknown origin, a bad cause, not a dict."""
    items: list[Any] = [
        {"type": "ok"},
        {"type": "x", "status": 429},
        {"message": "no type"},
        {"type": "x", "origin": "tol"},
        {"type": "x", "causes": [{"code": "E"}], "http_status": 42},
        "TimeoutError",
    ]
    with Client("127.0.0.1:1", timeout=0.5, attempts=1) as c, pytest.raises(DescriptorError) as err:
        c.classify_batch(items)
    assert [v.field for v in err.value.violations] == [
        "requests[1].descriptor.status",
        "requests[2].descriptor.type",
        "requests[3].descriptor.origin",
        "requests[4].descriptor.causes[0].type",
        "requests[4].descriptor.http_status",
        "requests[5].descriptor",
    ]
    messages = [v.message for v in err.value.violations]
    assert messages[0].startswith("unknown field (did you mean 'http_status'?); a descriptor")
    assert "(did you mean 'tool'?)" in messages[2]
    assert (
        messages[-1]
        == "a descriptor is a Descriptor or a mapping of its fields ({'type': ...}), not str"
    )
    assert c.counters["failed"] == 0  # refused before the call, not counted as one


def test_a_malformed_dict_ends_a_stream_after_the_answers_before_it(client: Client) -> None:
    """The stream answers the items before it, then DescriptorError names it `stream[i]`."""
    got: list[str] = []
    answers = client.classify_stream(
        [DESCRIPTORS[0], {"type": "x", "origin": "nowhere"}, DESCRIPTORS[1]]
    )
    with pytest.raises(DescriptorError) as err:
        got.extend(a.class_name for a in answers)
    assert got == ["RateLimited"]
    assert [v.field for v in err.value.violations] == ["stream[1].descriptor.origin"]


def test_an_unknown_origin_name_in_keywords_is_a_descriptor_error_naming_it() -> None:
    with Client("127.0.0.1:1", timeout=0.5, attempts=1) as c, pytest.raises(DescriptorError) as err:
        c.classify(type="x", origin="cloud")
    assert [v.field for v in err.value.violations] == ["descriptor.origin"]


def test_a_descriptor_built_with_an_origins_name_is_sent_as_that_origin(
    client: Client, bundled: Ruleset
) -> None:
    """`Descriptor(type=..., origin="tool")` is the descriptor with Origin.tool: sent, it is
    answered as the descriptor file's `origin: tool` is (it failed on the wire before)."""
    from errorclass_client import Descriptor as ClientDescriptor

    built = ClientDescriptor(
        type="TimeoutError", supertypes=("OSError", "Exception"), origin="tool"
    )
    assert built.origin is Origin.tool
    from_file = descriptor_from_data(
        {"type": "TimeoutError", "supertypes": ["OSError", "Exception"], "origin": "tool"}
    )
    answer = client.classify(built)
    same(answer, classify(bundled, from_file))
    assert (answer.class_name, answer.rule_id) == ("ToolError", "origin.tool")  # the origin's rule


def test_descriptor_or_keywords_not_both(client: Client) -> None:
    """classify() takes a Descriptor or keywords: both, or neither, is a TypeError."""
    with pytest.raises(TypeError):
        client.classify(build_descriptor(type="x"), type="y")  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        client.classify()  # type: ignore[call-overload]


def test_no_server_is_unclassified_keeping_the_descriptor() -> None:
    """Nothing listening: Unclassified (a ServiceError) UNAVAILABLE, the descriptor kept, the
    gRPC error as its cause."""
    with Client("127.0.0.1:1", timeout=2, attempts=1) as c, pytest.raises(ServiceError) as err:
        c.classify(type="x", origin="tool")
    assert isinstance(err.value, Unclassified)
    assert err.value.code is grpc.StatusCode.UNAVAILABLE
    assert [(d.type, d.origin) for d in err.value.descriptors] == [("x", Origin.tool)]
    assert not err.value.short_circuited
    assert isinstance(err.value.__cause__, grpc.RpcError)


class Servicer(ClassifierService):
    """The real servicer with parts of its own (no call here asks for an explanation:
    the explaining process is never started)."""

    def __init__(self, holder: RulesetHolder) -> None:
        super().__init__(holder, explaining=Explaining(), pushback=Pushback())


class Slow(Servicer):
    """A real servicer that takes its time, to exceed a client's deadline."""

    def Classify(  # noqa: N802 - the servicer method carries the RPC's name
        self, request: pb.ClassifyRequest, context: grpc.ServicerContext
    ) -> pb.ClassifyResponse:
        time.sleep(0.5)
        return super().Classify(request, context)


class FlakyOnce(Servicer):
    """A real servicer that answers UNAVAILABLE to its first `failures` calls."""

    def __init__(self, holder: RulesetHolder, failures: int) -> None:
        super().__init__(holder)
        self.failures = failures
        self.calls = 0
        self.lock = threading.Lock()

    def Classify(  # noqa: N802 - the servicer method carries the RPC's name
        self, request: pb.ClassifyRequest, context: grpc.ServicerContext
    ) -> pb.ClassifyResponse:
        with self.lock:
            self.calls += 1
            fail = self.calls <= self.failures
        if fail:
            context.abort(grpc.StatusCode.UNAVAILABLE, "warming up")
        return super().Classify(request, context)


@contextmanager
def serving(service: ClassifierService) -> Iterator[str]:
    """A real server running `service` on a free loopback port; yields its address."""
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_ErrorClassifierServicer_to_server(service, srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        srv.stop(0)


def test_deadline_is_the_clients_default_unless_the_call_names_one(bundled: Ruleset) -> None:
    """A call past the client's deadline is DEADLINE_EXCEEDED; a call's own timeout overrides it."""
    slow = Slow(RulesetHolder(bundled))
    with serving(slow) as addr, Client(addr, timeout=0.1, breaker=False) as c:
        with pytest.raises(ServiceError) as err:
            c.classify(type="x")
        assert err.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
        assert c.classify(type="x", timeout=10).error_class is ErrorClass.Unknown


def test_unavailable_is_retried(bundled: Ruleset) -> None:
    """UNAVAILABLE is retried by the channel's retry policy; with one attempt it surfaces."""
    flaky = FlakyOnce(RulesetHolder(bundled), failures=2)
    with serving(flaky) as addr, Client(addr, attempts=3) as c:
        assert c.classify(type="x", origin=Origin.user).error_class is ErrorClass.Canceled
    assert flaky.calls == 3
    flaky = FlakyOnce(RulesetHolder(bundled), failures=1)
    with serving(flaky) as addr, Client(addr, attempts=1) as c, pytest.raises(ServiceError) as err:
        c.classify(type="x")
    assert (err.value.code, err.value.details) == (grpc.StatusCode.UNAVAILABLE, "warming up")
    assert flaky.calls == 1


def test_attempts_must_be_positive() -> None:
    """Zero attempts is a mistake, refused when the client is made."""
    with pytest.raises(ValueError, match="attempts"):
        Client("127.0.0.1:1", attempts=0)


def test_the_clients_fields_are_the_servers() -> None:
    """The client's descriptor, its keyword forms and the server's field table agree."""
    from classifier.descriptor import CAUSE_FIELD_NAMES, FIELD_NAMES
    from errorclass_client import Cause, CauseFields, DescriptorFields
    from errorclass_client import Descriptor as ClientDescriptor
    from errorclass_client import descriptor as client_descriptor

    assert client_descriptor.FIELD_NAMES == FIELD_NAMES
    assert tuple(f.name for f in pb.ExceptionDescriptor.DESCRIPTOR.fields) == FIELD_NAMES
    assert tuple(f.name for f in pb.Cause.DESCRIPTOR.fields) == CAUSE_FIELD_NAMES
    assert client_descriptor.CAUSE_FIELD_NAMES == CAUSE_FIELD_NAMES
    assert tuple(f.name for f in dataclasses.fields(ClientDescriptor)) == FIELD_NAMES
    assert tuple(f.name for f in dataclasses.fields(Cause)) == CAUSE_FIELD_NAMES
    assert tuple(DescriptorFields.__annotations__) == FIELD_NAMES
    assert tuple(CauseFields.__annotations__) == CAUSE_FIELD_NAMES
