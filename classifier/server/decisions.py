"""The decision log: one JSON line per answer, for replay with `classifier diff`.

Each line is an object with the normalised descriptor under `descriptor`
(in the descriptor-file shape, `classifier.explain.descriptor_dict`), the
`answer` as `classifier classify --format json` prints it, the
`ruleset_version` that decided, and `ts`:

    {"ts": "2026-11-29T12:00:00.123Z", "ruleset_version": "0.1.0",
     "descriptor": {"type": "openai.RateLimitError", "http_status": 429, ...},
     "answer": {"class": "RateLimited", "rule": "http.provider-429", ...}}

Calls only enqueue; one writer thread serialises and writes, rotating the
file at a size cap (`RotatingFileHandler`: d.jsonl, then d.1.jsonl ... d.N.jsonl,
the oldest last). When
the writer falls behind, lines are dropped and counted rather than slowing
an answer down.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import queue
import time
from pathlib import Path
from typing import Any

from classifier.answer import Classification, classification_dict
from classifier.descriptor import Descriptor
from classifier.server.log import utc_time
from classifier.server.metrics import Metrics
from classifier.source.descriptor_file import descriptor_dict
from classifier.taxonomy import ErrorClass

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_BACKUPS = 3
QUEUE_SIZE = 10_000


def answer_dict(c: Classification) -> dict[str, Any]:
    """The answer as `classifier classify --format json` prints it, without an explanation."""
    out = classification_dict(c)
    out.pop("explanation", None)
    return out


def decision_line(ts: str, descriptor: Descriptor, c: Classification) -> str:
    record = {
        "ts": ts,
        "ruleset_version": c.ruleset_version,
        "descriptor": descriptor_dict(descriptor),
        "answer": answer_dict(c),
    }
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


class _Writer(logging.handlers.QueueListener):
    """Turns queued decisions into log records in the writer thread, not the caller's."""

    def prepare(self, item: Any) -> logging.LogRecord:
        at, descriptor, result = item
        line = decision_line(utc_time(at), descriptor, result)
        return logging.makeLogRecord({"msg": line, "levelno": logging.INFO})

    def enqueue_sentinel(self) -> None:
        self.queue.put(self._sentinel)  # type: ignore[attr-defined]  # wait for room: never lose the stop


class DecisionLog:
    """Writes a line for every answer (or, with unknown_only, every Unknown)."""

    def __init__(
        self,
        path: Path,
        metrics: Metrics,
        *,
        unknown_only: bool = False,
        max_bytes: int = DEFAULT_MAX_BYTES,
        backups: int = DEFAULT_BACKUPS,
        queue_size: int = QUEUE_SIZE,
    ) -> None:
        self.path = path
        self.unknown_only = unknown_only
        self.metrics = metrics
        self._queue: queue.Queue[Any] = queue.Queue(queue_size)
        self._file = _CountedFile(path, metrics, max_bytes, backups)
        self._writer = _Writer(self._queue, self._file)
        self._started = False

    def start(self) -> None:
        self._writer.start()
        self._started = True

    def close(self) -> None:
        """Write what is queued, then close the file (once; later calls do nothing)."""
        if self._started:
            self._started = False
            self._writer.stop()
        self._file.close()

    def classified(self, descriptor: Descriptor, result: Classification) -> None:
        if self.unknown_only and result.error_class is not ErrorClass.Unknown:
            return
        try:
            self._queue.put_nowait((time.time(), descriptor, result))
        except queue.Full:
            self.metrics.decision_log_dropped.inc()


def rotated_name(default: str) -> str:
    """`FILE.jsonl.1` as `FILE.1.jsonl`: rotated files keep the suffix that marks JSON Lines."""
    head, _, number = default.rpartition(".")
    path = Path(head)
    return str(path.with_name(f"{path.stem}.{number}{path.suffix}"))


class _CountedFile(logging.handlers.RotatingFileHandler):
    """The rotating file, counting the lines it writes (not those a write error lost)."""

    def __init__(self, path: Path, metrics: Metrics, max_bytes: int, backups: int) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        self.namer = rotated_name
        self.metrics = metrics
        self._failed = False

    def emit(self, record: logging.LogRecord) -> None:
        self._failed = False  # one writer thread emits, so the flag is its own
        super().emit(record)
        if not self._failed:
            self.metrics.decision_log_lines.inc()

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802  (logging names it)
        """logging reports a failed write here (on stderr) instead of raising."""
        self._failed = True
        super().handleError(record)
