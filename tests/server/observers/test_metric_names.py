"""The metrics exposition keeps its names, types and labels while the instruments move
to the rooms that drive them (issue 35): dashboards and alerts read these names."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry

from classifier.server import App, ServeConfig
from tests.support import BUNDLED_RULES

RECORDED = {
    ("errorclass_bundle_info", "gauge", ("digest", "signing")),
    ("errorclass_classifications", "counter", ("class", "rule", "origin")),
    ("errorclass_decision_log_dropped", "counter", ()),
    ("errorclass_decision_log_failing", "gauge", ()),
    ("errorclass_decision_log_lines", "counter", ()),
    ("errorclass_decision_log_queued_bytes", "gauge", ()),
    ("errorclass_decision_log_write_errors", "counter", ()),
    ("errorclass_held_calls", "counter", ("lane",)),
    ("errorclass_local_decisions", "counter", ("class", "origin", "bundle")),
    ("errorclass_local_unknown", "counter", ("reason",)),
    ("errorclass_redactions", "counter", ("mask",)),
    ("errorclass_refused", "counter", ("rpc", "reason")),
    ("errorclass_reload_last_success", "gauge", ("role",)),
    ("errorclass_reload_last_timestamp_seconds", "gauge", ("role",)),
    ("errorclass_reloads", "counter", ("role", "result")),
    ("errorclass_rpc_duration_seconds", "histogram", ("rpc",)),
    ("errorclass_rpcs", "counter", ("rpc", "code")),
    ("errorclass_rpcs_in_flight", "gauge", ("rpc",)),
    ("errorclass_ruleset_info", "gauge", ("role", "name", "version", "digest")),
    ("errorclass_ruleset_rules", "gauge", ("role",)),
    ("errorclass_shadow_comparisons", "counter", ()),
    (
        "errorclass_shadow_disagreements",
        "counter",
        ("active_class", "candidate_class", "active_rule", "candidate_rule"),
    ),
    ("errorclass_streams_closed", "counter", ("rpc", "reason")),
    ("errorclass_unknown", "counter", ("reason",)),
    ("errorclass_unknown_sample_bytes", "gauge", ()),
    ("errorclass_unknown_sample_clusters", "gauge", ()),
    ("errorclass_unknown_sample_dropped", "counter", ()),
}
"""Every instrument's family name, type and label names, recorded from the server as it was
before its instruments moved (c0d51b7)."""


def _instruments(registry: CollectorRegistry) -> set[tuple[str, str, tuple[str, ...]]]:
    """What the registry exposes, by family. A labelled instrument that has not counted yet
    shows no sample, so its label names are read from the instrument (prometheus_client
    keeps them in `_labelnames`; its registry lists them in `_collector_to_names`)."""
    out = set()
    for collector in registry._collector_to_names:
        for family in collector.collect():
            out.add((family.name, family.type, tuple(getattr(collector, "_labelnames", ()))))
    return out


def test_every_instrument_keeps_its_name_type_and_labels(tmp_path: Path) -> None:
    """A server with every room on (a candidate, the side port, the decision log, the live
    sample) exposes exactly the recorded instruments."""
    app = App(
        ServeConfig(
            rules=BUNDLED_RULES,
            candidate=BUNDLED_RULES,
            address="127.0.0.1:0",
            watch=False,
            metrics_address="127.0.0.1:0",
            decision_log=tmp_path / "d.jsonl",
        )
    )
    try:
        assert _instruments(app.metrics.registry) == RECORDED
    finally:
        app.stop(grace=0)


def test_a_server_without_its_optional_rooms_exposes_the_same_instruments() -> None:
    """No candidate, no side port, no decision log: the same families, at zero, so a
    dashboard reads one exposition whatever the flags."""
    app = App(ServeConfig(rules=BUNDLED_RULES, address="127.0.0.1:0", watch=False))
    try:
        assert _instruments(app.metrics.registry) == RECORDED
    finally:
        app.stop(grace=0)
