// What this package knows that the repository decides, and text as the service counts it.
//
// generated/facts.json is clients/spec/facts.json, copied by `make spec`
// (tools/spec/render_node.py): the limits, origins, gRPC status names, the whitespace
// set, the runtime facts' vocabulary, the finish reasons and their messages, the
// defaults (deadline, attempts, breaker) and the gRPC service config. Nothing here
// spells one of them again; it only derives the shapes the other modules read.
//
// Text is counted as clients/spec/README.md says, the same in every language:
// characters are Unicode code points (a surrogate pair is one character, never two
// UTF-16 units), a lone surrogate becomes U+FFFD, bytes are UTF-8 bytes, and
// "stripped" means without the facts' whitespace at either end (Python's str.isspace,
// which is not JavaScript's trim: U+001C is stripped, U+FEFF is not).
'use strict';

const FACTS = require('./generated/facts.json');

const LIMITS = FACTS.limits;
const DEFAULTS = FACTS.defaults;
const GRPC_CODES = FACTS.grpc_codes; // name -> number
const GRPC_NAMES = Object.entries(GRPC_CODES).sort((a, b) => a[1] - b[1]).map(([name]) => name); // by number
const MAX_GRPC_STATUS = GRPC_NAMES.length - 1;
const ORIGINS = FACTS.origins.names; // by number: ORIGINS[0] is unspecified
const ORIGIN_ALIASES = FACTS.origins.aliases;
const WHITESPACE = new Set(FACTS.whitespace);

// The service config every channel is opened with (retries of UNAVAILABLE, throttled),
// with `attempts` tries per call (1: no retry policy, throttling kept), as
// classifier/contract.py's service_config(service, attempts) writes it.
function serviceConfig(attempts = DEFAULTS.attempts) {
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`attempts must be a whole number of at least 1, not ${attempts}`);
  const config = structuredClone(FACTS.service_config);
  for (const method of config.methodConfig) {
    if (attempts === 1) delete method.retryPolicy;
    else if (method.retryPolicy) method.retryPolicy.maxAttempts = attempts;
  }
  return config;
}

// Without the facts' whitespace at either end.
function strip(text) {
  let start = 0;
  let end = text.length;
  while (start < end && WHITESPACE.has(text[start])) start++;
  while (end > start && WHITESPACE.has(text[end - 1])) end--;
  return text.slice(start, end);
}

// The length in characters (code points); a lone surrogate counts as the one U+FFFD it becomes.
function length(text) {
  let n = text.length;
  for (let i = 0; i + 1 < text.length; i++) {
    if (isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1))) {
      n--;
      i++;
    }
  }
  return n;
}

// The first `limit` characters: a cut never splits a surrogate pair.
function cut(text, limit) {
  if (text.length <= limit) return text;
  let units = 0;
  for (let n = 0; n < limit && units < text.length; n++) {
    units += isHigh(text.charCodeAt(units)) && units + 1 < text.length && isLow(text.charCodeAt(units + 1)) ? 2 : 1;
  }
  return text.slice(0, units);
}

// Each lone surrogate replaced by U+FFFD (String.prototype.toWellFormed, which Node 18 lacks).
function wellFormed(text) {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isHigh(c) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) {
      i++;
    } else if (isHigh(c) || isLow(c)) {
      out += `${text.slice(from, i)}\ufffd`;
      from = i + 1;
    }
  }
  return from ? out + text.slice(from) : text;
}

// Code-point order (JavaScript's < compares UTF-16 units, which puts U+FF61 after U+1F600).
function compareCodePoints(a, b) {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
}

function isHigh(c) {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLow(c) {
  return c >= 0xdc00 && c <= 0xdfff;
}

module.exports = {
  DEFAULTS,
  FACTS,
  GRPC_CODES,
  GRPC_NAMES,
  LIMITS,
  MAX_GRPC_STATUS,
  ORIGINS,
  ORIGIN_ALIASES,
  compareCodePoints,
  cut,
  length,
  serviceConfig,
  strip,
  wellFormed,
};
