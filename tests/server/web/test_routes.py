"""The side port's route table (`admin_app`, through `routes.Router`), called as WSGI in
process: each path's answer, the methods it takes, and what is not there."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter

from classifier.server.shared.serving_ruleset import ReloadResult, ReloadStatus
from classifier.server.web.admin import admin_app
from classifier.server.web.routes import StartResponse, WsgiApp


def _call(app: WsgiApp, method: str, path: str) -> tuple[str, dict[str, str], str]:
    got: dict[str, Any] = {}

    def start(status: str, headers: list[tuple[str, str]]) -> None:
        got["status"], got["headers"] = status, dict(headers)

    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": ""}
    body = b"".join(app(environ, start)).decode()
    assert got["headers"].get("Content-Length", str(len(body))) == str(len(body.encode()))
    return got["status"], got["headers"], body


def _console(environ: dict[str, Any], start: StartResponse) -> Iterable[bytes]:
    data = f"console {environ['PATH_INFO']}".encode()
    start("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(data)))])
    return [data]


def test_probes_metrics_and_what_is_not_there() -> None:
    registry = CollectorRegistry()
    Counter("probe_calls", "calls", registry=registry).inc()
    ready = [True]
    app = admin_app(registry, lambda: ready[0], None)
    assert _call(app, "GET", "/-/healthy")[::2] == ("200 OK", "healthy\n")
    assert _call(app, "POST", "/-/healthy")[0] == "200 OK"  # probes send what they send
    assert _call(app, "GET", "/-/ready")[::2] == ("200 OK", "ready\n")
    ready[0] = False
    assert _call(app, "GET", "/-/ready")[::2] == ("503 Service Unavailable", "shutting down\n")
    status, _, metrics = _call(app, "GET", "/metrics")
    assert status == "200 OK"
    assert "probe_calls_total 1.0" in metrics
    off = ("404 Not Found", "the live Unknown sample is off\n")
    assert _call(app, "GET", "/-/unknowns")[::2] == off
    assert _call(app, "GET", "/nowhere")[::2] == ("404 Not Found", "not found\n")
    assert _call(app, "GET", "/")[0] == "404 Not Found"  # no console, nothing to lead to
    assert _call(app, "GET", "/console")[0] == "404 Not Found"
    disabled = "reload endpoint disabled (--enable-reload-endpoint)\n"
    assert _call(app, "POST", "/-/reload")[::2] == ("403 Forbidden", disabled)
    assert _call(app, "GET", "/-/reload")[::2] == ("403 Forbidden", disabled)


def test_reload_takes_post_only_and_says_each_roles_result() -> None:
    results = {"active": ReloadResult.reloaded}

    def reload(trigger: str) -> Mapping[str, ReloadStatus]:
        return {role: ReloadStatus(r, "t", trigger) for role, r in results.items()}

    app = admin_app(CollectorRegistry(), lambda: True, reload, lambda: '{"seen": 1}\n')
    assert _call(app, "GET", "/-/reload")[::2] == ("405 Method Not Allowed", "use POST\n")
    status, headers, body = _call(app, "POST", "/-/reload")
    assert (status, headers["Content-Type"]) == ("200 OK", "application/json")
    assert json.loads(body)["active"] == {
        "result": "reloaded",
        "at": "t",
        "trigger": "admin",
        "error": "",
    }
    results["active"] = ReloadResult.failed
    assert _call(app, "POST", "/-/reload")[0] == "500 Internal Server Error"
    status, headers, body = _call(app, "GET", "/-/unknowns")
    assert (status, body) == ("200 OK", '{"seen": 1}\n')
    assert headers["Content-Type"] == "application/x-ndjson; charset=utf-8"


def test_the_console_takes_its_paths_and_the_root_leads_there() -> None:
    app = admin_app(CollectorRegistry(), lambda: True, None, console=_console)
    status, headers, _ = _call(app, "GET", "/")
    assert (status, headers["Location"]) == ("302 Found", "/console")
    for path in ("/console", "/console/", "/console/rule", "/console/a/b"):
        assert _call(app, "POST", path)[2] == f"console {path}"  # the console checks methods
    assert _call(app, "GET", "/consoles")[0] == "404 Not Found"
