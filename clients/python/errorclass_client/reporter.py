"""Decisions made in process, reported to the service in batches (ReportDecisions).

In local-first mode no failure costs an RPC, yet the service's decision log, metrics and
Unknown inbox must still see every one: the decisions queue here and a background thread
sends them oldest first, a batch when `batch` are pending or `interval` has passed. The
queue is bounded (a service down for long must not grow a runtime's memory): when full,
the oldest decision is dropped and counted. A report the service could not take stays at
the head of the queue and goes with the next batch; one it refused as malformed
(INVALID_ARGUMENT: a bug, not an outage) is dropped, counted and logged, never resent.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

import grpc

from errorclass_client.facts import MAX_BATCH
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb

log = logging.getLogger("errorclass_client.report")

DEFAULT_BATCH = 100
DEFAULT_INTERVAL = 1.0
DEFAULT_QUEUE = 10_000
MAX_REPORT_BYTES = 3 * 1024 * 1024
"""A report's size bound, under the service's default `--max-request-bytes` (4 MiB)."""

Send = Callable[[pb.ReportDecisionsRequest, float | None], pb.ReportDecisionsResponse]


class Reporter:
    """The queue of decisions not yet reported, and the thread that reports them."""

    def __init__(
        self,
        send: Send,
        *,
        batch: int = DEFAULT_BATCH,
        interval: float = DEFAULT_INTERVAL,
        queue: int = DEFAULT_QUEUE,
        timeout: float | None = None,
        on_response: Callable[[pb.ReportDecisionsResponse], None] | None = None,
    ) -> None:
        if not batch >= 1:
            raise ValueError("report batch must be at least 1")
        if interval <= 0 or queue < 1:
            raise ValueError("report interval and queue must be positive")
        self._send = send
        self.batch = min(batch, MAX_BATCH)
        self.interval = interval
        self.capacity = queue
        self.timeout = timeout
        self._on_response = on_response
        self._queue: deque[tuple[int, pb.ReportedDecision]] = deque()
        self._seq = 0
        self._lock = threading.Lock()
        self._sending = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self.reported = 0
        """Decisions the service accepted."""
        self.dropped = 0
        """Decisions dropped unreported: the queue was full, or the service refused them."""
        self._thread = threading.Thread(target=self._run, name="errorclass-report", daemon=True)
        self._thread.start()

    @property
    def pending(self) -> int:
        return len(self._queue)

    def add(self, decision: pb.ReportedDecision) -> None:
        """Queue a decision (the oldest dropped when the queue is full)."""
        with self._lock:
            if len(self._queue) >= self.capacity:
                self._queue.popleft()
                self.dropped += 1
            self._seq += 1
            self._queue.append((self._seq, decision))
            if len(self._queue) >= self.batch:
                self._wake.notify()

    def flush(self, timeout: float | None = None) -> int:
        """Report every pending decision now, batch after batch, within `timeout` (the
        client's deadline by default, per batch); how many the service accepted. Raises the
        call's error when a batch fails (the decisions stay queued)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        sent = 0
        with self._sending:
            while self._queue:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(
                        f"{len(self._queue)} decisions still pending at the deadline"
                    )
                sent += self._send_batch(self.timeout if left is None else left)
        return sent

    def close(self, timeout: float | None = None) -> None:
        """Flush (bounded by `timeout`), then stop the thread; what is left is dropped."""
        try:
            self.flush(timeout)
        except (grpc.RpcError, TimeoutError) as exc:
            log.warning("closing with %d decisions unreported: %s", self.pending, exc)
        with self._lock:
            self._closed = True
            self._wake.notify()
        self._thread.join(timeout=5)

    def _send_batch(self, timeout: float | None) -> int:
        """Send the oldest pending decisions as one report; how many were accepted."""
        with self._lock:
            head = [entry for _, entry in zip(range(self.batch), self._queue, strict=False)]
        request = pb.ReportDecisionsRequest()
        size = 0
        for seq, decision in head:
            size += decision.ByteSize() + 8
            if request.decisions and size > MAX_REPORT_BYTES:
                break
            request.decisions.append(decision)
            last = seq
        if not request.decisions:
            return 0
        try:
            response = self._send(request, timeout)
        except grpc.RpcError as err:
            if isinstance(err, grpc.Call) and err.code() is grpc.StatusCode.INVALID_ARGUMENT:
                dropped = self._remove_through(last)
                with self._lock:
                    self.dropped += dropped
                log.error("the service refused %d reported decisions: %s", dropped, err.details())
                return 0
            raise
        accepted = self._remove_through(last)
        with self._lock:
            self.reported += accepted
        if self._on_response is not None:
            self._on_response(response)
        return accepted

    def _remove_through(self, seq: int) -> int:
        """Remove the queued decisions up to `seq` (some may have been dropped meanwhile)."""
        removed = 0
        with self._lock:
            while self._queue and self._queue[0][0] <= seq:
                self._queue.popleft()
                removed += 1
        return removed

    def _run(self) -> None:
        last = time.monotonic()
        """When the last report went (or the thread started): a partial batch waits for
        `interval` after it."""
        failed = False
        """The last report failed: the next waits `interval`, however many are pending (no
        hot loop against a service that is down)."""
        while True:
            with self._lock:
                while not self._closed and (failed or len(self._queue) < self.batch):
                    left = last + self.interval - time.monotonic()
                    if left <= 0:
                        break
                    self._wake.wait(left)
                if self._closed:
                    return
                if not self._queue:
                    last = time.monotonic()
                    continue
            if not self._sending.acquire(blocking=False):
                last = time.monotonic()
                continue  # a flush is sending
            failed = False
            try:
                while len(self._queue) >= self.batch:  # a backlog goes at once, batch by batch
                    if not self._send_batch(self.timeout):
                        break
                if self._queue and time.monotonic() - last >= self.interval:
                    self._send_batch(self.timeout)
            except grpc.RpcError as exc:
                failed = True
                log.info("reporting decisions failed (%s); %d kept", exc, self.pending)
            finally:
                self._sending.release()
                last = time.monotonic()
