"""The fake provider itself: routing by URL segment, counting, faults, streams, and its stop."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conformance.fake_provider import FakeProvider, serving
from tests.conformance.loader import (
    Event,
    Response,
    Scenario,
    ScenarioError,
    Stream,
    Want,
    load_scenarios,
)


def scenario(
    sid: str,
    *,
    response: Response | None = None,
    fault: str | None = None,
    stream: Stream | None = None,
) -> Scenario:
    return Scenario(
        id=sid,
        note="n",
        api="openai",
        want=Want("ProviderError"),
        sdks=("python.httpx",),
        response=response,
        fault=fault,
        stream=stream,
    )


SCENARIOS = {
    s.id: s
    for s in [
        scenario(
            "ok", response=Response(418, {"x-request-id": "req_1"}, {"error": {"code": "teapot"}})
        ),
        scenario("events", stream=Stream((Event({"a": 1}), Event({"b": 2}, event="error")))),
        scenario("done", response=Response(200, {}, {"choices": [{"finish_reason": "stop"}]})),
        scenario("reset", fault="reset"),
        scenario("refuse", fault="refuse"),
        scenario("slow", fault="connect_timeout"),
    ]
}


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_routes_by_scenario_segment_and_counts() -> None:
    with serving(SCENARIOS) as p:
        status, headers, body = get(p.base_url(SCENARIOS["ok"]) + "/v1/anything/at/all?q=1")
        assert (status, headers["x-request-id"], json.loads(body)) == (
            418,
            "req_1",
            {"error": {"code": "teapot"}},
        )
        assert p.count("ok") == 1
        assert json.loads(get(f"http://127.0.0.1:{p.port}/_count/ok")[2]) == {"count": 1}
        assert get(f"http://127.0.0.1:{p.port}/s/nope/v1")[0] == 404


def test_streams_send_sse_events() -> None:
    with serving(SCENARIOS) as p:
        status, headers, body = get(p.base_url(SCENARIOS["events"]))
    assert (status, headers["content-type"]) == (200, "text/event-stream; charset=utf-8")
    assert body == b'data: {"a": 1}\n\nevent: error\ndata: {"b": 2}\n\n'


def post(url: str, body: object) -> int:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=2) as r:
        r.read()
        return int(r.status)


def test_a_stream_request_answered_with_a_json_body_is_flagged() -> None:
    """A 2xx non-stream scenario cannot answer a request for a stream as the real API would."""
    with serving(SCENARIOS) as p:
        done, ok = p.base_url(SCENARIOS["done"]), p.base_url(SCENARIOS["ok"])
        assert post(done + "/v1/chat/completions", {"stream": False}) == 200
        assert p.stream_mismatches("done") == 0
        assert post(done + "/v1/chat/completions", {"stream": True}) == 200
        get(done + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
        assert p.stream_mismatches("done") == 2
        # an error status is JSON for a streaming request too, as the real APIs answer
        with pytest.raises(urllib.error.HTTPError):
            post(ok + "/v1/chat/completions", {"stream": True})
        assert p.stream_mismatches("ok") == 0
        p.reset_count("done")
        assert p.stream_mismatches("done") == 0


def test_transport_faults() -> None:
    with serving(SCENARIOS) as p:
        with pytest.raises(ConnectionResetError):
            get(p.base_url(SCENARIOS["reset"]))
        with pytest.raises(urllib.error.URLError, match="refused"):
            get(p.base_url(SCENARIOS["refuse"]))
        start = time.monotonic()
        with (
            pytest.raises(TimeoutError),
            socket.create_connection(("127.0.0.1", p.full_backlog_port), timeout=0.5),
        ):
            pass
        assert time.monotonic() - start >= 0.4
        assert p.count("refuse") == p.count("slow") == 0


def test_stop_ends_everything() -> None:
    p = FakeProvider(SCENARIOS).start()
    port = p.port
    p.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()


def test_loader_refuses_bad_files(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "scenarios:\n  - {id: x, note: n, api: openai, want: {class: Nope}, sdks: [a], fault: reset}\n"
    )
    with pytest.raises(ScenarioError, match="unknown class"):
        load_scenarios(tmp_path)
    (tmp_path / "bad.yaml").write_text(
        "scenarios:\n  - {id: x, note: n, api: openai, want: {class: Timeout}, sdks: [a]}\n"
    )
    with pytest.raises(ScenarioError, match="exactly one of"):
        load_scenarios(tmp_path)
    assert len(load_scenarios()) >= 60


def test_loader_reads_the_wait_a_scenario_wants(tmp_path: Path) -> None:
    """`retry_after` is seconds or `none`; anything else is refused with the scenario's place."""
    line = "scenarios:\n  - {{id: x, note: n, api: openai, want: {{class: RateLimited, retry_after: {}}}, sdks: [a], fault: reset}}\n"
    (tmp_path / "s.yaml").write_text(line.format("1.5"))
    want = load_scenarios(tmp_path)["x"].want
    assert (want.retry_after, want.retry_after_wanted) == (1.5, True)
    assert want.retry_after_right(1.5)
    assert not want.retry_after_right(2.0)
    assert not want.retry_after_right(None)
    (tmp_path / "s.yaml").write_text(line.format("none"))
    want = load_scenarios(tmp_path)["x"].want
    assert want.retry_after_right(None)
    assert not want.retry_after_right(58.0)
    for bad in ("-1", "soon", "true"):
        (tmp_path / "s.yaml").write_text(line.format(bad))
        with pytest.raises(
            ScenarioError, match=r"s\.yaml: scenarios\[0\] \(x\): want\.retry_after"
        ):
            load_scenarios(tmp_path)
    assert not Want("Timeout").retry_after_wanted
    assert Want("Timeout").retry_after_right(3.0)
