"""The HTTP side port (`--metrics-addr`): metrics for Prometheus, probes, and reload.

    GET  /metrics    Prometheus text format
    GET  /-/healthy  200 while the process runs
    GET  /-/ready    200 while serving, 503 once shutdown has begun
    POST /-/reload   reload the rules now (only with --enable-reload-endpoint);
                     200 with each ruleset's reload status as JSON, 500 when one failed
    GET  /-/unknowns the live sample of Unknowns as JSON Lines in the decision-log shape
                     (the newest redacted descriptor per failure, with `"seen": N`)
    GET  /-/ruleset  what GetRuleset answers, as JSON (the proto's field names): the
                     serving ruleset, its source and layers, the last reload, the
                     candidate; `classifier unknowns --admin-addr` reads its source
    GET  /console    the operator console, read-only pages (classifier.server.web.console);
                     `/` leads there

Kept off the gRPC port so that scraping and probing never compete with
classification, and so that neither needs a client certificate under mTLS.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

from classifier.server.shared.serving_ruleset import ReloadStatus
from classifier.server.web.routes import Environ, Reply, Route, Router, WsgiApp, replying, text

IDLE_SECONDS = 5.0
Ready = Callable[[], bool]
Reload = Callable[[str], Mapping[str, ReloadStatus]]
Sample = Callable[[], str]
Described = Callable[[], str]
"""The serving ruleset described as JSON (GetRuleset's answer; the runtime makes it)."""


def split_address(address: str) -> tuple[str, int]:
    """`host:port` (or `[v6]:port`) into its parts; ValueError when it is neither."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{address!r} is not host:port")
    return host.strip("[]") or "0.0.0.0", int(port)


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went quiet (IDLE_SECONDS) or away is no error worth a traceback on
        stderr: idle connections would otherwise flood the structured log."""
        if isinstance(sys.exc_info()[1], (TimeoutError, ConnectionError)):
            return
        super().handle_error(request, client_address)


class _Server6(_Server):
    address_family = socket.AF_INET6


class _Quiet(WSGIRequestHandler):
    timeout = IDLE_SECONDS
    """A connection that sends nothing for this long is closed, freeing its thread."""

    def log_message(self, format: str, *args: Any) -> None:
        """Access logs would drown the structured log; Prometheus scrapes every few seconds."""


def _status_dict(status: ReloadStatus) -> dict[str, Any]:
    return {
        "result": status.result.value,
        "at": status.at,
        "trigger": status.trigger,
        "error": status.error,
    }


def admin_app(
    registry: CollectorRegistry,
    ready: Ready,
    reload: Reload | None,
    unknowns: Sample | None = None,
    console: WsgiApp | None = None,
    ruleset: Described | None = None,
) -> WsgiApp:
    """The WSGI application behind the side port: its route table."""

    def healthy(_: Environ) -> Reply:
        return text("200 OK", "healthy\n")

    def readiness(_: Environ) -> Reply:
        if ready():
            return text("200 OK", "ready\n")
        return text("503 Service Unavailable", "shutting down\n")

    def sample(_: Environ) -> Reply:
        if unknowns is None:
            return text("404 Not Found", "the live Unknown sample is off\n")
        return text("200 OK", unknowns(), "application/x-ndjson; charset=utf-8")

    def described(_: Environ) -> Reply:
        if ruleset is None:
            return text("404 Not Found", "not found\n")
        return text("200 OK", ruleset(), "application/json")

    def reloaded(_: Environ) -> Reply:
        assert reload is not None
        statuses = reload("admin")
        code = "200 OK" if all(s.ok for s in statuses.values()) else "500 Internal Server Error"
        body = json.dumps({role: _status_dict(s) for role, s in statuses.items()}, indent=2)
        return text(code, body + "\n", "application/json")

    def reload_disabled(_: Environ) -> Reply:
        return text("403 Forbidden", "reload endpoint disabled (--enable-reload-endpoint)\n")

    routes = [
        Route("/metrics", make_wsgi_app(registry)),
        Route("/-/healthy", replying(healthy)),
        Route("/-/ready", replying(readiness)),
        Route("/-/unknowns", replying(sample)),
        Route("/-/ruleset", replying(described), frozenset({"GET"})),
        Route("/-/reload", replying(reloaded), frozenset({"POST"}))
        if reload is not None
        else Route("/-/reload", replying(reload_disabled)),
    ]
    if console is not None:
        home = Reply("302 Found", b"", headers=(("Location", "/console"),))
        routes += [
            Route("/console", console, under=True),
            Route("/", replying(lambda _: home)),
        ]
    return Router(routes, lambda refused: text(refused.status, refused.message + "\n"))


class AdminServer:
    """The side port's HTTP server, on its own threads."""

    def __init__(
        self,
        address: str,
        registry: CollectorRegistry,
        *,
        ready: Ready,
        reload: Reload | None,
        unknowns: Sample | None = None,
        console: WsgiApp | None = None,
        ruleset: Described | None = None,
    ) -> None:
        host, port = split_address(address)
        server_class = _Server6 if ":" in host else _Server
        app = admin_app(registry, ready, reload, unknowns, console, ruleset)
        self._httpd = make_server(host, port, app, server_class, _Quiet)
        self.host = host
        self.port: int = self._httpd.server_port
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="admin-http", daemon=True
        )

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        if self._thread.is_alive():  # shutdown() waits for serve_forever, which must be running
            self._httpd.shutdown()
        self._httpd.server_close()
