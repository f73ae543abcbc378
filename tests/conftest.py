"""Shared fixtures: real rulesets on disk, and a real server on a free loopback port."""

# ruff: noqa: E402  (gRPC's fork handlers are turned off before grpc is imported)

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from classifier._fork import grpc_fork_handlers_off

grpc_fork_handlers_off()  # before grpc is imported: servers in this process fork explainers

import grpc
import pytest

from classifier import Ruleset, load_ruleset
from classifier.server import App, GrpcServer, ServeConfig, create_server
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.support import (
    BUNDLED_RULES,
    MANIFEST,
    ROOT,
    SMALL_FILES,
    MakeRuleset,
    serving_files,
    write_folder,
)

NODE_PACKAGE = ROOT / "clients" / "node"


@pytest.fixture
def make_ruleset(tmp_path: Path) -> MakeRuleset:
    """Write a ruleset folder: the bundled catalog, a manifest, and the given rule files."""

    made = 0

    def make(files: dict[str, str] | str, *, manifest: str = MANIFEST, name: str = "rs") -> Path:
        nonlocal made
        made += 1
        root = tmp_path / (name if made == 1 else f"{name}{made}")
        root.mkdir(parents=True)
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


@pytest.fixture
def small(make_ruleset: MakeRuleset) -> Path:
    """A three-rule ruleset whose `rules.cases.yaml` passes, two rules covered of three."""
    return make_ruleset(SMALL_FILES, name="small")


@pytest.fixture(scope="session")
def serving_rules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ruleset folder whose answers the server tests rely on (tests.support.SERVING_RULES)."""
    return write_folder(tmp_path_factory.mktemp("serving") / "rules", serving_files())


@pytest.fixture(scope="session")
def bundled() -> Ruleset:
    return load_ruleset(BUNDLED_RULES)


@pytest.fixture(scope="session")
def server(bundled: Ruleset) -> Iterator[GrpcServer]:
    srv = create_server(bundled, "127.0.0.1:0")
    srv.start()
    yield srv
    srv.stop(grace=1)


@pytest.fixture(scope="session")
def channel(server: GrpcServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        grpc.channel_ready_future(ch).result(timeout=10)
        yield ch


@pytest.fixture(scope="session")
def stub(channel: grpc.Channel) -> pb_grpc.ErrorClassifierStub:
    return pb_grpc.ErrorClassifierStub(channel)


class Running:
    """An App started for a test, a channel to it, and ways to read its metrics."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.channel = grpc.insecure_channel(app.address)
        self.stub = pb_grpc.ErrorClassifierStub(self.channel)

    def metric(self, sample: str, /, **labels: str) -> float:
        """A sample's value from the registry (0 when the series does not exist yet)."""
        value = self.app.metrics.registry.get_sample_value(sample, labels)
        return 0.0 if value is None else value

    def http(self, path: str, method: str = "GET") -> tuple[int, str]:
        """Status and body of a request to the HTTP side port."""
        assert self.app.admin is not None
        request = urllib.request.Request(f"http://{self.app.admin.address}{path}", method=method)
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()

    def close(self) -> None:
        self.channel.close()
        self.app.stop(grace=0)


StartApp = Callable[..., Running]


@pytest.fixture
def start_app() -> Iterator[StartApp]:
    """Start `classifier serve` in-process on free loopback ports (gRPC and HTTP)."""
    running: list[Running] = []

    def start(rules: Path, **overrides: Any) -> Running:
        settings: dict[str, Any] = {
            "address": "127.0.0.1:0",
            "metrics_address": "127.0.0.1:0",
            "watch_debounce_ms": 400,
        }
        settings.update(overrides)
        app = App(ServeConfig(rules=rules, **settings))
        app.start()
        running.append(Running(app))
        return running[-1]

    yield start
    for r in running:
        r.close()


@pytest.fixture(scope="session")
def node_package() -> Path:
    """clients/node with its dependencies installed by `npm ci` (skipped again while the lock
    is unchanged)."""
    from tests.conformance.node_drivers import NodeUnavailableError, npm_ci

    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(
            "node and npm are not on PATH: the Node client's tests need Node >= 18 with npm"
        )
    try:
        npm_ci(NODE_PACKAGE)
    except NodeUnavailableError as exc:
        pytest.fail(str(exc))
    return NODE_PACKAGE


@pytest.fixture(scope="session")
def served_address() -> Iterator[str]:
    """A real `classifier serve` process on the bundled library, on a free loopback port."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "classifier", "serve", "--addr", "127.0.0.1:0"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        start = json.loads(proc.stderr.readline())
        assert start["event"] == "start", start
        # read the rest of its log as it comes, so a full pipe never stalls the server
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        yield str(start["address"])
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()
