"""The conformance suite for the Go SDKs: one test per (go sdk, scenario) pair.

Each pair makes one real call with the real Go SDK (tests/conformance/go, pinned by its
go.sum) against the fake provider, describes what it returned with the Go client
module's `errorclass.Describe` in Go, classifies that descriptor over gRPC with the
bundled rules, and checks the answer against the scenario's `want` and that exactly one
attempt reached the server. A pair the scenario file lists under `known` is a strict xfail.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from errorclass_client import Client
from tests.conformance.drivers import Driver
from tests.conformance.fake_provider import FakeProvider
from tests.conformance.go_drivers import (
    GO_DIR,
    GO_SDKS,
    GoUnavailableError,
    built_worker,
    go_available,
    running,
)
from tests.conformance.loader import Scenario, load_scenarios
from tests.conformance.params import pair_params
from tests.conformance.runner import RIGHT, judge

PAIRS = pair_params(GO_SDKS)


@pytest.fixture(scope="session")
def go_worker_binary() -> Iterator[Path]:
    """The Go worker, built once for the session (go build, modules as go.sum pins them)."""
    if not go_available():
        pytest.skip("go is not on PATH: the Go conformance suite needs Go >= 1.26")
    try:
        with built_worker() as binary:
            yield binary
    except GoUnavailableError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def go_drivers(go_worker_binary: Path) -> Iterator[dict[str, Driver]]:
    """The Go worker process for the session, stopped after it."""
    with running(go_worker_binary) as drivers:
        yield drivers


@pytest.mark.parametrize(("sdk", "scenario_id"), PAIRS)
def test_go_pair(
    sdk: str,
    scenario_id: str,
    scenarios: dict[str, Scenario],
    fake_provider: FakeProvider,
    classifier_client: Client,
    go_drivers: dict[str, Driver],
) -> None:
    result = judge(sdk, scenarios[scenario_id], go_drivers[sdk], fake_provider, classifier_client)
    assert result.attempts == result.expected_attempts, result.explain()
    assert result.verdict == RIGHT, result.explain()


def test_the_worker_lists_the_drivers_python_knows(go_worker_binary: Path) -> None:
    """The worker's --list names the same drivers, calling the same APIs, as GO_SDKS."""
    done = subprocess.run(
        [str(go_worker_binary), "--list"],
        cwd=GO_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    listed = {sdk: tuple(apis) for sdk, apis in json.loads(done.stdout).items()}
    assert listed == GO_SDKS


def test_every_go_pair_calls_an_api_its_sdk_can_call() -> None:
    """A scenario lists a Go SDK only for an API that SDK's driver calls."""
    for scenario in load_scenarios().values():
        for sdk in scenario.sdks:
            if sdk in GO_SDKS:
                assert scenario.api in GO_SDKS[sdk], (
                    f"{scenario.id}: {sdk} cannot call {scenario.api}"
                )


def test_there_are_enough_go_pairs() -> None:
    """At least 100 Go pairs over at least 5 SDKs (issue 25)."""
    sdks = {str(pair.values[0]) for pair in PAIRS}
    assert len(PAIRS) >= 100, len(PAIRS)
    assert len(sdks) >= 5, sorted(sdks)
