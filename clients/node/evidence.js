// What a provider's HTTP error says: its status, headers and body, read as the APIs send
// them (clients/spec/README.md, "error_body"; clients/spec/vectors/error_body.json holds
// each provider's real bodies, and this package's tests read every one):
//
// 1. AWS JSON (Bedrock): the header x-amzn-ErrorType (`ThrottlingException:http://...`)
//    when not blank, else the body's `__type` (`com.amazon.bedrock#ValidationException`):
//    its text before the first `:`, after the last `#`, is the code; the body's `message`
//    (else `Message`) the message.
// 2. An `error` object is the error, and its `message` the message:
//    - Anthropic ({"type": "error", "error": {"type", "message", "details": {"error_code"}}}):
//      the code is `error.type`, and `details.error_code` the attribute `error_code`;
//    - Gemini and Google APIs ({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}):
//      the code is the status name, and grpc_status its number;
//    - else OpenAI and Azure OpenAI ({"error": {"code", "message", "type", "param"}}): the
//      code is `error.code`, text or a whole number, unless it only repeats the HTTP
//      status (Azure's "429"): a status is not a code.
// 3. A text `error` ({"error": "model not found"}, Ollama) is the message.
// 4. A body whose `message` is text and that has no `error` is the error object itself (an
//    SDK that keeps the inner object, an API with no envelope), read as in 2 without the
//    Anthropic case.
// A body over MAX_BODY_BYTES (UTF-8 bytes), not JSON or not a JSON object gives nothing
// from the body; nothing is invented.
//
// Besides, whatever the body, the evidence a runtime needs to know when to retry: each
// response header the facts name (evidence.headers: retry-after, retry-after-ms, OpenAI's
// x-ratelimit-reset-*, Anthropic's anthropic-ratelimit-*-reset, date, ...) with a value
// that is not blank, as the attribute `http.response.header.<name>`; and from an error
// object's `details` (Google's google.rpc.Status), the entries of evidence.google_details
// (RetryInfo's retryDelay, ErrorInfo's reason, QuotaFailure's first quotaId). Each value
// stripped and cut to evidence.max_chars characters. The service reads retry_after from them.
//
// An error inside a stream that began with a 200 (evidenceFromStreamError) is read the
// same way from the event's data, but for Bedrock's exception events, whose name is the code.
'use strict';

const { FACTS, GRPC_CODES, LIMITS, cut, strip } = require('./facts');

const EVIDENCE = FACTS.evidence;
const GOOGLE_DETAILS = Object.entries(EVIDENCE.google_details).map(([attribute, { type_url: typeUrl, field }]) => ({
  attribute, typeUrl, path: fieldPath(field),
}));

const NOTHING = Object.freeze({ code: '', grpc_status: undefined, message: '', attributes: Object.freeze({}) });

// Evidence ({code, grpc_status, message, attributes}) from an HTTP error: `status` (a
// number, or null when unknown), `headers` (a fetch Headers, or an object of name to
// value in any case), `body` (the text as read, or the JSON already parsed by an SDK).
function evidenceFromBody(status, headers, body) {
  const parsed = typeof body === 'string' ? parseBody(body) : body;
  const found = fromBody(status, headers, isObject(parsed) ? parsed : {});
  const kept = headerEvidence(headers);
  if (!Object.keys(kept).length) return found;
  return evidence({ ...found, attributes: { ...found.attributes, ...kept } });
}

function fromBody(status, headers, b) {
  const awsType = awsErrorType(headerValue(headers, 'x-amzn-errortype'), b.__type);
  if (awsType) return evidence({ code: awsType, message: text(b.message) || text(b.Message) });
  if (isObject(b.error)) {
    const error = b.error;
    if (b.type === 'error' && typeof error.type === 'string') {
      const detail = isObject(error.details) ? text(error.details.error_code) : '';
      return evidence({ code: text(error.type), message: text(error.message), attributes: detail ? { error_code: detail } : {} });
    }
    return errorObject(error, status);
  }
  if (typeof b.error === 'string') return evidence({ message: text(b.error) });
  if (typeof b.message === 'string' && (b.error === undefined || b.error === null)) return errorObject(b, status);
  return NOTHING;
}

// An error object (2 without the Anthropic case): Google's status name, else the code;
// and what its `details` say.
function errorObject(error, status) {
  const message = text(error.message);
  const attributes = googleDetails(error.details);
  const googleStatus = error.status;
  if (typeof googleStatus === 'string' && Object.hasOwn(GRPC_CODES, googleStatus)) {
    return evidence({ code: googleStatus, grpc_status: GRPC_CODES[googleStatus], message, attributes });
  }
  const code = codeText(error.code);
  return evidence({ code: status !== undefined && status !== null && code === String(status) ? '' : code, message, attributes });
}

// The evidence headers, as attributes: `http.response.header.retry-after` and the others of
// the facts, each not blank, stripped and cut. `headers` is a fetch Headers (or anything with
// get()) or an object of name to value in any case.
function headerEvidence(headers) {
  const out = {};
  if (!headers || typeof headers !== 'object') return out;
  for (const name of EVIDENCE.headers) {
    const value = kept(headerValue(headers, name));
    if (value) out[EVIDENCE.header_attribute_prefix + name] = value;
  }
  return out;
}

// google.rpc.Status details (a list of {"@type": ..., ...}): for each entry of the facts,
// the first detail of its type, and its field when that is text.
function googleDetails(details) {
  const out = {};
  if (!Array.isArray(details)) return out;
  for (const { attribute, typeUrl, path } of GOOGLE_DETAILS) {
    const detail = details.find((d) => isObject(d) && d['@type'] === typeUrl);
    const value = detail === undefined ? '' : kept(path.reduce((node, step) => (node === null || typeof node !== 'object' ? undefined : node[step]), detail));
    if (value) out[attribute] = value;
  }
  return out;
}

// `violations[0].quotaId` -> ['violations', 0, 'quotaId'].
function fieldPath(field) {
  return field.split('.').flatMap((part) => {
    const m = /^([^[]+)((?:\[\d+\])*)$/.exec(part);
    if (!m) return [part];
    return [m[1], ...[...m[2].matchAll(/\[(\d+)\]/g)].map((i) => Number(i[1]))];
  });
}

// A kept header or detail value: text, stripped, cut to evidence.max_chars; '' for none.
function kept(value) {
  return typeof value === 'string' ? cut(strip(value), EVIDENCE.max_chars) : '';
}

// Evidence ({code, grpc_status, message, attributes}) from an error event inside a stream
// that began with a 200 (clients/spec/README.md, "stream_error"): `event` is the SSE event's
// name (or Bedrock's exception event type; '' when none), `data` the event's data (text, or
// the JSON already parsed). A Bedrock exception event (`throttlingException`) gives its name,
// first letter upper-cased as the non-stream API spells it (`ThrottlingException`), and its
// message; a Responses API `response.failed` event's error is its `response.error`; any
// other data is read as an error body with no status and no headers (evidenceFromBody).
function evidenceFromStreamError(event, data) {
  const name = typeof event === 'string' ? event : '';
  const parsed = typeof data === 'string' ? parseBody(data) : data;
  const d = isObject(parsed) ? parsed : {};
  if (name.endsWith('Exception')) {
    return evidence({ code: name.charAt(0).toUpperCase() + name.slice(1), message: text(d.message) || text(d.Message) });
  }
  if ((name === 'response.failed' || d.type === 'response.failed') && isObject(d.response) && isObject(d.response.error)) {
    return fromBody(null, undefined, { error: d.response.error });
  }
  return fromBody(null, undefined, d);
}

function evidence({ code = '', grpc_status: grpcStatus, message = '', attributes = {} }) {
  return { code, grpc_status: grpcStatus, message, attributes };
}

// JSON of at most MAX_BODY_BYTES UTF-8 bytes; undefined otherwise.
function parseBody(body) {
  if (!body || Buffer.byteLength(body, 'utf8') > LIMITS.MAX_BODY_BYTES) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

// `ThrottlingException:http://...` -> ThrottlingException; `...#ValidationException` -> ValidationException.
function awsErrorType(header, bodyType) {
  const value = typeof header === 'string' && strip(header) ? header : bodyType;
  if (typeof value !== 'string') return '';
  return strip(value.split(':')[0].split('#').pop());
}

// A header by name in any case, from a fetch Headers (or anything with get()) or an object.
function headerValue(headers, name) {
  if (!headers || typeof headers !== 'object') return undefined;
  if (typeof headers.get === 'function') return read(() => headers.get(name)) ?? undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

// A code as text: stripped text, or a whole number written in decimal.
function codeText(value) {
  if (typeof value === 'string') return strip(value);
  if (Number.isSafeInteger(value)) return String(value);
  return '';
}

function text(value) {
  return typeof value === 'string' ? strip(value) : '';
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

// Reading never throws: a getter that fails counts as absent, because this runs while
// the caller is already handling a failure.
function read(get) {
  try {
    return get();
  } catch {
    return undefined;
  }
}

module.exports = { NOTHING, codeText, evidenceFromBody, evidenceFromStreamError, headerEvidence, headerValue, isObject, parseBody, read, text };
