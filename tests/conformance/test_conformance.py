"""The conformance suite: one test per (sdk, scenario) pair, named `<sdk>::<scenario-id>`.

Each pair makes one real call with the real SDK against the fake provider, describes the
exception with our helper, classifies it over gRPC with the bundled rules, and checks the
answer against the scenario's `want`, that exactly one attempt reached the server, and
that the fake provider could answer it as the real API would (no request for a stream
answered with a scenario's non-stream 2xx body).
A pair the scenario file lists under `known` (with the reason) is a strict xfail.
"""

from __future__ import annotations

import pytest

from errorclass_client import Client
from tests.conformance.drivers import load_all
from tests.conformance.fake_provider import FakeProvider
from tests.conformance.loader import Scenario
from tests.conformance.params import pair_params
from tests.conformance.runner import RIGHT, judge

DRIVERS = load_all()
PAIRS = pair_params(DRIVERS)


@pytest.mark.parametrize(("sdk", "scenario_id"), PAIRS)
def test_pair(
    sdk: str,
    scenario_id: str,
    scenarios: dict[str, Scenario],
    fake_provider: FakeProvider,
    classifier_client: Client,
) -> None:
    result = judge(sdk, scenarios[scenario_id], DRIVERS[sdk], fake_provider, classifier_client)
    assert result.attempts == result.expected_attempts, result.explain()
    assert result.stream_mismatches == 0, result.explain()
    assert result.verdict == RIGHT, result.explain()
