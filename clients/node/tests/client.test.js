// The Client against real grpc-js servers on 127.0.0.1: retries (the facts' service
// config, throttled), the breaker and its probe, the deadline, and what a rejection keeps.
'use strict';

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { test } = require('node:test');
const lib = require('..');
const { ANSWER, answeringServer, stoppedPort } = require('./servers');

const { grpc } = lib;
const D = { type: 'openai.APIConnectionError', origin: 'provider', provider: 'openai' };

async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

// Until `check()` holds (every 10 ms, at most `ms`).
async function eventually(check, ms = 5000) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

test('the defaults are the facts: 250 ms, 3 attempts, the breaker numbers', () => {
  const client = new lib.Client('127.0.0.1:1');
  try {
    assert.equal(client.deadlineMs, lib.FACTS.defaults.deadline_ms);
    assert.equal(lib.DEFAULTS.deadline_ms, 250);
    assert.equal(client.breaker.failures, lib.FACTS.defaults.breaker.failures);
    assert.equal(client.breaker.resetMs, lib.FACTS.defaults.breaker.reset_ms);
    assert.deepEqual(lib.serviceConfig(), lib.FACTS.service_config);
    assert.equal(lib.serviceConfig(1).methodConfig[0].retryPolicy, undefined);
    assert.deepEqual(lib.serviceConfig(1).retryThrottling, lib.FACTS.service_config.retryThrottling);
  } finally {
    client.close();
  }
});

test('UNAVAILABLE is retried (attempts 3), not with attempts 1; the rejection keeps the descriptor', async () => {
  const server = await answeringServer(grpc.status.UNAVAILABLE);
  try {
    for (const [attempts, want] of [[3, 3], [1, 1]]) {
      const before = server.seen.attempts;
      const client = new lib.Client(server.address, { attempts, breaker: false, deadlineMs: 5000 });
      const err = await rejection(client.classify(D));
      client.close();
      assert.ok(err instanceof lib.UnclassifiedError, String(err));
      assert.equal(err.code, grpc.status.UNAVAILABLE);
      assert.deepEqual(err.descriptors, [lib.validateDescriptor(D)]);
      assert.deepEqual(err.descriptor, lib.validateDescriptor(D));
      assert.equal(err.cause.code, grpc.status.UNAVAILABLE);
      assert.equal(err.shortCircuited, false);
      assert.match(err.message, /^not classified \(UNAVAILABLE: /);
      assert.equal(server.seen.attempts - before, want, `attempts ${attempts}`);
    }
  } finally {
    await server.stop();
  }
});

test('a hung server costs one deadline and opens the breaker at once', async () => {
  const server = await answeringServer('hang');
  const client = new lib.Client(server.address, { deadlineMs: 100 });
  try {
    const started = Date.now();
    const first = await rejection(client.classify(D));
    assert.ok(first instanceof lib.UnclassifiedError);
    assert.equal(first.code, grpc.status.DEADLINE_EXCEEDED);
    assert.ok(Date.now() - started < 2000);
    assert.equal(client.breaker.state, 'open');
    const second = await rejection(client.classify(D));
    assert.equal(second.shortCircuited, true);
    assert.equal(server.seen.Classify, 1, 'the short-circuited call never reached the server');
    assert.deepEqual(client.counters, { server: 0, local: 0, failed: 2, short_circuited: 1 });
  } finally {
    client.close();
    server.kill();
  }
});

test('the probe closes the breaker once the service is back; the kept descriptors go in one batch', async () => {
  const server = await answeringServer(grpc.status.UNAVAILABLE);
  const client = new lib.Client(server.address, { attempts: 1, breaker: { resetMs: 20, maxResetMs: 40 } });
  try {
    const kept = [];
    for (let i = 0; i < 3; i++) kept.push(...(await rejection(client.classify({ ...D, message: `call ${i}` }))).descriptors);
    assert.equal(client.breaker.state, 'open');
    assert.ok(await eventually(() => (server.seen.GetRuleset || 0) >= 2), 'probes run while it stays down');
    assert.equal(client.breaker.state, 'open');
    server.mode = 'ok';
    assert.ok(await eventually(() => client.breaker.state === 'closed'), 'a successful probe closes it');
    const answers = await client.classifyBatch(kept);
    assert.deepEqual(answers.map((a) => a.class_name), [ANSWER.class_name, ANSWER.class_name, ANSWER.class_name]);
    assert.deepEqual(server.seen.ClassifyBatch, 1);
    const answer = await client.classifyError(new TypeError('fetch failed'), { origin: 'provider' });
    assert.equal(lib.answerJson(answer).effect, 'fail');
  } finally {
    client.close();
    await server.stop();
  }
});

// A google.rpc.Status with a BadRequest detail, in the trailer the Python server sends it in
// (grpc_status.rpc_status.to_status: grpc-status-details-bin).
function badRequest(message, violations) {
  const rpc = require('../proto').googleRpcDefinition();
  const detail = rpc['google.rpc.BadRequest'].serialize({ field_violations: violations });
  const status = rpc['google.rpc.Status'].serialize({
    code: grpc.status.INVALID_ARGUMENT, message, details: [{ type_url: 'type.googleapis.com/google.rpc.BadRequest', value: detail }],
  });
  const metadata = new grpc.Metadata();
  metadata.set('grpc-status-details-bin', status);
  return metadata;
}

test('INVALID_ARGUMENT is a DescriptorError naming the fields the server refused, and the breaker stays closed', async () => {
  const server = await answeringServer(grpc.status.INVALID_ARGUMENT);
  server.metadata = badRequest('descriptor.type: must not be empty; descriptor.causes[0].code: too long', [
    { field: 'descriptor.type', description: 'must not be empty' },
    { field: 'descriptor.causes[0].code', description: '300 characters exceed the limit of 256' },
  ]);
  const client = new lib.Client(server.address, { breaker: { failures: 1 } });
  try {
    for (const call of [() => client.classify(D), () => client.classifyBatch([D]), () => client.classifyStream([D])]) {
      const err = await rejection(call());
      assert.ok(err instanceof lib.DescriptorError, String(err));
      assert.deepEqual(err.violations, [
        { field: 'descriptor.type', message: 'must not be empty' },
        { field: 'descriptor.causes[0].code', message: '300 characters exceed the limit of 256' },
      ]);
      assert.equal(err.message, 'descriptor.type: must not be empty; descriptor.causes[0].code: 300 characters exceed the limit of 256');
      assert.equal(err.cause.code, grpc.status.INVALID_ARGUMENT, 'the grpc-js error is its cause');
    }
    server.metadata = undefined; // a server that names no field: its message is the violation
    const bare = await rejection(client.classify(D));
    assert.ok(bare instanceof lib.DescriptorError);
    assert.deepEqual(bare.violations, [{ field: '', message: 'the test server answers every call so' }]);
    assert.equal(bare.message, 'the test server answers every call so');
    assert.equal(client.breaker.state, 'closed');
    assert.equal(client.counters.short_circuited, 0);
  } finally {
    client.close();
    await server.stop();
  }
});

test('retry_after is retry_after_ms, milliseconds (null when the answer has none), with its source', async () => {
  const server = await answeringServer('ok');
  const client = new lib.Client(server.address, { deadlineMs: 5000 });
  try {
    const none = await client.classify(D);
    assert.equal(none.retry_after, null);
    assert.equal(none.retry_after_ms, null);
    assert.equal(none.local, false);
    assert.equal('retry_after_ms' in lib.answerJson(none), false);
    server.answer = { ...ANSWER, retry_after: { seconds: 20, nanos: 500000000 }, retry_after_source: 'http.response.header.retry-after-ms' };
    const answers = [await client.classify(D), ...(await client.classifyBatch([D, D])), ...(await client.classifyStream([D]))];
    for (const answer of answers) {
      assert.equal(answer.retry_after_ms, 20500);
      assert.equal(answer.retry_after_source, 'http.response.header.retry-after-ms');
    }
    const json = lib.answerJson(answers[0]);
    assert.deepEqual([json.retry_after_ms, json.retry_after_source], [20500, 'http.response.header.retry-after-ms']);
  } finally {
    client.close();
    await server.stop();
  }
});

test('a malformed descriptor is refused before anything is sent, and trips nothing', async () => {
  const server = await answeringServer('ok');
  const client = new lib.Client(server.address);
  try {
    const err = await rejection(client.classifyBatch([D, { type: '', orign: 1 }]));
    assert.ok(err instanceof lib.DescriptorError);
    assert.deepEqual(err.violations.map((v) => v.field), ['requests[1].descriptor.orign']);
    await rejection(client.classifyError(new Error('x'), { timeLimit: 'wrapper' }));
    assert.equal(server.seen.attempts, 0);
    assert.equal(client.breaker.state, 'closed');
  } finally {
    client.close();
    await server.stop();
  }
});

test('an open breaker never keeps the process alive (its probe timer is unref\'d)', async () => {
  const port = await stoppedPort();
  // the client is never closed: the process must still end, before the first probe is due
  const script = `
    const lib = require(${JSON.stringify(path.join(__dirname, '..'))});
    const client = new lib.Client('127.0.0.1:${port}', { attempts: 1 });
    (async () => {
      for (let i = 0; i < 3; i++) await client.classify({ type: 'x' }).catch(() => {});
      if (client.breaker.state !== 'open') throw new Error('the breaker did not open');
      const opened = Date.now();
      process.on('exit', () => console.log(JSON.stringify({ waited: Date.now() - opened, hasRef: client._probeTimer.hasRef() })));
    })();
  `;
  const done = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60000 });
  assert.equal(done.status, 0, done.stderr);
  const { waited, hasRef } = JSON.parse(done.stdout);
  assert.equal(hasRef, false);
  assert.ok(waited < lib.DEFAULTS.breaker.reset_ms, `exited ${waited} ms after the breaker opened`);
});
