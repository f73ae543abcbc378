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
'use strict';

const { GRPC_CODES, LIMITS, strip } = require('./facts');

const NOTHING = Object.freeze({ code: '', grpc_status: undefined, message: '', attributes: Object.freeze({}) });

// Evidence ({code, grpc_status, message, attributes}) from an HTTP error: `status` (a
// number, or null when unknown), `headers` (a fetch Headers, or an object of name to
// value in any case), `body` (the text as read, or the JSON already parsed by an SDK).
function evidenceFromBody(status, headers, body) {
  const parsed = typeof body === 'string' ? parseBody(body) : body;
  const b = isObject(parsed) ? parsed : {};
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

// An error object (2 without the Anthropic case): Google's status name, else the code.
function errorObject(error, status) {
  const message = text(error.message);
  const googleStatus = error.status;
  if (typeof googleStatus === 'string' && Object.hasOwn(GRPC_CODES, googleStatus)) {
    return evidence({ code: googleStatus, grpc_status: GRPC_CODES[googleStatus], message });
  }
  const code = codeText(error.code);
  return evidence({ code: status !== undefined && status !== null && code === String(status) ? '' : code, message });
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

module.exports = { NOTHING, codeText, evidenceFromBody, headerValue, parseBody, read, text };
