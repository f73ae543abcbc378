"""The gRPC servicer: a thin adapter from the wire to the engine."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import NoReturn

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from classifier._proto.errorclass.v1 import classifier_pb2 as pb
from classifier._proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from classifier.descriptor import Descriptor
from classifier.engine import classify
from classifier.errors import DescriptorError, FieldViolation
from classifier.explain import explain
from classifier.ruleset import Ruleset
from classifier.server import convert

MAX_BATCH = 1000


class RulesetHolder:
    """The serving ruleset. Readers take `current` once per request, so every answer
    comes from one ruleset even while a reload swaps in another."""

    def __init__(self, ruleset: Ruleset) -> None:
        self._lock = threading.Lock()
        self.current = ruleset

    def swap(self, ruleset: Ruleset) -> Ruleset:
        """Replace the serving ruleset in one reference assignment; return the old one."""
        with self._lock:
            old, self.current = self.current, ruleset
        return old


def abort_invalid(context: grpc.ServicerContext, violations: list[FieldViolation]) -> NoReturn:
    """Abort with INVALID_ARGUMENT naming each bad field, also as a google.rpc.BadRequest detail."""
    detail = any_pb2.Any()
    detail.Pack(
        error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.message)
                for v in violations
            ]
        )
    )
    status = status_pb2.Status(
        code=code_pb2.INVALID_ARGUMENT,
        message="; ".join(str(v) for v in violations),
        details=[detail],
    )
    context.abort_with_status(rpc_status.to_status(status))
    raise AssertionError("abort_with_status returned")  # pragma: no cover


class ClassifierService(pb_grpc.ErrorClassifierServicer):
    """Serves the ruleset held by `holder`."""

    def __init__(self, holder: RulesetHolder) -> None:
        self.holder = holder

    def Classify(
        self, request: pb.ClassifyRequest, context: grpc.ServicerContext
    ) -> pb.ClassifyResponse:
        ruleset = self.holder.current
        descriptor = _descriptor(request, "descriptor", context)
        return _answer(ruleset, descriptor, request.explain)

    def ClassifyBatch(
        self, request: pb.ClassifyBatchRequest, context: grpc.ServicerContext
    ) -> pb.ClassifyBatchResponse:
        if len(request.requests) > MAX_BATCH:
            abort_invalid(
                context,
                [
                    FieldViolation(
                        "requests",
                        f"{len(request.requests)} requests exceed the batch limit of {MAX_BATCH}",
                    )
                ],
            )
        ruleset = self.holder.current
        descriptors: list[Descriptor] = []
        violations: list[FieldViolation] = []
        for i, item in enumerate(request.requests):
            try:
                descriptors.append(_checked(item, f"requests[{i}].descriptor"))
            except DescriptorError as exc:
                violations += exc.violations
        if violations:
            abort_invalid(context, violations)
        return pb.ClassifyBatchResponse(
            responses=[
                _answer(ruleset, d, item.explain)
                for d, item in zip(descriptors, request.requests, strict=True)
            ]
        )

    def ClassifyStream(
        self, request_iterator: Iterator[pb.ClassifyRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.ClassifyResponse]:
        for i, request in enumerate(request_iterator):
            descriptor = _descriptor(request, f"stream[{i}].descriptor", context)
            yield _answer(self.holder.current, descriptor, request.explain)

    def GetRuleset(
        self, request: pb.GetRulesetRequest, context: grpc.ServicerContext
    ) -> pb.RulesetInfo:
        return convert.ruleset_info(self.holder.current)

    def ListClasses(
        self, request: pb.ListClassesRequest, context: grpc.ServicerContext
    ) -> pb.ListClassesResponse:
        return convert.list_classes(self.holder.current)


def _checked(request: pb.ClassifyRequest, field: str) -> Descriptor:
    if not request.HasField("descriptor"):
        raise DescriptorError([FieldViolation(field, "is required")])
    return convert.descriptor_from_proto(request.descriptor, field)


def _descriptor(
    request: pb.ClassifyRequest, field: str, context: grpc.ServicerContext
) -> Descriptor:
    try:
        return _checked(request, field)
    except DescriptorError as exc:
        abort_invalid(context, exc.violations)


def _answer(
    ruleset: Ruleset, descriptor: Descriptor, want_explanation: bool
) -> pb.ClassifyResponse:
    if want_explanation:
        return convert.response_from_classification(explain(ruleset, descriptor), descriptor)
    return convert.response_from_classification(classify(ruleset, descriptor))
