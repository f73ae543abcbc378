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
// and never store Unknown for an outage (Unknown means no rule matched) -- unless the client
// has a ruleset bundle (bundle.js; source.js: where it comes from and what it trusts): then
// the bundle answers, marked local, as the service would have; in local-first mode it answers
// first, and the decisions are reported to the service in batches (report.js).
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
const { Reporter } = require('./report');
const { retryAfter } = require('./retry');
const { BundleSource } = require('./source');

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
//
// A bundle to answer with when the service cannot (docs/bundles.md): `bundleFile` (a bundle
// to start from) with `signaturesFile` (FILE.sig.json by default), `trustedKeys` (Ed25519
// public keys: PEM file paths, PEM text, Buffers or KeyObjects; several while keys rotate),
// `allowUnsigned` (without trusted keys, use bundles unverified: never implied),
// `fetchBundle` (fetch the serving bundle with GetBundle at start, in the background, and
// again whenever the service names another ruleset or bundle; on by default when any of the
// above is given or in local-first mode), `mode` ('remote': ask the service, answer from the
// bundle when it cannot; 'local_first': answer from the bundle in process and report the
// decisions with ReportDecisions), `reportBatch` (100), `reportIntervalMs` (1000),
// `reportQueue` (10,000), `refreshRetryMs` (a failed fetch is retried no sooner: 5000), `now`
// (the clock a bundle turns a provider's date into a wait with: Date.now).
class Client {
  constructor(address, {
    credentials = grpc.credentials.createInsecure(),
    deadlineMs = DEFAULTS.deadline_ms,
    attempts = DEFAULTS.attempts,
    breaker = true,
    channelOptions = {},
    mode = 'remote',
    bundleFile = null,
    signaturesFile = null,
    trustedKeys = [],
    allowUnsigned = false,
    fetchBundle,
    reportBatch = 100,
    reportIntervalMs = 1000,
    reportQueue = 10000,
    refreshRetryMs = 5000,
    now,
  } = {}) {
    if (mode !== 'remote' && mode !== 'local_first') throw new TypeError(`mode must be 'remote' or 'local_first', not ${JSON.stringify(mode)}`);
    const bundled = mode === 'local_first' || Boolean(bundleFile) || trustedKeys.length > 0 || Boolean(allowUnsigned);
    // Read (and refuse) the start file before opening anything: a refused start file is an
    // error of the construction, with its stable code (a BundleError).
    const source = new BundleSource({ trustedKeys, allowUnsigned });
    if (bundleFile) source.offer(...BundleSource.readFiles(bundleFile, signaturesFile));
    const ErrorClassifier = loadService();
    this.address = address;
    this.deadlineMs = deadlineMs;
    this.mode = mode;
    this.fetchBundle = fetchBundle === undefined ? bundled : Boolean(fetchBundle);
    this.refreshRetryMs = refreshRetryMs;
    this.now = now;
    this.source = source;
    // The raw grpc-js client (ListClasses, GetRuleset, ... with no breaker or validation).
    this.stub = new ErrorClassifier(address, credentials, {
      'grpc.service_config': JSON.stringify(serviceConfig(attempts)),
      'grpc.enable_retries': attempts > 1 ? 1 : 0,
      // a bundle may be larger than grpc-js's 4 MiB default (docs/bundles.md, GetBundle)
      ...(this.fetchBundle ? { 'grpc.max_receive_message_length': 64 * 1024 * 1024 } : {}),
      ...channelOptions,
    });
    // Connect now, not on the first call: a runtime makes its client at start and calls it
    // on a failure, which should not also pay for the connection (or learn only then
    // that the service is down).
    this.stub.getChannel().getConnectivityState(true);
    if (this.source.bundle || this.fetchBundle) warm(ErrorClassifier.service);
    this.breaker = breaker ? new Breaker(breaker === true ? {} : breaker) : null;
    // Calls by how they ended: answered by the server, answered from the bundle (`local`),
    // failed (rejected), and failed without trying the server because the breaker was open.
    this.counters = { server: 0, local: 0, failed: 0, short_circuited: 0 };
    this._probeTimer = null;
    this._closed = false;
    this._fetching = null; // the GetBundle in flight
    this._fetchFailedAt = -Infinity;
    this._refreshTimer = null;
    this._refusedServed = { ruleset: null, bundle: null }; // the digests of the last served bundle refused
    // Decisions made from the bundle, reported in batches (local-first, and fallback answers).
    this.reporter = bundled ? new Reporter({
      send: (decisions, ms) => this._report(decisions, ms),
      served: (digest) => this._named(digest, 'bundle'),
      allowed: () => !this.breaker || !this.breaker.isOpen,
      batch: reportBatch,
      intervalMs: reportIntervalMs,
      queue: reportQueue,
      deadlineMs: finite(deadlineMs),
    }) : null;
    if (this.fetchBundle) this._refreshSoon();
  }

  // The bundle in use (a Bundle), or null.
  get bundle() {
    return this.source.bundle;
  }

  // The digest of the bundle in use (sha256:...), or ''.
  get bundleDigest() {
    return this.source.bundle ? this.source.bundle.bundleDigest : '';
  }

  // How many bundles were refused (a start file, a load, a fetched one), and the last
  // refusal (a BundleError: `code` the stable code), or null.
  get refusals() {
    return this.source.refusals;
  }

  get lastRefusal() {
    return this.source.lastRefusal;
  }

  // Decisions waiting to be reported, reported, and dropped (the queue was full, or the
  // server refused them as malformed).
  get reports() {
    const r = this.reporter;
    return { pending: r ? r.pending : 0, reported: r ? r.reported : 0, dropped: r ? r.dropped : 0 };
  }

  // Use the bundle of a file (and its signatures: `signatures`, else FILE.sig.json when it
  // exists), verified as the client is configured. Refused: a BundleError, counted, and the
  // bundle in use stays in use. Returns the Bundle.
  loadBundle(file, { signatures = null } = {}) {
    let files;
    try {
      files = BundleSource.readFiles(file, signatures);
    } catch (err) {
      this.source.refused(err);
      throw err;
    }
    return this.source.offer(...files);
  }

  // Fetch the serving bundle now (GetBundle with if_none_match the digest in use), within
  // the deadline: resolves to {changed, bundleDigest}; rejects with an UnclassifiedError-like
  // grpc failure (`code`) or a BundleError (refused: counted, the bundle in use stays). At
  // most one fetch is in flight: a second call shares it.
  refreshBundle({ deadlineMs } = {}) {
    if (this._fetching) return this._fetching;
    const ask = { if_none_match: this.bundleDigest };
    this._fetching = new Promise((resolve, reject) => {
      this.stub.GetBundle(ask, { deadline: this._deadline(finite(deadlineMs ?? this.deadlineMs)) }, (err, response) => {
        if (err) {
          reject(err);
          return;
        }
        try {
          if (response.unchanged || response.bundle_digest === this.bundleDigest) {
            resolve({ changed: false, bundleDigest: this.bundleDigest });
            return;
          }
          const sig = response.signatures && response.signatures.length ? response.signatures : null;
          let bundle;
          try {
            bundle = this.source.offer(response.bundle, sig);
          } catch (refused) {
            // not fetched again for answers naming the same ruleset or bundle: it would be refused again
            this._refusedServed = { ruleset: response.ruleset_digest, bundle: response.bundle_digest };
            throw refused;
          }
          resolve({ changed: true, bundleDigest: bundle.bundleDigest });
        } catch (error) {
          reject(error);
        }
      });
    }).then((out) => {
      this._fetching = null;
      this._fetchFailedAt = -Infinity;
      return out;
    }, (err) => {
      this._fetching = null;
      this._fetchFailedAt = Date.now();
      throw err;
    });
    return this._fetching;
  }

  // Report every pending decision now (bounded by the deadline): resolves to how many.
  flush({ deadlineMs } = {}) {
    return this.reporter ? this.reporter.flush(finite(deadlineMs ?? this.deadlineMs)) : Promise.resolve(0);
  }

  // One descriptor (the descriptor-file shape: origin by name) -> one ClassifyResponse
  // (enums as their names, and retry_after_ms). Rejects with a DescriptorError before
  // sending a malformed descriptor, and with one naming the fields the server refused
  // (INVALID_ARGUMENT: a server with other limits, an `explainRule` its rules do not
  // have); with an UnclassifiedError keeping it when the service cannot answer.
  // `explainRule` (a rule id, with explain) asks why that rule did or did not decide.
  // With a bundle: in local-first mode the answer is the bundle's, at once; in remote mode
  // the bundle answers when the service cannot (down, the breaker open, past the deadline),
  // within the call's deadline. A bundle's answer says `local: true` and its `bundle_digest`.
  classify(descriptor, { explain = false, explainRule = '', deadlineMs } = {}) {
    return this._send(() => {
      const valid = validateDescriptor(descriptor);
      return [[valid], { descriptor: wire(valid), explain: explain || Boolean(explainRule), explain_rule: explainRule }];
    }, 'Classify', deadlineMs, (response) => [this._served(response)], (answers) => answers[0]);
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
    }, 'ClassifyBatch', deadlineMs, (response) => response.responses.map((a) => this._served(a)), (answers) => answers);
  }

  // A bidirectional stream: one answer per descriptor, in order.
  classifyStream(descriptors, { explain = false, deadlineMs } = {}) {
    let valid;
    try {
      valid = allValid(descriptors); // before the stream opens: a refusal sends nothing
    } catch (err) {
      return Promise.reject(err);
    }
    let local;
    try {
      local = this._localFirst(valid);
    } catch (err) {
      return Promise.reject(err);
    }
    if (local) return Promise.resolve(local);
    const refused = this._refused(valid);
    if (refused) return this._fallback(refused, valid, (answers) => answers);
    return new Promise((resolve, reject) => {
      const answers = [];
      let failed = false;
      const call = this.stub.ClassifyStream({ deadline: this._callDeadline(deadlineMs) });
      call.on('data', (answer) => answers.push(this._served(answer)));
      call.on('error', (err) => {
        failed = true;
        this._fallback(this._failed(err, valid), valid, (a) => a).then(resolve, reject);
      });
      call.on('end', () => {
        if (failed) return;
        this._answered();
        resolve(answers);
      });
      for (const descriptor of valid) call.write({ descriptor: wire(descriptor), explain });
      call.end();
    });
  }

  // Stop probing, reporting and refreshing, and close the channel. With decisions pending,
  // they are reported first (within the deadline): the returned promise settles when the
  // channel is closed (a flush that fails is given up: the decisions were made, only their
  // report is lost, and counted as dropped).
  close({ deadlineMs } = {}) {
    if (this._closed) return Promise.resolve();
    this._closed = true;
    clearTimeout(this._probeTimer);
    this._probeTimer = null;
    clearTimeout(this._refreshTimer);
    this._refreshTimer = null;
    const reporter = this.reporter;
    const done = () => {
      if (reporter) {
        reporter.stop();
        reporter.dropped += reporter.pending;
        reporter.queue.length = 0;
      }
      this.stub.close();
    };
    if (!reporter || (!reporter.pending && !reporter.inFlight)) {
      done();
      return Promise.resolve();
    }
    return reporter.flush(finite(deadlineMs ?? this.deadlineMs)).catch(() => 0).then(done);
  }

  // One call: the bundle's answers in local-first mode; else the service's (`answers` of its
  // response), or the bundle's when the service cannot answer; `pick` shapes the result.
  _send(build, method, deadlineMs, answers, pick) {
    const started = Date.now();
    let descriptors;
    let request;
    try {
      [descriptors, request] = build();
    } catch (err) {
      return Promise.reject(err);
    }
    let local;
    try {
      local = this._localFirst(descriptors);
    } catch (err) {
      return Promise.reject(err);
    }
    if (local) return Promise.resolve(pick(local));
    const refused = this._refused(descriptors);
    if (refused) return this._fallback(refused, descriptors, pick);
    return new Promise((resolve, reject) => {
      let settled = false;
      let timer = null;
      const call = this.stub[method](request, { deadline: this._deadline(deadlineMs) }, (err, response) => {
        clearTimeout(timer);
        if (settled) return; // the bundle answered: the call was cancelled
        settled = true;
        if (err) {
          this._fallback(this._failed(err, descriptors), descriptors, pick).then(resolve, reject);
        } else {
          this._answered();
          resolve(pick(answers(response)));
        }
      });
      // With a bundle to fall back on, a call that has not answered a little before the
      // deadline is given up and the bundle answers, so that its answer too comes within the
      // deadline (a loaded machine fires timers late; grpc-js's own deadline is one).
      const wait = this._fallbackWait(deadlineMs);
      if (wait !== null) {
        timer = setTimeout(() => { // from the call's start: its first serialisation may take a while
          if (settled) return;
          settled = true;
          call.cancel();
          const late = { code: GRPC_CODES.DEADLINE_EXCEEDED, details: `no answer within ${wait} ms: answered from the bundle` };
          this._fallback(this._failed(late, descriptors), descriptors, pick).then(resolve, reject);
        }, Math.max(0, wait - (Date.now() - started)));
      }
    });
  }

  // Local-first with a bundle: its answers, each queued for the report; else null.
  _localFirst(descriptors) {
    if (this.mode !== 'local_first' || !this.source.bundle) return null;
    return this._fromBundle(descriptors);
  }

  // The service could not answer (`error`): the bundle's answers when there is one (and the
  // descriptors are not what the server refused), else the error.
  _fallback(error, descriptors, pick) {
    if (!(error instanceof UnclassifiedError) || !this.source.bundle) return Promise.reject(error);
    try {
      return Promise.resolve(pick(this._fromBundle(descriptors)));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  _fromBundle(descriptors) {
    const bundle = this.source.bundle;
    const answers = descriptors.map((d) => bundle.classify(d, { now: this.now }));
    this.counters.local += answers.length;
    if (this.reporter) {
      const decidedAt = timestamp(Date.now());
      for (let i = 0; i < answers.length; i++) {
        this.reporter.add({
          descriptor: wire(descriptors[i]), answer: answerWire(answers[i]), bundle_digest: answers[i].bundle_digest, decided_at: decidedAt,
        });
      }
    }
    return answers;
  }

  // An answer the service gave; a ruleset other than the bundle's asks for the serving bundle.
  _served(answer) {
    if (this.fetchBundle && (!this.source.bundle || answer.ruleset_digest !== this.source.bundle.digest)
      && answer.ruleset_digest !== this._refusedServed.ruleset) this._refreshSoon();
    return served(answer);
  }

  // A report named the serving bundle: fetch it when it is not the one in use.
  _named(digest) {
    if (this.fetchBundle && digest !== this.bundleDigest && digest !== this._refusedServed.bundle) this._refreshSoon();
  }

  _report(decisions, deadlineMs) {
    return new Promise((resolve, reject) => {
      this.stub.ReportDecisions({ decisions }, { deadline: this._deadline(deadlineMs) }, (err, response) => (err ? reject(err) : resolve(response)));
    });
  }

  // A fetch in the background, unless one is in flight, the client is closed, or the last
  // one failed less than refreshRetryMs ago (then one is scheduled for when that has passed).
  _refreshSoon() {
    if (this._closed || this._fetching || this._refreshTimer) return;
    const wait = this._fetchFailedAt + this.refreshRetryMs - Date.now();
    if (wait > 0) {
      this._refreshTimer = setTimeout(() => {
        this._refreshTimer = null;
        this._refreshSoon();
      }, wait);
      this._refreshTimer.unref();
      return;
    }
    this.refreshBundle().catch(() => {}); // counted (refusals) or retried later
  }

  // How long a call waits for the service before the bundle answers (a fifth of the
  // deadline before it, at most 50 ms before), or null: no bundle, or no deadline.
  _fallbackWait(deadlineMs = this.deadlineMs) {
    if (deadlineMs === Infinity || !this.source.bundle) return null;
    return Math.max(1, Math.round(deadlineMs - Math.min(50, deadlineMs / 5)));
  }

  // A stream's deadline: with a bundle to fall back on, the wait above.
  _callDeadline(deadlineMs = this.deadlineMs) {
    const wait = this._fallbackWait(deadlineMs);
    return wait === null ? this._deadline(deadlineMs) : this._deadline(wait);
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
  answer.bundle_digest = '';
  return answer;
}

// The first call of a process pays for compiling its messages' codecs and the validator
// (tens of milliseconds on a loaded machine): a client with a bundle to fall back on pays
// it when it is made, not in its first failure's deadline.
function warm(service) {
  const d = validateDescriptor({ type: 'x', supertypes: ['y'], causes: [{ type: 'z' }], attributes: { k: 'v' }, origin: 'provider' });
  for (const method of ['Classify', 'ClassifyBatch', 'ReportDecisions']) {
    const m = service[method];
    const request = method === 'Classify' ? { descriptor: wire(d) } : method === 'ClassifyBatch' ? { requests: [{ descriptor: wire(d) }] }
      : { decisions: [{ descriptor: wire(d), answer: { action: {}, retry_after: { seconds: 1 } }, decided_at: { seconds: 1 } }] };
    m.responseDeserialize(m.responseSerialize(m.responseDeserialize(Buffer.alloc(0))));
    m.requestSerialize(request);
  }
}

// A deadline for a background call (a report, a fetch): the client's, or the default when it has none.
function finite(deadlineMs) {
  return deadlineMs === Infinity ? Math.max(DEFAULTS.deadline_ms, 5000) : deadlineMs;
}

// A google.protobuf.Timestamp of epoch milliseconds.
function timestamp(ms) {
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

// A bundle's answer as the wire's ClassifyResponse (what ReportDecisions takes).
function answerWire(a) {
  return {
    error_class: a.error_class,
    class_name: a.class_name,
    action: { id: a.action.id, summary: a.action.summary, runbook_url: a.action.runbook_url },
    effect: a.effect,
    retryable: a.retryable,
    rule_id: a.rule_id,
    ruleset_version: a.ruleset_version,
    ruleset_digest: a.ruleset_digest,
    unknown_reason: a.unknown_reason,
    retry_after: a.retry_after,
    retry_after_source: a.retry_after_source,
  };
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
