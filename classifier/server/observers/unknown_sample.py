"""The live sample of Unknowns: the newest redacted descriptor of each failure, in bounded memory.

An observer of every answer. An Unknown is queued (a call never waits: when the queue
is full the Unknown is dropped and counted), and a thread of its own redacts it (bearer
tokens, API keys, emails, `key=secret` pairs, in the message, the causes' messages and
the attributes), keys it by its structural key and masked message (the clusters of
`classifier unknowns` before templating), and keeps the newest line per key with how
many it stands for. The sample's size is counted in bytes (each line, its key and the
bookkeeping around them); past `max_bytes` the keys updated longest ago are evicted.

`GET /-/unknowns` on the admin port returns it as JSON Lines in the decision-log shape,
each line with `"seen": N`, which `classifier unknowns --addr` reads. An Unknown a client
decided from its bundle and reported (ReportDecisions) is taken in the same way, its line
marked local as the decision log marks it.
"""

from __future__ import annotations

import hashlib
import json
import queue
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge

from classifier.answer import Classification
from classifier.defaults import DEFAULT_UNKNOWN_SAMPLE_BYTES
from classifier.descriptor import Descriptor
from classifier.redact import DEFAULT, Redactor
from classifier.server.observers.decisions import answer_dict, local_fields
from classifier.server.observers.metrics import Metrics
from classifier.server.shared.log import utc_time
from classifier.server.shared.serving_bundle import LocalDecision
from classifier.source.descriptor_file import descriptor_dict
from classifier.taxonomy import ErrorClass
from classifier.unknowns.mask import mask
from classifier.unknowns.structure import structural_key

QUEUE_SIZE = 10_000
ENTRY_OVERHEAD = 400
"""Bytes counted per kept key beyond its line and key: the entry object, the ordered dict's
link and its table slots (measured: tests/unknowns/test_live.py holds the real size to the cap)."""


@dataclass(slots=True)
class _Entry:
    line: str
    """The decision-log line, without its closing brace (`seen` is added when read)."""
    seen: int
    size: int


class UnknownSampleMetrics:
    """The live sample's instruments, declared on the registry it is handed and moved only
    through these methods; a server without the sample declares them too, at zero."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._bytes = Gauge(
            "errorclass_unknown_sample_bytes",
            "Bytes the live sample of Unknowns holds (GET /-/unknowns), within its cap.",
            registry=registry,
        )
        self._clusters = Gauge(
            "errorclass_unknown_sample_clusters",
            "Failures (structural key and masked message) the live sample of Unknowns holds.",
            registry=registry,
        )
        self._dropped = Counter(
            "errorclass_unknown_sample_dropped",
            "Unknowns the live sample did not take in because its queue was full.",
            registry=registry,
        )

    def dropped(self) -> None:
        self._dropped.inc()

    def holding(self, size: int, clusters: int) -> None:
        self._bytes.set(size)
        self._clusters.set(clusters)


class UnknownSample:
    """The newest Unknown per failure, redacted, within `max_bytes`."""

    def __init__(
        self,
        metrics: Metrics,
        *,
        max_bytes: int = DEFAULT_UNKNOWN_SAMPLE_BYTES,
        queue_size: int = QUEUE_SIZE,
        redactor: Redactor = DEFAULT,
    ) -> None:
        self.max_bytes = max_bytes
        self.redactor = redactor
        self.metrics = metrics
        self.instruments = UnknownSampleMetrics(metrics.registry)
        self._queue: queue.Queue[
            tuple[float, Descriptor, Classification, LocalDecision | None] | None
        ] = queue.Queue(queue_size)
        self._entries: OrderedDict[bytes, _Entry] = OrderedDict()
        self._bytes = 0
        self.taken = 0
        """Unknowns taken in since start: a reader can tell whether the sample changed."""
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._work, name="unknown-sample", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        """Take in what is queued, then stop the thread."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def classified(self, descriptor: Descriptor, result: Classification) -> None:
        self.reported(descriptor, result, None)

    def reported(
        self, descriptor: Descriptor, result: Classification, local: LocalDecision | None
    ) -> None:
        """An answer given (`local` None) or a decision a client reported."""
        if result.error_class is not ErrorClass.Unknown:
            return
        try:
            self._queue.put_nowait((time.time(), descriptor, result, local))
        except queue.Full:
            self.instruments.dropped()

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            self.add(*item)

    def add(
        self,
        at: float,
        descriptor: Descriptor,
        result: Classification,
        local: LocalDecision | None = None,
    ) -> None:
        """Keep this Unknown as its key's newest (the worker thread calls this)."""
        data, _ = self.redactor.descriptor(descriptor_dict(descriptor))
        reason = result.unknown_reason.name
        key = hashlib.blake2b(
            f"{structural_key(data, reason).text()}\n{mask(data.get('message', ''))}".encode(),
            digest_size=16,
        ).digest()
        record: dict[str, object] = {
            "ts": utc_time(at),
            "ruleset_version": result.ruleset_version,
        }
        if local is not None:
            record.update(local_fields(utc_time(at), local))
        record["descriptor"] = data
        record["answer"] = answer_dict(result)
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))[:-1]
        size = sys.getsizeof(line) + sys.getsizeof(key) + ENTRY_OVERHEAD
        with self._lock:
            old = self._entries.pop(key, None)
            seen = 1
            if old is not None:
                self._bytes -= old.size
                seen += old.seen
            self._entries[key] = _Entry(line, seen, size)
            self._bytes += size
            self.taken += 1
            while self._bytes > self.max_bytes and self._entries:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.size
            self.instruments.holding(self._bytes, len(self._entries))

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def lines(self) -> str:
        """The sample as JSON Lines, the key updated longest ago first."""
        with self._lock:
            entries = list(self._entries.values())
        return "".join(f'{e.line},"seen":{e.seen}}}\n' for e in entries)
