"""runtime.App, the one owner of a service's parts: what it made is closed, whether the
start fails part-way or the service stops, and a server alone owns its own parts."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from classifier import load_ruleset
from classifier.server import App, ServeConfig, create_server
from tests.support import BUNDLED_RULES


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate()}


def test_a_start_that_fails_part_way_closes_what_it_made(tmp_path: Path) -> None:
    """The gRPC port cannot be bound (taken): the side port bound before it is free again,
    the decision log's file closed, and no thread of the service is left behind."""
    before = _threads()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        admin = f"127.0.0.1:{_free_port()}"
        config = ServeConfig(
            rules=BUNDLED_RULES,
            address=f"127.0.0.1:{taken.getsockname()[1]}",
            watch=False,
            metrics_address=admin,
            decision_log=tmp_path / "d.jsonl",
        )
        with pytest.raises(OSError, match="cannot bind"):
            App(config)
    with socket.socket() as again:  # the side port was let go
        again.bind(("127.0.0.1", int(admin.rsplit(":", 1)[1])))
    assert _threads() - before == set()


def test_stop_closes_every_part_once(tmp_path: Path) -> None:
    """After stop, the ports are free, the decision log written and closed, and no thread of
    the service is left; a second stop finds nothing to do."""
    before = _threads()
    admin = f"127.0.0.1:{_free_port()}"
    app = App(
        ServeConfig(
            rules=BUNDLED_RULES,
            address="127.0.0.1:0",
            watch=False,
            metrics_address=admin,
            decision_log=tmp_path / "d.jsonl",
        )
    )
    app.start()
    port = app.server.port
    app.stop(grace=0)
    app.stop(grace=0)
    for p in (port, int(admin.rsplit(":", 1)[1])):
        with socket.socket() as again:
            again.bind(("127.0.0.1", p))
    leftover = {n for n in _threads() - before if not n.startswith("Dummy")}
    assert leftover == set()


def test_a_server_alone_owns_and_closes_its_parts() -> None:
    """create_server builds its own parts and closes them when it stops; it takes no part
    from outside, so no `lanes` can make its `threads` and `limits` silently unused."""
    ruleset = load_ruleset(BUNDLED_RULES)
    with pytest.raises(TypeError, match="lanes"):
        create_server(ruleset, "127.0.0.1:0", lanes=None)  # type: ignore[call-arg]
    server = create_server(ruleset, "127.0.0.1:0", threads=3)
    assert server.lanes.limits.threads == 3
    server.start()
    server.stop(grace=0)
    with pytest.raises(RuntimeError, match="stopped"):  # its lanes were closed with it
        server.lanes.unary.submit(print)
