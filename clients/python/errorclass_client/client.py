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
  ruleset bundle (`bundle=` a signed bundle file, and/or fetched from the service), such
  a call is answered from the bundle in process instead, within the call's deadline, and
  the answer says so (`Answer.local`, `Answer.bundle_digest`), and it is reported to the
  service once it is back (ReportDecisions), as every client reports it; so it is with a
  `fallback` (`classifier.client.local.LocalFallback` in the server's package; not
  reported, it names no bundle);
- in `mode="local_first"` every failure is classified in process from the bundle (no
  RPC per failure) and the decisions are reported to the service in batches
  (ReportDecisions), so its decision log, metrics and Unknown inbox see them all.

A malformed descriptor raises the same `DescriptorError` whether the client (which
validates before sending) or the server found the problem; any other failure of the call
raises `ServiceError` with the gRPC status. `Client.counters` counts the calls by path:
server, local, failed, short_circuited.
"""

from __future__ import annotations

import copy
import json
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Protocol, TypeVar, Unpack, overload

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from errorclass_client import facts, wire
from errorclass_client._status import field_violations
from errorclass_client.answer import Action, Answer, ClassInfo, RulesetInfo, error_class
from errorclass_client.breaker import TRIPPING, Breaker
from errorclass_client.bundle import Answer as BundleAnswer
from errorclass_client.bundle_source import BundleSource, Fetched, KeySource, Refresher
from errorclass_client.descriptor import (
    Descriptor,
    DescriptorFields,
    DescriptorInput,
    descriptor_fields,
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
from errorclass_client.reporter import DEFAULT_BATCH, DEFAULT_INTERVAL, DEFAULT_QUEUE, Reporter
from errorclass_client.taxonomy import Effect, Origin, UnknownReason
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

Mode = Literal["remote", "local_first"]
"""`remote` (the default): the service answers, the bundle only when it cannot.
`local_first`: the bundle answers in process, and the decisions are reported."""


def _local_margin(timeout: float) -> float:
    """What a call keeps of its deadline for answering from the bundle when the service
    did not answer in time: 5 % (2 to 20 ms), ten times a local answer's p99."""
    return min(0.02, max(0.002, timeout * 0.05))


@dataclass(frozen=True, slots=True)
class LocalStatus:
    """The client's bundle and its report queue, as an operator asks about them."""

    bundle_digest: str
    """The bundle in use (sha256 of its bytes); empty when none is loaded."""
    refusals: int
    """Bundles refused (unsigned, unknown key, bad signature, unreadable)."""
    last_refusal: str
    """`code: message` of the latest refusal; empty when none."""
    pending: int
    """Local decisions not yet reported."""
    reported: int
    """Local decisions the service accepted."""
    dropped: int
    """Local decisions dropped unreported (the queue was full, or the service refused them)."""


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
        self.get_bundle = unary("GetBundle", pb.GetBundleRequest, pb.GetBundleResponse)
        self.report_decisions = unary(
            "ReportDecisions", pb.ReportDecisionsRequest, pb.ReportDecisionsResponse
        )


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
        mode: Mode = "remote",
        bundle: str | os.PathLike[str] | None = None,
        bundle_signatures: str | os.PathLike[str] | None = None,
        trusted_keys: Sequence[KeySource] = (),
        allow_unsigned: bool = False,
        fetch_bundle: bool | None = None,
        report_batch: int = DEFAULT_BATCH,
        report_interval: float = DEFAULT_INTERVAL,
        report_queue: int = DEFAULT_QUEUE,
    ) -> None:
        """Open a channel to `target` (host:port). `timeout` of None means no default deadline.

        `breaker` False turns the circuit breaker off; `fallback` classifies what the
        service cannot answer (classify, classify_exception and classify_batch).

        A ruleset bundle answers in process: `bundle` a bundle file to start from (its
        signatures `bundle_signatures`, default `<bundle>.sig.json`), verified with
        `trusted_keys` (PEM public keys, bytes or paths; several during a rotation), or
        used unverified only with `allow_unsigned`. A refused start file raises BundleError
        here (`unsigned`, `unknown_key`, `bad_signature`, `malformed_signatures`,
        `invalid_bundle`). `fetch_bundle` (default: on when a bundle file or local-first is
        configured) fetches the service's bundle in the background at start and again
        whenever an answer names another ruleset. `mode="local_first"` classifies from the
        bundle and reports the decisions in batches of `report_batch` or every
        `report_interval` seconds, keeping at most `report_queue` unreported."""
        if mode not in ("remote", "local_first"):
            raise ValueError(f"mode must be 'remote' or 'local_first', not {mode!r}")
        if fetch_bundle is None:
            fetch_bundle = bundle is not None or mode == "local_first"
        uses_bundle = bundle is not None or fetch_bundle or mode == "local_first"
        if uses_bundle and fallback is not None:
            raise ValueError("a client answers locally from a bundle or a fallback, not both")
        self.mode: Mode = mode
        self.bundles: BundleSource | None = None
        """The bundle this client answers from in process (None when it uses none)."""
        if uses_bundle:
            self.bundles = BundleSource(trusted_keys, allow_unsigned=allow_unsigned)
            if bundle is not None:
                self.bundles.load_file(bundle, bundle_signatures)
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
        """Calls by how they were answered: by the server, locally (the bundle or the
        fallback), not at all (an error raised), and without trying the server (the breaker
        was open)."""
        self.refresher: Refresher | None = None
        if self.bundles is not None and fetch_bundle:
            self.refresher = Refresher(self.bundles, self._fetch_bundle, self.timeout)
            self.refresher.start()
        self.reporter: Reporter | None = None
        """Reports the bundle's decisions: every one in local-first mode, and in remote mode
        the answers the bundle gave while the service could not (sent once it is back), so
        the decision log and the Unknown inbox see the failures of an outage too."""
        if self.bundles is not None:
            self.reporter = Reporter(
                lambda request, t: self._methods.report_decisions(request, timeout=t),
                batch=report_batch,
                interval=report_interval,
                queue=report_queue,
                timeout=self.timeout,
                on_response=self._reported,
            )

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
        """Report what is pending (within the client's deadline), stop the threads, close."""
        if self.reporter is not None:
            self.reporter.close(self.timeout or DEFAULT_TIMEOUT)
        if self.refresher is not None:
            self.refresher.close()
        if self.breaker is not None:
            self.breaker.close()
        self.channel.close()

    @property
    def bundle_digest(self) -> str:
        """The digest of the bundle in use; empty when none is loaded."""
        return self.bundles.digest if self.bundles is not None else ""

    def load_bundle(
        self,
        path: str | os.PathLike[str],
        signatures: str | os.PathLike[str] | None = None,
    ) -> str:
        """Put a bundle file in use (verified as at start); its digest. BundleError when
        refused, the bundle in use kept."""
        if self.bundles is None:
            raise ValueError("this client uses no bundle (give bundle=, fetch_bundle= or mode=)")
        return self.bundles.load_file(path, signatures).bundle_digest

    def refresh_bundle(self, *, timeout: float | None = None) -> bool:
        """Fetch the service's bundle now (GetBundle with the digest in use), within the
        deadline; whether the bundle in use changed. Raises BundleError (refused, the bundle
        in use kept) or ServiceError."""
        if self.refresher is None:
            raise ValueError("this client does not fetch bundles (fetch_bundle=False)")
        try:
            return self.refresher.refresh(self._t(timeout))
        except grpc.RpcError as err:
            raise _error(err, None) from err

    def flush_decisions(self, *, timeout: float | None = None) -> int:
        """Report every pending local decision now (local-first decisions, and the bundle's
        answers during an outage); how many the service accepted."""
        if self.reporter is None:
            return 0
        try:
            return self.reporter.flush(self._t(timeout))
        except grpc.RpcError as err:
            raise _error(err, None) from err

    def local_status(self) -> LocalStatus:
        """The bundle in use, its refusals, and the local decisions' report queue."""
        bundles, reporter = self.bundles, self.reporter
        return LocalStatus(
            bundle_digest=self.bundle_digest,
            refusals=bundles.refusals if bundles is not None else 0,
            last_refusal=bundles.last_refusal if bundles is not None else "",
            pending=reporter.pending if reporter is not None else 0,
            reported=reporter.reported if reporter is not None else 0,
            dropped=reporter.dropped if reporter is not None else 0,
        )

    def _fetch_bundle(self, if_none_match: str, timeout: float | None) -> Fetched:
        r = self._methods.get_bundle(
            pb.GetBundleRequest(if_none_match=if_none_match), timeout=timeout
        )
        return Fetched(
            bundle=None if r.unchanged else r.bundle,
            signatures=(r.signatures or None) if not r.unchanged else None,
            bundle_digest=r.bundle_digest,
            ruleset_digest=r.ruleset_digest,
        )

    def _reported(self, response: pb.ReportDecisionsResponse) -> None:
        """A report's answer names the serving bundle: fetch it when it is another."""
        bundles, refresher = self.bundles, self.refresher
        if (
            refresher is not None
            and bundles is not None
            and response.bundle_digest
            and response.bundle_digest != bundles.digest
        ):
            refresher.want()

    def _served(self, answer: Answer) -> Answer:
        """A service's answer names its ruleset: fetch the bundle when it is another."""
        bundles, refresher = self.bundles, self.refresher
        if refresher is not None and bundles is not None:
            current = bundles.current
            digest = answer.ruleset_digest
            if (current is None or digest != current.digest) and digest != bundles.refused_ruleset:
                refresher.want()
        return answer

    def _local(self, d: Descriptor) -> Answer | None:
        """The bundle's answer for d, marked local; None without a bundle (or a fallback)."""
        if self.fallback is not None:
            return self.fallback.classify(d)
        current = self.bundles.current if self.bundles is not None else None
        if current is None:
            return None
        return local_answer(current.classify(descriptor_fields(d)), current.bundle_digest)

    def _fallback(self, d: Descriptor) -> Answer | None:
        """The local answer when the service cannot give one, reported when a bundle gave it
        (Go, Node and Java report theirs the same way)."""
        answer = self._local(d)
        if answer is not None and answer.bundle_digest:
            self._report(d, answer)
        return answer

    def _fallback_all(self, listed: Sequence[Descriptor]) -> list[Answer] | None:
        answers = self._local_all(listed)
        if answers is not None:
            for d, answer in zip(listed, answers, strict=True):
                if answer.bundle_digest:
                    self._report(d, answer)
        return answers

    def _report(self, d: Descriptor, answer: Answer) -> None:
        reporter = self.reporter
        if reporter is None:
            return
        decided_at = Timestamp()
        decided_at.GetCurrentTime()
        reporter.add(
            pb.ReportedDecision(
                descriptor=wire.descriptor_to_proto(d),
                answer=wire.answer_to_proto(answer),
                bundle_digest=answer.bundle_digest,
                decided_at=decided_at,
            )
        )

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
        local: Callable[[], _T | None] | None,
    ) -> _T:
        """Call the service through the breaker; when it cannot answer, answer locally (the
        bundle, or the fallback) when `local` can (it gives None when it cannot).

        With `descriptors` (a classifying call) an outage is Unclassified, keeping them.
        """
        breaker = self.breaker
        if breaker is not None and not breaker.allow():
            self.counters["short_circuited"] += 1
            answered = local() if local is not None else None
            if answered is not None:
                self.counters["local"] += 1
                return answered
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
                answered = local()
                if answered is not None:
                    self.counters["local"] += 1
                    return answered
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
        explaining = explain or bool(explain_rule)
        if self.mode == "local_first" and not explaining:
            answer = self._local(d)
            if answer is not None:
                self.counters["local"] += 1
                self._report(d, answer)
                return answer
        request = wire.request(d, explaining, explain_rule)
        t = self._t(timeout)
        local = None
        if self.fallback is not None or self.bundles is not None:
            local = lambda: self._fallback(d)  # noqa: E731
            if t is not None and self.bundles is not None and self.bundles.current is not None:
                t -= _local_margin(t)
        return self._call(
            lambda: self._served(
                wire.answer_from_proto(self._methods.classify(request, timeout=t))
            ),
            [d],
            local,
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
        if self.mode == "local_first" and not explain:
            answers = self._local_all(listed)
            if answers is not None:
                self.counters["local"] += 1
                for d, answer in zip(listed, answers, strict=True):
                    self._report(d, answer)
                return answers
        request = pb.ClassifyBatchRequest(requests=[wire.request(d, explain) for d in listed])
        t = self._t(timeout)
        if t is not None and self.bundles is not None and self.bundles.current is not None:
            t -= _local_margin(t)

        def send() -> list[Answer]:
            response = self._methods.classify_batch(request, timeout=t)
            answers = [wire.answer_from_proto(r) for r in response.responses]
            if answers:
                self._served(answers[0])
            return answers

        local = None
        if self.fallback is not None or self.bundles is not None:
            local = lambda: self._fallback_all(listed)  # noqa: E731
        return self._call(send, listed, local)

    def _local_all(self, listed: Sequence[Descriptor]) -> list[Answer] | None:
        answers: list[Answer] = []
        for d in listed:
            answer = self._local(d)
            if answer is None:
                return None
            answers.append(answer)
        return answers

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


def local_answer(a: BundleAnswer, bundle_digest: str) -> Answer:
    """A bundle's answer as the client returns one, marked local with the bundle's digest:
    equal in every other field to the service's answer under the same ruleset."""
    wait = a.retry_after
    return Answer(
        error_class=error_class(a.error_class),
        class_name=a.class_name,
        action=Action(a.action.id, a.action.summary, a.action.runbook_url),
        effect=Effect.from_label(a.effect),
        retryable=a.retryable,
        rule_id=a.rule_id,
        ruleset_version=a.ruleset_version,
        ruleset_digest=a.ruleset_digest,
        unknown_reason=UnknownReason[a.unknown_reason] if a.unknown_reason else UnknownReason.none,
        local=True,
        bundle_digest=bundle_digest,
        retry_after=wait.delay if wait is not None else None,
        retry_after_source=wait.labelled_source if wait is not None else "",
    )


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
