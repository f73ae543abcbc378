"""What the runtime pairs may reach: a fake tool API on loopback and a closed loopback port.

The tool API answers `GET|POST /status/<code>[/...]` with that status and a JSON error body (a tool's
own API failing: 404, 429, 500, 503), and `/slow/<ms>[/...]` after that many milliseconds
(at most 5 s; a tool's own client timing out on it), and `/provider/<kind>/...` as the
provider's API answers (PROVIDER_ERRORS). The closed port is a socket bound on
127.0.0.1 that never listens, so a connection to it is refused for as long as it is held
(no other process can take the port meanwhile). Nothing here leaves loopback.
"""

from __future__ import annotations

import json
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.conformance.runtime.drivers import ToolEnv

SLOW_LIMIT_MS = 5000
PROVIDER_ERRORS: dict[str, tuple[int, object]] = {
    # `/provider/<kind>/...`: what the OpenAI and Azure OpenAI APIs answer (as the provider
    # suite's scenarios), for the pairs whose runtime calls a provider (retries, filters).
    "rate-limit": (
        429,
        {
            "error": {
                "message": "Rate limit reached for gpt-4o-mini in organization org-x on requests per min (RPM): Limit 3, Used 3.",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
    ),
    "content-filter": (
        400,
        {
            "error": {
                "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
                "type": None,
                "param": "prompt",
                "code": "content_filter",
                "status": 400,
            }
        },
    ),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(min(length, 1 << 20))
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) >= 2 and parts[0] == "status" and parts[1].isdigit():
            status = int(parts[1])
            self._answer(status, {"error": {"message": f"tool api says {status}", "code": status}})
        elif len(parts) >= 2 and parts[0] == "slow" and parts[1].isdigit():
            time.sleep(min(int(parts[1]), SLOW_LIMIT_MS) / 1000)
            self._answer(200, {"ok": True})
        elif len(parts) >= 2 and parts[0] == "provider" and parts[1] in PROVIDER_ERRORS:
            status, body = PROVIDER_ERRORS[parts[1]]
            self._answer(status, body)
        else:
            self._answer(404, {"error": {"message": f"no route {self.path}"}})

    do_POST = do_GET  # noqa: N815

    def _answer(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving() -> Iterator[ToolEnv]:
    """The tool API, the closed port and a temporary folder for the block; all gone after."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="tool-api", daemon=True)
    thread.start()
    closed = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    closed.bind(("127.0.0.1", 0))
    try:
        with tempfile.TemporaryDirectory(prefix="runtime-pairs-") as tmp:
            yield ToolEnv(
                tool_api=f"http://127.0.0.1:{server.server_address[1]}",
                closed_port=closed.getsockname()[1],
                tmp=tmp,
            )
    finally:
        closed.close()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
