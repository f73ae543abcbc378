// Calling the error classifier from Node.
//
// Written against Node 20, @grpc/grpc-js 1.14.7 and @grpc/proto-loader 0.8.1
// (pinned in package.json; package-lock.json pins the rest). The proto ships
// inside this package (generated/proto, a copy of the repository's proto/) and
// is loaded at run time with keepCase, so field names are the proto's own
// (http_status, not httpStatus), and enums travel as their names. Every
// descriptor is validated before it is sent (descriptor.js): one that
// `classifier classify` refuses is refused here, with the same words.
'use strict';

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { DescriptorError, LIMITS, FACTS, descriptorFromFileData, validateDescriptor } = require('./descriptor');

const PROTO = path.join(__dirname, 'generated', 'proto', 'errorclass', 'v1', 'classifier.proto');
const VERSION = require('./package.json').version;
const MAX_CAUSES = LIMITS.MAX_CAUSES;
const MAX_SUPERTYPES = LIMITS.MAX_SUPERTYPES;
const MAX_CODE_CHARS = LIMITS.MAX_CODE_CHARS;
const MAX_BODY_CHARS = 256 * 1024; // a larger body is not an error body (classifier/client/http_bodies.py)
const GRPC_CODES = Object.keys(FACTS.grpc_codes);

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
      { requests: allToWire(descriptors).map((descriptor) => ({ descriptor, explain })) },
      { deadline: deadline(deadlineMs) },
      (err, response) => (err ? reject(err) : resolve(response.responses)),
    );
  });
}

// A bidirectional stream: one answer per descriptor, in order.
function classifyStream(client, descriptors, { explain = false, deadlineMs = 30000 } = {}) {
  return new Promise((resolve, reject) => {
    const wire = allToWire(descriptors); // before the stream opens: a refusal sends nothing
    const answers = [];
    const call = client.ClassifyStream({ deadline: deadline(deadlineMs) });
    call.on('data', (answer) => answers.push(answer));
    call.on('error', reject);
    call.on('end', () => resolve(answers));
    for (const descriptor of wire) call.write({ descriptor, explain });
    call.end();
  });
}

// The descriptor-file shape (the one `classifier classify` reads: origin as
// `provider`, grpc_status as a name or a number) -> the wire shape, after
// validating it as the Python side does: throws DescriptorError (its
// `violations` name each bad field) for a descriptor the server would refuse
// or, like a misspelt key, silently misread. `prefix` names the fields
// (`requests[3].descriptor` in a batch, as the server names them).
function toWire(d, { prefix = 'descriptor' } = {}) {
  const wire = validateDescriptor(d, { prefix });
  if (wire.origin) wire.origin = `ORIGIN_${wire.origin.toUpperCase()}`;
  return wire;
}

// Each descriptor of a batch or stream validated before any is sent: one
// DescriptorError naming every bad field of every descriptor.
function allToWire(descriptors) {
  const wire = [];
  const violations = [];
  descriptors.forEach((d, i) => {
    try {
      wire.push(toWire(d, { prefix: `requests[${i}].descriptor` }));
    } catch (err) {
      if (!(err instanceof DescriptorError)) throw err;
      violations.push(...err.violations);
    }
  });
  if (violations.length) throw new DescriptorError(violations);
  return wire;
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
// prototype chain up to Error as supertypes, `cause` (and AggregateError's and
// the AI SDK RetryError's `errors`) as causes, outermost first. Origin and
// provider are what the caller knows about where the call was made; they are
// never guessed. What is read, and from where:
// - http_status: `status`, `statusCode` (the AI SDK), `$metadata.httpStatusCode`
//   (AWS SDK v3) or `response.status` (axios).
// - code: a string or number `code` (openai-node's error code, `ECONNRESET`,
//   undici's `UND_ERR_SOCKET`, a DOMException's legacy `23`), except on a
//   @grpc/grpc-js error, whose numeric `code` is the gRPC status; else the
//   provider's error body the error carries (see bodyEvidence: Anthropic's
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
//   `error_code`, AWS's `$fault` as `fault`, and a string `finishReason`
//   (the AI SDK's NoObjectGeneratedError).
// - what only the runtime knows (docs/clients.md, "What only the runtime knows"):
//   `timeLimit` ('tool': the tool wrapper's own limit fired; 'run': the run's
//   deadline), `veto` (an interceptor's deliberate block: 'budget', 'quota',
//   'policy'), `stage` (the definition failed while 'load', 'parse', 'compile',
//   'validate'), `providerCalls` (reconciliation: provider calls answered), sent
//   as the attributes time_limit, veto, stage, provider_calls (runtimeAttributes).
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
  return d;
}

// The descriptor a tool wrapper sends for what the tool call raised: `limitFired` is the
// wrapper's knowledge that *its* limit ended the call (its own AbortSignal.timeout()'s
// `aborted`, its own timer): ToolTimeout. Anything else the tool threw, its own client's
// timeout included, is the tool failing: ToolError.
function describeToolFailure(err, { limitFired, provider, attributes } = {}) {
  if (typeof limitFired !== 'boolean') throw new TypeError('describeToolFailure: limitFired must be true or false');
  return descriptorFromError(err, { origin: 'tool', provider, attributes, ...(limitFired ? { timeLimit: 'tool' } : {}) });
}

// The contract's attributes (classifier/client/runtime_knowledge.py says the same): the
// values are checked, so a runtime never writes these names by hand. A bad value throws
// a TypeError naming the option.
const TIME_LIMITS = ['tool', 'run'];
const VETOES = ['budget', 'quota', 'policy'];
const STAGES = ['load', 'parse', 'compile', 'validate'];
const KNOWLEDGE = { timeLimit: 'time_limit', veto: 'veto', stage: 'stage', providerCalls: 'provider_calls' };

function runtimeAttributes({ timeLimit, veto, stage, providerCalls, ...rest } = {}) {
  const unknown = Object.keys(rest);
  if (unknown.length) {
    throw new TypeError(`unknown option ${unknown.join(', ')}; known: origin, provider, attributes, ${Object.keys(KNOWLEDGE).join(', ')}`);
  }
  const out = {};
  if (timeLimit !== undefined) out.time_limit = oneOf('timeLimit', timeLimit, TIME_LIMITS);
  if (veto !== undefined) {
    const word = String(veto).trim().toLowerCase();
    if (!/^[a-z][a-z0-9_-]{0,63}$/.test(word)) {
      throw new TypeError(`veto: ${JSON.stringify(veto)} is not a word; the service knows ${VETOES.join(', ')} (another word is a veto too, with class Unknown)`);
    }
    out.veto = word;
  }
  if (stage !== undefined) out.stage = oneOf('stage', stage, STAGES);
  if (providerCalls !== undefined) {
    const textual = String(providerCalls).trim();
    if (typeof providerCalls === 'boolean' || !/^[0-9]+$/.test(textual)) {
      throw new TypeError(`providerCalls: ${JSON.stringify(providerCalls)} is not a count (0, 1, 2, ...)`);
    }
    out.provider_calls = String(Number(textual));
  }
  return out;
}

function oneOf(name, value, allowed) {
  const word = String(value).trim().toLowerCase();
  if (!allowed.includes(word)) throw new TypeError(`${name}: ${JSON.stringify(value)} is not one of ${allowed.join(', ')}`);
  return word;
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

// The provider's error body an SDK error keeps: @anthropic-ai/sdk's `error`
// (the whole body), openai-node's `error` (the body's inner `error` object,
// whose code the SDK already copied to `code`), the AI SDK APICallError's
// parsed `data` (else its `responseBody` text) and `responseHeaders`.
function bodyOf(err) {
  const error = read(() => err.error);
  if (error && typeof error === 'object' && error.error && typeof error.error === 'object') {
    return bodyEvidence(error, undefined, httpStatus(err));
  }
  const data = read(() => err.data);
  const responseBody = read(() => err.responseBody);
  if ((data && typeof data === 'object') || typeof responseBody === 'string') {
    const parsed = data && typeof data === 'object' ? data : parseJson(responseBody);
    return bodyEvidence(parsed, read(() => err.responseHeaders), httpStatus(err));
  }
  return NO_EVIDENCE;
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

function codeText(value) {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

const NO_EVIDENCE = Object.freeze({ code: '', message: '', attributes: {} });

// What a provider's error body (and its headers) says, for the bodies of the
// APIs the helpers know (the same table as classifier/client/http_bodies.py):
// - OpenAI, Azure OpenAI: {"error": {"code", "message", "type", "param"}}: code `error.code`;
// - Anthropic: {"type": "error", "error": {"type", "message", "details": {"error_code"}}}:
//   code `error.type`, attribute `error_code`;
// - Gemini and Google APIs: {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}:
//   code and grpc_status from `error.status`;
// - Bedrock (AWS JSON): header x-amzn-ErrorType (`ThrottlingException:http://...`) or
//   the body's `__type` (`...#ValidationException`): the code; `message` the message.
// An inner error object with no envelope ({"code", "message", "type"}, an error
// event inside an OpenAI stream) reads as its `code`. Nothing is invented: a
// code that only repeats the HTTP status is dropped, an unknown shape gives nothing.
function bodyEvidence(body, headers, status) {
  const b = body && typeof body === 'object' && !Array.isArray(body) ? body : {};
  const awsType = awsErrorType(headers, b);
  if (awsType) return { code: awsType, message: text(b.message) || text(b.Message), attributes: {} };
  const error = b.error && typeof b.error === 'object' ? b.error : undefined;
  if (!error) {
    if (typeof b.message === 'string' && ('code' in b || 'type' in b)) {
      return { code: notTheStatus(b.code, status), message: text(b.message), attributes: {} };
    }
    return NO_EVIDENCE;
  }
  const message = text(error.message);
  if (b.type === 'error' && typeof error.type === 'string') {
    const detail = error.details && typeof error.details === 'object' ? text(error.details.error_code) : '';
    return { code: text(error.type), message, attributes: detail ? { error_code: detail } : {} };
  }
  const googleStatus = error.status;
  if (typeof googleStatus === 'string' && GRPC_CODES.includes(googleStatus)) {
    return { code: googleStatus, grpc_status: FACTS.grpc_codes[googleStatus], message, attributes: {} };
  }
  return { code: notTheStatus(error.code, status), message, attributes: {} };
}

function awsErrorType(headers, body) {
  let value = headerValue(headers, 'x-amzn-errortype');
  if (typeof value !== 'string' || !value.trim()) value = body.__type;
  if (typeof value !== 'string') return '';
  return value.split(':')[0].split('#').pop().trim();
}

function headerValue(headers, name) {
  if (!headers) return undefined;
  if (typeof headers.get === 'function') return read(() => headers.get(name)) ?? undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

function notTheStatus(code, status) {
  const t = codeText(code);
  return status !== undefined && t === String(status) ? '' : t;
}

function text(value) {
  return typeof value === 'string' ? value.trim() : '';
}

function parseJson(value) {
  if (typeof value !== 'string' || value.length > MAX_BODY_CHARS) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

// Reading never throws: a getter that fails counts as absent, because this
// runs while the caller is already handling a failure.
function read(get) {
  try {
    return get();
  } catch {
    return undefined;
  }
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
    const cause = read(() => e.cause);
    if (cause !== undefined) inner.push(cause);
    const errors = read(() => e.errors);
    if (Array.isArray(errors)) inner.push(...errors);
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

// A failed HTTP response that raised nothing: fetch resolves on a 429 or a
// 500. `response` is the fetch Response (or anything with `status`, `ok`,
// `statusText`, `headers`), `body` what the caller read from it (parsed JSON
// or text). The type is the response's own class (`Response`), with the
// status, and the provider body's code, gRPC status and message (bodyEvidence).
// null when the response is not a failure (2xx or 3xx).
function descriptorFromHttpResponse(response, body, { origin = 'provider', provider, attributes, ...knowledge } = {}) {
  const known = runtimeAttributes(knowledge);
  const status = read(() => response.status);
  if (!isHttpStatus(status) || status < 400) return null;
  const evidence = bodyEvidence(typeof body === 'string' ? parseJson(body) : body, read(() => response.headers), status);
  const statusText = text(read(() => response.statusText));
  const head = `${status}${statusText ? ` ${statusText}` : ''}`;
  const d = {
    type: read(() => response.constructor && response.constructor.name) || 'Object',
    supertypes: supertypes(response),
    message: evidence.message ? `${head}\n${evidence.message}` : head,
    http_status: status,
    language: 'node',
  };
  if (evidence.code) d.code = evidence.code;
  if (evidence.grpc_status !== undefined) d.grpc_status = evidence.grpc_status;
  if (origin) d.origin = origin;
  if (provider) d.provider = provider;
  const all = merged({ ...evidence.attributes, ...(attributes || {}) }, known);
  if (Object.keys(all).length) d.attributes = all;
  return d;
}

// Failures that are not exceptions (the convention in docs/clients.md, the
// same as classifier.client.descriptor_from_finish_reason / _from_response in
// Python): a response that returned normally but ended with the provider
// refusing or filtering is sent as
//   type errorclass.FinishReason (a failure finish/stop reason) or
//   errorclass.PromptBlocked (the prompt refused before generation),
//   supertypes [errorclass.ResponseFailure], origin provider, the provider,
//   code: the reason exactly as the API spells it, a short message, and
//   attributes.model when known.
// Only refusal and filter reasons are failures (FAILURE_REASONS); a normal
// stop and a length cut-off (length, max_tokens, MAX_TOKENS) give null: a
// cut-off is model misbehaviour, which the taxonomy leaves Unknown.
const FINISH_REASON = 'errorclass.FinishReason';
const PROMPT_BLOCKED = 'errorclass.PromptBlocked';
const RESPONSE_FAILURE = 'errorclass.ResponseFailure';
const FAILURE_REASONS = new Set([
  'content_filter', // OpenAI and Azure OpenAI (finish_reason; Responses incomplete_details.reason)
  'refusal', // Anthropic stop_reason
  'SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', // Gemini finishReason
  'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION',
  'guardrail_intervened', 'content_filtered', // Bedrock Converse stopReason
]);
const NOT_BLOCKED = new Set(['', 'BLOCKED_REASON_UNSPECIFIED', 'BLOCK_REASON_UNSPECIFIED']);

// The descriptor for a response that ended with `reason`, or null when that
// is no failure. With `promptBlocked` (Gemini's promptFeedback.blockReason)
// every block reason is a failure; otherwise only FAILURE_REASONS are.
function descriptorFromFinishReason(reason, { provider, promptBlocked = false, model = '', attributes } = {}) {
  const name = typeof reason === 'string' ? reason.trim() : '';
  let type;
  let message;
  if (promptBlocked) {
    if (NOT_BLOCKED.has(name)) return null;
    type = PROMPT_BLOCKED;
    message = `The ${provider} API blocked the prompt (${name}).`;
  } else if (FAILURE_REASONS.has(name)) {
    type = FINISH_REASON;
    message = `The ${provider} response ended with the failure finish reason ${name}.`;
  } else {
    return null;
  }
  const d = {
    type, supertypes: [RESPONSE_FAILURE], message, code: name.slice(0, MAX_CODE_CHARS),
    language: 'node', origin: 'provider',
  };
  if (provider) d.provider = provider;
  const attrs = { ...(attributes || {}) };
  if (model && !('model' in attrs)) attrs.model = model;
  if (Object.keys(attrs).length) d.attributes = attrs;
  return d;
}

// The descriptor for a response that is a provider-side refusal, or null.
// Reads, as objects or as the JSON the APIs send: an openai-node ChatCompletion
// (or a stream's chunks, as an array) or Responses-API response; an
// @anthropic-ai/sdk Message (or a stream's events); a Gemini
// GenerateContentResponse; a Bedrock Converse output (or ConverseStream's
// events, as `stream`); the AI SDK's generateText / streamText result
// (`rawFinishReason`, the provider's own spelling). `provider` defaults to the
// API the shape belongs to; pass it for Azure OpenAI or the AI SDK.
function descriptorFromResponse(response, { provider, attributes } = {}) {
  for (const found of finishReasons(response, 0)) {
    const d = descriptorFromFinishReason(found.reason, {
      provider: provider || found.provider, promptBlocked: found.blocked, model: found.model, attributes,
    });
    if (d) return d;
  }
  return null;
}

function* finishReasons(response, depth) {
  if (response === null || typeof response !== 'object' || depth > 2) return;
  if (Array.isArray(response)) { // a stream's chunks or events
    for (const item of response) yield* finishReasons(item, depth + 1);
    return;
  }
  const model = text(field(response, 'model', 'modelVersion', 'model_version'));
  const at = (provider, reason, blocked = false) => ({ provider, reason: text(reason), blocked, model });
  // Gemini: a blocked prompt, then each candidate's finish reason
  const block = text(field(field(response, 'promptFeedback', 'prompt_feedback'), 'blockReason', 'block_reason'));
  if (block) yield at('gemini', block, true);
  for (const candidate of list(field(response, 'candidates'))) yield at('gemini', field(candidate, 'finishReason', 'finish_reason'));
  // OpenAI chat completions (and stream chunks), then the Responses API
  for (const choice of list(field(response, 'choices'))) yield at('openai', field(choice, 'finish_reason'));
  const details = field(response, 'incomplete_details');
  if (details) yield at('openai', field(details, 'reason'));
  // Anthropic: a Message, or a stream's message_delta event
  yield at('anthropic', field(response, 'stop_reason'));
  if (field(response, 'type') === 'message_delta') yield at('anthropic', field(field(response, 'delta'), 'stop_reason'));
  // Bedrock Converse, and ConverseStream's messageStop event (the driver's `stream` array)
  yield at('bedrock', field(response, 'stopReason'));
  yield at('bedrock', field(field(response, 'messageStop'), 'stopReason'));
  yield* finishReasons(field(response, 'stream'), depth + 1);
  // The AI SDK: the provider's own reason (finishReason is the SDK's unified one)
  yield at('', field(response, 'rawFinishReason'));
}

function field(obj, ...names) {
  if (obj === null || typeof obj !== 'object') return undefined;
  for (const name of names) {
    const value = read(() => obj[name]);
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}

function list(value) {
  return Array.isArray(value) ? value : [];
}

module.exports = {
  DescriptorError,
  PROTO,
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
  grpc,
  loadService,
  runtimeAttributes,
  toWire,
  validateDescriptor,
};
