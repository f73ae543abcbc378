"""OpenTelemetry exception events and span attributes to descriptors: plain mappings, and real SDK spans."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from classifier import Ruleset, classify
from classifier.server import GrpcServer
from errorclass_client import (
    Client,
    DescriptorError,
    ErrorClass,
    Origin,
    descriptor_from_exception,
    descriptor_from_span,
    descriptor_from_span_event,
)

CHAT_429: dict[str, Any] = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o",
    "http.response.status_code": 429,
    "server.address": "api.openai.com",
}


def test_the_documented_mapping() -> None:
    """exception.type/message, the HTTP status, the provider and the operation land in their fields."""
    d = descriptor_from_span_event(
        {"exception.type": "openai.RateLimitError", "exception.message": "Rate limit reached"},
        CHAT_429,
        resource={"telemetry.sdk.language": "python"},
    )
    assert (d.type, d.message, d.http_status, d.provider, d.origin, d.language) == (
        "openai.RateLimitError",
        "Rate limit reached",
        429,
        "openai",
        Origin.provider,
        "python",
    )
    assert d.attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4o",
        "server.address": "api.openai.com",
    }


@pytest.mark.parametrize(
    ("span", "grpc_status", "code"),
    [
        ({"rpc.system": "grpc", "rpc.grpc.status_code": 4}, 4, ""),
        ({"rpc.system": "grpc", "rpc.response.status_code": "DEADLINE_EXCEEDED"}, 4, ""),
        ({"rpc.system": "grpc", "rpc.status_code": "14"}, 14, ""),
        ({"rpc.system": "jsonrpc", "rpc.response.status_code": "-32602"}, None, "-32602"),
        ({"rpc.system": "grpc", "rpc.grpc.status_code": 99}, None, ""),
    ],
)
def test_rpc_status_old_and_new_names(
    span: dict[str, Any], grpc_status: int | None, code: str
) -> None:
    """rpc.grpc.status_code and its successors give the gRPC status; a JSON-RPC code becomes `code`."""
    d = descriptor_from_span_event({"exception.type": "RpcError"}, span)
    assert (d.grpc_status, d.code) == (grpc_status, code)


def test_older_attribute_names() -> None:
    """http.status_code and gen_ai.system, from earlier conventions, still count."""
    d = descriptor_from_span_event(
        {"exception.type": "E"}, {"http.status_code": "503", "gen_ai.system": "Anthropic"}
    )
    assert (d.http_status, d.provider) == (503, "anthropic")


def test_a_provider_attribute_set_to_none_names_no_provider() -> None:
    """An attribute present but None (a plain mapping may hold one) is no provider, not "none"."""
    d = descriptor_from_span_event({"exception.type": "E"}, {"gen_ai.system": None})
    assert d.provider == ""


def test_origin_from_the_operation_and_explicit_values_win() -> None:
    """execute_tool spans are tool failures; the caller's own origin, provider and attributes win."""
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file"}
    assert descriptor_from_span_event({"exception.type": "E"}, tool).origin is Origin.tool
    assert (
        descriptor_from_span_event(
            {"exception.type": "E"}, {"gen_ai.operation.name": "invoke_agent"}
        ).origin
        is Origin.unspecified
    )
    d = descriptor_from_span_event(
        {"exception.type": "E"},
        {
            **CHAT_429,
            "gen_ai.response.finish_reasons": ["content_filter", "stop"],
            "error.type": "E",
        },
        origin="guard",
        provider="azure_openai",
        attributes={"gen_ai.request.model": "mine"},
    )
    assert (d.origin, d.provider) == (Origin.guard, "azure_openai")
    assert d.attributes["gen_ai.request.model"] == "mine"
    assert d.attributes["gen_ai.response.finish_reasons"] == "content_filter,stop"
    assert d.attributes["error.type"] == "E"


def test_type_from_error_type_or_refused() -> None:
    """Without exception.type the span's error.type names the failure; with neither, the descriptor is refused."""
    assert descriptor_from_span_event({}, {"error.type": "timeout"}).type == "timeout"
    with pytest.raises(DescriptorError) as err:
        descriptor_from_span_event(
            {"exception.message": "no type"}, {"http.response.status_code": 500}
        )
    assert [v.field for v in err.value.violations] == ["descriptor.type"]


def test_language_from_the_resource() -> None:
    """telemetry.sdk.language names the runtime; OpenTelemetry's `nodejs` is this service's `node`."""
    for sdk, language in [("nodejs", "node"), ("java", "java"), ("dotnet", "dotnet"), ("go", "go")]:
        d = descriptor_from_span_event(
            {"exception.type": "E"}, resource={"telemetry.sdk.language": sdk}
        )
        assert d.language == language


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "agent-runtime"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def finished(exporter: InMemorySpanExporter) -> ReadableSpan:
    (span,) = exporter.get_finished_spans()
    return span


def test_real_sdk_span_with_a_recorded_exception(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """A span the OpenTelemetry SDK recorded an exception on gives the same type name the Python helper does."""
    provider, exporter = spans
    exc = httpx.ReadTimeout("timed out")
    with (
        pytest.raises(httpx.ReadTimeout),
        provider.get_tracer("test").start_as_current_span("chat gpt-4o", attributes=CHAT_429),
    ):
        raise exc
    d = descriptor_from_span(finished(exporter))
    assert d is not None
    assert (d.type, d.message, d.http_status, d.origin, d.provider, d.language) == (
        descriptor_from_exception(exc).type,
        "timed out",
        429,
        Origin.provider,
        "openai",
        "python",
    )


def test_real_sdk_spans_without_failures(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """A span with no exception event is no failure; one with only error.type is described by it."""
    provider, exporter = spans
    with provider.get_tracer("test").start_as_current_span("ok"):
        pass
    assert descriptor_from_span(finished(exporter)) is None
    exporter.clear()
    with provider.get_tracer("test").start_as_current_span(
        "chat", attributes={**CHAT_429, "error.type": "429"}
    ):
        pass
    d = descriptor_from_span(finished(exporter))
    assert d is not None
    assert (d.type, d.http_status) == ("429", 429)


def test_last_exception_event_decides(spans: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    """With several exception events (retries), the last one, which ended the span, is described."""
    provider, exporter = spans
    with provider.get_tracer("test").start_as_current_span(
        "tool", attributes={"gen_ai.operation.name": "execute_tool"}
    ) as span:
        span.record_exception(ConnectionResetError("first try"))
        span.record_exception(TimeoutError("second try"))
    d = descriptor_from_span(finished(exporter))
    assert d is not None
    assert (d.type, d.message, d.origin) == ("TimeoutError", "second try", Origin.tool)


def test_span_descriptors_classified_by_the_service(
    spans: tuple[TracerProvider, InMemorySpanExporter], server: GrpcServer, bundled: Ruleset
) -> None:
    """A descriptor from a real span goes over the wire and gets the engine's answer."""
    provider, exporter = spans
    with (
        pytest.raises(RuntimeError),
        provider.get_tracer("test").start_as_current_span("chat", attributes=CHAT_429),
    ):
        raise RuntimeError("Error code: 429")
    d = descriptor_from_span(finished(exporter))
    assert d is not None
    with Client(f"127.0.0.1:{server.port}") as client:
        answer = client.classify(d)
    assert answer.error_class is ErrorClass.RateLimited
    assert int(classify(bundled, d).error_class) == ErrorClass.RateLimited
