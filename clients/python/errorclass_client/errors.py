"""What the client raises.

ClientError                 root of everything this package raises
├── DescriptorError         a descriptor is malformed: every FieldViolation, named
│                           by the service's path (`descriptor.causes[1].type`),
│                           whether the client or the server found it
├── ServiceError            a call failed for another reason (`.code`, a
│                           grpc.StatusCode; the grpc.RpcError is the __cause__)
│   └── Unclassified        the service could not answer (down, too slow, the
│                           breaker open): `.descriptors` keeps what was asked, to
│                           classify later. Never store it as Unknown.
└── RuntimeFactError        (also a ValueError) a runtime fact outside the contract,
                            named by `.fact`
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import grpc

if TYPE_CHECKING:
    from errorclass_client.descriptor import Descriptor


class ClientError(Exception):
    """Root of every error this package raises."""


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """A malformed field of a descriptor, named by its path (`descriptor.causes[1].type`)."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class DescriptorError(ClientError):
    """A descriptor is malformed; every violation names the field."""

    def __init__(self, violations: Iterable[FieldViolation]) -> None:
        self.violations = list(violations)
        super().__init__("; ".join(str(v) for v in self.violations))


class ServiceError(ClientError):
    """A call failed for a reason other than a malformed descriptor.

    `code` is the gRPC status (UNAVAILABLE, DEADLINE_EXCEEDED, PERMISSION_DENIED, ...);
    the original `grpc.RpcError`, when there was one, is the `__cause__`.
    """

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self.code = code
        self.details = details
        super().__init__(f"{code.name}: {details}" if details else code.name)


class Unclassified(ServiceError):  # noqa: N818 - the outcome, named as in every client
    """The service could not answer: the failure is unclassified, not Unknown.

    Unknown means "no rule matched", a measurement; an outage is not one. Store the run
    as unclassified, keep `descriptors` (in the order they were asked), and classify them
    later (`Client.classify_batch`). `code` says why: UNAVAILABLE (down, or the breaker
    open: `short_circuited`), DEADLINE_EXCEEDED (too slow), RESOURCE_EXHAUSTED, INTERNAL
    or UNKNOWN.
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        details: str,
        descriptors: Sequence[Descriptor],
        *,
        short_circuited: bool = False,
    ) -> None:
        super().__init__(code, details)
        self.descriptors: tuple[Descriptor, ...] = tuple(descriptors)
        self.short_circuited = short_circuited
        """True when the breaker was open and the service was not called at all."""


class RuntimeFactError(ClientError, ValueError):
    """A runtime fact outside the contract (clients/spec facts.json `runtime_facts`)."""

    def __init__(self, fact: str, message: str) -> None:
        self.fact = fact
        super().__init__(f"{fact}: {message}")
