"""Run one (sdk, scenario) pair: the real call, our helper's descriptor, the service's answer.

`judge` is what the pytest items and `python -m tests.conformance.report` share: the driver
makes the call against the fake provider, the exception is described with
`classifier.client.descriptor_from_exception` (a normal return, with
`descriptor_from_response`), the descriptor is classified over gRPC by a real server on
loopback serving the bundled rules/, and the answer is compared with the scenario's `want`.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass
from typing import Any

from classifier import descriptor_from_data
from errorclass_client import (
    Client,
    Descriptor,
    descriptor_from_exception,
    descriptor_from_response,
)
from errorclass_client.descriptor import as_descriptor
from tests.conformance import retry_advice
from tests.conformance.drivers import Driver, Outcome
from tests.conformance.fake_provider import FakeProvider
from tests.conformance.loader import Scenario

RIGHT, WRONG, WRONG_ACTION, WRONG_WAIT, UNKNOWN, NO_FAILURE = (
    "right",
    "wrong",
    "wrong action",
    "wrong retry_after",
    "Unknown",
    "no failure",
)
VERDICTS = (RIGHT, WRONG, WRONG_ACTION, WRONG_WAIT, UNKNOWN, NO_FAILURE)
UNREACHED_FAULTS = ("refuse", "connect_timeout")


@dataclass(frozen=True)
class Result:
    sdk: str
    scenario: Scenario
    verdict: str
    """right; wrong (a class other than the one wanted); wrong action (the right class with
    another action than the one wanted); wrong retry_after (the right class and action, and
    another wait than the scenario's); Unknown; no failure (the call returned normally and
    the helper found no failure in the response, which is right only when Unknown is wanted)."""
    got_class: str
    got_action: str
    rule_id: str
    descriptor: Descriptor | None
    attempts: int
    expected_attempts: int
    stream_mismatches: int = 0
    """Requests for a stream that the scenario answered with a 2xx non-stream body: an
    answer no real API gives, so the pair says nothing (the test fails it)."""
    got_retry_after: float | None = None
    """The wait the answer advised, in seconds (None: none)."""
    retry_after_source: str = ""

    @property
    def pair_id(self) -> str:
        return f"{self.sdk}::{self.scenario.id}"

    @property
    def language(self) -> str:
        """The language of the driver (`python.openai` is python)."""
        return self.sdk.split(".", 1)[0]

    @property
    def class_right(self) -> bool:
        """The class wanted (a call that returned with no failure found is Unknown's)."""
        return (self.got_class or "Unknown") == self.scenario.want.error_class

    @property
    def action_wanted(self) -> bool:
        return self.scenario.want.action is not None

    @property
    def action_right(self) -> bool:
        """The class and the action wanted (an action is only right with its class)."""
        return self.class_right and self.got_action == self.scenario.want.action

    @property
    def retry_after_wanted(self) -> bool:
        return self.scenario.want.retry_after_wanted

    @property
    def retry_after_right(self) -> bool:
        """The class wanted and the wait wanted (a wait is only right with its class)."""
        return self.class_right and self.scenario.want.retry_after_right(self.got_retry_after)

    def explain(self) -> str:
        want = self.scenario.want
        wait = f" / retry_after {want.retry_after}" if want.retry_after is not None else ""
        lines = [
            f"{self.pair_id}: {self.verdict}",
            f"  want  {want.error_class}" + (f" / {want.action}" if want.action else "") + wait,
            f"  got   {self.got_class} / {self.got_action} (rule {self.rule_id or '-'})"
            + (
                f" / retry_after {self.got_retry_after} ({self.retry_after_source})"
                if self.got_retry_after is not None
                else ""
            ),
            f"  attempts {self.attempts} (expected {self.expected_attempts})",
        ]
        if self.stream_mismatches:
            lines.append(
                f"  {self.stream_mismatches} request(s) asked for a stream, and the scenario"
                " answered with a non-stream 2xx body: not what the real API sends"
            )
        if self.descriptor is not None:
            lines.append(f"  descriptor {descriptor_data(self.descriptor)}")
        return "\n".join(lines)


def descriptor_data(d: Descriptor) -> dict[str, Any]:
    """The descriptor in the file format's shape, empty fields left out (for reports)."""
    out: dict[str, Any] = {"type": d.type}
    if d.supertypes:
        out["supertypes"] = list(d.supertypes)
    for name in ("http_status", "grpc_status", "code", "message", "language", "provider"):
        value = getattr(d, name)
        if value not in (None, ""):
            out[name] = value
    if d.origin:
        out["origin"] = d.origin.name
    if d.attributes:
        out["attributes"] = dict(d.attributes)
    if d.causes:
        out["causes"] = [
            {
                k: v
                for k, v in (
                    ("type", c.type),
                    ("http_status", c.http_status),
                    ("code", c.code),
                    ("message", c.message[:120]),
                )
                if v not in (None, "")
            }
            for c in d.causes
        ]
    return out


def pairs(
    scenarios: dict[str, Scenario], drivers: Container[str]
) -> Iterator[tuple[str, Scenario]]:
    """Every (sdk, scenario) pair whose driver is registered (or named), in file order."""
    for scenario in scenarios.values():
        for sdk in scenario.sdks:
            if sdk in drivers:
                yield sdk, scenario


def describe(outcome: Outcome, scenario: Scenario) -> Descriptor | None:
    if outcome.descriptor is not None:
        return as_descriptor(descriptor_from_data(outcome.descriptor))
    if outcome.exception is not None:
        return descriptor_from_exception(
            outcome.exception, origin="provider", provider=scenario.provider, body=outcome.body
        )
    return descriptor_from_response(outcome.response, provider=scenario.provider)


def judge(
    sdk: str, scenario: Scenario, driver: Driver, provider: FakeProvider, client: Client
) -> Result:
    provider.reset_count(scenario.id)
    outcome = driver(scenario, provider.base_url(scenario))
    attempts = provider.count(scenario.id)
    mismatches = provider.stream_mismatches(scenario.id)
    expected = 0 if scenario.fault in UNREACHED_FAULTS else 1
    d = describe(outcome, scenario)
    want = scenario.want
    if d is None:
        verdict = RIGHT if want.error_class == "Unknown" else NO_FAILURE
        return Result(sdk, scenario, verdict, "", "", "", None, attempts, expected, mismatches)
    advice = retry_advice.classify(client, d)
    answer = advice.answer
    got = answer.class_name
    if got == want.error_class:
        if want.action not in (None, answer.action.id):
            verdict = WRONG_ACTION
        elif not want.retry_after_right(advice.retry_after):
            verdict = WRONG_WAIT
        else:
            verdict = RIGHT
    elif got == "Unknown":
        verdict = UNKNOWN
    else:
        verdict = WRONG
    return Result(
        sdk,
        scenario,
        verdict,
        got,
        answer.action.id,
        answer.rule_id,
        d,
        attempts,
        expected,
        mismatches,
        advice.retry_after,
        advice.source,
    )
