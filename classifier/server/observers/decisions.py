"""The decision log: one JSON line per answer, for replay with `classifier diff`.

Each line is an object with the normalised descriptor under `descriptor`
(in the descriptor-file shape, `classifier.explain.descriptor_dict`), the
`answer` as `classifier classify --format json` prints it, the
`ruleset_version` that decided, and `ts`; and `redacted` when the redactor
masked something (which fields, how many of each mask):

    {"ts": "2026-11-29T12:00:00.123Z", "ruleset_version": "0.1.0",
     "descriptor": {"type": "openai.RateLimitError", "http_status": 429, ...},
     "answer": {"class": "RateLimited", "rule": "http.provider-429", ...,
                "retry_after": {"seconds": 20.0, "capped": false,
                                "source": "http.response.header.retry-after"}}}

(`retry_after` only for a retryable answer whose descriptor carried the provider's
retry evidence: the wait it advises, and where it came from.)

A decision a client made in process from a bundle and reported (ReportDecisions) is a
line of the same shape, its `answer` the client's, with `"local": true`, the
`bundle_digest` that decided, `bundle_serving` (whether that bundle was the serving one
when the report came) and `reported_at`; its `ts` is when the client decided.

Calls only enqueue; one writer thread masks, serialises and writes. What the log
can cost is bounded whatever the disk does:

- the queue holds at most `queue_size` lines and `queue_bytes` bytes (each line's
  size estimated from its descriptor before it is built); past either, the line is
  dropped and counted (`errorclass_decision_log_dropped_total`);
- a line is written whole or not at all: a write that fails part-way (a full disk)
  is cut back to the last whole line;
- a failed write logs one `decision_log_error` line (the error, and how many
  writes failed since the last such line) at most every ERROR_LOG_SECONDS, sets
  `errorclass_decision_log_failing` to 1 and drops its lines; the writer tries
  again every RETRY_SECONDS, reopening the file, and when a write succeeds it logs
  `decision_log_recovered` and the gauge goes back to 0;
- `close` lets the writer drain the queue for as long as the stop's grace has left (at
  least `close_timeout`, 1 s), so a clean stop loses no decision; a writer that writes
  nothing for `close_timeout` seconds is stuck in the kernel (a hung disk) and is left
  behind, so a shutdown never waits on the disk.

The file rotates at `max_bytes` (d.jsonl, then d.1.jsonl ... d.N.jsonl, the
oldest last), so rotated files keep the suffix that marks JSON Lines.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge

from classifier.answer import Classification, classification_dict
from classifier.defaults import (
    DEFAULT_DECISION_LOG_BACKUPS,
    DEFAULT_DECISION_LOG_MAX_BYTES,
    DEFAULT_DECISION_LOG_QUEUE_BYTES,
)
from classifier.descriptor import Descriptor, text_weight
from classifier.redact import DEFAULT, Redactor
from classifier.server.observers.metrics import Metrics
from classifier.server.shared.log import RateLimitedLog, log, utc_time
from classifier.server.shared.serving_bundle import LocalDecision
from classifier.source.descriptor_file import descriptor_dict
from classifier.taxonomy import ErrorClass

QUEUE_SIZE = 10_000
LINE_OVERHEAD = 600
"""Bytes a line takes beyond its descriptor's text: keys, the answer, the timestamp."""
LOCAL_OVERHEAD = 200
"""What a reported decision's line adds: its answer's own text, the bundle digest, a time."""
BATCH_LINES = 256
CHUNK_BYTES = 256 * 1024
ERROR_LOG_SECONDS = 60.0
RETRY_SECONDS = 1.0
CLOSE_SECONDS = 1.0
CLOSE_STEP_SECONDS = 0.05

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""One encoder for every line: `json.dumps` with options builds a new one per call, a
seventh of a line's cost once redaction was cheap."""


_Item = tuple[float, Descriptor, Classification, int, LocalDecision | None]
"""A queued line: when, the descriptor, the answer, its estimated size, and what a reported
decision adds (None for the server's own answers)."""


def answer_dict(c: Classification) -> dict[str, Any]:
    """The answer as `classifier classify --format json` prints it, without an explanation."""
    out = classification_dict(c)
    out.pop("explanation", None)
    return out


def decision_line(
    ts: str,
    descriptor: Descriptor,
    c: Classification,
    redactor: Redactor | None = DEFAULT,
    metrics: Metrics | None = None,
    local: LocalDecision | None = None,
) -> str:
    """The line of one answer given at `ts`; of a reported decision when `local` says so
    (its `ts` then when the client decided, `ts` when the report came)."""
    data = descriptor_dict(descriptor)
    record: dict[str, Any] = {"ts": ts, "ruleset_version": c.ruleset_version}
    if local is not None:
        record.update(local_fields(ts, local))
    if redactor is not None:
        data, masked = redactor.descriptor(data)
        if masked:
            record["redacted"] = masked.as_dict()
            if metrics is not None:
                metrics.redacted(masked.masks)
    record["descriptor"] = data
    record["answer"] = answer_dict(c)
    return _encode(record)


def local_fields(reported_at: str, local: LocalDecision) -> dict[str, Any]:
    """What a reported decision's line says beyond an answer's, `ts` first (the corpus
    readers find a decision line by its opening `{"ts":"`)."""
    return {
        "ts": reported_at if local.decided_at is None else utc_time(local.decided_at),
        "local": True,
        "bundle_digest": local.bundle_digest,
        "bundle_serving": local.serving,
        "reported_at": reported_at,
    }


def line_weight(d: Descriptor) -> int:
    """An estimate, from above for ASCII text, of the bytes a descriptor's line takes."""
    return LINE_OVERHEAD + text_weight(d)


class DecisionLogMetrics:
    """The decision log's instruments, declared on the registry it is handed and moved only
    through these methods. A server without a log declares them too, at zero, so its
    exposition is the same either way."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._lines = Counter(
            "errorclass_decision_log_lines",
            "Lines written to the decision log.",
            registry=registry,
        )
        self._dropped = Counter(
            "errorclass_decision_log_dropped",
            "Decision log lines dropped because the writer fell behind.",
            registry=registry,
        )
        self._write_errors = Counter(
            "errorclass_decision_log_write_errors",
            "Failed writes to the decision log (the lines they held are counted as dropped).",
            registry=registry,
        )
        self._failing = Gauge(
            "errorclass_decision_log_failing",
            "1 while the decision log cannot be written (full disk, I/O error), else 0.",
            registry=registry,
        )
        self._queued_bytes = Gauge(
            "errorclass_decision_log_queued_bytes",
            "Bytes of decision log lines waiting for the writer (bounded by its byte cap).",
            registry=registry,
        )

    def written(self, lines: int) -> None:
        self._lines.inc(lines)

    def dropped(self, lines: int = 1) -> None:
        self._dropped.inc(lines)

    def write_failed(self, lines: int) -> None:
        """A write failed: its lines are dropped."""
        self._write_errors.inc()
        self._dropped.inc(lines)

    def failing(self, now: bool) -> None:
        self._failing.set(1 if now else 0)

    def queued(self, size: int) -> None:
        self._queued_bytes.set(size)


class DecisionLog:
    """Writes a line for every answer (or, with unknown_only, every Unknown)."""

    def __init__(
        self,
        path: Path,
        metrics: Metrics,
        *,
        unknown_only: bool = False,
        max_bytes: int = DEFAULT_DECISION_LOG_MAX_BYTES,
        backups: int = DEFAULT_DECISION_LOG_BACKUPS,
        queue_size: int = QUEUE_SIZE,
        queue_bytes: int = DEFAULT_DECISION_LOG_QUEUE_BYTES,
        redactor: Redactor | None = DEFAULT,
        close_timeout: float = CLOSE_SECONDS,
    ) -> None:
        self.path = path
        self.unknown_only = unknown_only
        self.metrics = metrics
        """The registry's holder (and the redactions counter, shared with the shadow)."""
        self.instruments = DecisionLogMetrics(metrics.registry)
        self.queue_size = queue_size
        self.queue_bytes = queue_bytes
        self.redactor = redactor
        self.close_timeout = close_timeout
        self._items: deque[_Item] = deque()
        self._bytes = 0
        self._cond = threading.Condition(threading.Lock())
        self._stopping = False
        self._file = LineFile(path, max_bytes, backups)
        self._thread = threading.Thread(target=self._run, name="decision-log", daemon=True)
        self._started = False
        self._closed = False
        self._failing = False
        self._failed_writes = 0
        self._dropped_failing = 0
        self._taken = 0
        """Batches the writer has finished with (written or failed): its progress."""
        self._errors = RateLimitedLog(ERROR_LOG_SECONDS)

    @property
    def queued_bytes(self) -> int:
        return self._bytes

    def start(self) -> None:
        self._thread.start()
        self._started = True

    def close(self, grace: float | None = None) -> None:
        """Write what is queued, then close the file. Once; later calls do nothing.

        The writer drains the queue for at most `grace` seconds (a clean stop passes what
        its grace has left; never less than close_timeout), so every decision queued
        before the stop is written. A writer that writes nothing for close_timeout
        seconds is stuck in the kernel: it is left to the process's exit, and what it
        had not written is counted as dropped.
        """
        if self._closed:
            return
        self._closed = True
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._started and not self._drained(max(grace or 0.0, self.close_timeout)):
            with self._cond:
                left = len(self._items)
                self._items.clear()
            self.instruments.dropped(left)
            log(
                "decision_log_abandoned",
                level="error",
                path=str(self.path),
                dropped=left,
                error=f"the writer wrote nothing for {self.close_timeout:g} s or did not "
                f"finish within {max(grace or 0.0, self.close_timeout):g} s",
            )
            return
        self._file.close()

    def _drained(self, seconds: float) -> bool:
        """Wait for the writer to end (the queue written), while it makes progress and for
        at most `seconds`; whether it ended."""
        now = time.monotonic()
        deadline, progress_at, taken = now + seconds, now, self._taken
        for _ in range(int(seconds / CLOSE_STEP_SECONDS) + 2):  # bounded by the deadline
            self._thread.join(min(CLOSE_STEP_SECONDS, max(0.0, deadline - now)))
            if not self._thread.is_alive():
                return True
            now = time.monotonic()
            if self._taken != taken:
                progress_at, taken = now, self._taken
            if now >= deadline or now - progress_at >= self.close_timeout:
                return False
        return not self._thread.is_alive()

    def classified(self, descriptor: Descriptor, result: Classification) -> None:
        self._add(descriptor, result, None)

    def reported(
        self, descriptor: Descriptor, result: Classification, local: LocalDecision
    ) -> None:
        """A decision a client made from its bundle: a line marked local."""
        self._add(descriptor, result, local)

    def _add(
        self, descriptor: Descriptor, result: Classification, local: LocalDecision | None
    ) -> None:
        if self.unknown_only and result.error_class is not ErrorClass.Unknown:
            return
        weight = line_weight(descriptor) + (LOCAL_OVERHEAD if local is not None else 0)
        with self._cond:
            if (
                self._stopping
                or len(self._items) >= self.queue_size
                or self._bytes + weight > self.queue_bytes
            ):
                dropped = True
            else:
                dropped = False
                self._items.append((time.time(), descriptor, result, weight, local))
                self._bytes += weight
                if len(self._items) == 1:
                    self._cond.notify()
        if dropped:
            self.instruments.dropped()

    def _take(self) -> list[_Item] | None:
        with self._cond:
            while not self._items and not self._stopping:
                self._cond.wait(1.0)
            if not self._items:
                return None
            batch = [self._items.popleft() for _ in range(min(BATCH_LINES, len(self._items)))]
            self._bytes -= sum(item[3] for item in batch)
        self.instruments.queued(self._bytes)
        return batch

    def _run(self) -> None:
        while (batch := self._take()) is not None:
            lines = [
                (
                    decision_line(utc_time(at), d, r, self.redactor, self.metrics, local) + "\n"
                ).encode()
                for at, d, r, _, local in batch
            ]
            written, error = self._file.write(lines)
            if written:
                self.instruments.written(written)
            if error is not None:
                self._failed(error, len(lines) - written)
                with self._cond:  # wait before trying again (the queue fills meanwhile)
                    if not self._stopping:
                        self._cond.wait(RETRY_SECONDS)
            elif self._failing:
                self._recovered()
            self._taken += 1

    def _failed(self, exc: OSError, lines: int) -> None:
        self.instruments.write_failed(lines)
        self._failed_writes += 1
        self._dropped_failing += lines
        if not self._failing:
            self._failing = True
            self.instruments.failing(True)
        self._errors.log(
            "decision_log_error",
            "write",
            level="error",
            path=str(self.path),
            error=f"{errno.errorcode.get(exc.errno or 0, 'error')}: {exc.strerror or exc}",
            failed_writes=self._failed_writes,
            dropped_lines=self._dropped_failing,
        )
        self._file.reopen_later()

    def _recovered(self) -> None:
        self._failing = False
        self.instruments.failing(False)
        log(
            "decision_log_recovered",
            path=str(self.path),
            failed_writes=self._failed_writes,
            dropped_lines=self._dropped_failing,
        )
        self._failed_writes = self._dropped_failing = 0
        self._errors = RateLimitedLog(ERROR_LOG_SECONDS)


def rotated_name(default: str) -> str:
    """`FILE.jsonl.1` as `FILE.1.jsonl`: rotated files keep the suffix that marks JSON Lines."""
    head, _, number = default.rpartition(".")
    path = Path(head)
    return str(path.with_name(f"{path.stem}.{number}{path.suffix}"))


class LineFile:
    """An append-only file of whole lines, rotated at a size; one thread writes it."""

    def __init__(self, path: Path, max_bytes: int, backups: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self._fd: int | None = None
        self._size = 0
        self._regular = True
        self._open()  # at start, a path that cannot be opened is an error (OSError)

    def _open(self) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        st = os.fstat(fd)
        self._regular = stat.S_ISREG(st.st_mode)
        self._size = st.st_size if self._regular else 0
        self._fd = fd

    def reopen_later(self) -> None:
        """After a failure: the next write opens the path afresh (it may be a new file)."""
        self.close()

    def write(self, lines: list[bytes]) -> tuple[int, OSError | None]:
        """Append whole lines (each ending in a newline), in chunks that respect the size
        cap; how many were written, and the error that stopped the rest (or None).

        A chunk that fails is cut back and tried line by line, so every line that fits
        is written and none is left torn.
        """
        written = 0
        for chunk in self._chunks(lines):
            try:
                self._append(b"".join(chunk))
                written += len(chunk)
                continue
            except OSError as exc:
                error = exc
            if len(chunk) == 1:
                return written, error
            for line in chunk:
                try:
                    self._append(line)
                except OSError as exc:
                    return written, exc
                written += 1
        return written, None

    def _chunks(self, lines: list[bytes]) -> list[list[bytes]]:
        chunks: list[list[bytes]] = []
        size = self._size
        current: list[bytes] = []
        current_bytes = 0
        for line in lines:
            over = self.max_bytes and size + current_bytes + len(line) > self.max_bytes
            if current and (over or current_bytes + len(line) > CHUNK_BYTES):
                chunks.append(current)
                size = 0 if over else size + current_bytes
                current, current_bytes = [], 0
            current.append(line)
            current_bytes += len(line)
        if current:
            chunks.append(current)
        return chunks

    def _append(self, data: bytes) -> None:
        """Append `data` entirely, or raise OSError leaving the file as it was."""
        if self._fd is None:
            self._open()
        if (
            self._regular
            and self.max_bytes
            and self._size
            and self._size + len(data) > (self.max_bytes)
        ):
            self._rotate()
        fd = self._fd
        assert fd is not None
        view = memoryview(data)
        done = 0
        try:
            while done < len(data):
                n = os.write(fd, view[done:])
                if n <= 0:  # pragma: no cover  (a regular file never does this)
                    raise OSError(errno.EIO, "write wrote nothing")
                done += n
        except OSError:
            if done and self._regular:
                # cut the torn line: the file ends on a whole line again
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, self._size)
            raise
        self._size += done

    def _rotate(self) -> None:
        self.close()
        base = str(self.path)
        if self.backups > 0:
            for i in range(self.backups - 1, 0, -1):
                older = rotated_name(f"{base}.{i}")
                if os.path.exists(older):
                    os.replace(older, rotated_name(f"{base}.{i + 1}"))
            os.replace(base, rotated_name(f"{base}.1"))
        else:
            os.truncate(base, 0)
        self._open()

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
