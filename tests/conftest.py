"""Shared fixtures: real rulesets on disk, and a real server on a free loopback port."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from classifier import Ruleset, load_ruleset
from classifier._proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from classifier.server import Server, create_server
from tests.support import BUNDLED_RULES, MANIFEST, MakeRuleset


@pytest.fixture
def make_ruleset(tmp_path: Path) -> MakeRuleset:
    """Write a ruleset folder: the bundled catalog, a manifest, and the given rule files."""

    made = 0

    def make(files: dict[str, str] | str, *, manifest: str = MANIFEST, name: str = "rs") -> Path:
        nonlocal made
        made += 1
        root = tmp_path / (name if made == 1 else f"{name}{made}")
        root.mkdir()
        shutil.copy(BUNDLED_RULES / "actions.yaml", root / "actions.yaml")
        (root / "ruleset.yaml").write_text(manifest)
        if isinstance(files, str):
            files = {"rules.yaml": files}
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))
        return root

    return make


@pytest.fixture(scope="session")
def bundled() -> Ruleset:
    return load_ruleset(BUNDLED_RULES)


@pytest.fixture(scope="session")
def server(bundled: Ruleset) -> Iterator[Server]:
    srv = create_server(bundled, "127.0.0.1:0")
    srv.start()
    yield srv
    srv.stop(grace=1)


@pytest.fixture(scope="session")
def channel(server: Server) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        grpc.channel_ready_future(ch).result(timeout=10)
        yield ch


@pytest.fixture(scope="session")
def stub(channel: grpc.Channel) -> pb_grpc.ErrorClassifierStub:
    return pb_grpc.ErrorClassifierStub(channel)
