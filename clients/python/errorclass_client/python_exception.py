"""A descriptor from a live Python exception, without importing any SDK.

What the helper reads, and why:

- **type**: `module.qualname` (`openai.RateLimitError`, `httpx.ReadTimeout`,
  `json.decoder.JSONDecodeError`); builtins bare (`TimeoutError`). SDKs that
  re-export their errors (openai, anthropic, httpx) set `__module__` to the
  public package, so the name is the one users write in `except`.
- **supertypes**: the MRO, most specific first, keeping only exception
  classes (an `except` clause can only name those, so mixins such as
  `grpc.Call` are dropped). `object` is never listed, and `BaseException`
  only when the class does not derive from `Exception` (KeyboardInterrupt,
  asyncio.CancelledError), so chains end at `Exception` like the corpus.
- **causes**: the chain Python prints: `__cause__`, else `__context__` unless
  suppressed (`raise ... from None`), outermost first, then the members of an
  ExceptionGroup and tenacity's `RetryError.last_attempt.exception()`;
  flattened depth first, each exception once (cycle-safe), at most
  `facts.MAX_CAUSES`.
- **Google statuses**: google-genai's `APIError` carries the HTTP status in
  `code` and the google.rpc.Code name in `status` (`RESOURCE_EXHAUSTED`,
  `INVALID_ARGUMENT`); google-api-core's `GoogleAPICallError` the HTTP status
  in `code` and a `grpc.StatusCode` in `grpc_status_code`. For both, the
  HTTP status comes from `code` (for a google-genai error inside a 200 stream
  the response's own status is 200), the gRPC status is the named one, and
  the code is its name: never the bare HTTP status.
- **http_status**: `status_code` (openai, anthropic), `response.status_code`
  (httpx.HTTPStatusError, requests.HTTPError), `status` (aiohttp), or
  botocore's `response["ResponseMetadata"]["HTTPStatusCode"]`.
- **grpc_status**: `code()` returning a `grpc.StatusCode` (grpc.RpcError,
  grpc.aio.AioRpcError) or `grpc_status_code` (google-api-core).
- **code**: a `code` attribute that is a string or number (openai's error
  code, MCP's JSON-RPC code), else the body's `code` or `error.code` or
  `error.type` (anthropic), botocore's `response["Error"]["Code"]`, the
  provider's error body on an HTTP client's response (httpx.HTTPStatusError,
  requests.HTTPError: OpenAI, Azure, Anthropic, Gemini and Bedrock shapes, see
  `error_body`), the errno name of an OSError (`ENOENT`), or `error.code`.
  aiohttp's `ClientResponseError.code` is never read: it is a deprecated alias
  of the status, not a code. A code that only repeats the HTTP status (Azure's
  `"code": "429"`) is dropped: a status is not a code.
- **from the error body** also: Gemini's `error.status` as `grpc_status`, the
  provider's own error message (appended to the message when the exception's
  text does not carry it), and Anthropic's `error.details.error_code` as the
  attribute `error_code` (from the exception's body, else from the first cause
  that has one: a wrapper such as tenacity's RetryError keeps no body itself).

Reading never raises: a property that fails counts as absent, because this
runs while a runtime is already handling a failure; and what is read is cut to the
limits (`fit`), so the service never refuses it.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from errorclass_client import facts
from errorclass_client._private import read_body
from errorclass_client.descriptor import Cause, Descriptor, fit, origin
from errorclass_client.error_body import NOTHING, BodyEvidence, evidence_from_bytes
from errorclass_client.runtime_facts import merged, runtime_attributes
from errorclass_client.taxonomy import Origin

LANGUAGE = "python"


def descriptor_from_exception(
    exc: BaseException,
    *,
    origin: Origin | str = Origin.unspecified,
    provider: str = "",
    attributes: Mapping[str, str] | None = None,
    body: bytes | str | None = None,
    time_limit: str | None = None,
    veto: str | None = None,
    stage: str | None = None,
    refused_by: str | None = None,
    provider_calls: int | str | None = None,
) -> Descriptor:
    """The descriptor a Python runtime sends for `exc`.

    Origin and provider are the caller's knowledge (where the call was made,
    to whom); they are never guessed from the exception. So are `time_limit`
    (`tool`: the tool wrapper's own limit fired; `run`: the run's deadline),
    `veto` (an interceptor's deliberate block: `budget`, `quota`, `policy`),
    `stage` (the definition failed while `load`, `parse`, `compile` or
    `validate`), `refused_by` (the runtime's own guard refused the call: `breaker`,
    `rate_limiter`, `concurrency_limit`, `quota`, `budget`) and `provider_calls`
    (reconciliation: how many provider calls were answered), checked by
    `runtime_attributes` (a bad value raises RuntimeFactError, a ValueError) and sent as
    the attributes of the same names.
    `body` is the error body the caller read, for a client whose exception keeps none:
    aiohttp's
    ClientResponseError holds only the status, so read it first
    (`body = await resp.read()`, then `resp.raise_for_status()`); without it a
    bare 400 cannot be told apart and is left Unknown.
    """
    knowledge = runtime_attributes(
        time_limit=time_limit,
        veto=veto,
        stage=stage,
        refused_by=refused_by,
        provider_calls=provider_calls,
    )
    chain = causes(exc)
    given = _given_body(exc, body)
    body_attributes = next(
        (dict(e.attributes) for e in [given, *map(body_evidence, [exc, *chain])] if e.attributes),
        {},
    )
    grpc = grpc_status(exc)
    return fit(
        Descriptor(
            type=type_name(type(exc)),
            supertypes=supertypes(type(exc)),
            http_status=http_status(exc),
            grpc_status=grpc if grpc is not None else given.grpc_status,
            origin=origin_from(origin),
            code=error_code(exc) or given.code,
            message=_with_message(message(exc), given.message),
            causes=[
                Cause(
                    type=type_name(type(c)),
                    supertypes=supertypes(type(c)),
                    http_status=http_status(c),
                    grpc_status=grpc_status(c),
                    code=error_code(c),
                    message=message(c),
                )
                for c in chain
            ],
            language=LANGUAGE,
            provider=provider,
            attributes=merged({**body_attributes, **(attributes or {})}, knowledge),
        )
    )


def describe_tool_failure(
    exc: BaseException,
    *,
    limit_fired: bool,
    provider: str = "",
    attributes: Mapping[str, str] | None = None,
) -> Descriptor:
    """The descriptor a tool wrapper sends for what the tool call raised.

    `limit_fired` is the wrapper's own knowledge that *its* time limit ended the call
    (`asyncio.Timeout.expired()`, a `future.result(timeout=)` that the wrapper itself
    called, `subprocess.run(timeout=)` around the tool): ToolTimeout. Anything else the
    tool raised, its own client's timeout included, is the tool failing: ToolError.
    """
    return descriptor_from_exception(
        exc,
        origin=Origin.tool,
        provider=provider,
        attributes=attributes,
        time_limit="tool" if limit_fired else None,
    )


def _given_body(exc: BaseException, body: bytes | str | None) -> BodyEvidence:
    """What a body the caller read says, read with the exception's headers and status."""
    if not body:
        return NOTHING
    content = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else bytes(body)
    return evidence_from_bytes(http_status(exc), _headers(exc), content)


def body_evidence(exc: BaseException) -> BodyEvidence:
    """What the provider's error body on the exception's HTTP response says (error_body).

    Only a body the HTTP client already read is used (`_private.read_body`): describing a
    failure never reads from the network. Without one, a body the exception parsed
    (`exc.body`, a mapping), else the headers the exception keeps.
    """
    response = _get(exc, "response")
    content = None
    if response is not None and not isinstance(response, Mapping):  # botocore's parsed dict
        content = read_body(response)
    if content is not None:
        return evidence_from_bytes(http_status(exc), _headers(response), content)
    parsed = _get(exc, "body")
    if isinstance(parsed, Mapping) and parsed:
        # An exception that keeps the body it parsed, not the response (pydantic-ai's
        # ModelHTTPError: `body` is google-genai's `details`, the whole error document with
        # its google.rpc details), is read as that document.
        text = json.dumps(parsed, ensure_ascii=False, default=str)
        return evidence_from_bytes(http_status(exc), None, text.encode("utf-8", "surrogatepass"))
    # No body, but the exception keeps the response's headers (aiohttp's ClientResponseError
    # after raise_for_status): the rate-limit and retry headers still speak.
    return evidence_from_bytes(http_status(exc), _headers(exc), None)


def _headers(obj: object) -> Mapping[str, str] | None:
    """An object's `headers` when they read as a mapping (httpx, requests, aiohttp)."""
    headers = _get(obj, "headers")
    return headers if callable(_get(headers, "items")) else None


def origin_from(value: Origin | str) -> Origin:
    """An Origin, or its name as rules write it (`provider`, `tool`, `caller` for `user`);
    DescriptorError naming `descriptor.origin` for anything else."""
    return origin(value)


def type_name(cls: type) -> str:
    """`module.qualname`, or the bare name for builtins."""
    module = getattr(cls, "__module__", "") or ""
    qualname = getattr(cls, "__qualname__", cls.__name__)
    return qualname if module in ("builtins", "") else f"{module}.{qualname}"


def supertypes(cls: type[BaseException]) -> tuple[str, ...]:
    """The exception classes of the MRO above `cls`, most specific first."""
    chain = [c for c in cls.__mro__[1:] if isinstance(c, type) and issubclass(c, BaseException)]
    if Exception in chain:
        chain.remove(BaseException)
    return tuple(type_name(c) for c in chain[: facts.MAX_SUPERTYPES])


def causes(exc: BaseException) -> list[BaseException]:
    """Inner exceptions, outermost first, flattened depth first, each once."""
    seen = {id(exc)}
    out: list[BaseException] = []

    def walk(e: BaseException) -> None:
        for inner in _inner(e):
            if len(out) >= facts.MAX_CAUSES:
                return
            if id(inner) in seen:
                continue
            seen.add(id(inner))
            out.append(inner)
            walk(inner)

    walk(exc)
    return out


def _inner(e: BaseException) -> Iterator[BaseException]:
    if e.__cause__ is not None:
        yield e.__cause__
    elif e.__context__ is not None and not e.__suppress_context__:
        yield e.__context__
    if isinstance(e, BaseExceptionGroup):
        yield from e.exceptions
    last = _last_attempt_exception(e)
    if last is not None:
        yield last


def _last_attempt_exception(e: BaseException) -> BaseException | None:
    """tenacity.RetryError's `last_attempt.exception()` (a finished Future), when it failed.

    tenacity raises RetryError `from` that exception, so it is usually the __cause__ too
    (listed once); a RetryError built by hand or raised from a callback keeps it only here.
    """
    future = _get(e, "last_attempt")
    done = _get(future, "done")
    if not callable(done) or _call(done) is not True:
        return None
    exception = _get(future, "exception")
    if not callable(exception):
        return None
    try:
        inner = exception(timeout=0)
    except Exception:
        return None
    return inner if isinstance(inner, BaseException) else None


def message(exc: BaseException) -> str:
    """str(exc), followed by the provider's error message from the body when it is not in it."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    return _with_message(text, body_evidence(exc).message)


def _with_message(text: str, provider_message: str) -> str:
    """`text`, followed by the provider's message when it is not in it already."""
    if provider_message and provider_message not in text:
        return f"{text}\n{provider_message}" if text else provider_message
    return text


def http_status(exc: BaseException) -> int | None:
    google = google_status(exc)
    if google is not None and google.http_status is not None:
        return google.http_status
    for value in (
        _get(exc, "status_code"),
        _get(_get(exc, "response"), "status_code"),
        _get(exc, "status"),
        _path(_get(exc, "response"), "ResponseMetadata", "HTTPStatusCode"),
    ):
        if _is_int(value) and 100 <= value <= 599:
            return int(value)
    return None


def grpc_status(exc: BaseException) -> int | None:
    google = google_status(exc)
    if google is not None:
        return google.grpc_status
    code = _code_attribute(exc)
    candidates = [
        _call(code) if callable(code) else None,
        _get(exc, "grpc_status_code"),
        body_evidence(exc).grpc_status,
    ]
    for value in candidates:
        number = _grpc_number(value)
        if number is not None:
            return number
    return None


def _grpc_number(value: object) -> int | None:
    """A grpc.StatusCode (its value is `(number, name)`) or a plain number, if valid."""
    inner = _get(value, "value")
    if isinstance(inner, tuple) and inner and _is_int(inner[0]):
        value = inner[0]
    if _is_int(value) and value in facts.GRPC_CODE_NAMES:
        return int(value)
    return None


def error_code(exc: BaseException) -> str:
    google = google_status(exc)
    if google is not None:
        return google.name[: facts.MAX_CODE_CHARS]
    code = _code_attribute(exc)
    body = _get(exc, "body")
    response = _get(exc, "response")
    number = exc.errno if isinstance(exc, OSError) else None
    status = http_status(exc)
    for value in (
        None if callable(code) else code,
        _path(body, "code"),
        _path(body, "error", "code"),
        _path(body, "error", "type"),
        _path(response, "Error", "Code"),
        body_evidence(exc).code,
        errno.errorcode.get(number) if number is not None else None,
        _get(_get(exc, "error"), "code"),
    ):
        text = _code_text(value)
        if text and (status is None or text != str(status)):
            return text[: facts.MAX_CODE_CHARS]
    return ""


class GoogleStatus(NamedTuple):
    """What a Google API error says: its HTTP status, and its google.rpc.Code (number, name)."""

    http_status: int | None
    grpc_status: int | None
    name: str


def google_status(exc: BaseException) -> GoogleStatus | None:
    """The status of a google-genai `APIError` or a google-api-core `GoogleAPICallError`.

    google-genai: `status` is the google.rpc.Code name from the error body and `code` the
    HTTP status (the body's `error.code`). google-api-core: every `GoogleAPICallError`
    has a `grpc_status_code` (a `grpc.StatusCode`; None for classes named after an HTTP
    status only, such as TooManyRequests, or when grpc is not installed) and `code`, the
    HTTP status. A status that is no google.rpc.Code is not turned into one, and the HTTP
    status is never sent as a code. Anything else is None: the generic readers apply.
    """
    number: int | None = None
    status = _get(exc, "status")
    if isinstance(status, str):
        number = facts.GRPC_CODES.get(status.strip().upper())
    api_core = number is None and _has(exc, "grpc_status_code")
    if api_core:
        number = _grpc_number(_get(exc, "grpc_status_code"))
    elif not number:  # not a Google error, or OK: not an error status
        return None
    code = _get(exc, "code")
    http = int(code) if _is_int(code) and 100 <= code <= 599 else None
    if not number:
        return GoogleStatus(http_status=http, grpc_status=None, name="")
    return GoogleStatus(http_status=http, grpc_status=number, name=facts.GRPC_CODE_NAMES[number])


def _has(obj: object, name: str) -> bool:
    try:
        return hasattr(obj, name)
    except Exception:
        return False


def _code_attribute(exc: BaseException) -> Any:
    """`exc.code`, except on aiohttp's ClientResponseError, where it is the deprecated status."""
    if any(
        c.__name__ == "ClientResponseError" and c.__module__.startswith("aiohttp")
        for c in type(exc).__mro__
    ):
        return None
    return _get(exc, "code")


def _code_text(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if _is_int(value):
        return str(value)
    return ""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _get(obj: object, name: str) -> Any:
    """An attribute, or None when it is missing or reading it fails."""
    if obj is None:
        return None
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def _call(fn: Any) -> Any:
    try:
        return fn()
    except Exception:
        return None


def _path(obj: object, *keys: str) -> Any:
    """`obj[k1][k2]...` through mappings, or None."""
    for key in keys:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj
