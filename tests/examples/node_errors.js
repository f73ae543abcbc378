// Builds descriptors from real Node errors with the example's descriptorFromError,
// classifies each over gRPC, and prints {name: {descriptor, answer}} as JSON.
// Run by tests/examples/test_node_client.py: node node_errors.js HOST:PORT
'use strict';

const fs = require('node:fs');
const lib = require('../../examples/node/classifier');

class OpenAIError extends Error {}
class APIError extends OpenAIError {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}
class RateLimitError extends APIError {}

async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

async function main() {
  const client = lib.connect(process.argv[2]);
  const signal = AbortSignal.timeout(1);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const inner = new TypeError('inner');
  const outer = new Error('outer', { cause: inner });
  inner.cause = outer; // a cycle: each error is listed once
  let enoent;
  try {
    fs.readFileSync('/nonexistent/errorclass/tool-input.txt');
  } catch (err) {
    enoent = err;
  }
  const cases = {
    rate_limit: [new RateLimitError(429, '429 Rate limit reached', 'rate_limit_exceeded'), { origin: 'provider', provider: 'openai' }],
    abort_timeout: [signal.reason, { origin: 'provider' }],
    enoent: [enoent, { origin: 'tool', attributes: { tool: 'read_file' } }],
    cycle: [outer, {}],
    aggregate: [new AggregateError([new RangeError('a'), new SyntaxError('b')], 'many'), {}],
    grpc_deadline: [await rejection(lib.classify(client, { type: 'x' }, { deadlineMs: -1000 })), { origin: 'provider' }],
    // the server's own refusal: the raw stub, since lib.classify refuses this before sending
    grpc_invalid: [await rejection(new Promise((resolve, reject) => {
      client.Classify({ descriptor: { type: '' } }, (err, r) => (err ? reject(err) : resolve(r)));
    })), {}],
    refused_here: [await rejection(lib.classify(client, { type: 'x', orign: 'tool' })), {}],
    thrown_string: ['just a string', {}],
  };
  const out = {};
  for (const [name, [err, options]] of Object.entries(cases)) {
    const descriptor = lib.descriptorFromError(err, options);
    out[name] = { descriptor, answer: lib.answerJson(await lib.classify(client, descriptor)) };
  }
  client.close();
  console.log(JSON.stringify(out, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
