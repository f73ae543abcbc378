// The bundle evaluator's API beyond the vectors (which hold every answer and verdict to the
// service's): loading a file with its signatures beside it, the refusals and their codes,
// the answer's shape, what a descriptor past the limits gets, and patterns compiled once.
'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, test } = require('node:test');
const { RE2JS } = require('re2js');
const lib = require('..');

const SPEC = process.env.ERRORCLASS_SPEC_DIR || path.join(__dirname, '..', '..', 'spec');
const KINDS = path.join(SPEC, 'bundles', 'kinds.json');
const LIBRARY = path.join(SPEC, 'bundles', 'library.json');
const KEY_A = fs.readFileSync(path.join(SPEC, 'keys', 'TEST-ONLY-a.pub'));
const KEY_B = fs.readFileSync(path.join(SPEC, 'keys', 'TEST-ONLY-b.pub'));
// kinds.json signed by TEST-ONLY-a, as the service's `classifier bundle sign` wrote it (bundle_verify's signed-trusted)
const SIGNED_BY_A = JSON.parse(fs.readFileSync(path.join(SPEC, 'vectors', 'bundle_verify.json'), 'utf8'))
  .vectors.find((v) => v.name === 'signed-trusted').input.signatures;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'errorclass-bundle-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function copy(name, bytes, signatures) {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, bytes);
  if (signatures !== undefined) fs.writeFileSync(`${file}.sig.json`, signatures);
  return file;
}

function refusal(fn) {
  try {
    fn();
  } catch (err) {
    if (err instanceof lib.BundleError) return err;
    throw err;
  }
  throw new Error('expected a BundleError');
}

const RATE_LIMITED = { type: 'openai.RateLimitError', supertypes: ['openai.APIStatusError'], http_status: 429, origin: 'provider', provider: 'openai' };

test('load reads FILE.sig.json beside the bundle and keeps the keys that verified', () => {
  const bytes = fs.readFileSync(KINDS);
  const file = copy('kinds.json', bytes, SIGNED_BY_A);
  const bundle = lib.Bundle.load(file, { trustedKeys: [KEY_B, KEY_A.toString()] });
  assert.deepEqual(bundle.keyIds, [lib.keyId(KEY_A)]);
  assert.equal(lib.keyId(KEY_A), '4b6904cc8d2eee2d', "the key id docs/bundles.md defines (the vectors' id of key a)");
  assert.equal(bundle.bundleDigest, `sha256:${crypto.createHash('sha256').update(bytes).digest('hex')}`);
  const doc = JSON.parse(bytes);
  assert.deepEqual([bundle.name, bundle.version, bundle.digest, bundle.ruleCount],
    [doc.ruleset.name, doc.ruleset.version, doc.ruleset.digest, doc.rules.length]);
  assert.deepEqual(lib.Bundle.load(file).keyIds, [], 'without trusted keys it is used unverified');
});

test('a tampered, unsigned or unknown-key bundle is refused with its code', () => {
  const bytes = Buffer.from(fs.readFileSync(KINDS));
  bytes[100] ^= 1;
  const tampered = refusal(() => lib.Bundle.load(copy('tampered.json', bytes, SIGNED_BY_A), { trustedKeys: [KEY_A] }));
  assert.equal(tampered.code, 'bad_signature');
  assert.match(tampered.message, /^bad_signature: the signature by trusted key 4b6904cc8d2eee2d does not verify/);
  const unsigned = refusal(() => lib.Bundle.load(copy('unsigned.json', fs.readFileSync(KINDS)), { trustedKeys: [KEY_A] }));
  assert.equal(unsigned.code, 'unsigned', 'no FILE.sig.json beside it');
  assert.equal(refusal(() => lib.Bundle.load(copy('other.json', fs.readFileSync(KINDS), SIGNED_BY_A), { trustedKeys: [KEY_B] })).code, 'unknown_key');
  const elsewhere = copy('elsewhere.sig.json', SIGNED_BY_A);
  assert.deepEqual(lib.Bundle.load(copy('plain.json', fs.readFileSync(KINDS)), { signatures: elsewhere, trustedKeys: [KEY_A] }).keyIds,
    ['4b6904cc8d2eee2d'], 'signatures: another file');
  assert.equal(refusal(() => lib.verifyBundle(fs.readFileSync(KINDS), '{"format": "x"}', [KEY_A])).code, 'malformed_signatures');
});

test('a trusted key that is not an Ed25519 public key is refused as invalid_key', () => {
  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' });
  const ed = crypto.generateKeyPairSync('ed25519').privateKey;
  for (const key of [rsa, 'not a key', ed]) {
    assert.equal(refusal(() => lib.Bundle.fromBytes(fs.readFileSync(KINDS), { signatures: SIGNED_BY_A, trustedKeys: [key] })).code, 'invalid_key');
  }
});

test('a bundle of another format, precedence or condition is refused before it is used', () => {
  const doc = JSON.parse(fs.readFileSync(KINDS, 'utf8'));
  const changed = (change) => refusal(() => new lib.Bundle(JSON.stringify({ ...doc, ...change }))).code;
  assert.equal(changed({ format_version: 2 }), 'unsupported_format');
  assert.equal(changed({ precedence: ['fallback', 'type_depth'] }), 'unsupported_format');
  assert.equal(changed({ format: 'something else' }), 'invalid_bundle');
  assert.equal(changed({ descriptor: { ...doc.descriptor, stripped: ['type'] } }), 'unsupported_format');
  const rule = doc.rules[0];
  assert.equal(changed({ rules: [{ ...rule, conditions: [{ kind: 'oracle', text: 'x' }] }] }), 'unsupported_format');
  const lookbehind = refusal(() => new lib.Bundle(JSON.stringify({ ...doc, rules: [{ ...rule, conditions: [{ kind: 'message', pattern: '(?<=a)b' }] }] })));
  assert.equal(lookbehind.code, 'invalid_bundle');
  assert.match(lookbehind.message, /the pattern "\(\?<=a\)b" is not RE2/);
  assert.equal(changed({ rules: [{ ...rule, answer: undefined }] }), 'invalid_bundle');
  assert.equal(refusal(() => new lib.Bundle('{"format": ')).code, 'invalid_bundle');
});

test('a local answer has the shape of the service\'s, marked local with the bundle\'s digest', () => {
  const bundle = lib.Bundle.load(LIBRARY);
  const answer = bundle.classify(RATE_LIMITED);
  assert.equal(answer.error_class, 'RUN_ERROR_CLASS_RATE_LIMITED');
  assert.equal(answer.class_name, 'RateLimited');
  assert.equal(answer.effect, 'RUN_EFFECT_FAIL');
  assert.equal(answer.unknown_reason, 'UNKNOWN_REASON_UNSPECIFIED');
  assert.deepEqual([answer.local, answer.bundle_digest, answer.ruleset_digest], [true, bundle.bundleDigest, bundle.digest]);
  assert.deepEqual([answer.retry_after, answer.retry_after_ms, answer.retry_after_source], [null, null, '']);
  assert.ok(Object.isFrozen(answer) && Object.isFrozen(answer.action), 'answers are shared, so frozen');
  const json = lib.answerJson(answer);
  assert.deepEqual([json.class, json.class_number, json.effect, json.rule, json.local, json.bundle_digest],
    ['RateLimited', 3, 'fail', answer.rule_id, true, bundle.bundleDigest]);
  const unknown = lib.answerJson(bundle.classify({ type: 'com.example.Weird' }));
  assert.deepEqual([unknown.class, unknown.rule, unknown.unknown_reason], ['Unknown', '', 'no_match']);
  // what the builders make is what it takes
  class RateLimitError extends Error { status = 429; code = 'rate_limit_exceeded'; }
  const built = lib.descriptorFromError(new RateLimitError('429 Rate limit reached'), { origin: 'provider', provider: 'OpenAI' });
  assert.equal(bundle.classify(built).class_name, 'RateLimited');
});

test('a descriptor the service would refuse gets no local answer: a DescriptorError naming the field', () => {
  const bundle = lib.Bundle.load(KINDS);
  const cases = [
    [{ type: ' ' }, 'descriptor.type'],
    [{ type: 'x', causes: Array.from({ length: 33 }, () => ({ type: 'c' })) }, 'descriptor.causes'],
    [{ type: 'x', supertypes: ['a', ''] }, 'descriptor.supertypes[1]'],
    [{ type: 'x', causes: [{ type: 'c', code: 'c'.repeat(257) }] }, 'descriptor.causes[0].code'],
    [{ type: 'x', provider: 'p'.repeat(129) }, 'descriptor.provider'],
    [{ type: 'x', attributes: { k: 'v'.repeat(4097) } }, 'descriptor.attributes["k"]'],
    [{ type: 'x', attributes: { k: ['a'] } }, 'descriptor.attributes["k"]'],
    [{ type: 'x', grpc_status: 'UNAVAILABLE' }, 'descriptor.grpc_status'],
    [{ type: 'x', causes: [{ type: 'c', http_status: '503' }] }, 'descriptor.causes[0].http_status'],
    ['x', 'descriptor'],
  ];
  for (const [d, field] of cases) {
    assert.throws(() => bundle.classify(d), (err) => err instanceof lib.DescriptorError && err.violations[0].field === field, field);
  }
  // at the limits, in code points: 1,024 astral characters are 2,048 UTF-16 units
  assert.equal(bundle.classify({ type: '\u{1F600}'.repeat(1024) }).class_name, 'Unknown');
});

test('every pattern is compiled once, when the bundle is loaded, never per descriptor', () => {
  const compile = RE2JS.compile;
  let compiled = 0;
  RE2JS.compile = (...args) => {
    compiled++;
    return compile.apply(RE2JS, args);
  };
  try {
    const doc = JSON.parse(fs.readFileSync(LIBRARY, 'utf8'));
    const patterns = new Set();
    const walk = (conditions) => conditions.forEach((c) => (c.kind === 'message' ? patterns.add(c.pattern) : c.conditions && walk(c.conditions)));
    doc.rules.forEach((r) => walk(r.conditions));
    const bundle = lib.Bundle.load(LIBRARY);
    assert.equal(compiled, patterns.size, 'one compile per distinct pattern');
    for (let i = 0; i < 200; i++) bundle.classify({ type: 'Error', message: `overloaded ${i}`, causes: [{ type: 'Error', message: 'ECONNRESET' }] });
    assert.equal(compiled, patterns.size);
  } finally {
    RE2JS.compile = compile;
  }
});

test('the patterns a bucket searches together (an RE2Set) find what each finds alone, on every vector message', () => {
  const bundle = lib.Bundle.load(LIBRARY);
  const patterns = bundle._evaluator.patterns; // the evaluator's own, as it searches them
  const grouped = patterns.single.map((_, id) => id).filter((id) => patterns.group[id] !== undefined);
  assert.ok(grouped.length >= 10, `grouped patterns: ${grouped.length}`);
  const messages = new Set(['', 'API returned unexpected status code: 400: ' + 'x'.repeat(4000), '\u212aill', '\u{1F600}'.repeat(10)]);
  for (const file of ['bundle.library.json', 'bundle.library-rules.json', 'bundle.json']) {
    for (const v of JSON.parse(fs.readFileSync(path.join(SPEC, 'vectors', file), 'utf8')).vectors) {
      if (typeof v.input.descriptor.message === 'string' && !v.input.pad) messages.add(v.input.descriptor.message);
    }
  }
  let epoch = 1e9; // apart from the evaluator's own evaluations
  let found = 0;
  for (const message of messages) {
    const d = { message, epoch: ++epoch };
    for (const id of grouped) {
      const together = patterns.found(id, d);
      assert.equal(together, patterns.single[id](message), `pattern ${patterns.texts[id]} on ${JSON.stringify(message.slice(0, 80))}`);
      if (together) found++;
    }
  }
  assert.ok(found > 100, `matches seen: ${found}`);
});
