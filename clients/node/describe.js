// Descriptors from what a Node runtime has in hand: a live error (descriptorFromError),
// a tool call's failure (describeToolFailure), a failed HTTP response that raised nothing
// (descriptorFromHttpResponse), and what only the runtime knows (runtimeFacts,
// runtimeAttributes). Every builder ends with fit() (descriptor.js), so what it sends is
// never refused, and reads provider error bodies with evidenceFromBody (evidence.js):
// the same functions clients/spec's vectors test.
'use strict';

const { fit } = require('./descriptor');
const {
  NOTHING, codeText, evidenceFromBody, evidenceFromStreamError, headerEvidence, isObject, read, text,
} = require('./evidence');
const { FACTS, LIMITS, MAX_GRPC_STATUS, strip } = require('./facts');

// A descriptor from a live error: the constructor's name as the type, the
// prototype chain up to Error as supertypes, `cause` (and AggregateError's and
// the AI SDK RetryError's `errors`) as causes, outermost first. Origin and
// provider are what the caller knows about where the call was made; they are
// never guessed. What is read, and from where:
// - http_status: `status`, `statusCode` (the AI SDK), `$metadata.httpStatusCode`
//   (AWS SDK v3) or `response.status` (axios).
// - code: a string or number `code` (openai-node's error code, `ECONNRESET`,
//   undici's `UND_ERR_SOCKET`, a DOMException's legacy `23`), except on a
//   @grpc/grpc-js error, whose numeric `code` is the gRPC status; else the
//   provider's error body the error carries (see evidence.js: Anthropic's
//   `error.error.type`, which @anthropic-ai/sdk also keeps in `type`, the AI
//   SDK APICallError's `data`); else an AWS SDK v3 service error's `name`
//   (`ThrottlingException`; those errors carry `$fault`); else the AI SDK
//   StreamProviderError's provider-defined `type`. A code that only repeats the
//   HTTP status (Azure's `"code": "429"`) is dropped: a status is not a code.
// - every cause gets the same type, supertypes, message, status and code, so
//   rules can match `UND_ERR_SOCKET` or `ECONNREFUSED` one cause down.
// - attributes (the outermost error only: a cause has none on the wire):
//   `name` when it differs from the type (a DOMException's `TimeoutError`, the
//   AI SDK's `AI_APICallError`), Anthropic's `error.details.error_code` as
//   `error_code`, AWS's `$fault` as `fault`, a string `finishReason`
//   (the AI SDK's NoObjectGeneratedError), and the evidence of when to retry
//   (evidence.js): the response's retry and rate-limit headers, where the SDK
//   keeps them (openai-node's and @anthropic-ai/sdk's `headers`, the AI SDK
//   APICallError's `responseHeaders`, an AWS SDK v3 error's `$response.headers`,
//   axios' `response.headers`), and a Google body's RetryInfo, ErrorInfo and
//   QuotaFailure details.
// - an error inside a stream that began with a 200 is read through
//   evidenceFromStreamError: the AI SDK's StreamProviderError (its `data`, the
//   provider's error payload), and openai-node's and @anthropic-ai/sdk's APIError
//   thrown from a stream (no HTTP status, the event's payload in `error`). The
//   headers of the stream's 200 say nothing about the error and are not kept.
//   Bedrock's stream exceptions arrive as AWS SDK service errors named as the
//   non-stream API names them (`ThrottlingException`), which is their code.
// - what only the runtime knows (docs/clients.md, "What only the runtime knows"):
//   `timeLimit` ('tool': the tool wrapper's own limit fired; 'run': the run's
//   deadline), `veto` (an interceptor's deliberate block: 'budget', 'quota',
//   'policy'), `stage` (the definition failed while 'load', 'parse', 'compile',
//   'validate'), `refusedBy` (the runtime's own guard refused the call before it
//   was made: 'breaker', 'rate_limiter', 'concurrency_limit', 'quota', 'budget'),
//   `providerCalls` (reconciliation: provider calls answered), sent as the
//   attributes time_limit, veto, stage, refused_by, provider_calls (runtimeAttributes).
function descriptorFromError(err, { origin, provider, attributes, ...knowledge } = {}) {
  const known = runtimeAttributes(knowledge);
  const { fields, attrs } = describe(err);
  const d = { ...fields, language: 'node' };
  const causes = causesOf(err).map((c) => describe(c).fields);
  if (causes.length) d.causes = causes;
  if (origin) d.origin = origin;
  if (provider) d.provider = provider;
  const all = merged({ ...attrs, ...(attributes || {}) }, known);
  if (Object.keys(all).length) d.attributes = all;
  return fit(d);
}

// The descriptor a tool wrapper sends for what the tool call raised: `limitFired` is the
// wrapper's knowledge that *its* limit ended the call (its own AbortSignal.timeout()'s
// `aborted`, its own timer): ToolTimeout. Anything else the tool threw, its own client's
// timeout included, is the tool failing: ToolError.
function describeToolFailure(err, { limitFired, provider, attributes } = {}) {
  if (typeof limitFired !== 'boolean') throw new TypeError('describeToolFailure: limitFired must be true or false');
  return descriptorFromError(err, { origin: 'tool', provider, attributes, ...(limitFired ? { timeLimit: 'tool' } : {}) });
}

// What only the runtime knows, as the attributes the service gives a meaning to (the
// facts' runtime_facts, in the contract's order: time_limit, veto, stage, refused_by,
// provider_calls;
// docs/clients.md, "What only the runtime knows"). `facts` is keyed by those names. Each
// value is stripped and lower-cased; a closed fact takes its values, an open one also any
// word of the facts' open_fact_pattern, a count a whole number (digits, or a number)
// written in decimal. The first refused fact, in the contract's order, throws a
// RuntimeFactError naming it (`.fact`); `spelling` names it in the message as the caller
// spelt it (runtimeAttributes' `timeLimit`).
const RUNTIME_FACTS = FACTS.runtime_facts;
const OPEN_WORD = new RegExp(FACTS.open_fact_pattern);
const OPTIONS = Object.fromEntries(Object.keys(RUNTIME_FACTS).map((name) => [camel(name), name]));

class RuntimeFactError extends TypeError {
  constructor(fact, message) {
    super(message);
    this.name = 'RuntimeFactError';
    this.fact = fact;
  }
}

function runtimeFacts(facts = {}, { spelling = (name) => name } = {}) {
  const unknown = Object.keys(facts).filter((name) => !Object.hasOwn(RUNTIME_FACTS, name));
  if (unknown.length) {
    throw new TypeError(`unknown runtime fact ${unknown.join(', ')}; known: ${Object.keys(RUNTIME_FACTS).join(', ')}`);
  }
  const out = {};
  for (const [name, fact] of Object.entries(RUNTIME_FACTS)) {
    const value = facts[name];
    if (value === undefined || value === null) continue;
    const refuse = (why) => {
      throw new RuntimeFactError(name, `${spelling(name)}: ${JSON.stringify(value)} ${why}`);
    };
    if (fact.count) {
      const digits = typeof value === 'string' ? strip(value) : '';
      if (Number.isSafeInteger(value) && value >= 0) out[name] = String(value);
      else if (/^[0-9]+$/.test(digits)) out[name] = BigInt(digits).toString();
      else refuse('is not a count (0, 1, 2, ...)');
      continue;
    }
    if (typeof value !== 'string') refuse('is not text');
    const word = strip(value).toLowerCase();
    if (fact.values.includes(word) || (fact.open && OPEN_WORD.test(word))) out[name] = word;
    else if (fact.open) {
      refuse(`is not a word; the service knows ${fact.values.join(', ')} (another word is a ${name} too, with class Unknown)`);
    } else refuse(`is not one of ${fact.values.join(', ')}`);
  }
  return out;
}

// runtimeFacts with the options' JavaScript names (timeLimit, veto, stage, refusedBy,
// providerCalls),
// as descriptorFromError and the other builders take them.
function runtimeAttributes(options = {}) {
  const unknown = Object.keys(options).filter((key) => !Object.hasOwn(OPTIONS, key));
  if (unknown.length) {
    throw new TypeError(`unknown option ${unknown.join(', ')}; known: origin, provider, attributes, ${Object.keys(OPTIONS).join(', ')}`);
  }
  const facts = Object.fromEntries(Object.entries(options).map(([key, value]) => [OPTIONS[key], value]));
  return runtimeFacts(facts, { spelling: camel });
}

function camel(name) {
  return name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
}

function merged(attributes, known) {
  for (const [key, value] of Object.entries(known)) {
    if (key in attributes && attributes[key] !== value) {
      throw new TypeError(`${key}: given as ${JSON.stringify(value)} and in attributes as ${JSON.stringify(attributes[key])}`);
    }
  }
  return { ...attributes, ...known };
}

function describe(err) {
  if (err === null || typeof err !== 'object') {
    return { fields: { type: typeof err, message: String(err) }, attrs: {} };
  }
  const type = read(() => err.constructor && err.constructor.name) || 'Object';
  const chain = supertypes(err);
  const fields = { type, supertypes: chain, message: String(read(() => err.message) ?? '') };
  const attrs = {};
  // DOMException and friends carry their kind in `name` (TimeoutError, AbortError).
  const name = read(() => err.name);
  if (typeof name === 'string' && name !== type && !chain.includes(name)) attrs.name = name;
  const status = httpStatus(err);
  if (status !== undefined) fields.http_status = status;
  const body = bodyOf(err);
  if (isGrpcError(err)) {
    fields.grpc_status = err.code;
  } else {
    const code = [read(() => err.code), body.code, awsCode(err), streamProviderType(err)]
      .map(codeText).find((c) => c && c !== String(status));
    if (code) fields.code = code;
    if (fields.grpc_status === undefined && body.grpc_status !== undefined) fields.grpc_status = body.grpc_status;
  }
  if (body.message && !fields.message.includes(body.message)) {
    fields.message = fields.message ? `${fields.message}\n${body.message}` : body.message;
  }
  Object.assign(attrs, body.attributes);
  const fault = read(() => err.$fault);
  if (fault === 'client' || fault === 'server') attrs.fault = fault;
  const finishReason = read(() => err.finishReason);
  if (typeof finishReason === 'string' && finishReason) attrs.finishReason = finishReason;
  return { fields, attrs };
}

function httpStatus(err) {
  return [read(() => err.status), read(() => err.statusCode), read(() => err.$metadata && err.$metadata.httpStatusCode),
    read(() => err.response && err.response.status)].find(isHttpStatus);
}

function isHttpStatus(s) {
  return Number.isInteger(s) && s >= 100 && s <= 599;
}

// The provider's error body an SDK error keeps, with the response's headers:
// @anthropic-ai/sdk's `error` (the whole body), the AI SDK APICallError's parsed `data`
// (else its `responseBody` text). (openai-node's `error` is the body's inner object, whose
// code and message the SDK already copied to `code` and `message`.) An error from inside
// a stream is read as the stream's error event (streamErrorPayload).
function bodyOf(err) {
  const status = httpStatus(err);
  const streamed = streamErrorPayload(err, status);
  if (streamed !== undefined) return evidenceFromStreamError('', streamed);
  const headers = responseHeaders(err);
  const error = read(() => err.error);
  if (isObject(error) && isObject(error.error)) return evidenceFromBody(status, headers, error);
  const data = read(() => err.data);
  const responseBody = read(() => err.responseBody);
  if ((data && typeof data === 'object') || typeof responseBody === 'string') {
    return evidenceFromBody(status, headers, data && typeof data === 'object' ? data : responseBody);
  }
  const kept = headerEvidence(headers);
  return Object.keys(kept).length ? { ...NOTHING, attributes: kept } : NOTHING;
}

// The payload of an error event inside a stream, when the error is one, else undefined:
// the AI SDK's StreamProviderError keeps it in `data`; openai-node and @anthropic-ai/sdk
// throw an APIError with no status and the event's payload in `error` (they give an error
// with a status only for an HTTP response, and one without a payload for a connection).
function streamErrorPayload(err, status) {
  if (read(() => err.name) === 'AI_StreamProviderError') {
    const data = read(() => err.data);
    return isObject(data) ? data : {};
  }
  const error = read(() => err.error);
  if (status === undefined && isObject(error) && 'headers' in err) return error;
  return undefined;
}

// Where an SDK error keeps the response's headers: the AI SDK APICallError's
// `responseHeaders`, openai-node's and @anthropic-ai/sdk's `headers` (a fetch Headers), an
// AWS SDK v3 service error's `$response.headers`, axios' `response.headers`.
function responseHeaders(err) {
  for (const get of [() => err.responseHeaders, () => err.headers, () => err.$response.headers, () => err.response.headers]) {
    const headers = read(get);
    if (headers && typeof headers === 'object') return headers;
  }
  return undefined;
}

// An AWS SDK for JavaScript v3 service error (ServiceException, from
// @smithy/smithy-client) is named for its error code and carries `$fault`.
function awsCode(err) {
  const fault = read(() => err.$fault);
  const name = read(() => err.name);
  return (fault === 'client' || fault === 'server') && typeof name === 'string' ? name : undefined;
}

// The AI SDK's StreamProviderError (an error event inside a stream) keeps the
// provider's error type (`overloaded_error`) in `type` when there is no code.
function streamProviderType(err) {
  return read(() => err.name) === 'AI_StreamProviderError' ? read(() => err.type) : undefined;
}

// @grpc/grpc-js rejects with an Error carrying a numeric `code` (the gRPC
// status), `details` and `metadata`.
function isGrpcError(err) {
  return Number.isInteger(err.code) && err.code >= 0 && err.code <= MAX_GRPC_STATUS &&
    'details' in err && 'metadata' in err;
}

function supertypes(err) {
  const names = [];
  let proto = Object.getPrototypeOf(Object.getPrototypeOf(err));
  while (proto && proto !== Object.prototype && names.length < LIMITS.MAX_SUPERTYPES) {
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
    const cause = read(() => e.cause);
    if (cause !== undefined) inner.push(cause);
    const errors = read(() => e.errors);
    if (Array.isArray(errors)) inner.push(...errors);
    for (const c of inner) {
      if (out.length >= LIMITS.MAX_CAUSES || seen.has(c)) continue;
      seen.add(c);
      out.push(c);
      walk(c);
    }
  };
  walk(err);
  return out;
}

// A failed HTTP response that raised nothing: fetch resolves on a 429 or a
// 500. `response` is the fetch Response (or anything with `status`, `ok`,
// `statusText`, `headers`), `body` what the caller read from it (its text, or the JSON
// it parsed). The type is the response's own class (`Response`), with the status, and
// the provider body's code, gRPC status and message (evidenceFromBody).
// null when the response is not a failure (2xx or 3xx).
function descriptorFromHttpResponse(response, body, { origin = 'provider', provider, attributes, ...knowledge } = {}) {
  const known = runtimeAttributes(knowledge);
  const status = read(() => response.status);
  if (!isHttpStatus(status) || status < 400) return null;
  const evidence = evidenceFromBody(status, read(() => response.headers), body);
  const statusText = text(read(() => response.statusText));
  const head = `${status}${statusText ? ` ${statusText}` : ''}`;
  const d = {
    type: read(() => response.constructor && response.constructor.name) || 'Object',
    supertypes: supertypes(response),
    message: evidence.message ? `${head}\n${evidence.message}` : head,
    http_status: status,
    language: 'node',
    code: evidence.code,
    grpc_status: evidence.grpc_status,
  };
  if (origin) d.origin = origin;
  if (provider) d.provider = provider;
  const all = merged({ ...evidence.attributes, ...(attributes || {}) }, known);
  if (Object.keys(all).length) d.attributes = all;
  return fit(d);
}

module.exports = {
  RuntimeFactError,
  describeToolFailure,
  descriptorFromError,
  descriptorFromHttpResponse,
  runtimeAttributes,
  runtimeFacts,
};
