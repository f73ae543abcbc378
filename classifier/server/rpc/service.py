"""The gRPC servicer: a thin adapter from the wire to the engine.

Each answer comes from one ruleset, read from the holder once: per call for
Classify and ClassifyBatch, per message for ClassifyStream, so a reload
never mixes two rulesets in one answer (or one batch). After answering, the
servicer tells its observers (metrics, the decision log, the shadow).

GetBundle hands out the serving ruleset's bundle as the holder keeps it (built and
signed when the ruleset started serving, never per call). ReportDecisions takes the
decisions clients made in process from a bundle and tells its reporters (metrics, the
decision log, the live Unknown sample), as answers given tell the observers.

It owns nothing process-wide: the explanations (`Explaining`: the budget and the
explaining process) and the pushback it tells connections to wait in are built by
its owner (runtime.App, or create_server alone) and handed in. A refused
explanation (`ExplainRefusedError`) is answered by `_refuse`: RESOURCE_EXHAUSTED
with the time to retry when the budget refused, UNAVAILABLE when the explaining
process failed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import NoReturn, Protocol

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from classifier import limits
from classifier.answer import Classification
from classifier.descriptor import Descriptor
from classifier.engine.evaluate import classify
from classifier.engine.explain import explain, explain_rule, render_verdict
from classifier.engine.ruleset import Ruleset
from classifier.errors import DescriptorError, FieldViolation
from classifier.server.explain import Explaining, ExplainRefusedError
from classifier.server.rpc import convert
from classifier.server.rpc.pushback import Pushback
from classifier.server.shared.serving_bundle import NOT_SERVED, LocalDecision, ServingBundle
from classifier.server.shared.serving_ruleset import RulesetHolder
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc

__all__ = ["ClassifierService", "Observer", "Reporter"]

MAX_BATCH = limits.MAX_BATCH
DEADLINE_CHECK_EVERY = 32
"""Batch items answered between two looks at the call's deadline."""


class Observer(Protocol):
    """Told about every answer given (never about calls that failed)."""

    def classified(self, descriptor: Descriptor, result: Classification) -> None: ...


class Reporter(Protocol):
    """Told about every decision a client reported (never about a report refused)."""

    def reported(
        self, descriptor: Descriptor, result: Classification, local: LocalDecision
    ) -> None: ...


MAX_VIOLATIONS_SHOWN = 20
"""Field violations named in an INVALID_ARGUMENT's message and BadRequest detail; the rest
are counted ("... and 180 more"), so the trailer stays far inside HTTP/2's header limits
(a batch of 1,000 bad items once passed 16 KiB and came back RESOURCE_EXHAUSTED)."""
MAX_DETAILS_CHARS = 4096


def abort_invalid(context: grpc.ServicerContext, violations: list[FieldViolation]) -> NoReturn:
    """Abort with INVALID_ARGUMENT naming each bad field (the first MAX_VIOLATIONS_SHOWN),
    also as a google.rpc.BadRequest detail."""
    shown = violations[:MAX_VIOLATIONS_SHOWN]
    more = len(violations) - len(shown)
    detail = any_pb2.Any()
    field_violations = [
        error_details_pb2.BadRequest.FieldViolation(
            field=v.field[:256], description=v.message[:512]
        )
        for v in shown
    ]
    if more:
        field_violations.append(
            error_details_pb2.BadRequest.FieldViolation(
                field="", description=f"... and {more} more violations"
            )
        )
    detail.Pack(error_details_pb2.BadRequest(field_violations=field_violations))
    message = "; ".join(str(v) for v in shown)
    if more:
        message += f"; ... and {more} more"
    if len(message) > MAX_DETAILS_CHARS:
        message = message[:MAX_DETAILS_CHARS] + f"... ({len(violations)} violations in all)"
    status = status_pb2.Status(
        code=code_pb2.INVALID_ARGUMENT,
        message=message,
        details=[detail],
    )
    context.abort_with_status(rpc_status.to_status(status))
    raise AssertionError("abort_with_status returned")  # pragma: no cover


class ClassifierService(pb_grpc.ErrorClassifierServicer):
    """Serves the ruleset held by `holder`; `candidate` is only described, never answers."""

    def __init__(
        self,
        holder: RulesetHolder,
        *,
        explaining: Explaining,
        pushback: Pushback,
        candidate: RulesetHolder | None = None,
        observers: Sequence[Observer] = (),
        reporters: Sequence[Reporter] = (),
    ) -> None:
        self.holder = holder
        self.explaining = explaining
        """The server's explanations, shared with the console."""
        self.pushback = pushback
        """Connections refused an explanation are held back until their retry time."""
        self.candidate = candidate
        self.observers = tuple(observers)
        self.reporters = tuple(reporters)
        self._responses = convert.Responses(holder.current)
        self._reported = convert.ReportedAnswers()
        self._bundle_responses: (
            tuple[ServingBundle, pb.GetBundleResponse, pb.GetBundleResponse] | None
        ) = None

    def Classify(
        self, request: pb.ClassifyRequest, context: grpc.ServicerContext
    ) -> pb.ClassifyResponse:
        ruleset = self.holder.current
        descriptor = _descriptor(request, context)
        if request.explain:
            with _explaining(self.explaining, self.pushback, context):
                response = self._explained(ruleset, [request], context, [""])[0]
            self._observe(descriptor, classify(ruleset, descriptor))
            return response
        result = classify(ruleset, descriptor)
        self._observe(descriptor, result)
        return self._responses_for(ruleset).response(result, descriptor)

    def ClassifyBatch(
        self, request: pb.ClassifyBatchRequest, context: grpc.ServicerContext
    ) -> pb.ClassifyBatchResponse:
        count = len(request.requests)
        if count > MAX_BATCH:
            abort_invalid(
                context,
                [
                    FieldViolation(
                        "requests", f"{count} requests exceed the batch limit of {MAX_BATCH}"
                    )
                ],
            )
        explained = sum(1 for item in request.requests if item.explain)
        if explained > limits.MAX_EXPLAINED_PER_CALL:
            self.pushback.hold(context.peer(), limits.HOLD_MAX_SECONDS)
            abort_invalid(
                context,
                [
                    FieldViolation(
                        "requests",
                        f"{explained} requests ask for explain; at most "
                        f"{limits.MAX_EXPLAINED_PER_CALL} per call",
                    )
                ],
            )
        # Refused explain is refused before any work: a flood's refusals cost a parse.
        with (
            _explaining(self.explaining, self.pushback, context)
            if explained
            else contextlib.nullcontext()
        ):
            ruleset = self.holder.current
            descriptors: list[Descriptor] = []
            violations: list[FieldViolation] = []
            for i, item in enumerate(request.requests):
                try:
                    descriptors.append(_checked(item, "requests", i))
                except DescriptorError as exc:
                    violations += exc.violations
            if violations:
                abort_invalid(context, violations)
            results: list[Classification] = []
            for i, descriptor in enumerate(descriptors):
                if i % DEADLINE_CHECK_EVERY == 0:
                    _give_up_when_expired(context, f"after {i} of {count} answers")
                results.append(classify(ruleset, descriptor))
            batch = self._responses_for(ruleset).batch(zip(results, descriptors, strict=True))
            if explained:
                asked = [i for i, item in enumerate(request.requests) if item.explain]
                answers = self._explained(
                    ruleset,
                    [request.requests[i] for i in asked],
                    context,
                    [f"requests[{i}]." for i in asked],
                )
                for i, answer in zip(asked, answers, strict=True):
                    batch.responses[i].CopyFrom(answer)
        for descriptor, result in zip(descriptors, results, strict=True):
            self._observe(descriptor, result)
        return batch

    def ClassifyStream(
        self, request_iterator: Iterator[pb.ClassifyRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.ClassifyResponse]:
        for i, request in enumerate(request_iterator):
            ruleset = self.holder.current
            descriptor = _descriptor(request, context, "stream", i)
            result = classify(ruleset, descriptor)
            if request.explain:
                with _explaining(self.explaining, self.pushback, context):
                    response = self._explained(ruleset, [request], context, [f"stream[{i}]."])[0]
            else:
                response = self._responses_for(ruleset).response(result, descriptor)
            self._observe(descriptor, result)
            yield response

    def GetRuleset(
        self, request: pb.GetRulesetRequest, context: grpc.ServicerContext
    ) -> pb.RulesetInfo:
        return convert.ruleset_info(self.holder, self.candidate)

    def ListClasses(
        self, request: pb.ListClassesRequest, context: grpc.ServicerContext
    ) -> pb.ListClassesResponse:
        return convert.list_classes(self.holder.current)

    def GetBundle(
        self, request: pb.GetBundleRequest, context: grpc.ServicerContext
    ) -> pb.GetBundleResponse:
        bundle = self.holder.serving.bundle
        if bundle is None or not bundle.served:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, NOT_SERVED)
        made = self._bundle_responses
        if made is None or made[0] is not bundle:
            made = self._bundle_responses = (bundle, *convert.bundle_responses(bundle))
        return made[2] if request.if_none_match == bundle.digest else made[1]

    def ReportDecisions(
        self, request: pb.ReportDecisionsRequest, context: grpc.ServicerContext
    ) -> pb.ReportDecisionsResponse:
        count = len(request.decisions)
        if count > MAX_BATCH:
            abort_invalid(
                context,
                [
                    FieldViolation(
                        "decisions", f"{count} decisions exceed the report limit of {MAX_BATCH}"
                    )
                ],
            )
        bundle = self.holder.serving.bundle
        serving = bundle.digest if bundle is not None else ""
        taken: list[tuple[Descriptor, Classification, LocalDecision]] = []
        violations: list[FieldViolation] = []
        for i, item in enumerate(request.decisions):
            try:
                taken.append(convert.reported_decision(item, serving, self._reported))
            except DescriptorError as exc:
                violations += (
                    FieldViolation(f"decisions[{i}].{v.field}", v.message) for v in exc.violations
                )
        if violations:  # the whole report is refused: a client resends it whole, fixed
            abort_invalid(context, violations)
        for descriptor, result, local in taken:
            for reporter in self.reporters:
                reporter.reported(descriptor, result, local)
        return pb.ReportDecisionsResponse(accepted=len(taken), bundle_digest=serving)

    def _explained(
        self,
        ruleset: Ruleset,
        requests: Sequence[pb.ClassifyRequest],
        context: grpc.ServicerContext,
        places: Sequence[str],
    ) -> list[pb.ClassifyResponse]:
        """The explained answers, made by the explaining process (the caller holds the
        slot: `_explaining`); `places[k]` is where the k-th request is in the call, to
        name a bad explain_rule."""
        try:
            data = [r.SerializeToString() for r in requests]
            timeout = min(limits.EXPLAIN_TIMEOUT_SECONDS, context.time_remaining())
            answers = self.explaining.explain_in_slot(ruleset, explain_requests, (data,), timeout)
        except NoSuchRuleError as missing:
            abort_invalid(
                context,
                [
                    FieldViolation(
                        f"{places[missing.index]}explain_rule",
                        f"the serving ruleset ({ruleset.name} {ruleset.version}) has no "
                        f"rule {missing.rule_id!r}" + _disabled(ruleset, missing.rule_id),
                    )
                ],
            )
        except ExplainRefusedError as refused:
            _refuse(refused, self.pushback, context)
        return [pb.ClassifyResponse.FromString(a) for a in answers]

    def _responses_for(self, ruleset: Ruleset) -> convert.Responses:
        """The serving ruleset's prebuilt answers; a reload starts afresh, letting the old go."""
        responses = self._responses
        if responses.ruleset is not ruleset:
            responses = self._responses = convert.Responses(ruleset)
        return responses

    def _observe(self, descriptor: Descriptor, result: Classification) -> None:
        for observer in self.observers:
            observer.classified(descriptor, result)


@contextlib.contextmanager
def _explaining(
    explaining: Explaining, pushback: Pushback, context: grpc.ServicerContext
) -> Iterator[None]:
    """Explain within the server's budget (one of its slots), or refuse the call at once."""
    with contextlib.ExitStack() as slot:
        try:
            slot.enter_context(explaining.slot())
        except ExplainRefusedError as refused:
            _refuse(refused, pushback, context)
        yield


def _refuse(
    refused: ExplainRefusedError, pushback: Pushback, context: grpc.ServicerContext
) -> NoReturn:
    """End the call with the refusal's gRPC status: refused by the budget, RESOURCE_EXHAUSTED,
    telling the caller when to retry and holding its connection's next calls back until
    then; the explaining process failed, UNAVAILABLE."""
    if refused.why.by_budget:
        held = pushback.hold(context.peer(), refused.retry_after)
        context.set_trailing_metadata((("grpc-retry-pushback-ms", str(round(held * 1000))),))
        context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refused.reason)
    context.abort(grpc.StatusCode.UNAVAILABLE, f"no explanation: {refused.reason}")


def _give_up_when_expired(context: grpc.ServicerContext, progress: str) -> None:
    """Stop working for a caller that stopped waiting."""
    if context.time_remaining() <= 0:
        context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, f"the deadline expired {progress}")
    if not context.is_active():
        context.abort(grpc.StatusCode.CANCELLED, f"the call was cancelled {progress}")


def _disabled(ruleset: Ruleset, rule_id: str) -> str:
    """`: it is disabled (where): why`, when a layer disabled a base's rule_id."""
    off = ruleset.disabled_rule(rule_id)
    return "" if off is None else f": it is disabled ({off.location}): {off.reason}"


class NoSuchRuleError(Exception):
    """A request asked for the verdict of a rule the serving ruleset does not have."""

    def __init__(self, index: int, rule_id: str) -> None:
        super().__init__(index, rule_id)  # both in args: it is pickled out of the process
        self.index = index
        self.rule_id = rule_id


def explain_requests(ruleset: Ruleset, requests: Sequence[bytes]) -> list[bytes]:
    """Each request's explained answer, wire bytes in and out (what the explaining
    process runs); NoSuchRuleError names a request whose explain_rule `ruleset` lacks."""
    responses = convert.Responses(ruleset)
    out = []
    for i, data in enumerate(requests):
        request = pb.ClassifyRequest.FromString(data)
        descriptor = convert.descriptor_from_proto(request.descriptor)
        if not request.explain_rule:
            out.append(responses.response(explain(ruleset, descriptor), descriptor))
            continue
        try:
            result, verdict = explain_rule(ruleset, descriptor, request.explain_rule)
        except KeyError:
            raise NoSuchRuleError(i, request.explain_rule) from None
        response = responses.response(result, descriptor)
        response.explanation.rule_verdict.CopyFrom(convert.verdict_to_proto(verdict))
        response.explanation.text += "\n\n" + "\n".join(render_verdict(verdict))
        out.append(response)
    return [r.SerializeToString() for r in out]


def _checked(request: pb.ClassifyRequest, within: str = "", index: int = 0) -> Descriptor:
    """The request's descriptor; DescriptorError naming each bad field, from
    `within[index]` (`requests[3].descriptor.type`) for an item of a batch or stream.

    The position is formatted only when the descriptor is wrong: formatting
    costs more than the check.
    """
    try:
        if not request.HasField("descriptor"):
            raise DescriptorError([FieldViolation("descriptor", "is required")])
        return convert.descriptor_from_proto(request.descriptor)
    except DescriptorError as exc:
        if not within:
            raise
        raise DescriptorError(
            FieldViolation(f"{within}[{index}].{v.field}", v.message) for v in exc.violations
        ) from None


def _descriptor(
    request: pb.ClassifyRequest, context: grpc.ServicerContext, within: str = "", index: int = 0
) -> Descriptor:
    try:
        return _checked(request, within, index)
    except DescriptorError as exc:
        abort_invalid(context, exc.violations)
