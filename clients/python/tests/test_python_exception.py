"""descriptor_from_exception: real Python, httpx and gRPC exceptions, and classes shaped like SDK errors."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import aiohttp
import grpc
import httpx
import pytest
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from classifier import Ruleset, classify, descriptor_from_data, limits
from classifier.descriptor import as_descriptor
from classifier.server import GrpcServer
from errorclass_client import (
    Client,
    DescriptorError,
    ErrorClass,
    Origin,
    descriptor_from_exception,
)
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from errorclass_client.python_exception import causes, supertypes, type_name


def caught(fn: Any, *args: Any) -> BaseException:
    """The exception `fn(*args)` raises, as a runtime's except clause would see it."""
    try:
        fn(*args)
    except BaseException as exc:
        return exc
    raise AssertionError(f"{fn} did not raise")


# Classes shaped like the SDKs' own (same names, modules, attributes), so the helper's
# duck typing is exercised without installing every SDK.
class OpenAIError(Exception):
    __module__ = "openai"


class APIError(OpenAIError):
    __module__ = "openai"

    def __init__(self, message: str, *, body: object, code: str | None) -> None:
        super().__init__(message)
        self.body = body
        self.code = code


class APIStatusError(APIError):
    __module__ = "openai"

    def __init__(self, message: str, *, status_code: int, body: object, code: str | None) -> None:
        super().__init__(message, body=body, code=code)
        self.status_code = status_code


class RateLimitError(APIStatusError):
    __module__ = "openai"


class AnthropicOverloadedError(Exception):
    """anthropic.OverloadedError: status 529, the error type only in the body."""

    def __init__(self) -> None:
        super().__init__("Error code: 529 - overloaded")
        self.status_code = 529
        self.body = {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
        }


class BotocoreClientError(Exception):
    """botocore.exceptions.ClientError: everything in the parsed `response` mapping."""

    def __init__(self) -> None:
        super().__init__(
            "An error occurred (ThrottlingException) when calling the Converse operation"
        )
        self.response = {
            "Error": {"Code": "ThrottlingException", "Message": "Too many requests"},
            "ResponseMetadata": {"HTTPStatusCode": 429},
        }


class AiohttpResponseError(Exception):
    """aiohttp.ClientResponseError: the status as `status`."""

    status = 503


class McpError(Exception):
    """mcp.shared.exceptions.McpError: the JSON-RPC error code on `error.code`."""

    class ErrorData:
        code = -32602

    error = ErrorData()


class GoogleApiCoreError(Exception):
    """google.api_core.exceptions.TooManyRequests: a gRPC status as `grpc_status_code`."""

    grpc_status_code = grpc.StatusCode.RESOURCE_EXHAUSTED


class HostileError(Exception):
    """Every attribute the helper reads fails or lies; the helper must still answer."""

    status_code = True  # a bool is not a status

    @property
    def response(self) -> object:
        raise RuntimeError("response not available")

    def code(self) -> object:
        raise RuntimeError("no code")

    def __str__(self) -> str:
        raise RuntimeError("cannot render")


def test_builtin_and_module_type_names() -> None:
    """Builtins are bare, everything else is module.qualname, as `except` clauses and OTel name them."""
    assert type_name(ValueError) == "ValueError"
    assert type_name(asyncio.CancelledError) == "asyncio.exceptions.CancelledError"
    assert type_name(RateLimitError) == "openai.RateLimitError"
    assert type_name(McpError.ErrorData) == f"{__name__}.McpError.ErrorData"


def test_supertypes_stop_at_exception() -> None:
    """The MRO's exception classes, most specific first, ending at Exception (or BaseException when
    the class is not an Exception); mixins are dropped."""
    assert supertypes(RateLimitError) == (
        "openai.APIStatusError",
        "openai.APIError",
        "openai.OpenAIError",
        "Exception",
    )
    assert supertypes(FileNotFoundError) == ("OSError", "Exception")
    assert supertypes(KeyboardInterrupt) == ("BaseException",)
    assert supertypes(asyncio.CancelledError) == ("BaseException",)
    assert supertypes(BaseException) == ()


def test_sdk_shaped_errors() -> None:
    """Status and error code come from wherever each SDK keeps them."""
    openai = descriptor_from_exception(
        RateLimitError(
            "Rate limit reached", status_code=429, body={"code": "x"}, code="rate_limit_exceeded"
        ),
        origin=Origin.provider,
        provider="OpenAI",
    )
    assert (openai.type, openai.http_status, openai.code, openai.provider, openai.origin) == (
        "openai.RateLimitError",
        429,
        "rate_limit_exceeded",
        "openai",
        Origin.provider,
    )
    anthropic = descriptor_from_exception(AnthropicOverloadedError())
    assert (anthropic.http_status, anthropic.code) == (529, "overloaded_error")
    boto = descriptor_from_exception(BotocoreClientError())
    assert (boto.http_status, boto.code) == (429, "ThrottlingException")
    assert descriptor_from_exception(AiohttpResponseError()).http_status == 503
    assert descriptor_from_exception(McpError()).code == "-32602"
    assert descriptor_from_exception(GoogleApiCoreError()).grpc_status == 8


def test_os_errors_carry_their_errno_name() -> None:
    """A real FileNotFoundError's code is ENOENT, as in the corpus's tool-error case."""
    d = descriptor_from_exception(caught(open, "/nonexistent/errorclass/input.txt"), origin="tool")
    assert (d.type, d.supertypes, d.code, d.origin) == (
        "FileNotFoundError",
        ("OSError", "Exception"),
        "ENOENT",
        Origin.tool,
    )
    assert "No such file or directory" in d.message


def test_reading_never_raises() -> None:
    """Properties that raise, a bool status and a broken __str__ count as absent."""
    d = descriptor_from_exception(HostileError())
    assert (d.http_status, d.grpc_status, d.code, d.message) == (None, None, "", "")


def test_explicit_cause_then_context() -> None:
    """`raise ... from` wins over the implicit context; the chain is listed outermost first."""

    def chain() -> None:
        try:
            try:
                raise ConnectionResetError(104, "reset by peer")
            except ConnectionResetError as reset:
                raise TimeoutError("read timed out") from reset
        except TimeoutError:
            raise RuntimeError("tool failed")  # noqa: B904 - the implicit context is what is tested

    d = descriptor_from_exception(caught(chain))
    assert [(c.type, c.code) for c in d.causes] == [
        ("TimeoutError", ""),
        ("ConnectionResetError", "ECONNRESET"),
    ]
    assert d.causes[0].supertypes == ("OSError", "Exception")


def test_from_none_hides_the_context() -> None:
    """`raise ... from None` suppresses the context, as Python's own traceback does."""

    def suppressed() -> None:
        try:
            raise KeyError("k")
        except KeyError:
            raise ValueError("clean") from None

    assert descriptor_from_exception(caught(suppressed)).causes == ()


def test_cycles_and_groups() -> None:
    """Each exception is listed once even in a cycle; ExceptionGroup members are causes too."""
    a, b = ValueError("a"), TypeError("b")
    a.__context__, b.__context__ = b, a
    assert [type(c).__name__ for c in causes(a)] == ["TypeError"]
    group = ExceptionGroup("tasks", [TimeoutError("t"), ExceptionGroup("inner", [KeyError("k")])])
    assert [type_name(type(c)) for c in causes(group)] == [
        "TimeoutError",
        "ExceptionGroup",
        "KeyError",
    ]


def test_causes_are_bounded() -> None:
    """A chain longer than the limit is cut at MAX_CAUSES, never refused."""
    head = ValueError("head")
    link: BaseException = head
    for i in range(limits.MAX_CAUSES + 10):
        nxt = ValueError(str(i))
        link.__cause__ = nxt
        link = nxt
    d = descriptor_from_exception(head)
    assert len(d.causes) == limits.MAX_CAUSES
    assert [c.message for c in d.causes[:2]] == ["0", "1"]


def test_unknown_origin_is_refused() -> None:
    """An origin name the taxonomy does not know is a DescriptorError naming the field and
    listing the known ones."""
    with pytest.raises(DescriptorError, match="known: unspecified, provider") as err:
        descriptor_from_exception(ValueError(), origin="cloud")
    assert [v.field for v in err.value.violations] == ["descriptor.origin"]
    assert descriptor_from_exception(ValueError(), origin="caller").origin is Origin.user


def test_real_httpx_errors_match_the_corpus_shape() -> None:
    """httpx's own exceptions give the type and supertypes the public corpus records for them."""
    timeout = descriptor_from_exception(httpx.ReadTimeout("timed out"), origin="provider")
    assert (timeout.type, timeout.supertypes) == (
        "httpx.ReadTimeout",
        (
            "httpx.TimeoutException",
            "httpx.TransportError",
            "httpx.RequestError",
            "httpx.HTTPError",
            "Exception",
        ),
    )
    response = httpx.Response(
        429, request=httpx.Request("POST", "https://api.example.test/v1/chat")
    )
    status = descriptor_from_exception(caught(response.raise_for_status))
    assert (status.type, status.http_status) == ("httpx.HTTPStatusError", 429)


def test_real_httpx_connect_error_chain() -> None:
    """A real refused connection: httpx's error wraps httpcore's, which hid the OS error (`from None`)."""
    with httpx.Client(timeout=2) as http:
        d = descriptor_from_exception(caught(http.get, "http://127.0.0.1:1/"))
    assert d.type == "httpx.ConnectError"
    assert [c.type for c in d.causes] == ["httpcore.ConnectError"]
    assert "Connection refused" in d.message


@pytest.fixture(scope="module")
def stub(server: GrpcServer) -> Iterator[pb_grpc.ErrorClassifierStub]:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        yield pb_grpc.ErrorClassifierStub(ch)


def test_real_grpc_errors(stub: pb_grpc.ErrorClassifierStub) -> None:
    """A grpc.RpcError from a real call gives its status number and the corpus's supertypes."""
    bad = descriptor_from_exception(caught(stub.Classify, pb.ClassifyRequest()))
    assert (bad.type, bad.supertypes, bad.grpc_status) == (
        "grpc._channel._InactiveRpcError",
        ("grpc.RpcError", "Exception"),
        3,
    )
    late = descriptor_from_exception(
        caught(lambda: stub.Classify(pb.ClassifyRequest(), timeout=-1))
    )
    assert late.grpc_status == 4


def test_live_exceptions_classified_by_the_service(server: GrpcServer, bundled: Ruleset) -> None:
    """Descriptors of live exceptions travel to the service and get the engine's answer."""
    with Client(f"127.0.0.1:{server.port}") as client:
        rate = client.classify_exception(
            RateLimitError("slow down", status_code=429, body=None, code="rate_limit_exceeded"),
            origin="provider",
            provider="openai",
        )
        assert rate.error_class is ErrorClass.RateLimited
        stub = pb_grpc.ErrorClassifierStub(client.channel)
        late = caught(lambda: stub.GetRuleset(pb.GetRulesetRequest(), timeout=-1))
        assert client.classify_exception(late).error_class is ErrorClass.Timeout
        cancelled = client.classify_exception(KeyboardInterrupt(), origin="user")
        assert cancelled.error_class is ErrorClass.Canceled
        url = URL("https://api.openai.com/v1/chat/completions")
        info = aiohttp.RequestInfo(url, "POST", CIMultiDictProxy(CIMultiDict()), url)
        bare = aiohttp.ClientResponseError(info, (), status=400, message="Bad Request")
        body = b'{"error": {"code": "context_length_exceeded", "message": "too long"}}'
        read = client.classify_exception(bare, origin="provider", provider="openai", body=body)
        assert read.error_class is ErrorClass.BudgetExceeded
        for exc in [httpx.ReadTimeout("t"), caught(open, "/nonexistent"), ValueError("v")]:
            d = descriptor_from_exception(exc, origin="provider")
            answer = client.classify(d)
            assert answer.error_class == classify(bundled, d).error_class


def test_descriptor_is_what_the_file_format_reads() -> None:
    """A descriptor built from an exception is the one the same data read from a file is,
    once the service has validated it (`classifier.classify` takes the client's)."""
    d = descriptor_from_exception(
        caught(open, "/nonexistent/x"), origin="tool", attributes={"tool": "read_file"}
    )
    again = descriptor_from_data(
        {
            "type": "FileNotFoundError",
            "supertypes": ["OSError", "Exception"],
            "code": "ENOENT",
            "message": d.message,
            "origin": "tool",
            "language": "python",
            "attributes": {"tool": "read_file"},
        }
    )
    assert as_descriptor(d) == again
