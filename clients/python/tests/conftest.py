"""The client's tests: the spec's vectors and the outage harness need only this client and
grpcio; the tests against a real classifier server, and those that raise exceptions from
real SDKs, use the repository's venv (the server's package, the conformance SDKs).

`make test` runs this folder (pyproject's testpaths); alone, for the vectors:

    ERRORCLASS_SPEC_DIR=clients/spec .venv/bin/pytest -q clients/python/tests/test_vectors.py
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

# As tests/conftest.py does: servers in this process fork explainers, which never call gRPC.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

import pytest

if TYPE_CHECKING:
    from classifier import Ruleset
    from classifier.server import GrpcServer

RAN = pytest.StashKey[Counter[str]]()


@pytest.fixture
def vectors_ran(request: pytest.FixtureRequest) -> Counter[str]:
    """Vectors run, by kind: test_vectors counts each it runs, the summary prints them."""
    return request.config.stash.setdefault(RAN, Counter())


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The counts for the run's last screen (tests/summary.py prints them, from a worker too)."""
    from tests import summary

    ran = session.config.stash.get(RAN, Counter())
    summary.record(session.config, "", [f"vectors: {k} {n}" for k, n in sorted(ran.items())])


@pytest.fixture(scope="session")
def bundled() -> Ruleset:
    """The bundled rule library, compiled by the server's package (the oracle)."""
    from classifier import load_ruleset
    from classifier.source.library import bundled_library

    return load_ruleset(bundled_library())


@pytest.fixture(scope="session")
def server(bundled: Ruleset) -> Iterator[GrpcServer]:
    """A real classifier server on a free loopback port, serving the bundled library."""
    from classifier.server import create_server

    srv = create_server(bundled, "127.0.0.1:0")
    srv.start()
    yield srv
    srv.stop(grace=1)
