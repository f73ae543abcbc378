// Classifying in process from a ruleset bundle (docs/bundles.md): the service's compiled
// ruleset as one JSON document, evaluated here exactly as the service's engine evaluates
// it, so that a runtime gets the service's answer when the service cannot give it.
//
//   const bundle = Bundle.load('rules.bundle.json', { trustedKeys: [fs.readFileSync('ops.pub')] });
//   const answer = bundle.classify(descriptorFromError(err, { origin: 'provider' }));
//   answer.class_name, answer.action.id, answer.rule_id, answer.local, answer.bundle_digest
//
// clients/spec/vectors/bundle*.json hold this evaluator to the engine's answers (ten
// thousand of them, every one identical), and bundle_verify.json to the service's verifier.
// This follows the bundle itself (its `descriptor` normalisation, its `precedence`) and
// docs/bundles.md, ported from the reference evaluator (clients/python/errorclass_client/
// bundle), never from the service's code.
//
// Why it is shaped so: an evaluation sits on a run's failure path, beside a gRPC call that
// costs half a millisecond, so it must cost microseconds. Every pattern is compiled once per
// bundle (re2js, a pure-JavaScript RE2: linear time, RE2's syntax and semantics, as every
// client's evaluator matches); rules are indexed by type name within each precedence tier
// and split by a plain field (code, gRPC status, provider, origin, language), so an
// evaluation is a few map lookups and the tests of the few rules found, not a scan of the
// 440 rules; each rule tests its cheap conditions before its patterns; the message
// patterns of the rules that share a bucket are also compiled together (an RE2Set), so the
// message is searched once for all of them (twelve langchaingo rules read one Go error
// string: 5 us in one pass, 25 us one pattern at a time); answers are built once, frozen
// and shared.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const { DescriptorError } = require('./descriptor');
const { FACTS, cut, length, wellFormed } = require('./facts');
const { enumName } = require('./proto');
const { retryAfter, wireFields } = require('./retry');

const FORMAT = 'errorclass-bundle';
const FORMAT_VERSION = 1;
// The precedence key this evaluator implements; a bundle naming another is refused.
const PRECEDENCE = ['decisive', 'fallback', 'type_depth', 'condition_count', 'priority', 'layer', 'order'];
const STRIPPED = ['code', 'language', 'provider', 'supertypes', 'type'];
const SIGNATURES_FORMAT = 'errorclass-bundle-signatures';
const SPLIT_FIELDS = ['code', 'grpc_status', 'provider', 'origin', 'language'];

// A bundle this package will not use. `code` is stable (docs/bundles.md), the same in every
// client: `unsigned`, `unknown_key`, `bad_signature`, `malformed_signatures` (its signatures
// did not let it be used), `invalid_bundle`, `unsupported_format` (the document), and
// `invalid_key` (a trusted key that is not an Ed25519 public key).
class BundleError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = 'BundleError';
    this.code = code;
  }
}

// A loaded (and, with trusted keys, verified) bundle, ready to classify.
class Bundle {
  // `data`: the bundle's bytes (a Buffer, a Uint8Array or its text) as they were signed.
  // `keyIds`: the trusted keys whose signatures verified (verifyBundle's answer).
  constructor(data, { keyIds = [] } = {}) {
    const bytes = toBuffer(data);
    let doc;
    try {
      doc = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      throw new BundleError('invalid_bundle', `not JSON (${err.message})`);
    }
    if (!isMapping(doc) || doc.format !== FORMAT) throw new BundleError('invalid_bundle', 'not a ruleset bundle');
    if (doc.format_version !== FORMAT_VERSION || !sameList(doc.precedence, PRECEDENCE)) {
      throw new BundleError('unsupported_format', `bundle format ${JSON.stringify(doc.format_version)} with precedence ` +
        `${JSON.stringify(doc.precedence)}: this evaluator reads format ${FORMAT_VERSION} with precedence ${JSON.stringify(PRECEDENCE)}`);
    }
    this.bundleDigest = `sha256:${crypto.createHash('sha256').update(bytes).digest('hex')}`;
    try {
      const ruleset = doc.ruleset;
      this.name = text(ruleset.name);
      this.version = text(ruleset.version);
      // The ruleset's digest, the one GetRuleset reports and every answer carries.
      this.digest = text(ruleset.digest);
      this._evaluator = new Evaluator(doc, this);
    } catch (err) {
      if (err instanceof BundleError) throw err;
      throw new BundleError('invalid_bundle', `${err.name}: ${err.message}`);
    }
    // The trusted keys whose signatures verified (empty: loaded without keys).
    this.keyIds = Object.freeze([...keyIds]);
    Object.freeze(this);
  }

  // A bundle file. With `trustedKeys` (PEM SubjectPublicKeyInfo Ed25519 public keys, as
  // text, Buffers or KeyObjects) it is used only when one of them signed its exact bytes:
  // the signatures are `signatures` (a file; by default FILE.sig.json beside it, and none
  // when that does not exist). Without trustedKeys it is used unverified.
  static load(file, { signatures, trustedKeys = [] } = {}) {
    const data = fs.readFileSync(file);
    let signed = null;
    if (trustedKeys.length) {
      const sigfile = signatures || `${file}.sig.json`;
      signed = signatures || fs.existsSync(sigfile) ? fs.readFileSync(sigfile) : null;
    }
    return Bundle.fromBytes(data, { signatures: signed, trustedKeys });
  }

  // A bundle from its bytes (as fetched), verified when trustedKeys are given against
  // `signatures` (the signatures document's bytes or text; null or absent: unsigned).
  static fromBytes(data, { signatures = null, trustedKeys = [] } = {}) {
    const keyIds = trustedKeys.length ? verifyBundle(data, signatures, trustedKeys) : [];
    return new Bundle(data, { keyIds });
  }

  // The service's answer for a descriptor, from this bundle: a ClassifyResponse as the
  // Client's calls return it (enums as their names: error_class, class_name, action,
  // effect, retryable, rule_id, ruleset_version, ruleset_digest, unknown_reason), with
  // `local: true` and the `bundle_digest` that decided; frozen (answers are shared). The
  // descriptor is spelt as the builders (descriptorFromError, fit) and validateDescriptor
  // return it: the proto's field names, `origin` by name, statuses by number. One the
  // service would refuse (past a limit, no type) throws a DescriptorError, as the service
  // gives no answer for it. A retryable answer whose descriptor carries the provider's retry
  // evidence also says how long to wait, as the service's does: `retry_after` (a Duration,
  // {seconds, nanos}), `retry_after_ms` and `retry_after_source` (the attribute, ` (capped)`
  // when the rule's cap cut it); `now` is the runtime's clock (a Date, epoch milliseconds, or
  // a function giving one; Date.now by default), read only when a date in the evidence must
  // become a wait and the provider's own `date` header does not read.
  classify(descriptor, { now } = {}) {
    return this._evaluator.classify(descriptor, now);
  }

  // How many rules it holds.
  get ruleCount() {
    return this._evaluator.ruleCount;
  }
}

// --- signatures -----------------------------------------------------------------------------

// The ids of the trusted keys whose Ed25519 signatures of `data` (the bundle's exact bytes)
// verify, in the signatures file's order; a BundleError naming why when none does:
// `unsigned` (no signature, or no signatures document: `signatures` null), `unknown_key`
// (every signature by a key not trusted), `bad_signature` (a trusted key's signature that
// does not verify: the bundle or the signature changed), `malformed_signatures` (not a
// signatures document). Entries by other keys, or of another algorithm, are skipped.
function verifyBundle(data, signatures, trustedKeys) {
  const bytes = toBuffer(data);
  const entries = signatureEntries(signatures);
  if (!entries.length) throw new BundleError('unsigned', 'the bundle has no signature');
  const byId = new Map();
  for (const key of trustedKeys.map(publicKey)) {
    const id = keyId(key);
    if (!byId.has(id)) byId.set(id, []);
    byId.get(id).push(key);
  }
  const good = [];
  const tried = [];
  for (const entry of entries) {
    const keys = byId.get(entry.key_id);
    if (entry.algorithm !== 'ed25519' || !keys) continue;
    tried.push(entry.key_id);
    const raw = base64(entry.signature);
    if (raw && keys.some((key) => verifies(bytes, raw, key))) good.push(entry.key_id);
  }
  if (good.length) return good;
  if (tried.length) {
    throw new BundleError('bad_signature', `the signature by trusted key ${tried.join(', ')} does not verify: the bundle ` +
      'changed after it was signed (or the signature did)');
  }
  throw new BundleError('unknown_key', `signed by ${[...new Set(entries.map((e) => e.key_id))].join(', ')}, none of them trusted`);
}

// An Ed25519 public key from PEM SubjectPublicKeyInfo (text or a Buffer), or a KeyObject.
function publicKey(key) {
  let out;
  try {
    out = key instanceof crypto.KeyObject ? key : crypto.createPublicKey(key);
  } catch (err) {
    throw new BundleError('invalid_key', `not a PEM public key (${err.message})`);
  }
  if (out.type !== 'public' || out.asymmetricKeyType !== 'ed25519') {
    throw new BundleError('invalid_key', `a ${out.asymmetricKeyType} ${out.type} key, not an Ed25519 public key`);
  }
  return out;
}

// The first 16 hex digits of SHA-256 over the key's DER SubjectPublicKeyInfo.
function keyId(key) {
  const der = publicKey(key).export({ type: 'spki', format: 'der' });
  return crypto.createHash('sha256').update(der).digest('hex').slice(0, 16);
}

function verifies(bytes, signature, key) {
  try {
    return crypto.verify(null, bytes, key, signature);
  } catch {
    return false;
  }
}

// Strict base64 (as Python's b64decode(validate=True)): null for anything else.
function base64(value) {
  if (value.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) return null;
  return Buffer.from(value, 'base64');
}

function signatureEntries(signatures) {
  if (signatures === null || signatures === undefined) return [];
  let doc;
  try {
    doc = JSON.parse(toBuffer(signatures).toString('utf8'));
  } catch (err) {
    throw new BundleError('malformed_signatures', `not a signatures document (not JSON: ${err.message})`);
  }
  if (!isMapping(doc) || doc.format !== SIGNATURES_FORMAT || doc.format_version !== 1 || !Array.isArray(doc.signatures)) {
    throw new BundleError('malformed_signatures', `not a signatures document of format 1 (${SIGNATURES_FORMAT})`);
  }
  for (const e of doc.signatures) {
    if (!isMapping(e) || !['key_id', 'algorithm', 'signature'].every((k) => typeof e[k] === 'string')) {
      throw new BundleError('malformed_signatures', 'not a signatures document: an entry\'s key_id, algorithm and signature are text');
    }
  }
  return doc.signatures;
}

// --- the descriptor, as the bundle says to normalise it -------------------------------------

class Normaliser {
  constructor(spec) {
    this.whitespace = new Set(spec.whitespace);
    this.maxMessage = spec.message_max_chars;
    this.aliases = new Map(Object.entries(spec.origin_aliases));
    this.limits = { ...spec.limits };
    for (const name of ['MAX_CAUSES', 'MAX_SUPERTYPES', 'MAX_TYPE_NAME_CHARS', 'MAX_CODE_CHARS', 'MAX_LABEL_CHARS',
      'MAX_ATTRIBUTES', 'MAX_ATTRIBUTE_KEY_CHARS', 'MAX_ATTRIBUTE_VALUE_CHARS']) {
      if (!Number.isInteger(this.limits[name])) throw new TypeError(`descriptor.limits.${name} is not a whole number`);
    }
    if (!Number.isInteger(this.maxMessage)) throw new TypeError('descriptor.message_max_chars is not a whole number');
    this.lowerLanguage = spec.lower_cased.includes('language');
    this.lowerProvider = spec.lower_cased.includes('provider');
    if (!sameList([...spec.stripped].sort(), STRIPPED)) {
      throw new BundleError('unsupported_format', 'the bundle strips fields this evaluator does not');
    }
  }

  // Without the bundle's whitespace at either end (Python's str.strip(), which is not
  // JavaScript's trim: U+001C-U+001F and U+0085 are stripped, U+FEFF is not).
  strip(value) {
    const ws = this.whitespace;
    let start = 0;
    let end = value.length;
    while (start < end && ws.has(value[start])) start++;
    while (end > start && ws.has(value[end - 1])) end--;
    return start === 0 && end === value.length ? value : value.slice(start, end);
  }

  // Each lone surrogate replaced by U+FFFD, then cut to message_max_chars code points.
  message(value) {
    if (typeof value !== 'string' || !value) return '';
    const whole = wellFormed(value);
    return whole.length > this.maxMessage ? cut(whole, this.maxMessage) : whole;
  }

  name(value) {
    return typeof value === 'string' ? this.strip(value) : '';
  }

  cause(data, at) {
    return {
      chain: this.chain(data),
      http_status: status(data.http_status, `${at}http_status`),
      grpc_status: status(data.grpc_status, `${at}grpc_status`),
      code: this.code(data.code),
      message: this.message(data.message),
    };
  }

  descriptor(data) {
    if (!isMapping(data)) throw new DescriptorError([{ field: 'descriptor', message: 'must be a mapping' }]);
    let origin = typeof data.origin === 'string' ? this.strip(data.origin).toLowerCase() : '';
    origin = this.aliases.get(origin) ?? origin;
    const language = this.name(data.language);
    const provider = this.name(data.provider);
    const d = {
      chain: this.chain(data),
      http_status: status(data.http_status, 'http_status'),
      grpc_status: status(data.grpc_status, 'grpc_status'),
      code: this.code(data.code),
      message: this.message(data.message),
      epoch: 0, // which evaluation it is (Patterns keeps what its patterns found in its message)
      origin: origin === 'unspecified' ? '' : origin,
      language: this.lowerLanguage ? language.toLowerCase() : language,
      provider: this.lowerProvider ? provider.toLowerCase() : provider,
      attributes: this.attributes(data.attributes),
      causes: Array.isArray(data.causes) ? data.causes.map((c, i) => this.cause(isMapping(c) ? c : {}, `causes[${i}].`)) : [],
    };
    this.check(d);
    return d;
  }

  code(value) {
    if (typeof value === 'string') return this.strip(value);
    return value === undefined || value === null ? '' : this.strip(String(value));
  }

  chain(data) {
    const chain = [this.name(data.type)];
    if (Array.isArray(data.supertypes)) for (const s of data.supertypes) chain.push(this.name(s));
    return chain;
  }

  // Attribute values are text on the wire: a number or true/false is its text.
  attributes(value) {
    if (!isMapping(value)) return EMPTY;
    let out = value;
    for (const [key, v] of Object.entries(value)) {
      if (typeof v === 'string') continue;
      if (out === value) out = { ...value };
      if (typeof v === 'number' || typeof v === 'boolean') out[key] = String(v);
      else throw new DescriptorError([{ field: `descriptor.attributes[${JSON.stringify(key)}]`, message: 'must be text' }]);
    }
    return out;
  }

  // Refuse what the service refuses: a local answer for a descriptor the service would not
  // classify would be an answer it never gives.
  check(d) {
    const lim = this.limits;
    const refuse = (field, message) => {
      throw new DescriptorError([{ field: `descriptor.${field}`, message }]);
    };
    const over = (value, limit) => value.length > limit && length(value) > limit; // code points
    if (d.causes.length > lim.MAX_CAUSES) refuse('causes', `${d.causes.length} causes exceed the limit of ${lim.MAX_CAUSES}`);
    const subjects = [d, ...d.causes];
    for (let i = 0; i < subjects.length; i++) {
      const s = subjects[i];
      const at = i ? `causes[${i - 1}].` : '';
      if (s.chain.length - 1 > lim.MAX_SUPERTYPES) refuse(`${at}supertypes`, `more than ${lim.MAX_SUPERTYPES} entries`);
      for (let k = 0; k < s.chain.length; k++) {
        const where = k ? `${at}supertypes[${k - 1}]` : `${at}type`;
        if (!s.chain[k]) refuse(where, 'must not be empty');
        if (over(s.chain[k], lim.MAX_TYPE_NAME_CHARS)) refuse(where, `exceeds the limit of ${lim.MAX_TYPE_NAME_CHARS} characters`);
      }
      if (over(s.code, lim.MAX_CODE_CHARS)) refuse(`${at}code`, `exceeds the limit of ${lim.MAX_CODE_CHARS} characters`);
    }
    if (over(d.language, lim.MAX_LABEL_CHARS)) refuse('language', `exceeds the limit of ${lim.MAX_LABEL_CHARS} characters`);
    if (over(d.provider, lim.MAX_LABEL_CHARS)) refuse('provider', `exceeds the limit of ${lim.MAX_LABEL_CHARS} characters`);
    if (d.attributes === EMPTY) return;
    const entries = Object.entries(d.attributes);
    if (entries.length > lim.MAX_ATTRIBUTES) refuse('attributes', `${entries.length} attributes exceed the limit of ${lim.MAX_ATTRIBUTES}`);
    for (const [key, value] of entries) {
      if (!key || over(key, lim.MAX_ATTRIBUTE_KEY_CHARS)) refuse('attributes', 'an attribute key is empty or past its limit');
      if (over(value, lim.MAX_ATTRIBUTE_VALUE_CHARS)) refuse(`attributes[${JSON.stringify(key)}]`, 'value past its limit');
    }
  }
}

const EMPTY = Object.freeze({});

// A status is a whole number (validateDescriptor turns a gRPC status's name into one);
// anything else would silently match nothing, so it is refused.
function status(value, field) {
  if (value === undefined || value === null) return null;
  if (Number.isInteger(value)) return value;
  throw new DescriptorError([{ field: `descriptor.${field}`, message: `must be a whole number, not ${JSON.stringify(value)} (validateDescriptor reads a gRPC status's name)` }]);
}

function isSet(value) {
  return value !== null && value !== undefined && value !== '';
}

// --- rules ----------------------------------------------------------------------------------

// The cost order of a rule's tests: each rule tests its cheap conditions first (the result
// does not depend on the order: every test is a pure function of the descriptor).
const COST = { type: 0, field_in: 1, present: 1, attribute: 1, message: 2, cause: 3 };

// One condition of the bundle as a test of a subject: the descriptor (`top`) or a cause.
function conditionTest(c, patterns, top = true) {
  switch (c.kind) {
    case 'type': {
      const names = new Set(c.names.map(String));
      return (s) => {
        for (const n of s.chain) if (names.has(n)) return true;
        return false;
      };
    }
    case 'field_in': {
      const get = getter(c.field);
      if (c.ranges !== undefined) {
        const spans = c.ranges.map(([lo, hi]) => [Number(lo), Number(hi)]);
        return (s) => {
          const v = get(s);
          if (v === null) return false;
          for (const [lo, hi] of spans) if (lo <= v && v <= hi) return true;
          return false;
        };
      }
      const values = new Set(c.values);
      return (s) => values.has(get(s));
    }
    case 'present': {
      const get = getter(c.field);
      const wanted = Boolean(c.present);
      return (s) => isSet(get(s)) === wanted;
    }
    case 'message': {
      const id = patterns.compile(c.pattern);
      if (top) return (s) => patterns.found(id, s);
      const search = patterns.single[id];
      return (s) => search(s.message);
    }
    case 'attribute': {
      const name = String(c.name);
      const values = new Set(c.values);
      return (s) => Object.hasOwn(s.attributes, name) && values.has(s.attributes[name]);
    }
    case 'cause': {
      const inner = ordered(c.conditions).map((i) => conditionTest(i, patterns, false));
      return (s) => s.causes.some((cause) => holds(inner, cause));
    }
    default:
      throw new BundleError('unsupported_format', `a condition of kind ${JSON.stringify(c.kind)}`);
  }
}

const GETTERS = {
  http_status: (s) => s.http_status,
  grpc_status: (s) => s.grpc_status,
  code: (s) => s.code,
  message: (s) => s.message,
  origin: (s) => s.origin,
  provider: (s) => s.provider,
  language: (s) => s.language,
};

function getter(field) {
  const get = GETTERS[field];
  if (!get) throw new BundleError('unsupported_format', `a condition on the field ${JSON.stringify(field)}`);
  return get;
}

function ordered(conditions) {
  return [...conditions].sort((a, b) => (COST[a.kind] ?? 9) - (COST[b.kind] ?? 9));
}

function holds(tests, subject) {
  for (const test of tests) if (!test(subject)) return false;
  return true;
}

// Every distinct pattern of a bundle compiled once, with re2js (loaded with the first bundle:
// a runtime that never loads one never pays for its tables), by id; and the descriptor-level
// patterns of each bucket's rules grouped in an RE2Set, whose one search of a message answers
// for every pattern of the group: what it found is kept for the evaluation under way (its
// epoch), so the other rules of the bucket read it instead of searching again.
class Patterns {
  constructor() {
    const re2js = require('re2js');
    this.RE2JS = re2js.RE2JS;
    this.RE2Set = re2js.RE2Set;
    this.ids = new Map();
    this.texts = []; // by id: the pattern
    this.single = []; // by id: (message) => whether the pattern is found in it
    this.group = []; // by id: its group ({set, ids}), or undefined
    this.epoch = 0;
    this.seenAt = []; // by id: the epoch of the evaluation its result is for
    this.result = []; // by id: whether it was found
  }

  // The pattern's id (compiled the first time).
  compile(pattern) {
    if (typeof pattern !== 'string') throw new TypeError('a message pattern is not text');
    let id = this.ids.get(pattern);
    if (id === undefined) {
      let re;
      try {
        re = this.RE2JS.compile(pattern);
      } catch (err) {
        throw new BundleError('invalid_bundle', `the pattern ${JSON.stringify(pattern)} is not RE2 (${err.message})`);
      }
      id = this.single.length;
      this.ids.set(pattern, id);
      this.texts.push(pattern);
      this.single.push((message) => re.test(message)); // an unanchored search, as the engine's
      this.group.push(undefined);
      this.seenAt.push(0);
      this.result.push(false);
    }
    return id;
  }

  // Group the patterns of `ids` that are in no group yet (two or more make one).
  grouped(ids) {
    const free = [...new Set(ids)].filter((id) => this.group[id] === undefined);
    if (free.length < 2) return;
    const set = new this.RE2Set();
    try {
      for (const id of free) set.add(this.texts[id]);
      set.compile();
    } catch {
      return; // each compiled alone already: searched one at a time, as before
    }
    const group = { set, ids: free };
    for (const id of free) this.group[id] = group;
  }

  // Whether pattern `id` is found in the descriptor's message in the evaluation under way.
  found(id, d) {
    const group = this.group[id];
    if (group === undefined) return this.single[id](d.message);
    if (this.seenAt[id] !== d.epoch) {
      const hits = group.set.match(d.message); // indexes into group.ids, in the order added
      for (const member of group.ids) {
        this.seenAt[member] = d.epoch;
        this.result[member] = false;
      }
      for (const i of hits) this.result[group.ids[i]] = true;
    }
    return this.result[id];
  }
}

// Rules that share a type name (or have none), looked up by their split field.
class Bucket {
  constructor(rules, patterns) {
    patterns.grouped(rules.flatMap((r) => r.messages));
    this.always = rules.filter((r) => r.split === null);
    this.byField = [];
    const index = new Map();
    for (const rule of rules) {
      if (rule.split === null) continue;
      const [field, values] = rule.split;
      if (!index.has(field)) index.set(field, new Map());
      const byValue = index.get(field);
      for (const value of values) {
        if (!byValue.has(value)) byValue.set(value, []);
        byValue.get(value).push(rule);
      }
    }
    for (const [field, byValue] of index) this.byField.push([GETTERS[field], byValue]);
  }

  // The rules here whose every condition holds for d.
  found(d, out) {
    for (const r of this.always) if (holds(r.tests, d)) out.push(r);
    for (const [get, byValue] of this.byField) {
      const rules = byValue.get(get(d));
      if (rules) for (const r of rules) if (holds(r.tests, d)) out.push(r);
    }
    return out;
  }
}

class Evaluator {
  constructor(doc, bundle) {
    this.normaliser = new Normaliser(doc.descriptor);
    const answer = (a, ruleId, reason = 'none') => Object.freeze({
      error_class: enumName('RunErrorClass', a.class),
      class_name: a.class_name,
      action: Object.freeze({ id: a.action.id, summary: a.action.summary, runbook_url: a.action.runbook_url || '' }),
      effect: enumName('RunEffect', index(FACTS.effects, a.effect, 'effect')),
      retryable: a.retryable === true,
      rule_id: ruleId,
      ruleset_version: bundle.version,
      ruleset_digest: bundle.digest,
      unknown_reason: enumName('UnknownReason', index(FACTS.unknown_reasons, reason, 'unknown reason')),
      explanation: null,
      retry_after: null, // a wait is added per descriptor (Evaluator#classify)
      retry_after_ms: null,
      retry_after_source: '',
      local: true,
      bundle_digest: bundle.bundleDigest,
    });
    this.noMatch = answer(doc.unknown.no_match, '', 'no_match');
    this.conflict = answer(doc.unknown.conflict, '', 'conflict');
    const patterns = new Patterns();
    this.caps = new Map(); // a retryable rule's answer -> its retry_after cap, in seconds
    const rules = doc.rules.map((r) => {
      const split = splitOf(r.conditions);
      const a = answer(r.answer, String(r.id));
      // the longest wait a retryable rule advises (present only on retryable answers)
      if (a.retryable && typeof r.answer.retry_after_cap_seconds === 'number') this.caps.set(a, r.answer.retry_after_cap_seconds);
      return {
        id: String(r.id),
        order: r.order,
        names: r.type === undefined || r.type === null ? null : r.type.map(String),
        // the split condition is the bucket's lookup: a rule found by it holds it
        tests: ordered(r.conditions.filter((c) => !split || c !== split.condition)).map((c) => conditionTest(c, patterns)),
        messages: r.conditions.filter((c) => c.kind === 'message').map((c) => patterns.compile(c.pattern)), // its descriptor-level patterns
        split: split ? [split.condition.field, split.condition.values] : null,
        tier: (r.decisive ? 0 : 2) + (r.fallback ? 1 : 0), // 0 decisive, 1 decisive fallback, 2 plain, 3 fallback
        rank: [-r.condition_count, -r.priority, r.layer], // the keys after type depth
        answer: a,
        agreeOn: `${r.answer.class}/${r.answer.effect}`, // what tied rules must agree on
      };
    });
    for (const r of rules) {
      if (!r.rank.every(Number.isInteger) || !Number.isInteger(r.order)) throw new TypeError(`rule ${r.id}: a precedence key is not a whole number`);
    }
    this.ruleCount = rules.length;
    this.patterns = patterns;
    this.tiers = [];
    for (let tier = 0; tier < 4; tier++) {
      const byType = new Map();
      const untyped = [];
      for (const rule of rules) {
        if (rule.tier !== tier) continue;
        if (rule.names === null) untyped.push(rule);
        else {
          for (const name of rule.names) {
            if (!byType.has(name)) byType.set(name, []);
            byType.get(name).push(rule);
          }
        }
      }
      if (byType.size || untyped.length) {
        this.tiers.push({ byType: new Map([...byType].map(([name, rs]) => [name, new Bucket(rs, patterns)])), untyped: new Bucket(untyped, patterns) });
      }
    }
  }

  classify(data, now) {
    const d = this.normaliser.descriptor(data);
    d.epoch = ++this.patterns.epoch;
    for (const { byType, untyped } of this.tiers) {
      const found = nearest(byType, untyped, d);
      if (found.length) return this.advised(this.decide(found), d, now);
    }
    return this.noMatch;
  }

  // The answer with the wait the descriptor's evidence asks for, when it is retryable and
  // the evidence says one (a new answer: the shared one stays without); else the answer.
  advised(answer, d, now) {
    if (d.attributes === EMPTY) return answer;
    const cap = this.caps.get(answer);
    if (cap === undefined) return answer;
    const wait = retryAfter(d.attributes, cap, now);
    return wait === null ? answer : Object.freeze({ ...answer, ...wireFields(wait) });
  }

  // Among the matches at the nearest depth: the smallest (condition count, priority, layer)
  // wins; rules still tied answer in order if they agree on class and effect, else conflict.
  decide(found) {
    if (found.length === 1) return found[0].answer;
    let best = found[0].rank;
    for (const r of found) if (compareRank(r.rank, best) < 0) best = r.rank;
    let first = null;
    let agree = true;
    for (const r of found) {
      if (compareRank(r.rank, best) !== 0) continue;
      if (first === null) first = r;
      else {
        if (r.agreeOn !== first.agreeOn) agree = false;
        if (r.order < first.order) first = r;
      }
    }
    return agree ? first.answer : this.conflict;
  }
}

// The matching rules at the nearest type depth that has any (type depth is the key after
// the tier, so nothing deeper can win), else the untyped rules that match.
function nearest(byType, untyped, d) {
  const out = [];
  for (const name of d.chain) {
    const bucket = byType.get(name);
    if (bucket !== undefined && bucket.found(d, out).length) return out;
  }
  return untyped.found(d, out);
}

function compareRank(a, b) {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

// A plain field's condition the rule's bucket can look it up by (the first of SPLIT_FIELDS
// the rule names with values), or null.
function splitOf(conditions) {
  const plain = new Map();
  for (const c of conditions) if (c.kind === 'field_in' && c.values !== undefined) plain.set(c.field, c);
  const field = SPLIT_FIELDS.find((f) => plain.has(f));
  return field === undefined ? null : { condition: plain.get(field) };
}

function index(names, name, what) {
  const i = names.indexOf(name);
  if (i < 0) throw new TypeError(`an answer's ${what} ${JSON.stringify(name)} is not one this package knows`);
  return i;
}

// Bytes as given: text (as UTF-8), a Buffer, a Uint8Array or another view, an ArrayBuffer.
function toBuffer(data) {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (Buffer.isBuffer(data)) return data;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  throw new TypeError(`bytes expected (text, a Buffer, a Uint8Array), not ${typeof data}`);
}

function isMapping(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function sameList(a, b) {
  return Array.isArray(a) && a.length === b.length && a.every((x, i) => x === b[i]);
}

function text(value) {
  if (typeof value !== 'string') throw new TypeError('a ruleset name, version or digest is not text');
  return value;
}

module.exports = { Bundle, BundleError, FORMAT_VERSION, PRECEDENCE, keyId, verifyBundle };
