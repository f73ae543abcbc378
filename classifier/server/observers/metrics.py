"""Prometheus metrics: what the service answered, how fast, and which rules are serving.

Each server owns its registry (no global state), so several servers can run
in one process, as the tests do. The share of Unknown is a ratio of rates of
two counters, computed where it is read:

    sum(rate(errorclass_unknown_total[5m]))
      / sum(rate(errorclass_classifications_total[5m]))

Decisions clients made in process from a bundle and reported (ReportDecisions) are
counted apart, in `errorclass_local_decisions_total` and `errorclass_local_unknown_total`,
so the series above keep meaning the answers this server gave; the Unknown share of
every failure adds the two (deploy/prometheus/errorclass.rules.yaml).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from classifier.answer import Classification
from classifier.descriptor import Descriptor
from classifier.engine.ruleset import Ruleset
from classifier.server.shared.serving_bundle import LocalDecision, ServingBundle
from classifier.server.shared.serving_ruleset import ReloadStatus
from classifier.taxonomy import ErrorClass, Origin, UnknownReason

LATENCY_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
)


class RpcInstruments(NamedTuple):
    """One RPC's instruments as the observing interceptor moves them."""

    took: Callable[[float], None]
    """Seconds one call (one message of a stream) took to answer."""
    started: Callable[[], None]
    ended: Callable[[], None]


class Metrics:
    """The service's registry, with the instruments of its answers and its RPCs, of the
    serving ruleset and of what the redactor masked. A room with instruments of its own
    declares them on this registry and moves them through its own methods
    (`DecisionLogMetrics`, `ShadowMetrics`, `UnknownSampleMetrics`, `LaneMetrics`)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.classifications = Counter(
            "errorclass_classifications",
            "Answers given, by class, deciding rule (empty for Unknown) and descriptor origin.",
            ("class", "rule", "origin"),
            registry=r,
        )
        self.unknown = Counter(
            "errorclass_unknown",
            "Unknown answers, by reason: no_match (no rule covers it) or conflict.",
            ("reason",),
            registry=r,
        )
        self.rpc_duration = Histogram(
            "errorclass_rpc_duration_seconds",
            "Time to answer, by RPC; for ClassifyStream, per message.",
            ("rpc",),
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.rpcs = Counter(
            "errorclass_rpcs",
            "RPCs finished, by RPC and gRPC status code.",
            ("rpc", "code"),
            registry=r,
        )
        self.in_flight = Gauge(
            "errorclass_rpcs_in_flight",
            "RPCs being served now, open streams included.",
            ("rpc",),
            registry=r,
        )
        self.reloads = Counter(
            "errorclass_reloads",
            "Reload attempts, by ruleset role (active, candidate) and result "
            "(reloaded, unchanged, failed).",
            ("role", "result"),
            registry=r,
        )
        self.reload_last_success = Gauge(
            "errorclass_reload_last_success",
            "1 when the last reload attempt left the folder's rules serving, "
            "0 when it failed and older rules are serving.",
            ("role",),
            registry=r,
        )
        self.reload_last_time = Gauge(
            "errorclass_reload_last_timestamp_seconds",
            "When the last reload attempt was made, in Unix seconds.",
            ("role",),
            registry=r,
        )
        self.ruleset_info = Gauge(
            "errorclass_ruleset_info",
            "The serving ruleset (always 1), by role, name, version and digest.",
            ("role", "name", "version", "digest"),
            registry=r,
        )
        self.ruleset_rules = Gauge(
            "errorclass_ruleset_rules",
            "Rules in the serving ruleset, by role.",
            ("role",),
            registry=r,
        )
        self.redactions = Counter(
            "errorclass_redactions",
            "Secrets masked before a descriptor was written (decision log, shadow examples), "
            "by mask.",
            ("mask",),
            registry=r,
        )
        self.local_decisions = Counter(
            "errorclass_local_decisions",
            "Decisions clients made in process from a bundle and reported (ReportDecisions), "
            "by class, descriptor origin and bundle (serving: the bundle this server serves; "
            "other: an older one, or one built elsewhere).",
            ("class", "origin", "bundle"),
            registry=r,
        )
        self.local_unknown = Counter(
            "errorclass_local_unknown",
            "Reported decisions that were Unknown, by reason: no_match or conflict.",
            ("reason",),
            registry=r,
        )
        self.bundle_info = Gauge(
            "errorclass_bundle_info",
            "The serving ruleset's bundle (always 1), by digest and how it is signed "
            "(keys, signatures_file, unsigned; off: GetBundle does not serve it).",
            ("digest", "signing"),
            registry=r,
        )
        self._local_unknown = {
            reason: self.local_unknown.labels(reason.name)
            for reason in (UnknownReason.no_match, UnknownReason.conflict)
        }
        self._local: dict[tuple[ErrorClass, Origin, bool], Any] = {}
        self._unknown = {  # 0 from the start: the share is 0, not absent
            reason: self.unknown.labels(reason.name)
            for reason in (UnknownReason.no_match, UnknownReason.conflict)
        }
        # Label children looked up once: `labels()` costs more than the answer.
        self._answers: dict[tuple[ErrorClass, str, Origin], Any] = {}
        self._finished: dict[tuple[str, str], Any] = {}

    def classified(self, descriptor: Descriptor, result: Classification) -> None:
        key = (result.error_class, result.rule_id, descriptor.origin)
        child = self._answers.get(key)
        if child is None:
            child = self._answers[key] = self.classifications.labels(
                result.error_class.name, result.rule_id, descriptor.origin.name
            )
        child.inc()
        if result.error_class is ErrorClass.Unknown:
            self._unknown[result.unknown_reason].inc()

    def reported(
        self, descriptor: Descriptor, result: Classification, local: LocalDecision
    ) -> None:
        key = (result.error_class, descriptor.origin, local.serving)
        child = self._local.get(key)
        if child is None:
            child = self._local[key] = self.local_decisions.labels(
                result.error_class.name,
                descriptor.origin.name,
                "serving" if local.serving else "other",
            )
        child.inc()
        if result.error_class is ErrorClass.Unknown:
            self._local_unknown[result.unknown_reason].inc()

    def redacted(self, masks: Mapping[str, int]) -> None:
        """Count what the redactor masked in a record written down (by mask)."""
        for name, count in masks.items():
            self.redactions.labels(name).inc(count)

    def bundle(self, bundle: ServingBundle | None) -> None:
        """Show which bundle serves (replacing the previous one's series)."""
        self.bundle_info.clear()
        if bundle is not None:
            self.bundle_info.labels(bundle.digest, bundle.signing.value).set(1)

    def serving(self, role: str, ruleset: Ruleset, *, reload_ok: bool = True) -> None:
        """Record which ruleset serves in `role` (replacing the previous one's info), and
        whether the last reload attempt succeeded (at start, none has failed)."""
        for labels in self._info_labels(role):
            self.ruleset_info.remove(*labels)
        self.ruleset_info.labels(role, ruleset.name, ruleset.version, ruleset.digest).set(1)
        self.ruleset_rules.labels(role).set(len(ruleset.rules))
        self.reload_last_success.labels(role).set(1 if reload_ok else 0)

    def reloaded(self, role: str, status: ReloadStatus, serving: Ruleset) -> None:
        """A Reloader listener: count the attempt and show what serves now."""
        self.reloads.labels(role, status.result.value).inc()
        self.reload_last_time.labels(role).set(time.time())
        self.serving(role, serving, reload_ok=status.ok)

    def rpc(self, rpc: str) -> RpcInstruments:
        """`rpc`'s timing and in-flight gauge, as the methods that move them (taken once per
        method, so a call looks nothing up)."""
        duration = self.rpc_duration.labels(rpc)
        in_flight = self.in_flight.labels(rpc)
        return RpcInstruments(duration.observe, in_flight.inc, in_flight.dec)

    def rpc_finished(self, rpc: str, code: str) -> None:
        child = self._finished.get((rpc, code))
        if child is None:
            child = self._finished[rpc, code] = self.rpcs.labels(rpc, code)
        child.inc()

    def _info_labels(self, role: str) -> list[tuple[str, ...]]:
        return [
            (s.labels["role"], s.labels["name"], s.labels["version"], s.labels["digest"])
            for metric in self.ruleset_info.collect()
            for s in metric.samples
            if s.labels["role"] == role
        ]
