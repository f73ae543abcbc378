"""Fixtures of the conformance suite: the fake provider, and a client of the real server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from classifier.server import GrpcServer
from errorclass_client import Client
from tests.conformance.fake_provider import FakeProvider, serving
from tests.conformance.loader import Scenario, load_scenarios


@pytest.fixture(scope="session")
def scenarios() -> dict[str, Scenario]:
    return load_scenarios()


@pytest.fixture(scope="session")
def fake_provider(scenarios: dict[str, Scenario]) -> Iterator[FakeProvider]:
    """The fake provider on a free loopback port, for the whole session; stopped after it."""
    with serving(scenarios) as provider:
        yield provider


@pytest.fixture(scope="session")
def classifier_client(server: GrpcServer) -> Iterator[Client]:
    """A client of the real gRPC server (tests/conftest.py) that serves the bundled rules/."""
    with Client(f"127.0.0.1:{server.port}", timeout=10.0) as client:
        yield client
