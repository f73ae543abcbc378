// A circuit breaker: stop calling a service that keeps failing, and probe it again later.
//
// The classifier sits on a run's failure path, so a dead or hung service must not make
// every failed run wait for a deadline. The breaker opens after `failures` consecutive
// failures that say the service is the problem (the facts' `tripping` statuses), or at
// once on one of `opensAtOnce` (DEADLINE_EXCEEDED: a hung server costs one deadline).
// While it is open, calls fail at once without touching the network; a probe asks the
// service again after `resetMs` (doubling up to `maxResetMs` while it stays down), and
// the first probe that succeeds closes it. The numbers and statuses are the facts'
// (defaults.breaker), the same in every client.
//
// This is the state machine alone, with no timer and no network, so that
// clients/spec/vectors/breaker.json can drive it event by event; the Client runs the
// probe (an unref'd timer, so an open breaker never keeps a process alive).
'use strict';

const { DEFAULTS, GRPC_NAMES } = require('./facts');

const CLOSED = 'closed';
const OPEN = 'open';

class Breaker {
  constructor({
    failures = DEFAULTS.breaker.failures,
    resetMs = DEFAULTS.breaker.reset_ms,
    maxResetMs = DEFAULTS.breaker.max_reset_ms,
    tripping = DEFAULTS.breaker.tripping,
    opensAtOnce = DEFAULTS.breaker.opens_at_once,
  } = {}) {
    if (!Number.isInteger(failures) || failures < 1) throw new RangeError(`failures must be a whole number of at least 1, not ${failures}`);
    if (!(resetMs > 0) || !(maxResetMs >= resetMs)) throw new RangeError('resetMs must be positive and maxResetMs at least resetMs');
    this.failures = failures;
    this.resetMs = resetMs;
    this.maxResetMs = maxResetMs;
    this.tripping = new Set(tripping);
    this.opensAtOnce = new Set(opensAtOnce);
    this.state = CLOSED;
    this.consecutive = 0;
    this.wait = resetMs;
    this.opened = 0; // how many times it has opened
  }

  get isOpen() {
    return this.state === OPEN;
  }

  // Whether a call may go to the service now.
  allow() {
    return this.state === CLOSED;
  }

  // The outcome of a call it let through: 'ok', or the gRPC status (its name or number).
  // Returns true when this outcome opened it (the caller then schedules the probe).
  record(outcome) {
    if (outcome === 'ok') {
      this.consecutive = 0;
      return false;
    }
    const status = typeof outcome === 'number' ? GRPC_NAMES[outcome] : outcome;
    if (!this.tripping.has(status)) return false; // the request's fault, not the service's
    this.consecutive++;
    if (this.state === OPEN || (this.consecutive < this.failures && !this.opensAtOnce.has(status))) return false;
    this.state = OPEN;
    this.wait = this.resetMs;
    this.opened++;
    return true;
  }

  // How long to wait before the next probe (ms).
  probeWait() {
    return this.wait;
  }

  // A probe's outcome: success closes it; failure doubles the wait, up to maxResetMs.
  probed(ok) {
    if (this.state !== OPEN) return;
    if (ok) {
      this.state = CLOSED;
      this.consecutive = 0;
      this.wait = this.resetMs;
    } else {
      this.wait = Math.min(this.wait * 2, this.maxResetMs);
    }
  }
}

module.exports = { Breaker };
