// Builds descriptors from real Node errors with the client's descriptorFromError,
// classifies each over gRPC (Client#classify), and prints {name: {descriptor, answer}} as JSON.
// Run by tests/clients/test_node_client.py: node node_errors.js HOST:PORT
'use strict';

const fs = require('node:fs');
const lib = require('../../clients/node');

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

function raw(client, descriptor, deadline) {
  return new Promise((resolve, reject) => {
    client.stub.Classify({ descriptor }, { deadline }, (err, r) => (err ? reject(err) : resolve(r)));
  });
}

async function main() {
  const client = new lib.Client(process.argv[2]);
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
    // grpc-js errors from the raw stub (client.classify would keep the descriptor in an
    // UnclassifiedError, and refuses an empty type before sending)
    grpc_deadline: [await rejection(raw(client, { type: 'x' }, new Date(Date.now() - 1000))), { origin: 'provider' }],
    grpc_invalid: [await rejection(raw(client, { type: '' }, Infinity)), {}],
    refused_here: [await rejection(client.classify({ type: 'x', orign: 'tool' })), {}],
    thrown_string: ['just a string', {}],
  };
  const out = {};
  for (const [name, [err, options]] of Object.entries(cases)) {
    const descriptor = lib.descriptorFromError(err, options);
    out[name] = { descriptor, answer: lib.answerJson(await client.classify(descriptor, { deadlineMs: 5000 })) };
  }
  client.close();
  console.log(JSON.stringify(out, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
