"""Fixtures of the runtime suite: every driver and the tool API, for the whole session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from errorclass_client import Client
from tests.conformance import netguard
from tests.conformance.runtime.suite import Listing, Suite, listed, running


@pytest.fixture(scope="session")
def runtime_listing() -> Listing:
    return listed()


@pytest.fixture(scope="session")
def runtime_suite(classifier_client: Client, runtime_listing: Listing) -> Iterator[Suite]:
    netguard.install()
    with running(classifier_client, runtime_listing) as suite:
        yield suite
