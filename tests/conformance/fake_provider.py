"""A fake model provider on loopback: answers each scenario exactly as the real API would.

A client's base URL is `http://127.0.0.1:PORT/s/<scenario-id>` (plus whatever path the SDK
appends: `/v1/chat/completions`, `/openai/deployments/x/chat/completions?api-version=...`,
`/v1/messages`); the server takes the scenario from the second path segment and answers
with it whatever the rest of the path is. Requests are counted per scenario
(`GET /_count/<scenario-id>` returns `{"count": N}`, or `FakeProvider.count(id)`), so a test
can check that a call made exactly one attempt (retries off).

What a scenario can make the server do:

- `response`: status, headers and body (a mapping is sent as JSON, a string as is);
- `stream`: `200 text/event-stream`, chunked, with the given SSE events, then `end` (the
  stream ends cleanly: a mid-stream error is one of the events, as the real APIs send it)
  or `cut` (the connection drops without the final chunk);
- `fault`, a transport failure:
  - `reset`: the request is read, then the connection is reset (RST, SO_LINGER 0);
  - `hang`: the request is read and never answered (the client's read timeout fires);
    the handler waits until the client goes or the server stops, at most `HANG_LIMIT_S`;
  - `cut_body`: a chunked 200 whose body stops mid-way (no terminating chunk);
  - `truncated_body`: a 200 whose Content-Length promises more than is sent;
  - `refuse`: the base URL names a port that is bound but not listening: connection refused;
  - `connect_timeout`: the base URL names a listening socket whose backlog is full and
    which never accepts, so the SYN goes unanswered and the client's connect timeout fires.

A scenario whose `response` is a 2xx body (a finish reason, a refusal) cannot stand for
the real API's answer to a request that asked for a stream (`"stream": true`, Gemini's
`:streamGenerateContent`, Bedrock's `converse-stream` / `invoke-with-response-stream`):
the real API would answer that with a stream. Such requests are counted per scenario
(`FakeProvider.stream_mismatches(id)`) and the runner fails the pair, so an SDK that
streams behind the scenes is noticed instead of being judged on an answer no real API
gives. (An error status is sent as JSON to a streaming request too, as the APIs do.)

Everything stays on 127.0.0.1; `stop()` (or leaving the `with` block) ends every thread
and closes every socket the server made.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.conformance import aws_eventstream
from tests.conformance.loader import Scenario

HOST = "127.0.0.1"
HANG_LIMIT_S = 20.0
"""The longest a `hang` handler waits; every client in the suite times out long before."""
BACKLOG_FILLERS = 4
"""Connections that fill the never-accepting socket's queue (listen(0) holds one)."""


class FakeProvider:
    """The server, its special ports, and the per-scenario request counts."""

    def __init__(self, scenarios: Mapping[str, Scenario]) -> None:
        self.scenarios = dict(scenarios)
        self.counts: Counter[str] = Counter()
        self.mismatches: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.httpd = _Server((HOST, 0), _Handler)
        self.httpd.provider = self
        self.port: int = self.httpd.server_address[1]
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        # refuse: bound, never listening. The port stays ours, so no one else can take it.
        self._refusing = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._refusing.bind((HOST, 0))
        self.refused_port: int = self._refusing.getsockname()[1]
        # connect_timeout: listening with a full queue, never accepting.
        self._full = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._full.bind((HOST, 0))
        self._full.listen(0)
        self.full_backlog_port: int = self._full.getsockname()[1]
        self._fillers: list[socket.socket] = []

    def start(self) -> FakeProvider:
        self._thread.start()
        for _ in range(BACKLOG_FILLERS):
            filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect((HOST, self.full_backlog_port))
            self._fillers.append(filler)
        time.sleep(0.05)  # let the handshakes that can complete fill the queue
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)
        for s in [self._refusing, self._full, *self._fillers]:
            s.close()

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def base_url(self, scenario: Scenario) -> str:
        """The URL a client is given for the scenario (the SDK appends its own path)."""
        port = {"refuse": self.refused_port, "connect_timeout": self.full_backlog_port}.get(
            scenario.fault or "", self.port
        )
        return f"http://{HOST}:{port}/s/{scenario.id}"

    def count(self, scenario_id: str) -> int:
        with self.lock:
            return self.counts[scenario_id]

    def stream_mismatches(self, scenario_id: str) -> int:
        """Requests for a stream that the scenario answered with a 2xx non-stream body."""
        with self.lock:
            return self.mismatches[scenario_id]

    def reset_count(self, scenario_id: str) -> None:
        with self.lock:
            self.counts.pop(scenario_id, None)
            self.mismatches.pop(scenario_id, None)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    provider: FakeProvider


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test output is the place for failures, not for access logs."""

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        provider = self.server.provider
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path).path.split("/")
        if len(parts) >= 3 and parts[1] == "_count":
            self._send(
                200, {"content-type": "application/json"}, {"count": provider.count(parts[2])}
            )
            return
        scenario = provider.scenarios.get(parts[2]) if len(parts) >= 3 and parts[1] == "s" else None
        if scenario is None:
            self._send(404, {"content-type": "application/json"}, {"error": "no such scenario"})
            return
        unfaithful = (
            scenario.response is not None
            and 200 <= scenario.response.status < 300
            and _asks_for_stream(self.path, body)
        )
        with provider.lock:
            provider.counts[scenario.id] += 1
            if unfaithful:
                provider.mismatches[scenario.id] += 1
        if scenario.fault is not None:
            self._fault(scenario.fault)
        elif scenario.stream is not None:
            self._stream(scenario)
        else:
            assert scenario.response is not None
            r = scenario.response
            self._send(r.status, r.headers, r.body)

    def _send(self, status: int, headers: Mapping[str, str], body: object) -> None:
        data = _encode(body)
        self.send_response_only(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if "content-length" not in {k.lower() for k in headers}:
            self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _stream(self, scenario: Scenario) -> None:
        stream = scenario.stream
        assert stream is not None
        if scenario.api == "bedrock":
            self._eventstream(scenario)
            return
        self.send_response_only(200)
        headers = {"content-type": "text/event-stream; charset=utf-8", **stream.headers}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        if stream.then != "cut":
            # Not on a cut: real providers keep the connection alive, and with `Connection:
            # close` Node's fetch (undici) takes the early close for the end of the body.
            self.send_header("connection", "close")
        self.end_headers()
        for event in stream.events:
            self._chunk(_sse(event.event, event.data))
        if stream.then == "cut":
            self._chunk(b'data: {"id": "chatcmpl-cut", "obj')  # half an event, then nothing
            self._drop(reset=False)
        else:
            self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True

    def _eventstream(self, scenario: Scenario) -> None:
        """Bedrock's streams: AWS event-stream frames (tests/conformance/aws_eventstream.py)."""
        stream = scenario.stream
        assert stream is not None
        self.send_response_only(200)
        headers = {"content-type": aws_eventstream.CONTENT_TYPE, **stream.headers}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.end_headers()
        for event in stream.events:
            self._chunk(aws_eventstream.event_frame(event.event or "chunk", event.data))
        if stream.then == "cut":
            whole = aws_eventstream.event_frame("contentBlockDelta", {"contentBlockIndex": 0})
            self._chunk(whole[: len(whole) // 2])  # half a frame, then nothing
            self._drop(reset=False)
        else:
            self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _fault(self, fault: str) -> None:
        if fault == "reset":
            self._drop(reset=True)
        elif fault == "hang":
            self._hang()
        elif fault == "cut_body":
            self.send_response_only(200)
            self.send_header("content-type", "application/json")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self._chunk(b'{"id": "chatcmpl-cut", "object": "chat.comp')
            self._drop(reset=False)
        elif fault == "truncated_body":
            body = b'{"id": "chatcmpl-truncated", "object": "chat.completion", "choi'
            self.send_response_only(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body) + 400))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self._drop(reset=False)
        else:  # refuse and connect_timeout never reach this server
            raise AssertionError(f"fault {fault!r} reached the server")

    def _hang(self) -> None:
        """Never answer; return when the client goes away, the server stops, or the limit passes."""
        conn = self.connection
        conn.settimeout(0.05)
        deadline = time.monotonic() + HANG_LIMIT_S
        while not self.server.provider.stopping.is_set() and time.monotonic() < deadline:
            try:
                if conn.recv(1024) == b"":
                    break  # the client closed its end
            except TimeoutError:
                continue
            except OSError:
                break
        self.close_connection = True

    def _drop(self, *, reset: bool) -> None:
        """End the connection now: an RST when `reset`, else an orderly close mid-message."""
        with contextlib.suppress(OSError):
            self.wfile.flush()
        if reset:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        if not reset:
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True
        self.connection.close()


STREAM_PATHS = (":streamGenerateContent", "/converse-stream", "/invoke-with-response-stream")


def _asks_for_stream(path: str, body: bytes) -> bool:
    """The request asks for a stream: a JSON body with `"stream": true`, or a stream path."""
    if any(marker in path for marker in STREAM_PATHS):
        return True
    try:
        data = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and data.get("stream") is True


def _encode(body: object) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body).encode()


def _sse(event: str | None, data: object) -> bytes:
    lines = [] if event is None else [f"event: {event}"]
    text = data if isinstance(data, str) else json.dumps(data)
    lines += [f"data: {line}" for line in text.split("\n")]
    return ("\n".join(lines) + "\n\n").encode()


@contextlib.contextmanager
def serving(scenarios: Mapping[str, Scenario]) -> Iterator[FakeProvider]:
    """A started FakeProvider for the block; stopped (threads joined, sockets closed) after."""
    provider = FakeProvider(scenarios).start()
    try:
        yield provider
    finally:
        provider.stop()
