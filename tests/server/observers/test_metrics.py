"""Metrics, scraped over HTTP the way Prometheus does, and the probe endpoints beside them."""

from __future__ import annotations

import threading
from pathlib import Path

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from classifier.server import App, ServeConfig
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.conftest import Running, StartApp

RATE_LIMIT = pb.ExceptionDescriptor(
    type="openai.RateLimitError", http_status=429, origin=pb.ORIGIN_PROVIDER
)
WEIRD = pb.ExceptionDescriptor(type="com.example.Weird", origin=pb.ORIGIN_TOOL)


def _scrape(running: Running) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    status, text = running.http("/metrics")
    assert status == 200
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _value(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, /, **labels: str
) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
def running(serving_rules: Path, start_app: StartApp) -> Running:
    return start_app(serving_rules, watch=False)


def test_classifications_are_counted_by_class_rule_and_origin(running: Running) -> None:
    """Every answer, batch items and stream messages included, lands in one labelled series."""
    stub = running.stub
    for _ in range(3):
        stub.Classify(pb.ClassifyRequest(descriptor=RATE_LIMIT))
    stub.ClassifyBatch(
        pb.ClassifyBatchRequest(
            requests=[pb.ClassifyRequest(descriptor=d) for d in (RATE_LIMIT, WEIRD, WEIRD)]
        )
    )
    list(stub.ClassifyStream(iter([pb.ClassifyRequest(descriptor=WEIRD)] * 4)))
    samples = _scrape(running)
    assert (
        _value(
            samples,
            "errorclass_classifications_total",
            **{"class": "RateLimited", "rule": "provider.429", "origin": "provider"},
        )
        == 4
    )
    assert (
        _value(
            samples,
            "errorclass_classifications_total",
            **{"class": "Unknown", "rule": "", "origin": "tool"},
        )
        == 6
    )
    assert _value(samples, "errorclass_unknown_total", reason="no_match") == 6
    assert _value(samples, "errorclass_unknown_total", reason="conflict") == 0


def test_the_unknown_share_is_the_ratio_the_docs_give(running: Running) -> None:
    """sum(errorclass_unknown_total) / sum(errorclass_classifications_total) is the Unknown share."""
    for d in [RATE_LIMIT] * 3 + [WEIRD]:
        running.stub.Classify(pb.ClassifyRequest(descriptor=d))
    samples = _scrape(running)
    unknown = sum(v for (n, _), v in samples.items() if n == "errorclass_unknown_total")
    total = sum(v for (n, _), v in samples.items() if n == "errorclass_classifications_total")
    assert unknown / total == 0.25


def test_latency_and_status_codes_are_recorded_per_rpc(running: Running) -> None:
    """A histogram per RPC (per message for streams) and a counter per RPC and status code."""
    stub = running.stub
    stub.Classify(pb.ClassifyRequest(descriptor=RATE_LIMIT))
    list(stub.ClassifyStream(iter([pb.ClassifyRequest(descriptor=RATE_LIMIT)] * 5)))
    stub.GetRuleset(pb.GetRulesetRequest())
    with pytest.raises(grpc.RpcError):
        stub.Classify(pb.ClassifyRequest())
    samples = _scrape(running)
    assert _value(samples, "errorclass_rpc_duration_seconds_count", rpc="Classify") == 2
    assert _value(samples, "errorclass_rpc_duration_seconds_count", rpc="ClassifyStream") == 5
    assert _value(samples, "errorclass_rpc_duration_seconds_sum", rpc="Classify") > 0
    assert _value(samples, "errorclass_rpc_duration_seconds_bucket", rpc="Classify", le="+Inf") == 2
    assert _value(samples, "errorclass_rpcs_total", rpc="Classify", code="OK") == 1
    assert _value(samples, "errorclass_rpcs_total", rpc="Classify", code="INVALID_ARGUMENT") == 1
    assert _value(samples, "errorclass_rpcs_total", rpc="ClassifyStream", code="OK") == 1
    assert _value(samples, "errorclass_rpcs_total", rpc="GetRuleset", code="OK") == 1
    assert _value(samples, "errorclass_rpcs_in_flight", rpc="Classify") == 0


def test_the_serving_ruleset_is_exported(running: Running) -> None:
    """errorclass_ruleset_info names the version and digest that answer."""
    info = running.stub.GetRuleset(pb.GetRulesetRequest())
    samples = _scrape(running)
    labels = {"role": "active", "name": info.name, "version": info.version, "digest": info.digest}
    assert _value(samples, "errorclass_ruleset_info", **labels) == 1
    assert _value(samples, "errorclass_ruleset_rules", role="active") == info.rule_count
    assert _value(samples, "errorclass_reload_last_success", role="active") == 1


def test_probes_and_unknown_paths(running: Running) -> None:
    """/-/healthy and /-/ready answer 200 while serving; other paths are 404."""
    assert running.http("/-/healthy") == (200, "healthy\n")
    assert running.http("/-/ready") == (200, "ready\n")
    assert running.http("/nope")[0] == 404


def test_readiness_drops_as_shutdown_begins(running: Running) -> None:
    """Draining makes /-/ready 503 so a load balancer stops sending new calls."""
    running.app.server.drain()
    assert running.http("/-/ready") == (503, "shutting down\n")
    assert running.http("/-/healthy")[0] == 200


def test_metrics_are_per_server(serving_rules: Path, start_app: StartApp, tmp_path: Path) -> None:
    """Two servers in one process keep separate counts (no global registry)."""
    a = start_app(serving_rules, watch=False)
    b = start_app(serving_rules, watch=False)
    a.stub.Classify(pb.ClassifyRequest(descriptor=WEIRD))
    assert a.metric("errorclass_unknown_total", reason="no_match") == 1
    assert b.metric("errorclass_unknown_total", reason="no_match") == 0


def test_an_app_stopped_before_it_starts_stops_at_once(serving_rules: Path) -> None:
    """Stopping an App that never started (a failed start-up) neither hangs on the side port
    nor trips over the watcher that never ran."""
    app = App(
        ServeConfig(rules=serving_rules, address="127.0.0.1:0", metrics_address="127.0.0.1:0")
    )
    stopped: list[bool] = []

    def stop() -> None:
        app.stop(grace=0)
        stopped.append(True)

    stopping = threading.Thread(target=stop, daemon=True)
    stopping.start()
    stopping.join(timeout=10)
    assert stopped == [True]
