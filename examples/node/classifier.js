// Calling the error classifier from Node.
//
// Written against Node 20, @grpc/grpc-js 1.14.7 and @grpc/proto-loader 0.8.1
// (pinned in package.json; package-lock.json pins the rest). The proto is
// loaded at run time with keepCase, so field names are the proto's own
// (http_status, not httpStatus), and enums travel as their names.
'use strict';

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO = path.join(__dirname, '..', '..', 'proto', 'errorclass', 'v1', 'classifier.proto');
const MAX_CAUSES = 32; // classifier/limits.py MAX_CAUSES
const MAX_SUPERTYPES = 64; // classifier/limits.py MAX_SUPERTYPES
const GRPC_CODES = [
  'OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND',
  'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED',
  'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED',
];

function loadService(protoPath = PROTO) {
  const definition = protoLoader.loadSync(protoPath, {
    keepCase: true, // field names as in the proto
    enums: String, // RUN_ERROR_CLASS_RATE_LIMITED, not 3 (class_name and error_class both come back)
    longs: Number,
    defaults: true, // unset fields read as their zero values, like every other gRPC runtime
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition).errorclass.v1.ErrorClassifier;
}

// A client for `address` (host:port). Pass `credentials` from
// grpc.credentials.createSsl(ca, key, cert) for TLS or mTLS.
function connect(address, { credentials = grpc.credentials.createInsecure() } = {}) {
  const ErrorClassifier = loadService();
  return new ErrorClassifier(address, credentials);
}

function deadline(ms) {
  return new Date(Date.now() + ms);
}

// One descriptor -> one answer. Rejects with the gRPC error; for a malformed
// descriptor that is INVALID_ARGUMENT, and err.details names every bad field
// ("descriptor.causes[0].type: must not be empty").
function classify(client, descriptor, { explain = false, deadlineMs = 5000 } = {}) {
  return new Promise((resolve, reject) => {
    client.Classify(
      { descriptor: toWire(descriptor), explain },
      { deadline: deadline(deadlineMs) },
      (err, response) => (err ? reject(err) : resolve(response)),
    );
  });
}

// Many descriptors in one call (up to 1,000); answers in request order.
function classifyBatch(client, descriptors, { explain = false, deadlineMs = 5000 } = {}) {
  return new Promise((resolve, reject) => {
    client.ClassifyBatch(
      { requests: descriptors.map((d) => ({ descriptor: toWire(d), explain })) },
      { deadline: deadline(deadlineMs) },
      (err, response) => (err ? reject(err) : resolve(response.responses)),
    );
  });
}

// A bidirectional stream: one answer per descriptor, in order.
function classifyStream(client, descriptors, { explain = false, deadlineMs = 30000 } = {}) {
  return new Promise((resolve, reject) => {
    const answers = [];
    const call = client.ClassifyStream({ deadline: deadline(deadlineMs) });
    call.on('data', (answer) => answers.push(answer));
    call.on('error', reject);
    call.on('end', () => resolve(answers));
    for (const d of descriptors) call.write({ descriptor: toWire(d), explain });
    call.end();
  });
}

// The descriptor-file shape (the one `classifier classify` reads: origin as
// `provider`, grpc_status as a name or a number) -> the wire shape.
function toWire(d) {
  const wire = { ...d };
  if (typeof d.origin === 'string' && !d.origin.startsWith('ORIGIN_')) {
    const origin = d.origin.toLowerCase() === 'caller' ? 'user' : d.origin.toLowerCase();
    wire.origin = `ORIGIN_${origin.toUpperCase()}`;
  }
  wire.grpc_status = grpcNumber(d.grpc_status);
  if (wire.grpc_status === undefined) delete wire.grpc_status;
  if (d.causes) {
    wire.causes = d.causes.map((c) => {
      const cause = { ...c, grpc_status: grpcNumber(c.grpc_status) };
      if (cause.grpc_status === undefined) delete cause.grpc_status;
      return cause;
    });
  }
  if (d.attributes) {
    wire.attributes = Object.fromEntries(Object.entries(d.attributes).map(([k, v]) => [k, String(v)]));
  }
  return wire;
}

function grpcNumber(value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') return value;
  const name = String(value).trim().toUpperCase();
  if (/^\d+$/.test(name)) return Number(name);
  const index = GRPC_CODES.indexOf(name === 'CANCELED' ? 'CANCELLED' : name);
  if (index < 0) throw new Error(`unknown gRPC status code ${JSON.stringify(value)}`);
  return index;
}

// A ClassifyResponse as plain data, in the shape `classifier classify
// --format json` prints.
function answerJson(r) {
  const out = {
    class: r.class_name,
    class_number: classNumber(r.error_class),
    effect: r.effect.replace('RUN_EFFECT_', '').toLowerCase(),
    retryable: r.retryable,
    action: { id: r.action.id, summary: r.action.summary, runbook_url: r.action.runbook_url },
    rule: r.rule_id,
    ruleset_version: r.ruleset_version,
    ruleset_digest: r.ruleset_digest,
  };
  if (r.unknown_reason !== 'UNKNOWN_REASON_UNSPECIFIED') {
    out.unknown_reason = r.unknown_reason.replace('UNKNOWN_REASON_', '').toLowerCase();
  }
  if (r.explanation) out.explanation = r.explanation;
  return out;
}

// The permanent number of a class. With enums as strings, a number this
// copy of the proto does not name arrives as the number itself.
let classNumbers;
function classNumber(errorClass) {
  if (typeof errorClass === 'number') return errorClass;
  if (!classNumbers) {
    const definition = protoLoader.loadSync(PROTO, { keepCase: true });
    const values = definition['errorclass.v1.RunErrorClass'].type.value;
    classNumbers = Object.fromEntries(values.map((v) => [v.name, v.number]));
  }
  return classNumbers[errorClass];
}

// A descriptor from a live error: the constructor's name as the type, the
// prototype chain up to Error as supertypes, `cause` (and AggregateError's
// `errors`) as causes, outermost first. Origin and provider are what the
// caller knows about where the call was made; they are never guessed.
function descriptorFromError(err, { origin, provider, attributes } = {}) {
  const d = { ...describe(err), language: 'node' };
  const causes = causesOf(err).map(describe);
  if (causes.length) d.causes = causes;
  if (origin) d.origin = origin;
  if (provider) d.provider = provider;
  const attrs = { ...(d.name ? { name: d.name } : {}), ...(attributes || {}) };
  delete d.name;
  if (Object.keys(attrs).length) d.attributes = attrs;
  return d;
}

function describe(err) {
  if (err === null || typeof err !== 'object') {
    return { type: typeof err, message: String(err) };
  }
  const type = err.constructor && err.constructor.name ? err.constructor.name : 'Object';
  const chain = supertypes(err);
  const d = { type, supertypes: chain, message: String(err.message ?? '') };
  // DOMException and friends carry their kind in `name` (TimeoutError, AbortError).
  if (typeof err.name === 'string' && err.name !== type && !chain.includes(err.name)) {
    d.name = err.name;
  }
  const status = [err.status, err.statusCode, err.$metadata && err.$metadata.httpStatusCode,
    err.response && err.response.status].find((s) => Number.isInteger(s) && s >= 100 && s <= 599);
  if (status !== undefined) d.http_status = status;
  if (isGrpcError(err)) {
    d.grpc_status = err.code;
  } else if (typeof err.code === 'string' || typeof err.code === 'number') {
    d.code = String(err.code);
  }
  return d;
}

// @grpc/grpc-js rejects with an Error carrying a numeric `code` (the gRPC
// status), `details` and `metadata`.
function isGrpcError(err) {
  return Number.isInteger(err.code) && err.code >= 0 && err.code <= 16 &&
    'details' in err && 'metadata' in err;
}

function supertypes(err) {
  const names = [];
  let proto = Object.getPrototypeOf(Object.getPrototypeOf(err));
  while (proto && proto !== Object.prototype && names.length < MAX_SUPERTYPES) {
    if (proto.constructor && proto.constructor.name) names.push(proto.constructor.name);
    proto = Object.getPrototypeOf(proto);
  }
  return names;
}

function causesOf(err) {
  const seen = new Set([err]);
  const out = [];
  const walk = (e) => {
    if (e === null || typeof e !== 'object') return;
    const inner = [];
    if (e.cause !== undefined) inner.push(e.cause);
    if (Array.isArray(e.errors)) inner.push(...e.errors);
    for (const c of inner) {
      if (out.length >= MAX_CAUSES || seen.has(c)) continue;
      seen.add(c);
      out.push(c);
      walk(c);
    }
  };
  walk(err);
  return out;
}

module.exports = {
  PROTO,
  answerJson,
  classify,
  classifyBatch,
  classifyStream,
  connect,
  descriptorFromError,
  grpc,
  loadService,
  toWire,
};
