// The builders send what fit() makes, so what they build from a live failure is never
// refused, whatever the failure carries; and they read bodies with evidenceFromBody.
'use strict';

const assert = require('node:assert/strict');
const { test } = require('node:test');
const lib = require('..');

const LIMITS = lib.FACTS.limits;

test('descriptorFromError cuts what a failure carries to the limits, so it is never refused', () => {
  const err = new Error(`${'m'.repeat(LIMITS.MAX_MESSAGE_CHARS)}\u{1F600}tail \ud800`);
  err.code = ` ${'c'.repeat(LIMITS.MAX_CODE_CHARS + 40)} `;
  let inner = err;
  for (let i = 0; i < LIMITS.MAX_CAUSES + 5; i++) {
    inner.cause = new RangeError(`cause ${i}`);
    inner = inner.cause;
  }
  const attributes = Object.fromEntries(Array.from({ length: LIMITS.MAX_ATTRIBUTES + 3 }, (_, i) => [`k${String(i).padStart(3, '0')}`, 'v']));
  const d = lib.descriptorFromError(err, { origin: 'provider', provider: ' OpenAI ', attributes });
  assert.deepEqual(lib.validateDescriptor(d), d, 'the service would accept it as it is');
  assert.equal(d.code.length, LIMITS.MAX_CODE_CHARS);
  assert.equal([...d.message].length, LIMITS.MAX_MESSAGE_CHARS);
  assert.equal(d.causes.length, LIMITS.MAX_CAUSES);
  assert.equal(Object.keys(d.attributes).length, LIMITS.MAX_ATTRIBUTES);
  assert.equal(d.provider, 'openai');
});

test('a caller\'s mistake is not hidden by the cut: an unknown origin is refused when sent', () => {
  const d = lib.descriptorFromError(new Error('x'), { origin: 'provder' });
  assert.throws(() => lib.validateDescriptor(d), (err) => err instanceof lib.DescriptorError && err.violations[0].field === 'descriptor.origin');
});

test('descriptorFromHttpResponse reads the body as evidenceFromBody does, headers in any case', () => {
  const response = new Response('{"message": "Too many requests"}', {
    status: 429, statusText: 'Too Many Requests', headers: { 'X-Amzn-ErrorType': 'ThrottlingException:http://x/' },
  });
  const d = lib.descriptorFromHttpResponse(response, '{"message": "Too many requests"}', { provider: 'bedrock' });
  assert.deepEqual([d.type, d.http_status, d.code, d.message], ['Response', 429, 'ThrottlingException', '429 Too Many Requests\nToo many requests']);
  const bare = lib.descriptorFromHttpResponse({ status: 502 }, '{"message": "Internal server error"}');
  assert.equal(bare.message, '502\nInternal server error', 'a bare {message} body is read (clients/spec error_body 4)');
  assert.equal(lib.descriptorFromHttpResponse({ status: 200 }, '{}'), null);
});
