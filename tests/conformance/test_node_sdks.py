"""The conformance suite for the Node SDKs: one test per (node sdk, scenario) pair.

Each pair makes one real call with the real Node SDK (tests/conformance/node, pinned by
its lockfile) against the fake provider, describes what it raised with clients/node's
`descriptorFromError` in Node, classifies that descriptor over gRPC with the bundled
rules, and checks the answer against the scenario's `want` and that exactly one attempt
reached the server. A pair the scenario file lists under `known` is a strict xfail.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from errorclass_client import Client
from tests.conformance.drivers import Driver
from tests.conformance.fake_provider import FakeProvider
from tests.conformance.loader import Scenario, load_scenarios
from tests.conformance.node_drivers import (
    NODE_DIR,
    NODE_SDKS,
    NodeUnavailableError,
    node_available,
    npm_ci,
    running,
    worker_environment,
)
from tests.conformance.params import pair_params
from tests.conformance.runner import RIGHT, judge

PAIRS = pair_params(NODE_SDKS)


@pytest.fixture(scope="session")
def node_drivers() -> Iterator[dict[str, Driver]]:
    """The Node worker for the session (installed with npm ci), stopped after it."""
    if not node_available():
        pytest.skip("node and npm are not on PATH: the Node conformance suite needs Node >= 20")
    try:
        with running() as drivers:
            yield drivers
    except NodeUnavailableError as exc:
        pytest.fail(str(exc))


@pytest.mark.parametrize(("sdk", "scenario_id"), PAIRS)
def test_node_pair(
    sdk: str,
    scenario_id: str,
    scenarios: dict[str, Scenario],
    fake_provider: FakeProvider,
    classifier_client: Client,
    node_drivers: dict[str, Driver],
) -> None:
    result = judge(sdk, scenarios[scenario_id], node_drivers[sdk], fake_provider, classifier_client)
    assert result.attempts == result.expected_attempts, result.explain()
    assert result.verdict == RIGHT, result.explain()


def test_the_worker_lists_the_drivers_python_knows(node_drivers: dict[str, Driver]) -> None:
    """worker.mjs --list names the same drivers, calling the same APIs, as NODE_SDKS."""
    npm_ci(NODE_DIR)
    done = subprocess.run(
        ["node", "worker.mjs", "--list"],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    listed = {sdk: tuple(apis) for sdk, apis in json.loads(done.stdout).items()}
    assert listed == NODE_SDKS


def test_every_node_pair_calls_an_api_its_sdk_can_call() -> None:
    """A scenario lists a Node SDK only for an API that SDK's driver calls."""
    for scenario in load_scenarios().values():
        for sdk in scenario.sdks:
            if sdk in NODE_SDKS:
                assert scenario.api in NODE_SDKS[sdk], (
                    f"{scenario.id}: {sdk} cannot call {scenario.api}"
                )


def test_the_node_helper_on_real_sdk_errors(node_drivers: dict[str, Driver]) -> None:
    """helper.test.mjs: descriptorFromError and the response helpers on real errors of the
    pinned SDKs (raised against a loopback server, or made by the SDKs' own factories)."""
    done = subprocess.run(
        ["node", "--test", "helper.test.mjs"],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=worker_environment(),
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
