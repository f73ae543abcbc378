"""The conformance suite for the Java SDKs: one test per (java sdk, scenario) pair.

Each pair makes one real call with the real Java SDK (tests/conformance/java, pinned by its
pom.xml) against the fake provider, describes what it raised with clients/java's
`Descriptors.from` in the JVM, classifies that descriptor over gRPC with the bundled rules,
and checks the answer against the scenario's `want` and that exactly one attempt reached
the server. A pair the scenario file lists under `known` is a strict xfail.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from errorclass_client import Client
from tests.conformance.drivers import Driver
from tests.conformance.fake_provider import FakeProvider
from tests.conformance.java_drivers import (
    JAVA_DIR,
    JAVA_SDKS,
    JavaUnavailableError,
    build,
    java_available,
    java_command,
    running,
)
from tests.conformance.loader import Scenario, load_scenarios
from tests.conformance.params import pair_params
from tests.conformance.runner import RIGHT, judge

PAIRS = pair_params(JAVA_SDKS)


@pytest.fixture(scope="session")
def java_drivers() -> Iterator[dict[str, Driver]]:
    """The JVM worker for the session (built with Maven), stopped after it."""
    if not java_available():
        pytest.skip("java and mvn are not on PATH: the Java conformance suite needs JDK 17")
    try:
        with running() as drivers:
            yield drivers
    except JavaUnavailableError as exc:
        pytest.fail(str(exc))


@pytest.mark.parametrize(("sdk", "scenario_id"), PAIRS)
def test_java_pair(
    sdk: str,
    scenario_id: str,
    scenarios: dict[str, Scenario],
    fake_provider: FakeProvider,
    classifier_client: Client,
    java_drivers: dict[str, Driver],
) -> None:
    result = judge(sdk, scenarios[scenario_id], java_drivers[sdk], fake_provider, classifier_client)
    assert result.attempts == result.expected_attempts, result.explain()
    assert result.verdict == RIGHT, result.explain()


def test_the_worker_lists_the_drivers_python_knows(java_drivers: dict[str, Driver]) -> None:
    """Worker --list names the same drivers, calling the same APIs, as JAVA_SDKS."""
    done = subprocess.run(
        java_command(build(), "--list"),
        cwd=JAVA_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    listed = {sdk: tuple(apis) for sdk, apis in json.loads(done.stdout).items()}
    assert listed == JAVA_SDKS


def test_every_java_pair_calls_an_api_its_sdk_can_call() -> None:
    """A scenario lists a Java SDK only for an API that SDK's driver calls."""
    for scenario in load_scenarios().values():
        for sdk in scenario.sdks:
            if sdk in JAVA_SDKS:
                assert scenario.api in JAVA_SDKS[sdk], (
                    f"{scenario.id}: {sdk} cannot call {scenario.api}"
                )
