"""A small typed client for the classifier service.

    with Client("classifier.internal:50051", tls=TLS.from_files(ca="ca.pem")) as client:
        answer = client.classify(type="openai.RateLimitError", http_status=429,
                                 origin=Origin.provider)

Every call has a deadline (the client's default, DEFAULT_TIMEOUT, unless the
call names one), and calls the server could not take (UNAVAILABLE) are retried
by gRPC's own retry policy with a short backoff, which is safe because
classifying is a pure function of the descriptor. A malformed descriptor raises
the same `DescriptorError` whether the client or the server found the problem;
any other failure of the call raises `ServiceError` with the gRPC status.

A circuit breaker (classifier.client.breaker) stops calling a service that keeps
failing: a hung server costs a caller one deadline, then calls fail at once
(`ServiceError` UNAVAILABLE, "circuit open") until a background probe finds the
service back. With a `fallback` (classifier.client.local.LocalFallback, which
loads a ruleset in process and so imports the compiler), a call the service
cannot answer is classified locally instead, and the answer says so
(`Answer.local`, with the local ruleset's digest). `Client.counters` counts the
calls by path: server, local, failed, short_circuited.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from types import TracebackType
from typing import Any, Protocol, Required, TypedDict, Unpack, overload

import grpc
from google.rpc import code_pb2, error_details_pb2
from grpc_status import rpc_status

from classifier._pem import read_pem
from classifier._proto.errorclass.v1 import classifier_pb2 as pb
from classifier._proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from classifier.client import wire
from classifier.client.answer import Answer, ClassInfo, RulesetInfo
from classifier.client.breaker import TRIPPING, Breaker
from classifier.client.python_exception import descriptor_from_exception
from classifier.defaults import DEFAULT_ATTEMPTS, DEFAULT_TIMEOUT
from classifier.descriptor import (
    CAUSE_FIELD_NAMES,
    FIELD_NAMES,
    CauseInput,
    Descriptor,
    build_descriptor,
    origin_of,
)
from classifier.errors import ClassifierError, DescriptorError, FieldViolation
from classifier.taxonomy import Origin

SERVICE: str = pb.DESCRIPTOR.services_by_name["ErrorClassifier"].full_name


class ServiceError(ClassifierError):
    """A call failed for a reason other than a malformed descriptor.

    `code` is the gRPC status (UNAVAILABLE, DEADLINE_EXCEEDED, ...); the
    original `grpc.RpcError` is the `__cause__`.
    """

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self.code = code
        self.details = details
        super().__init__(f"{code.name}: {details}" if details else code.name)


@dataclass(frozen=True, slots=True)
class TLS:
    """How to reach a server over TLS (and, with a client certificate, mutual TLS).

    `root_certificates` of None trusts the system's roots. `server_name`
    overrides the name checked against the server's certificate, for a
    server reached by an address its certificate does not name.
    """

    root_certificates: bytes | None = None
    certificate_chain: bytes | None = None
    private_key: bytes | None = None
    server_name: str = ""

    def __post_init__(self) -> None:
        if (self.certificate_chain is None) != (self.private_key is None):
            raise ValueError(
                "a client certificate needs its private key, and a key its certificate"
            )

    @classmethod
    def from_files(
        cls,
        *,
        ca: str | PathLike[str] | None = None,
        cert: str | PathLike[str] | None = None,
        key: str | PathLike[str] | None = None,
        server_name: str = "",
    ) -> TLS:
        """Read PEM files: the CA to trust, and the client certificate and key for mTLS.

        Raises ValueError naming a file that holds no PEM block.
        """

        def read(path: str | PathLike[str] | None, what: str) -> bytes | None:
            return None if path is None else read_pem(path, what)

        return cls(
            read(ca, "CA certificate"),
            read(cert, "certificate"),
            read(key, "private key"),
            server_name,
        )

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=self.root_certificates,
            private_key=self.private_key,
            certificate_chain=self.certificate_chain,
        )


class Fallback(Protocol):
    """Classifies in process when the service cannot (classifier.client.local.LocalFallback)."""

    def classify(self, descriptor: Descriptor) -> Answer: ...


class CauseFields(TypedDict, total=False):
    """A cause given as a dict, keyed by the cause fields (`classifier.descriptor.CAUSE_FIELDS`,
    a test checks they agree): `{"type": "TimeoutError"}`."""

    type: Required[str]
    supertypes: Sequence[str]
    http_status: int | None
    grpc_status: int | None
    code: str
    message: str


class DescriptorFields(TypedDict, total=False):
    """The keyword form of a descriptor (see `classifier.build_descriptor`): the fields of
    `classifier.descriptor.FIELDS`, which a test checks they are."""

    type: Required[str]
    supertypes: Iterable[str]
    http_status: int | None
    grpc_status: int | None
    origin: Origin | int | str
    code: str
    message: str
    causes: Iterable[CauseInput | CauseFields]
    language: str
    provider: str
    attributes: Mapping[str, str] | None


def cause_inputs(causes: Iterable[Any], field_prefix: str = "descriptor") -> list[CauseInput]:
    """The causes of a keyword descriptor as `build_descriptor` takes them.

    A dict is read by `CauseInput`'s field names; a CauseInput (or any object
    with its attributes, such as another descriptor's `Cause`) passes as it
    is. Anything else, and a dict with an unknown key or no `type`, is refused
    with a DescriptorError naming the cause (`descriptor.causes[0]`), not an
    AttributeError from deep inside the validation.
    """
    out: list[CauseInput] = []
    violations: list[FieldViolation] = []
    for i, cause in enumerate(causes):
        where = f"{field_prefix}.causes[{i}]"
        if isinstance(cause, Mapping):
            unknown = sorted(map(str, set(cause) - set(CAUSE_FIELD_NAMES)))
            if unknown:
                violations.append(
                    FieldViolation(
                        where,
                        f"unknown key {', '.join(map(repr, unknown))}; "
                        f"a cause has {', '.join(CAUSE_FIELD_NAMES)}",
                    )
                )
            elif "type" not in cause:
                violations.append(FieldViolation(f"{where}.type", "is required"))
            else:
                out.append(CauseInput(**cause))
        elif isinstance(cause, str | bytes) or not hasattr(cause, "type"):
            violations.append(
                FieldViolation(
                    where,
                    f"a cause is a CauseInput or a dict of its fields ({{'type': ...}}), "
                    f"not {type(cause).__name__}",
                )
            )
        else:
            out.append(cause)
    if violations:
        raise DescriptorError(violations)
    return out


def descriptor_of(
    value: Descriptor | Mapping[str, Any], field_prefix: str = "descriptor"
) -> Descriptor:
    """A descriptor given built, or as a mapping of its fields (what `classify(**fields)`
    takes: an origin by name, causes as dicts), built and validated.

    Every violation is named under field_prefix (`requests[3].descriptor.type` in a batch),
    as the server names it: an unknown key, a missing `type`, an unknown origin name and
    anything else that is not a descriptor are DescriptorErrors, not AttributeErrors from
    deep inside the wire conversion.
    """
    if isinstance(value, Descriptor):
        return value
    if not isinstance(value, Mapping):
        raise DescriptorError(
            [
                FieldViolation(
                    field_prefix,
                    "a descriptor is a Descriptor or a dict of its fields ({'type': ...}), "
                    f"not {type(value).__name__}",
                )
            ]
        )
    fields = dict(value)
    unknown = sorted(map(str, set(fields) - set(FIELD_NAMES)))
    if unknown:
        raise DescriptorError(
            [
                FieldViolation(
                    field_prefix,
                    f"unknown key {', '.join(map(repr, unknown))}; "
                    f"a descriptor has {', '.join(FIELD_NAMES)}",
                )
            ]
        )
    if "type" not in fields:
        raise DescriptorError([FieldViolation(f"{field_prefix}.type", "is required")])
    violations: list[FieldViolation] = []
    if isinstance(fields.get("origin"), str):
        try:
            fields["origin"] = origin_of(fields["origin"], f"{field_prefix}.origin")
        except DescriptorError as exc:
            violations += exc.violations
            fields["origin"] = Origin.unspecified
    if "causes" in fields:
        try:
            fields["causes"] = cause_inputs(fields["causes"], field_prefix)
        except DescriptorError as exc:
            violations += exc.violations
            fields["causes"] = ()
    try:
        built = build_descriptor(**fields, field_prefix=field_prefix)
    except DescriptorError as exc:
        violations += exc.violations
    if violations:  # every one at once, as the server lists them
        raise DescriptorError(violations)
    return built


def descriptors_of(
    values: Iterable[Descriptor | Mapping[str, Any]], within: str
) -> list[Descriptor]:
    """Each of a batch's descriptors (`descriptor_of`); one DescriptorError naming every
    violation of every item by its place (`requests[3].descriptor.type`)."""
    out: list[Descriptor] = []
    violations: list[FieldViolation] = []
    for i, value in enumerate(values):
        try:
            out.append(descriptor_of(value, f"{within}[{i}].descriptor"))
        except DescriptorError as exc:
            violations += exc.violations
    if violations:
        raise DescriptorError(violations)
    return out


def service_config(attempts: int) -> str:
    """The channel's service config: retry UNAVAILABLE on every method, briefly."""
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    method: dict[str, Any] = {"name": [{"service": SERVICE}]}
    if attempts > 1:
        method["retryPolicy"] = {
            "maxAttempts": attempts,
            "initialBackoff": "0.05s",
            "maxBackoff": "1s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE"],
        }
    return json.dumps({"methodConfig": [method]})


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
            ("grpc.service_config", service_config(attempts)),
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
        self._stub = pb_grpc.ErrorClassifierStub(self.channel)
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
            self._stub.GetRuleset(pb.GetRulesetRequest(), timeout=self.timeout or DEFAULT_TIMEOUT)
        except grpc.RpcError:
            return False
        return True

    def _call(self, send: Any, local: Any) -> Any:
        """Call the service through the breaker; on a service failure, the fallback if any."""
        breaker = self.breaker
        if breaker is not None and not breaker.allow():
            if local is not None:
                self.counters["short_circuited"] += 1
                self.counters["local"] += 1
                return local()
            self.counters["short_circuited"] += 1
            self.counters["failed"] += 1
            raise ServiceError(
                grpc.StatusCode.UNAVAILABLE,
                f"circuit open: {self.target} kept failing; not called (probing in the background)",
            )
        try:
            with _mapped_errors():
                result = send()
        except ServiceError as exc:
            if breaker is not None:
                breaker.failed(exc.code)
            if local is not None and exc.code in TRIPPING:
                self.counters["local"] += 1
                return local()
            self.counters["failed"] += 1
            raise
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
        descriptor: Descriptor,
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
        descriptor: Descriptor | None = None,
        /,
        *,
        explain: bool = False,
        explain_rule: str = "",
        timeout: float | None = None,
        **fields: Any,
    ) -> Answer:
        """Classify one descriptor, given built or as keywords (validated before sending).

        With explain_rule (a rule id), the explanation also says why that rule did or did
        not decide; the server refuses an id its rules do not have (INVALID_ARGUMENT).
        """
        if (descriptor is None) == (not fields):
            raise TypeError("classify() takes a Descriptor or descriptor keywords, not both")
        d = descriptor_of(descriptor if descriptor is not None else fields)
        fallback = self.fallback
        request = wire.request(d, explain or bool(explain_rule), explain_rule)
        answer: Answer = self._call(
            lambda: wire.answer_from_proto(self._stub.Classify(request, timeout=self._t(timeout))),
            (lambda: fallback.classify(d)) if fallback is not None else None,
        )
        return answer

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
        provider_calls: int | str | None = None,
    ) -> Answer:
        """Classify a live Python exception (see `descriptor_from_exception`, and its `body`
        for a client whose exception keeps no error body, such as aiohttp, and its
        `time_limit`, `veto`, `stage`, `provider_calls`: what only the runtime knows)."""
        d = descriptor_from_exception(
            exc,
            origin=origin,
            provider=provider,
            attributes=attributes,
            body=body,
            time_limit=time_limit,
            veto=veto,
            stage=stage,
            provider_calls=provider_calls,
        )
        return self.classify(d, explain=explain, timeout=timeout)

    def classify_batch(
        self,
        descriptors: Iterable[Descriptor | Mapping[str, Any]],
        *,
        explain: bool = False,
        timeout: float | None = None,
    ) -> list[Answer]:
        """Classify many descriptors in one call (up to 1,000); answers in request order.

        Each is a Descriptor or a dict of its fields (as `classify(**fields)` takes them);
        every malformed one is named before the call (`requests[3].descriptor.type`)."""
        listed = descriptors_of(descriptors, "requests")
        request = pb.ClassifyBatchRequest(requests=[wire.request(d, explain) for d in listed])
        fallback = self.fallback

        def send() -> list[Answer]:
            response = self._stub.ClassifyBatch(request, timeout=self._t(timeout))
            return [wire.answer_from_proto(r) for r in response.responses]

        answers: list[Answer] = self._call(
            send,
            (lambda: [fallback.classify(d) for d in listed]) if fallback is not None else None,
        )
        return answers

    def classify_stream(
        self,
        descriptors: Iterable[Descriptor | Mapping[str, Any]],
        *,
        explain: bool = False,
        timeout: float | None = None,
    ) -> Iterator[Answer]:
        """Classify a stream of descriptors over one call; one answer per descriptor, in order.

        Each is a Descriptor or a dict of its fields, built as it is sent: a malformed one
        ends the stream there, and after the answers to those before it, DescriptorError
        names it by its place (`stream[3].descriptor.type`), as the server does.
        The stream lives as long as its input, so it has no deadline unless
        `timeout` names one: the client's default is for single calls.
        """
        refused: list[DescriptorError] = []

        def requests() -> Iterator[pb.ClassifyRequest]:
            # gRPC reads this on a thread of its own, where an exception would only cancel
            # the call: a malformed descriptor ends the input, and is raised below.
            for i, value in enumerate(descriptors):
                try:
                    d = descriptor_of(value, f"stream[{i}].descriptor")
                except DescriptorError as exc:
                    refused.append(exc)
                    return
                yield wire.request(d, explain)

        responses = self._stub.ClassifyStream(requests(), timeout=timeout)
        with _mapped_errors():
            for response in responses:
                yield wire.answer_from_proto(response)
        if refused:
            raise refused[0]

    def get_ruleset(self, *, timeout: float | None = None) -> RulesetInfo:
        """Everything GetRuleset says: the serving ruleset (name, version, digest, rule count,
        load time, source), the classifier version, the last reload and the candidate."""
        with _mapped_errors():
            info = self._stub.GetRuleset(pb.GetRulesetRequest(), timeout=self._t(timeout))
        return wire.ruleset_info_from_proto(info)

    def list_classes(self, *, timeout: float | None = None) -> list[ClassInfo]:
        """Every class of the taxonomy with the serving ruleset's defaults, in number order."""
        with _mapped_errors():
            response = self._stub.ListClasses(pb.ListClassesRequest(), timeout=self._t(timeout))
        return [wire.class_info_from_proto(c) for c in response.classes]

    def _t(self, timeout: float | None) -> float | None:
        return self.timeout if timeout is None else timeout


@contextmanager
def _mapped_errors() -> Iterator[None]:
    try:
        yield
    except grpc.RpcError as err:
        raise _error(err) from err


def _error(err: grpc.RpcError) -> ClassifierError:
    """INVALID_ARGUMENT becomes DescriptorError with the server's field violations."""
    code = err.code() if isinstance(err, grpc.Call) else grpc.StatusCode.UNKNOWN
    details = (err.details() if isinstance(err, grpc.Call) else None) or ""
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        return DescriptorError(_violations(err) or [FieldViolation("", details)])
    return ServiceError(code, details)


def _violations(err: grpc.RpcError) -> list[FieldViolation]:
    if not isinstance(err, grpc.Call):
        return []
    status = rpc_status.from_call(err)
    if status is None or status.code != code_pb2.INVALID_ARGUMENT:
        return []
    out: list[FieldViolation] = []
    for detail in status.details:
        bad = error_details_pb2.BadRequest()
        if detail.Unpack(bad):
            out += [FieldViolation(v.field, v.description) for v in bad.field_violations]
    return out
