// Calling the error classifier from Node.
//
// Written against Node 20, @grpc/grpc-js 1.14.7 and @grpc/proto-loader 0.8.1
// (pinned in package.json; package-lock.json pins the rest). The proto ships
// inside this package (generated/proto, a copy of the repository's proto/) and
// is loaded at run time with keepCase, so field names are the proto's own
// (http_status, not httpStatus), and enums travel as their names. Every
// descriptor is validated before it is sent (descriptor.js): one the service
// refuses is refused here, naming each field as the service names it.
//
// One behaviour with the other clients (clients/spec, the facts in generated/facts.json):
// every call has a deadline (250 ms unless the client or the call says otherwise); the
// channel retries UNAVAILABLE with the facts' service config, throttled (gRPC retry
// throttling: once about half the recent calls failed, it stops retrying, so an outage
// causes no retry storm); a circuit breaker (breaker.js) stops calling a service that
// keeps failing and probes it in the background. When the service cannot answer (down,
// overloaded, past the deadline, the breaker open) the call rejects with an
// UnclassifiedError that keeps the descriptors: classify them later (classifyBatch),
// and never store Unknown for an outage (Unknown means no rule matched).
'use strict';

const grpc = require('@grpc/grpc-js');
const { Breaker } = require('./breaker');
const { Bundle, BundleError, keyId, verifyBundle } = require('./bundle');
const { DescriptorError, descriptorFromFileData, fit, validateDescriptor } = require('./descriptor');
const {
  RuntimeFactError, describeToolFailure, descriptorFromError, descriptorFromHttpResponse, runtimeAttributes, runtimeFacts,
} = require('./describe');
const { evidenceFromBody, evidenceFromStreamError } = require('./evidence');
const { DEFAULTS, FACTS, GRPC_CODES, GRPC_NAMES, LIMITS, ORIGINS, serviceConfig, wellFormed } = require('./facts');
const { PROTO, badRequestViolations, definition, enumNumber } = require('./proto');
const { descriptorFromFinishReason, descriptorFromResponse } = require('./response');
const { retryAfter } = require('./retry');

const VERSION = require('./package.json').version;

// The generated client class of the service the facts name (errorclass.v1.ErrorClassifier).
function loadService(protoPath = PROTO) {
  const loaded = grpc.loadPackageDefinition(definition(protoPath));
  return FACTS.service.name.split('.').reduce((node, part) => node[part], loaded);
}

// The service could not answer: down, overloaded, past the deadline, or the breaker open
// (then `shortCircuited`, and nothing was sent). It is not Unknown: Unknown means no rule
// matched. `descriptors` are the descriptors of the call, validated, in order: keep them
// and classify them later (Client#classifyBatch); `code` is the gRPC status (a number, as
// grpc-js errors carry it) and `cause` the grpc-js error, when there was one.
class UnclassifiedError extends Error {
  constructor(descriptors, { code, details = '', cause, shortCircuited = false } = {}) {
    const them = descriptors.length === 1 ? 'the descriptor and classify it' : 'the descriptors and classify them';
    super(`not classified (${GRPC_NAMES[code] ?? code}: ${details}); keep ${them} later`, cause ? { cause } : undefined);
    this.name = 'UnclassifiedError';
    this.descriptors = descriptors;
    this.code = code;
    this.details = details;
    this.shortCircuited = shortCircuited;
  }

  // The descriptor of a classify() or classifyError() call.
  get descriptor() {
    return this.descriptors[0];
  }
}

// A channel to one classifier server and the calls over it. Close it when done.
//
//   const client = new Client('127.0.0.1:50051');
//   const answer = await client.classifyError(err, { origin: 'provider', provider: 'openai' });
//
// Options: `credentials` (grpc.credentials.createSsl(ca, key, cert) for TLS or mTLS;
// insecure by default), `deadlineMs` (each call's deadline unless the call names one;
// Infinity for none), `attempts` (tries per call while the server is UNAVAILABLE; 1
// turns retries off), `breaker` (false turns it off; an object overrides its numbers),
// `channelOptions` (more grpc-js channel options).
class Client {
  constructor(address, {
    credentials = grpc.credentials.createInsecure(),
    deadlineMs = DEFAULTS.deadline_ms,
    attempts = DEFAULTS.attempts,
    breaker = true,
    channelOptions = {},
  } = {}) {
    const ErrorClassifier = loadService();
    this.address = address;
    this.deadlineMs = deadlineMs;
    // The raw grpc-js client (ListClasses, GetRuleset, ... with no breaker or validation).
    this.stub = new ErrorClassifier(address, credentials, {
      'grpc.service_config': JSON.stringify(serviceConfig(attempts)),
      'grpc.enable_retries': attempts > 1 ? 1 : 0,
      ...channelOptions,
    });
    // Connect now, not on the first call: a runtime makes its client at start and calls it
    // on a failure, which should not also pay for the connection (or learn only then
    // that the service is down).
    this.stub.getChannel().getConnectivityState(true);
    this.breaker = breaker ? new Breaker(breaker === true ? {} : breaker) : null;
    // Calls by how they ended: answered by the server, failed (rejected), and failed
    // without trying the server because the breaker was open.
    this.counters = { server: 0, failed: 0, short_circuited: 0 };
    this._probeTimer = null;
    this._closed = false;
  }

  // One descriptor (the descriptor-file shape: origin by name) -> one ClassifyResponse
  // (enums as their names, and retry_after_ms). Rejects with a DescriptorError before
  // sending a malformed descriptor, and with one naming the fields the server refused
  // (INVALID_ARGUMENT: a server with other limits, an `explainRule` its rules do not
  // have); with an UnclassifiedError keeping it when the service cannot answer.
  // `explainRule` (a rule id, with explain) asks why that rule did or did not decide.
  classify(descriptor, { explain = false, explainRule = '', deadlineMs } = {}) {
    return this._send(() => {
      const valid = validateDescriptor(descriptor);
      return [[valid], { descriptor: wire(valid), explain: explain || Boolean(explainRule), explain_rule: explainRule }];
    }, 'Classify', deadlineMs).then(served);
  }

  // descriptorFromError's descriptor of a live error, classified. `options` are
  // descriptorFromError's (origin, provider, attributes, timeLimit, veto, stage,
  // refusedBy, providerCalls), with classify's explain, explainRule and deadlineMs.
  classifyError(err, { explain, explainRule, deadlineMs, ...options } = {}) {
    let descriptor;
    try {
      descriptor = descriptorFromError(err, options);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.classify(descriptor, { explain, explainRule, deadlineMs });
  }

  // Many descriptors in one call (up to the facts' MAX_BATCH), answers in order: what an
  // UnclassifiedError kept, once the service is back. A malformed descriptor refuses the
  // whole call before sending, naming each bad field by its place (requests[3].descriptor.type).
  classifyBatch(descriptors, { explain = false, deadlineMs } = {}) {
    return this._send(() => {
      if (descriptors.length > LIMITS.MAX_BATCH) {
        throw new DescriptorError([{ field: 'requests', message: `${descriptors.length} requests exceed the limit of ${LIMITS.MAX_BATCH}` }]);
      }
      const valid = allValid(descriptors);
      return [valid, { requests: valid.map((d) => ({ descriptor: wire(d), explain })) }];
    }, 'ClassifyBatch', deadlineMs).then((response) => response.responses.map(served));
  }

  // A bidirectional stream: one answer per descriptor, in order.
  classifyStream(descriptors, { explain = false, deadlineMs } = {}) {
    let valid;
    try {
      valid = allValid(descriptors); // before the stream opens: a refusal sends nothing
    } catch (err) {
      return Promise.reject(err);
    }
    const refused = this._refused(valid);
    if (refused) return Promise.reject(refused);
    return new Promise((resolve, reject) => {
      const answers = [];
      const call = this.stub.ClassifyStream({ deadline: this._deadline(deadlineMs) });
      call.on('data', (answer) => answers.push(served(answer)));
      call.on('error', (err) => reject(this._failed(err, valid)));
      call.on('end', () => {
        this._answered();
        resolve(answers);
      });
      for (const descriptor of valid) call.write({ descriptor: wire(descriptor), explain });
      call.end();
    });
  }

  // Stop probing and close the channel.
  close() {
    this._closed = true;
    clearTimeout(this._probeTimer);
    this._probeTimer = null;
    this.stub.close();
  }

  _send(build, method, deadlineMs) {
    let descriptors;
    let request;
    try {
      [descriptors, request] = build();
    } catch (err) {
      return Promise.reject(err);
    }
    const refused = this._refused(descriptors);
    if (refused) return Promise.reject(refused);
    return new Promise((resolve, reject) => {
      this.stub[method](request, { deadline: this._deadline(deadlineMs) }, (err, response) => {
        if (err) {
          reject(this._failed(err, descriptors));
        } else {
          this._answered();
          resolve(response);
        }
      });
    });
  }

  // The breaker is open: fail at once, sending nothing.
  _refused(descriptors) {
    if (!this.breaker || this.breaker.allow()) return null;
    this.counters.short_circuited++;
    this.counters.failed++;
    return new UnclassifiedError(descriptors, {
      code: GRPC_CODES.UNAVAILABLE,
      details: `circuit open: ${this.address} kept failing; not called (probing in the background)`,
      shortCircuited: true,
    });
  }

  _answered() {
    this.counters.server++;
    if (this.breaker) this.breaker.record('ok');
  }

  _failed(err, descriptors) {
    this.counters.failed++;
    if (this.breaker && this.breaker.record(err.code)) this._scheduleProbe();
    if (err.code === GRPC_CODES.INVALID_ARGUMENT) return refusedByServer(err);
    return new UnclassifiedError(descriptors, { code: err.code, details: err.details, cause: err });
  }

  _deadline(deadlineMs = this.deadlineMs) {
    return deadlineMs === Infinity ? Infinity : new Date(Date.now() + deadlineMs);
  }

  // The probe: after the breaker's wait, ask the service for its ruleset; unref'd, so an
  // open breaker never keeps the process alive.
  _scheduleProbe() {
    if (this._closed || !this.breaker) return;
    this._probeTimer = setTimeout(() => this._probe(), this.breaker.probeWait());
    this._probeTimer.unref();
  }

  _probe() {
    this._probeTimer = null;
    if (this._closed) return;
    const deadlineMs = this.deadlineMs === Infinity ? DEFAULTS.deadline_ms : this.deadlineMs;
    this.stub.GetRuleset({}, { deadline: this._deadline(deadlineMs) }, (err) => {
      if (this._closed) return;
      this.breaker.probed(!err);
      if (this.breaker.isOpen) this._scheduleProbe();
    });
  }
}

// The server refused the request (INVALID_ARGUMENT): a DescriptorError naming each field
// as its google.rpc.BadRequest detail does, as the Python, Go and Java clients raise it
// (the details' text when it sent none); the grpc-js error is its `cause`.
function refusedByServer(err) {
  const violations = badRequestViolations(err).map((v) => ({ field: v.field, message: v.description }));
  return new DescriptorError(violations.length ? violations : [{ field: '', message: err.details || '' }], { cause: err });
}

// An answer the service gave, as this package returns it: `retry_after_ms`, retry_after
// as the milliseconds a runtime waits (setTimeout's unit; null when the answer gives none,
// as it never does when the answer is not retryable), and `local: false` (a bundle's
// answers say true).
function served(answer) {
  answer.retry_after_ms = durationMs(answer.retry_after);
  answer.local = false;
  return answer;
}

function durationMs(d) {
  return d ? Number(d.seconds || 0) * 1000 + Number(d.nanos || 0) / 1e6 : null;
}

// The validated descriptor -> the wire's: origin by its number, and every text well
// formed (protobuf carries UTF-8; a lone surrogate in a JavaScript string cannot travel).
function wire(valid) {
  const out = deepWellFormed(valid);
  if (out.origin) out.origin = ORIGINS.indexOf(out.origin);
  return out;
}

function deepWellFormed(value) {
  if (typeof value === 'string') return wellFormed(value);
  if (Array.isArray(value)) return value.map(deepWellFormed);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [wellFormed(k), deepWellFormed(v)]));
  }
  return value;
}

// Each descriptor of a batch or stream validated before any is sent: one DescriptorError
// naming every bad field of every descriptor (requests[3].descriptor.type).
function allValid(descriptors) {
  const valid = [];
  const violations = [];
  descriptors.forEach((d, i) => {
    try {
      valid.push(validateDescriptor(d, { prefix: `requests[${i}].descriptor` }));
    } catch (err) {
      if (!(err instanceof DescriptorError)) throw err;
      violations.push(...err.violations);
    }
  });
  if (violations.length) throw new DescriptorError(violations);
  return valid;
}

// The descriptor-file shape -> the wire shape, validated (throws DescriptorError).
function toWire(d, { prefix = 'descriptor' } = {}) {
  return wire(validateDescriptor(d, { prefix }));
}

// --- the functions before the Client (kept; each is now a Client method) ------------------

// A Client for `address` (host:port): `new Client(address, options)`.
function connect(address, options = {}) {
  return new Client(address, options);
}

// client.classify(descriptor, options).
function classify(client, descriptor, options) {
  return client.classify(descriptor, options);
}

// client.classifyBatch(descriptors, options).
function classifyBatch(client, descriptors, options) {
  return client.classifyBatch(descriptors, options);
}

// client.classifyStream(descriptors, options).
function classifyStream(client, descriptors, options) {
  return client.classifyStream(descriptors, options);
}

// --- answers --------------------------------------------------------------------------------

// A ClassifyResponse as plain data, in the shape `classifier classify --format json` prints.
function answerJson(r) {
  const out = {
    class: r.class_name,
    class_number: enumNumber('RunErrorClass', r.error_class),
    effect: FACTS.effects[enumNumber('RunEffect', r.effect)],
    retryable: r.retryable,
    action: { id: r.action.id, summary: r.action.summary, runbook_url: r.action.runbook_url },
    rule: r.rule_id,
    ruleset_version: r.ruleset_version,
    ruleset_digest: r.ruleset_digest,
  };
  const unknown = enumNumber('UnknownReason', r.unknown_reason);
  if (unknown) out.unknown_reason = FACTS.unknown_reasons[unknown];
  if (r.retry_after) {
    out.retry_after_ms = durationMs(r.retry_after);
    out.retry_after_source = r.retry_after_source;
  }
  if (r.local) {
    out.local = true;
    out.bundle_digest = r.bundle_digest;
  }
  if (r.explanation) out.explanation = r.explanation;
  return out;
}

module.exports = {
  Breaker,
  Bundle,
  BundleError,
  Client,
  DEFAULTS,
  DescriptorError,
  FACTS,
  PROTO,
  RuntimeFactError,
  UnclassifiedError,
  VERSION,
  answerJson,
  classify,
  classifyBatch,
  classifyStream,
  connect,
  descriptorFromError,
  descriptorFromFileData,
  descriptorFromFinishReason,
  descriptorFromHttpResponse,
  descriptorFromResponse,
  describeToolFailure,
  evidenceFromBody,
  evidenceFromStreamError,
  fit,
  grpc,
  keyId,
  loadService,
  retryAfter,
  runtimeAttributes,
  runtimeFacts,
  serviceConfig,
  toWire,
  validateDescriptor,
  verifyBundle,
};
