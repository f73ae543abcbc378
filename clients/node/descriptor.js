// Validating a descriptor as the service does, before anything is sent, and fitting a
// built one to the limits so that it is never refused.
//
// The input is the descriptor-file shape `classifier classify` reads (origin by name,
// grpc_status by name or number); a descriptor the service refuses is refused here,
// field by field, naming each field as the service names it:
//   descriptor.orign: unknown key (did you mean 'origin'?); valid keys: type, ...
//   descriptor.origin: unknown origin 'provder' (did you mean 'provider'?); known: ...
// The facts come from the repository, copied into generated/ by `make spec`: the keys
// and value types from the descriptor file's JSON Schema (the model
// classifier/source/descriptor_file.py validates with), the origins, gRPC status names,
// limits and words from facts.json. Two passes, as in Python: the shape (keys, types,
// origin and gRPC status names), then, when the shape is right, the limits
// (classifier/descriptor.py, the service's own check; clients/spec/vectors/validate.json
// is its output, and this module's tests read it).
'use strict';

const SCHEMA = require('./generated/descriptor.schema.json');
const {
  FACTS, GRPC_CODES, GRPC_NAMES, LIMITS, MAX_GRPC_STATUS, ORIGINS, ORIGIN_ALIASES,
  compareCodePoints, cut, length, strip, wellFormed,
} = require('./facts');

const KNOWN_ORIGINS = ORIGINS.filter((o) => o !== ORIGINS[0]);
const { type_words: TYPE_WORDS, max_shown: MAX_SHOWN } = FACTS.descriptor_file;

// A refused descriptor, refused here or by the server (INVALID_ARGUMENT; then `cause` is
// the grpc-js error): `violations` lists each bad field ({field, message}); the message
// joins them as the server's INVALID_ARGUMENT details do.
class DescriptorError extends Error {
  constructor(violations, { cause } = {}) {
    super(violations.map((v) => (v.field ? `${v.field}: ${v.message}` : v.message)).join('; '), cause ? { cause } : undefined);
    this.name = 'DescriptorError';
    this.violations = violations;
  }
}

// The descriptor (in the descriptor-file shape) as the service accepts it: names and
// codes stripped, language and provider lower-cased, origin by its name (`caller` is
// `user`), grpc_status a number, attribute values text, the message's lone surrogates
// replaced and the message cut to MAX_MESSAGE_CHARS. Throws DescriptorError naming every
// bad field under `prefix`, with the paths the service uses (`descriptor.causes[0].type`).
// `file: true` reads a descriptor file as `classifier classify` does (descriptorFromFileData),
// which refuses a gRPC status number out of range as an unknown name, with the names it knows.
function validateDescriptor(data, { prefix = 'descriptor', file = false } = {}) {
  if (!isMapping(data)) throw new DescriptorError([{ field: prefix, message: 'must be a mapping' }]);
  const errors = [];
  const doc = model(ref(SCHEMA.$defs.DescriptorDoc), data, [], errors, file);
  if (errors.length) {
    throw new DescriptorError(errors.map(([parts, message]) => ({ field: fieldPath(prefix, parts), message })));
  }
  return limited(doc, prefix);
}

// What a descriptor file holds: the descriptor, or `{descriptor: ...}` around it, read as
// `classifier classify` reads the file (the same refusals, in the same words).
function descriptorFromFileData(data, options) {
  const unwrapped = isMapping(data) && Object.keys(data).length === 1 && 'descriptor' in data ? data.descriptor : data;
  return validateDescriptor(unwrapped, { ...options, file: true });
}

// What the builders send (descriptorFromError and the others): the descriptor cut to the
// limits, so that it is never refused (clients/spec/README.md, "fit"; vectors/fit.json).
// Names stripped and cut (never splitting a surrogate pair), empty supertypes dropped
// and the most specific MAX_SUPERTYPES kept, causes without a type dropped and the
// outermost MAX_CAUSES kept, codes cut, lone surrogates replaced, messages cut, statuses
// out of range left out, labels stripped, lower-cased and cut, attributes with an empty
// or over-long key dropped, values cut, and at most MAX_ATTRIBUTES kept (the keys first
// in code-point order). An origin it does not know, or an attribute value that is not
// text, a number or true/false, is left for validateDescriptor to refuse: that is the
// caller's mistake, not the failure's.
function fit(d) {
  const out = fitCause(d);
  const origin = typeof d.origin === 'string' ? originName(d.origin) : d.origin;
  const causes = list(d.causes).filter(isMapping).map(fitCause).filter((c) => c.type).slice(0, LIMITS.MAX_CAUSES);
  const attributes = Object.entries(isMapping(d.attributes) ? d.attributes : {})
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([key, value]) => [wellFormed(key), isScalar(value) ? cut(wellFormed(text(value)), LIMITS.MAX_ATTRIBUTE_VALUE_CHARS) : value])
    .filter(([key]) => key && length(key) <= LIMITS.MAX_ATTRIBUTE_KEY_CHARS)
    .sort(([a], [b]) => compareCodePoints(a, b))
    .slice(0, LIMITS.MAX_ATTRIBUTES);
  return compact({
    type: out.type,
    supertypes: out.supertypes,
    http_status: out.http_status,
    grpc_status: out.grpc_status,
    origin: origin === ORIGINS[0] ? undefined : origin,
    code: out.code,
    message: out.message,
    causes,
    language: label(d.language),
    provider: label(d.provider),
    attributes: Object.fromEntries(attributes),
  });
}

function fitCause(c) {
  const http = c.http_status;
  const grpc = typeof c.grpc_status === 'string' ? grpcCode(c.grpc_status) : c.grpc_status;
  return compact({
    type: fitted(c.type, LIMITS.MAX_TYPE_NAME_CHARS),
    supertypes: list(c.supertypes).map((s) => fitted(s, LIMITS.MAX_TYPE_NAME_CHARS)).filter(Boolean)
      .slice(0, LIMITS.MAX_SUPERTYPES),
    http_status: Number.isInteger(http) && http >= 100 && http <= 599 ? http : undefined,
    grpc_status: Number.isInteger(grpc) && grpc >= 0 && grpc <= MAX_GRPC_STATUS ? grpc : undefined,
    code: fitted(c.code, LIMITS.MAX_CODE_CHARS),
    message: cut(wellFormed(text(c.message)), LIMITS.MAX_MESSAGE_CHARS),
  });
}

// A name stripped and cut (and stripped again: a cut can end on a space).
function fitted(value, limit) {
  return strip(cut(strip(wellFormed(text(value))), limit));
}

function label(value) {
  return fitted(fitted(value, Infinity).toLowerCase(), LIMITS.MAX_LABEL_CHARS);
}

function text(value) {
  return isScalar(value) ? String(value) : '';
}

function isScalar(value) {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean';
}

function list(value) {
  return Array.isArray(value) ? value : [];
}

// An origin's name by its name or alias, any case; the value itself when unknown.
function originName(value) {
  const lowered = strip(value).toLowerCase();
  const name = ORIGIN_ALIASES[lowered] || lowered;
  if (!name) return ORIGINS[0];
  return ORIGINS.includes(name) ? name : value;
}

// --- the shape: keys and types, from the JSON Schema -------------------------------------

const PARSED = { origin: parseOrigin, grpc_status: parseGrpcCode, code: scalarText };

function ref(node) {
  return node.$ref ? SCHEMA.$defs[node.$ref.split('/').pop()] : node;
}

function isMapping(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

// A mapping validated against an object schema: each known key in the schema's order, then
// each unknown key, as pydantic reports them. A known key whose value is undefined is absent
// (as JSON.stringify leaves it out); an unknown key is refused whatever its value.
function model(schema, value, parts, errors, file) {
  const keys = Object.keys(schema.properties);
  const out = {};
  for (const key of keys) {
    if (value[key] === undefined) {
      if ((schema.required || []).includes(key)) errors.push([[...parts, key], 'is required']);
      continue;
    }
    const got = field(schema.properties[key], value[key], [...parts, key], errors, file);
    if (got === FAILED) continue;
    const parse = PARSED[key];
    if (parse === undefined || got === null) {
      out[key] = got;
      continue;
    }
    const parsed = parse(got, file);
    if (parsed.error) errors.push([[...parts, key], parsed.error]);
    else out[key] = parsed.value;
  }
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) {
      errors.push([[...parts, key], `unknown key${didYouMean(key, keys)}; valid keys: ${keys.join(', ')}`]);
    }
  }
  return out;
}

const FAILED = Symbol('failed');

function field(node, value, parts, errors, file) {
  node = ref(node);
  const members = (node.anyOf || [node]).map(ref);
  if (value === null && members.some((m) => m.type === 'null')) return null;
  const types = members.filter((m) => m.type !== 'null');
  if (types.length === 1 && types[0].type === 'object') {
    const m = types[0];
    if (!isMapping(value)) return typeError(types, value, parts, errors);
    if (m.properties) return model(m, value, parts, errors, file);
    const out = {};
    let failed = false;
    for (const [key, item] of Object.entries(value)) {
      const got = field(m.additionalProperties, item, [...parts, key], errors, file);
      if (got === FAILED) failed = true;
      else out[key] = scalarText(got).value;
    }
    return failed ? FAILED : out;
  }
  if (types.length === 1 && types[0].type === 'array') {
    if (!Array.isArray(value)) return typeError(types, value, parts, errors);
    const out = value.map((item, i) => field(types[0].items, item, [...parts, i], errors, file));
    return out.includes(FAILED) ? FAILED : out;
  }
  const got = scalar(types.map((m) => m.type), value);
  return got === FAILED ? typeError(types, value, parts, errors) : got;
}

function typeError(types, value, parts, errors) {
  const words = [...new Set(types.map((m) => TYPE_WORDS[m.type]))];
  errors.push([parts, `must be ${words.join(' or ')}, not ${written(value)}`]);
  return FAILED;
}

// A scalar as pydantic's smart union takes it: an exact match first, then a lax one (a
// whole number from true/false or from text such as "429" or " 429 ").
function scalar(types, value) {
  for (const t of types) {
    if (t === 'string' && typeof value === 'string') return value;
    if (t === 'integer' && Number.isInteger(value)) return value;
    if (t === 'number' && typeof value === 'number') return value;
    if (t === 'boolean' && typeof value === 'boolean') return value;
  }
  for (const t of types) {
    if (t === 'integer' && typeof value === 'boolean') return value ? 1 : 0;
    if (t === 'integer' && typeof value === 'string') {
      const text = value.trim();
      if (/^[+-]?[0-9]+(?:_[0-9]+)*(?:\.0+)?$/.test(text)) return Number(text.replace(/_/g, '').replace(/\.0+$/, ''));
    }
  }
  return FAILED;
}

// The text a scalar stands for, as descriptors carry it (`true`, `408`).
function scalarText(value) {
  return { value: String(value) };
}

function parseOrigin(value) {
  if (value === '') return { value: 'unspecified' };
  const lowered = strip(value).toLowerCase();
  const name = ORIGIN_ALIASES[lowered] || lowered;
  if (ORIGINS.includes(name)) return { value: name };
  const hint = didYouMean(strip(value), [...KNOWN_ORIGINS, ...Object.keys(ORIGIN_ALIASES)]);
  return { error: `unknown origin ${pyRepr(value)}${hint}; known: ${KNOWN_ORIGINS.join(', ')}` };
}

// A gRPC status by name or number. A whole number out of range is the service's to refuse
// (in the limits pass, with its words), except in a descriptor file, whose reader refuses
// it here as it refuses a name it does not know.
function parseGrpcCode(value, file) {
  const number = grpcCode(value);
  if (number !== undefined) return { value: number };
  if (!file && Number.isInteger(value)) return { value };
  const hint = didYouMean(String(value), GRPC_NAMES);
  return { error: `unknown gRPC status code ${pyRepr(value)}${hint}; known: ${GRPC_NAMES.join(', ')}` };
}

// A gRPC status by name (either spelling of CANCELLED) or number; undefined if none.
function grpcCode(value) {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value <= MAX_GRPC_STATUS ? value : undefined;
  let name = strip(String(value)).toUpperCase();
  if (name === 'CANCELED') name = 'CANCELLED';
  if (Object.hasOwn(GRPC_CODES, name)) return GRPC_CODES[name];
  return /^[0-9]+$/.test(name) ? grpcCode(Number(name)) : undefined;
}

// --- the limits, as classifier/descriptor.py checks them ---------------------------------

function limited(doc, prefix) {
  const violations = [];
  const add = (name, message) => violations.push({ field: `${prefix}.${name}`, message });
  const bounded = (name, value, limit) => {
    const text = strip(value || '');
    const n = length(text);
    if (n > limit) add(name, `${n} characters exceed the limit of ${limit}`);
    return text;
  };
  const typeName = (name, value) => {
    const text = bounded(name, value, LIMITS.MAX_TYPE_NAME_CHARS);
    if (!text) add(name, 'must not be empty');
    return text;
  };
  const typeNames = (name, values = []) => {
    if (values.length > LIMITS.MAX_SUPERTYPES) {
      add(name, `${values.length} entries exceed the limit of ${LIMITS.MAX_SUPERTYPES}`);
      return [];
    }
    return values.map((v, i) => typeName(`${name}[${i}]`, v)).filter(Boolean);
  };
  const httpStatus = (name, value) => {
    if (value !== undefined && value !== null && !(value >= 100 && value <= 599)) {
      add(name, `${value} is not an HTTP status (100-599)`);
    }
    return value;
  };
  const grpcStatus = (name, value) => {
    if (value !== undefined && value !== null && !(value >= 0 && value <= MAX_GRPC_STATUS)) {
      add(name, `${value} is not a gRPC status code (0-${MAX_GRPC_STATUS})`);
    }
    return value;
  };
  const message = (value) => wellFormed(cut(value || '', LIMITS.MAX_MESSAGE_CHARS));

  const out = { type: typeName('type', doc.type) };
  const supertypes = typeNames('supertypes', doc.supertypes);
  let causes = doc.causes || [];
  if (causes.length > LIMITS.MAX_CAUSES) {
    add('causes', `${causes.length} causes exceed the limit of ${LIMITS.MAX_CAUSES}`);
    causes = [];
  }
  const builtCauses = causes.map((c, i) => compact({
    type: typeName(`causes[${i}].type`, c.type),
    supertypes: typeNames(`causes[${i}].supertypes`, c.supertypes),
    http_status: httpStatus(`causes[${i}].http_status`, c.http_status),
    grpc_status: grpcStatus(`causes[${i}].grpc_status`, c.grpc_status),
    code: bounded(`causes[${i}].code`, c.code, LIMITS.MAX_CODE_CHARS),
    message: message(c.message),
  }));
  const attributes = limitedAttributes(doc.attributes || {}, add);
  Object.assign(out, compact({
    supertypes,
    http_status: httpStatus('http_status', doc.http_status),
    grpc_status: grpcStatus('grpc_status', doc.grpc_status),
    origin: doc.origin === 'unspecified' ? undefined : doc.origin,
    code: bounded('code', doc.code, LIMITS.MAX_CODE_CHARS),
    message: message(doc.message),
    causes: builtCauses,
    language: bounded('language', doc.language, LIMITS.MAX_LABEL_CHARS).toLowerCase(),
    provider: bounded('provider', doc.provider, LIMITS.MAX_LABEL_CHARS).toLowerCase(),
    attributes,
  }));
  if (violations.length) throw new DescriptorError(violations);
  return out;
}

function limitedAttributes(attributes, add) {
  const entries = Object.entries(attributes);
  if (entries.length > LIMITS.MAX_ATTRIBUTES) {
    add('attributes', `${entries.length} attributes exceed the limit of ${LIMITS.MAX_ATTRIBUTES}`);
    return {};
  }
  for (const [key, value] of entries) {
    if (!key) {
      add('attributes', 'an attribute key must not be empty');
    } else if (length(key) > LIMITS.MAX_ATTRIBUTE_KEY_CHARS) {
      add(`attributes[${pyRepr(cut(key, 40))}]`, `key exceeds the limit of ${LIMITS.MAX_ATTRIBUTE_KEY_CHARS} characters`);
    } else if (length(value) > LIMITS.MAX_ATTRIBUTE_VALUE_CHARS) {
      add(`attributes[${pyRepr(key)}]`, `value exceeds the limit of ${LIMITS.MAX_ATTRIBUTE_VALUE_CHARS} characters`);
    }
  }
  return attributes;
}

// The fields that are set: empty text, lists and mappings and absent numbers left out.
function compact(d) {
  return Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined && v !== null && v !== '' &&
    !(Array.isArray(v) && !v.length) && !(isMapping(v) && !Object.keys(v).length)));
}

// --- text as Python writes it ------------------------------------------------------------

// A path in FieldViolation's spelling: `descriptor.causes[0].code`, `descriptor.attributes['k']`.
function fieldPath(prefix, parts) {
  let path = prefix;
  parts.forEach((part, i) => {
    if (typeof part === 'number') path += `[${part}]`;
    else if (i === 1 && parts[0] === 'attributes') path += `[${pyRepr(part)}]`;
    else path += path ? `.${part}` : part;
  });
  return path;
}

// repr() of a string or a number.
function pyRepr(value) {
  if (typeof value !== 'string') return String(value);
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of value) {
    const c = ch.codePointAt(0);
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch !== ' ' && /[\p{C}\p{Z}]/u.test(ch)) {
      if (c < 0x100) out += `\\x${c.toString(16).padStart(2, '0')}`;
      else if (c < 0x10000) out += `\\u${c.toString(16).padStart(4, '0')}`;
      else out += `\\U${c.toString(16).padStart(8, '0')}`;
    } else out += ch;
  }
  return out + quote;
}

// A value as the author wrote it (one line of YAML flow style, as classifier/source/
// yamlsource.py's flow writes it), cut short when long.
function written(value) {
  const text = flow(value, false);
  return length(text) <= MAX_SHOWN ? text : `${cut(text, MAX_SHOWN - 1)}…`;
}

function flow(value, inFlow, simpleKey = false) {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : yamlFloat(value);
  if (Array.isArray(value)) return `[${value.map((v) => flow(v, true)).join(', ')}]`;
  if (isMapping(value)) {
    return `{${Object.entries(value).map(([k, v]) => `${flow(k, true, true)}: ${flow(v, true)}`).join(', ')}}`;
  }
  return yamlString(String(value), inFlow, simpleKey);
}

function yamlFloat(value) {
  let text = String(value).toLowerCase();
  if (!text.includes('.') && text.includes('e')) text = text.replace('e', '.0e');
  return text;
}

// PyYAML's implicit resolvers: a plain scalar matching one is not read back as text.
const IMPLICIT = [
  /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)\n?$/,
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\n?$/,
  /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)\n?$/,
  /^(?:<<)\n?$/,
  /^(?:~|null|Null|NULL|)\n?$/,
  /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)\n?$/,
  /^(?:=)\n?$/,
];
const BREAKS = '\n\u0085\u2028\u2029';
const SPACED = `\0 \t\r${BREAKS}`;

// PyYAML's emitter for one string: plain when YAML allows it there, else single-quoted,
// else double-quoted (analyze_scalar and choose_scalar_style, for what a message shows).
function yamlString(s, inFlow, simpleKey) {
  const chars = Array.from(s);
  if (!chars.length) return "''";
  let flowInd = false;
  let blockInd = false;
  let lineBreaks = false;
  let special = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  if (s.startsWith('---') || s.startsWith('...')) { flowInd = true; blockInd = true; }
  let preceded = true;
  let followed = chars.length === 1 || SPACED.includes(chars[1]);
  chars.forEach((ch, i) => {
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) { flowInd = true; blockInd = true; }
      if ('?:'.includes(ch)) { flowInd = true; if (followed) blockInd = true; }
      if (ch === '-' && followed) { flowInd = true; blockInd = true; }
    } else {
      if (',?[]{}'.includes(ch)) flowInd = true;
      if (ch === ':') { flowInd = true; if (followed) blockInd = true; }
      if (ch === '#' && preceded) { flowInd = true; blockInd = true; }
    }
    if (BREAKS.includes(ch)) lineBreaks = true;
    const c = ch.codePointAt(0);
    if (!(ch === '\n' || (c >= 0x20 && c <= 0x7e))) {
      const unicode = c === 0x85 || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) ||
        (c >= 0x10000 && c < 0x10ffff);
      if (!unicode || c === 0xfeff) special = true;
    }
    if (ch === ' ') {
      if (i === 0) leadingSpace = true;
      if (i === chars.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (BREAKS.includes(ch)) {
      if (i === 0) leadingBreak = true;
      if (i === chars.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousBreak = true;
      previousSpace = false;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    preceded = SPACED.includes(ch);
    followed = i + 1 >= chars.length - 1 || SPACED.includes(chars[i + 2]);
  });
  let flowPlain = true;
  let blockPlain = true;
  let single = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) { flowPlain = false; blockPlain = false; }
  if (breakSpace) { flowPlain = false; blockPlain = false; single = false; }
  if (spaceBreak || special) { flowPlain = false; blockPlain = false; single = false; }
  if (lineBreaks) { flowPlain = false; blockPlain = false; }
  if (flowInd) flowPlain = false;
  if (blockInd) blockPlain = false;
  const implicit = !IMPLICIT.some((re) => re.test(s));
  if (implicit && !(simpleKey && lineBreaks) && (inFlow ? flowPlain : blockPlain)) return s;
  if (single && !(simpleKey && lineBreaks)) return `'${s.replace(/'/g, "''")}'`;
  return doubleQuoted(chars);
}

const ESCAPES = {
  '\0': '0', '\x07': 'a', '\b': 'b', '\t': 't', '\n': 'n', '\v': 'v', '\f': 'f', '\r': 'r', '\x1b': 'e',
  '"': '"', '\\': '\\', '\u0085': 'N', '\u00a0': '_', '\u2028': 'L', '\u2029': 'P',
};

function doubleQuoted(chars) {
  let out = '"';
  for (const ch of chars) {
    const c = ch.codePointAt(0);
    const printable = (c >= 0x20 && c <= 0x7e) || (((c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd)) && c !== 0xfeff);
    if (ch in ESCAPES) out += `\\${ESCAPES[ch]}`;
    else if (printable) out += ch;
    else if (c <= 0xff) out += `\\x${c.toString(16).toUpperCase().padStart(2, '0')}`;
    else if (c <= 0xffff) out += `\\u${c.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += `\\U${c.toString(16).toUpperCase().padStart(8, '0')}`;
  }
  return `${out}"`;
}

// ` (did you mean 'origin'?)` for the choice closest to a misspelt value, or '' (Python's
// difflib.get_close_matches with cutoff 0.7, case ignored; the choice as it is spelt).
function didYouMean(value, choices) {
  const spelt = new Map(choices.map((c) => [String(c).toLowerCase(), String(c)]));
  const word = Array.from(value.toLowerCase());
  let best;
  for (const x of spelt.keys()) {
    const score = ratio(Array.from(x), word);
    if (score >= 0.7 && (!best || score > best.score || (score === best.score && x > best.x))) best = { score, x };
  }
  return best ? ` (did you mean ${pyRepr(spelt.get(best.x))}?)` : '';
}

// difflib.SequenceMatcher(None, a, b).ratio(), with its automatic junk heuristic.
function ratio(a, b) {
  const b2j = new Map();
  b.forEach((ch, j) => {
    if (!b2j.has(ch)) b2j.set(ch, []);
    b2j.get(ch).push(j);
  });
  if (b.length >= 200) {
    const ntest = Math.floor(b.length / 100) + 1;
    for (const [ch, idxs] of [...b2j]) if (idxs.length > ntest) b2j.delete(ch);
  }
  const longest = (alo, ahi, blo, bhi) => {
    let besti = alo;
    let bestj = blo;
    let bestsize = 0;
    let j2len = new Map();
    for (let i = alo; i < ahi; i++) {
      const next = new Map();
      for (const j of b2j.get(a[i]) || []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) || 0) + 1;
        next.set(j, k);
        if (k > bestsize) { besti = i - k + 1; bestj = j - k + 1; bestsize = k; }
      }
      j2len = next;
    }
    // no element is junk (there is no isjunk), so a match extends over popular elements too
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
      besti--; bestj--; bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
    return [besti, bestj, bestsize];
  };
  let matches = 0;
  const queue = [[0, a.length, 0, b.length]];
  while (queue.length) {
    const [alo, ahi, blo, bhi] = queue.pop();
    const [i, j, k] = longest(alo, ahi, blo, bhi);
    if (k) {
      matches += k;
      if (alo < i && blo < j) queue.push([alo, i, blo, j]);
      if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
    }
  }
  const total = a.length + b.length;
  return total ? (2 * matches) / total : 1;
}

module.exports = {
  DescriptorError,
  descriptorFromFileData,
  fit,
  grpcCode,
  isMapping,
  validateDescriptor,
};
