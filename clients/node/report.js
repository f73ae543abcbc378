// Decisions made in process, reported to the service with ReportDecisions, so the decision
// log, the metrics and the Unknown inbox still see every failure a local-first client (or a
// client answering from its bundle while the service was out of reach) classified.
//
// Why it is shaped so: reporting must never sit on a run's failure path, nor grow without
// bound while the service is away. Decisions wait in a bounded queue (the oldest dropped, and
// counted, when it is full); a batch goes when `batch` are pending or `intervalMs` has passed
// (an unref'd timer: it never keeps the process alive), oldest first, at most one report in
// flight, each within MAX_BATCH decisions and under the server's request size; a report that
// fails is put back in front and goes with the next batch; one the server refuses as
// malformed (INVALID_ARGUMENT: it would be refused again) is dropped and counted.
'use strict';

const { GRPC_CODES, LIMITS } = require('./facts');

// Under the server's default --max-request-bytes (4 MiB), with room for the envelope.
const MAX_REPORT_BYTES = 3 * 1024 * 1024;

class Reporter {
  // `send(decisions, deadlineMs)`: a promise of the ReportDecisionsResponse; `served(digest)`:
  // told the serving bundle's digest each report answers with; `allowed()`: whether a
  // background report may go now (the breaker is not open).
  constructor({ send, served, allowed = () => true, batch = 100, intervalMs = 1000, queue = 10000, deadlineMs = 1000 }) {
    for (const [name, value] of Object.entries({ batch, intervalMs, queue })) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a whole number of at least 1, not ${value}`);
    }
    this.send = send;
    this.served = served;
    this.allowed = allowed;
    this.batch = batch;
    this.intervalMs = intervalMs;
    this.max = queue;
    this.deadlineMs = deadlineMs;
    this.queue = []; // {decision, bytes}, oldest first
    this.reported = 0;
    this.dropped = 0;
    this.failures = 0;
    this.lastError = null;
    this.inFlight = null;
    this.timer = setInterval(() => this.kick(), intervalMs);
    this.timer.unref();
  }

  get pending() {
    return this.queue.length;
  }

  // One decision (the wire's ReportedDecision), queued; a batch goes once `batch` wait.
  add(decision) {
    this.queue.push({ decision, bytes: 0 }); // bytes: counted when a report is made
    this.trim();
    if (this.queue.length >= this.batch) this.kick();
  }

  trim() {
    const over = this.queue.length - this.max;
    if (over > 0) {
      this.queue.splice(0, over);
      this.dropped += over;
    }
  }

  // Send a batch in the background, unless one is in flight or the breaker is open.
  kick() {
    if (this.inFlight || !this.queue.length || !this.allowed()) return;
    this.inFlight = this.sendOne(this.deadlineMs).then((n) => {
      this.inFlight = null;
      if (n && this.queue.length >= this.batch) this.kick();
    }, () => {
      this.inFlight = null;
    });
  }

  // Send the oldest decisions (one report's worth); resolves to how many were taken, rejects
  // with the call's error (they are back in front of the queue, unless the server refused
  // them as malformed).
  async sendOne(deadlineMs) {
    let n = 0;
    let bytes = 0;
    while (n < this.queue.length && n < LIMITS.MAX_BATCH) {
      const item = this.queue[n];
      if (!item.bytes) item.bytes = approximateBytes(item.decision);
      if (n && bytes + item.bytes > MAX_REPORT_BYTES) break;
      bytes += item.bytes;
      n++;
    }
    const items = this.queue.splice(0, n);
    try {
      const response = await this.send(items.map((i) => i.decision), deadlineMs);
      this.reported += items.length;
      if (response && response.bundle_digest) this.served(response.bundle_digest);
      return items.length;
    } catch (err) {
      this.failures++;
      this.lastError = err;
      if (err && err.code === GRPC_CODES.INVALID_ARGUMENT) {
        this.dropped += items.length;
      } else {
        this.queue.unshift(...items);
        this.trim();
      }
      throw err;
    }
  }

  // Report every pending decision now, batch after batch, within `deadlineMs` in all:
  // resolves to how many this flush sent; rejects with the first failure.
  async flush(deadlineMs = this.deadlineMs) {
    const until = Date.now() + deadlineMs;
    if (this.inFlight) await this.inFlight;
    let sent = 0;
    while (this.queue.length) {
      const left = until - Date.now();
      if (left <= 0) throw Object.assign(new Error(`flush: ${this.queue.length} decisions still pending at the deadline`), { code: GRPC_CODES.DEADLINE_EXCEEDED });
      const call = this.sendOne(left);
      this.inFlight = call.catch(() => {});
      try {
        sent += await call;
      } finally {
        this.inFlight = null;
      }
    }
    return sent;
  }

  stop() {
    clearInterval(this.timer);
  }
}

// A decision's size on the wire, about (its JSON's UTF-8 bytes, which are more than its
// protobuf's): what keeps a report under the server's request limit.
function approximateBytes(decision) {
  return Buffer.byteLength(JSON.stringify(decision.descriptor)) + Buffer.byteLength(JSON.stringify(decision.answer)) + 128;
}

module.exports = { MAX_REPORT_BYTES, Reporter };
