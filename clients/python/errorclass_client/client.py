"""A small typed client for the classifier service.

    with Client("classifier.internal:50051", tls=TLS.from_files(ca="ca.pem")) as client:
        try:
            answer = client.classify(type="openai.RateLimitError", http_status=429,
                                     origin="provider")
        except Unclassified as outage:     # store the run unclassified, keep outage.descriptors
            ...

One behaviour in every language's client (clients/spec facts.json `defaults`):

- every call has a deadline: DEFAULT_TIMEOUT (250 ms) unless the client or the call
  names another;
- calls the server could not take (UNAVAILABLE) are retried by gRPC's own retry policy
  with a short backoff, throttled so that an outage causes no retry storm (the service
  config of facts.json); classifying is a pure function of the descriptor, so a retry is
  always safe;
- a circuit breaker (`breaker`) stops calling a service that keeps failing: a hung
  server costs a caller one deadline, then calls fail at once until a background probe
  finds the service back;
- when the service cannot answer (down, too slow, the breaker open), the call raises
  `Unclassified`, which keeps the descriptors: never store that as Unknown. With a
  `fallback` (`classifier.client.local.LocalFallback` in the server's package, which
  classifies in process), such a call is classified there instead and the answer says
  so (`Answer.local`).

A malformed descriptor raises the same `DescriptorError` whether the client (which
validates before sending) or the server found the problem; any other failure of the call
raises `ServiceError` with the gRPC status. `Client.counters` counts the calls by path:
server, local, failed, short_circuited.
"""

from __future__ import annotations

import copy
import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol, TypeVar, Unpack, overload

import grpc

from errorclass_client import facts, wire
from errorclass_client._status import field_violations
from errorclass_client.answer import Answer, ClassInfo, RulesetInfo
from errorclass_client.breaker import TRIPPING, Breaker
from errorclass_client.descriptor import (
    Descriptor,
    DescriptorFields,
    DescriptorInput,
    descriptor_from_mapping,
    validate,
)
from errorclass_client.errors import (
    DescriptorError,
    FieldViolation,
    ServiceError,
    Unclassified,
)
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.python_exception import descriptor_from_exception
from errorclass_client.taxonomy import Origin
from errorclass_client.tls import TLS

DEFAULT_TIMEOUT: float = facts.DEADLINE_MS / 1000
"""Seconds a call may take unless the client or the call says otherwise. A loopback or
in-cluster call answers in about a millisecond, with a p99 of a few: a quarter of a
second is tens of times that, and still short enough that a run's failure handling never
waits long on a dead service."""
DEFAULT_ATTEMPTS: int = facts.ATTEMPTS
"""Tries per call when the server is UNAVAILABLE (gRPC's retry policy; 1 turns retries off)."""
SERVICE = facts.SERVICE_NAME

_T = TypeVar("_T")


def service_config(attempts: int = DEFAULT_ATTEMPTS) -> dict[str, Any]:
    """The channel's service config: facts.json's, with `attempts` tries (1: no retry)."""
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    config = copy.deepcopy(facts.SERVICE_CONFIG)
    for method in config["methodConfig"]:
        if attempts == 1:
            method.pop("retryPolicy", None)
        elif "retryPolicy" in method:
            method["retryPolicy"]["maxAttempts"] = attempts
    return config


class Fallback(Protocol):
    """Classifies in process when the service cannot (`classifier.client.local.LocalFallback`)."""

    def classify(self, descriptor: Descriptor) -> Answer: ...


class _Methods:
    """The service's methods on a channel, built from the messages (not from the generated
    *_pb2_grpc module, which insists on the grpcio release that generated it)."""

    def __init__(self, channel: grpc.Channel) -> None:
        def unary(name: str, request: Any, response: Any) -> Any:
            return channel.unary_unary(
                f"/{SERVICE}/{name}",
                request_serializer=request.SerializeToString,
                response_deserializer=response.FromString,
            )

        self.classify = unary("Classify", pb.ClassifyRequest, pb.ClassifyResponse)
        self.classify_batch = unary(
            "ClassifyBatch", pb.ClassifyBatchRequest, pb.ClassifyBatchResponse
        )
        self.classify_stream = channel.stream_stream(
            f"/{SERVICE}/ClassifyStream",
            request_serializer=pb.ClassifyRequest.SerializeToString,
            response_deserializer=pb.ClassifyResponse.FromString,
        )
        self.get_ruleset = unary("GetRuleset", pb.GetRulesetRequest, pb.RulesetInfo)
        self.list_classes = unary("ListClasses", pb.ListClassesRequest, pb.ListClassesResponse)


class Client:
    """A channel to one classifier server and typed calls over it. Close it, or use `with`."""

    def __init__(
        self,
        target: str,
        *,
        tls: TLS | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        attempts: int = DEFAULT_ATTEMPTS,
        options: Sequence[tuple[str, Any]] = (),
        breaker: bool = True,
        fallback: Fallback | None = None,
    ) -> None:
        """Open a channel to `target` (host:port). `timeout` of None means no default deadline.

        `breaker` False turns the circuit breaker off; `fallback` classifies what the
        service cannot answer (classify, classify_exception and classify_batch)."""
        opts: list[tuple[str, Any]] = [
            ("grpc.service_config", json.dumps(service_config(attempts))),
            ("grpc.enable_retries", 1 if attempts > 1 else 0),
        ]
        if tls is not None and tls.server_name:
            opts.append(("grpc.ssl_target_name_override", tls.server_name))
        opts += options
        self.target = target
        self.timeout = timeout
        self.channel = (
            grpc.insecure_channel(target, options=opts)
            if tls is None
            else grpc.secure_channel(target, tls.credentials(), options=opts)
        )
        self._methods = _Methods(self.channel)
        self.fallback = fallback
        self.breaker = Breaker(self._probe) if breaker else None
        self.counters: dict[str, int] = {
            "server": 0,
            "local": 0,
            "failed": 0,
            "short_circuited": 0,
        }
        """Calls by how they were answered: by the server, locally by the fallback, not at
        all (an error raised), and without trying the server (the breaker was open)."""

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self.breaker is not None:
            self.breaker.close()
        self.channel.close()

    def _probe(self) -> bool:
        """Is the service back? (The breaker asks, on its own thread.)"""
        try:
            self._methods.get_ruleset(
                pb.GetRulesetRequest(), timeout=self.timeout or DEFAULT_TIMEOUT
            )
        except grpc.RpcError:
            return False
        return True

    def _call(
        self,
        send: Callable[[], _T],
        descriptors: Sequence[Descriptor] | None,
        local: Callable[[], _T] | None,
    ) -> _T:
        """Call the service through the breaker; when it cannot answer, the fallback if any.

        With `descriptors` (a classifying call) an outage is Unclassified, keeping them.
        """
        breaker = self.breaker
        if breaker is not None and not breaker.allow():
            self.counters["short_circuited"] += 1
            if local is not None:
                self.counters["local"] += 1
                return local()
            self.counters["failed"] += 1
            details = (
                f"circuit open: {self.target} kept failing; not called (probing in the background)"
            )
            if descriptors is None:
                raise ServiceError(grpc.StatusCode.UNAVAILABLE, details)
            raise Unclassified(
                grpc.StatusCode.UNAVAILABLE, details, descriptors, short_circuited=True
            )
        try:
            result = send()
        except grpc.RpcError as err:
            error = _error(err, descriptors)
            if breaker is not None and isinstance(error, ServiceError):
                breaker.failed(error.code)
            if local is not None and isinstance(error, Unclassified):
                self.counters["local"] += 1
                return local()
            self.counters["failed"] += 1
            raise error from err
        except DescriptorError:
            self.counters["failed"] += 1
            raise
        if breaker is not None:
            breaker.succeeded()
        self.counters["server"] += 1
        return result

    @overload
    def classify(
        self,
        descriptor: DescriptorInput,
        /,
        *,
        explain: bool = False,
        explain_rule: str = "",
        timeout: float | None = None,
    ) -> Answer: ...

    @overload
    def classify(
        self,
        *,
        explain: bool = False,
        explain_rule: str = "",
        timeout: float | None = None,
        **fields: Unpack[DescriptorFields],
    ) -> Answer: ...

    def classify(  # type: ignore[misc]  # mypy cannot match **Any to an unpacked TypedDict
        self,
        descriptor: DescriptorInput | None = None,
        /,
        *,
        explain: bool = False,
        explain_rule: str = "",
        timeout: float | None = None,
        **fields: Any,
    ) -> Answer:
        """Classify one descriptor: a Descriptor, a mapping of its fields, or keywords.

        It is validated before sending (DescriptorError naming each bad field). With
        explain_rule (a rule id), the explanation also says why that rule did or did not
        decide; the server refuses an id its rules do not have (INVALID_ARGUMENT). Raises
        Unclassified, keeping the descriptor, when the service cannot answer.
        """
        if (descriptor is None) == (not fields):
            raise TypeError("classify() takes a descriptor or descriptor keywords, not both")
        d = validate(descriptor if descriptor is not None else descriptor_from_mapping(fields))
        request = wire.request(d, explain or bool(explain_rule), explain_rule)
        fallback = self.fallback
        return self._call(
            lambda: wire.answer_from_proto(
                self._methods.classify(request, timeout=self._t(timeout))
            ),
            [d],
            (lambda: fallback.classify(d)) if fallback is not None else None,
        )

    def classify_exception(
        self,
        exc: BaseException,
        *,
        origin: Origin | str = Origin.unspecified,
        provider: str = "",
        attributes: Mapping[str, str] | None = None,
        body: bytes | str | None = None,
        explain: bool = False,
        timeout: float | None = None,
        time_limit: str | None = None,
        veto: str | None = None,
        stage: str | None = None,
        refused_by: str | None = None,
        provider_calls: int | str | None = None,
    ) -> Answer:
        """Classify a live Python exception (see `descriptor_from_exception`, and its `body`
        for a client whose exception keeps no error body, such as aiohttp, and its
        `time_limit`, `veto`, `stage`, `refused_by`, `provider_calls`: what only the runtime
        knows)."""
        d = descriptor_from_exception(
            exc,
            origin=origin,
            provider=provider,
            attributes=attributes,
            body=body,
            time_limit=time_limit,
            veto=veto,
            stage=stage,
            refused_by=refused_by,
            provider_calls=provider_calls,
        )
        return self.classify(d, explain=explain, timeout=timeout)

    def classify_batch(
        self,
        descriptors: Iterable[DescriptorInput],
        *,
        explain: bool = False,
        timeout: float | None = None,
    ) -> list[Answer]:
        """Classify many descriptors in one call (up to MAX_BATCH); answers in request order.

        Each may be a Descriptor or a mapping of its fields; all are validated first (a
        DescriptorError names `requests[i].descriptor...`). Raises Unclassified, keeping
        every descriptor in order, when the service cannot answer.
        """
        given_all = list(descriptors)
        if len(given_all) > facts.MAX_BATCH:
            raise DescriptorError(
                [
                    FieldViolation(
                        "requests",
                        f"{len(given_all)} requests exceed the batch limit of {facts.MAX_BATCH}",
                    )
                ]
            )
        listed: list[Descriptor] = []
        violations: list[FieldViolation] = []
        for i, given in enumerate(given_all):
            try:
                listed.append(validate(given, f"requests[{i}].descriptor"))
            except DescriptorError as exc:
                violations += exc.violations
        if violations:
            raise DescriptorError(violations)
        request = pb.ClassifyBatchRequest(requests=[wire.request(d, explain) for d in listed])
        fallback = self.fallback

        def send() -> list[Answer]:
            response = self._methods.classify_batch(request, timeout=self._t(timeout))
            return [wire.answer_from_proto(r) for r in response.responses]

        return self._call(
            send,
            listed,
            (lambda: [fallback.classify(d) for d in listed]) if fallback is not None else None,
        )

    def classify_stream(
        self,
        descriptors: Iterable[DescriptorInput],
        *,
        explain: bool = False,
        timeout: float | None = None,
    ) -> Iterator[Answer]:
        """Classify a stream of descriptors over one call; one answer per descriptor, in order.

        The stream lives as long as its input, so it has no deadline unless `timeout`
        names one: the client's default is for single calls. A malformed descriptor ends
        the stream: the answers before it come, then its DescriptorError
        (`stream[i].descriptor...`). When the service cannot answer, Unclassified keeps
        the descriptors sent and not yet answered.
        """
        pending: deque[Descriptor] = deque()
        refused: list[DescriptorError] = []

        def requests() -> Iterator[pb.ClassifyRequest]:
            for i, given in enumerate(descriptors):
                try:
                    d = validate(given, f"stream[{i}].descriptor")
                except DescriptorError as exc:
                    refused.append(exc)
                    return
                pending.append(d)
                yield wire.request(d, explain)

        breaker = self.breaker
        if breaker is not None and not breaker.allow():
            self.counters["short_circuited"] += 1
            self.counters["failed"] += 1
            raise Unclassified(
                grpc.StatusCode.UNAVAILABLE,
                f"circuit open: {self.target} kept failing; not called",
                (),
                short_circuited=True,
            )
        try:
            for response in self._methods.classify_stream(requests(), timeout=timeout):
                pending.popleft()
                yield wire.answer_from_proto(response)
        except grpc.RpcError as err:
            error = _error(err, list(pending))
            if breaker is not None and isinstance(error, ServiceError):
                breaker.failed(error.code)
            self.counters["failed"] += 1
            raise error from err
        if refused:
            self.counters["failed"] += 1
            raise refused[0]
        if breaker is not None:
            breaker.succeeded()
        self.counters["server"] += 1

    def get_ruleset(self, *, timeout: float | None = None) -> RulesetInfo:
        """Everything GetRuleset says: the serving ruleset (name, version, digest, rule count,
        load time, source), the classifier version, the last reload and the candidate."""
        return self._call(
            lambda: wire.ruleset_info_from_proto(
                self._methods.get_ruleset(pb.GetRulesetRequest(), timeout=self._t(timeout))
            ),
            None,
            None,
        )

    def list_classes(self, *, timeout: float | None = None) -> list[ClassInfo]:
        """Every class of the taxonomy with the serving ruleset's defaults, in number order."""

        def send() -> list[ClassInfo]:
            response = self._methods.list_classes(pb.ListClassesRequest(), timeout=self._t(timeout))
            return [wire.class_info_from_proto(c) for c in response.classes]

        return self._call(send, None, None)

    def _t(self, timeout: float | None) -> float | None:
        return self.timeout if timeout is None else timeout


def _error(
    err: grpc.RpcError, descriptors: Sequence[Descriptor] | None
) -> DescriptorError | ServiceError:
    """INVALID_ARGUMENT becomes DescriptorError with the server's field violations; a
    service that cannot answer a classifying call, Unclassified keeping its descriptors."""
    code = err.code() if isinstance(err, grpc.Call) else grpc.StatusCode.UNKNOWN
    details = (err.details() if isinstance(err, grpc.Call) else None) or ""
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        trailers = err.trailing_metadata() if isinstance(err, grpc.Call) else None
        return DescriptorError(field_violations(trailers) or [FieldViolation("", details)])
    if descriptors is not None and code.name in TRIPPING:
        return Unclassified(code, details, descriptors)
    return ServiceError(code, details)
