// The outage vectors (clients/spec/vectors/outage.json), run for real: a port nothing
// listens on, or a grpc-js server on 127.0.0.1 answering every call UNAVAILABLE and
// counting the attempts it sees; then the vector's calls through a Client, checking what
// its `want` says: every call rejected with an UnclassifiedError keeping the descriptors
// in order, each back within the deadline (plus slack for a loaded machine), the breaker
// open after the given number of calls (the later calls short-circuited, never reaching
// the network), and the attempts within bounds (retries throttled).
'use strict';

const assert = require('node:assert/strict');
const { performance } = require('node:perf_hooks');
const lib = require('..');
const { answeringServer, stoppedPort } = require('./servers');

const { grpc } = lib;

// Until the client's channel has tried to connect (READY, or TRANSIENT_FAILURE for a
// stopped server): a runtime's client made at start has, before its first failure.
// grpc-js resolves even an IP address on the event loop, which a loaded machine delays.
async function settled(client, timeoutMs = 5000) {
  const channel = client.stub.getChannel();
  const { CONNECTING, IDLE } = grpc.connectivityState;
  const until = Date.now() + timeoutMs;
  for (let state = channel.getConnectivityState(true); state === CONNECTING || state === IDLE; state = channel.getConnectivityState(true)) {
    const changed = await new Promise((resolve) => channel.watchConnectivityState(state, until, (err) => resolve(!err)));
    if (!changed) return;
  }
}

const CALLS = {
  classify: (client, descriptors) => client.classify(descriptors[0]),
  classify_batch: (client, descriptors) => client.classifyBatch(descriptors),
};

// One outage vector; returns what was measured (for the runner's log line).
async function runOutage(vector, where) {
  const { input, want } = vector;
  const call = CALLS[input.call];
  assert.ok(call, `${where}: input.call: unknown call ${JSON.stringify(input.call)}`);
  let server;
  let port;
  if (input.server === 'stopped') port = await stoppedPort();
  else if (input.server === 'unavailable') {
    server = await answeringServer(grpc.status.UNAVAILABLE);
    port = server.port;
  } else assert.fail(`${where}: input.server: unknown server ${JSON.stringify(input.server)}`);
  const address = `127.0.0.1:${port}`;
  const kept = input.descriptors.map((d) => lib.validateDescriptor(d));
  const measured = { times: [], codes: [], shortCircuited: [], openAfter: [] };
  try {
    // made first: it connects at once, as a runtime's client does when the runtime starts,
    // long before a failure to classify
    const client = new lib.Client(address, { breaker: input.breaker });
    try {
      if (input.warm_up) {
        const other = new lib.Client(address, { breaker: false });
        await call(other, input.descriptors).catch(() => {});
        other.close();
        await settled(client);
      }
      for (let i = 0; i < input.calls; i++) {
        const started = performance.now();
        const outcome = await call(client, input.descriptors).then((answer) => ({ answer }), (error) => ({ error }));
        measured.times.push(performance.now() - started);
        const at = `${where}: call ${i + 1}`;
        assert.equal(want.outcome, 'unclassified', `${where}: want.outcome: this runner knows unclassified`);
        assert.ok(outcome.error instanceof lib.UnclassifiedError, `${at}: outcome: want unclassified, got ${outcome.error || 'an answer'}`);
        if (want.keeps_descriptors) assert.deepEqual(outcome.error.descriptors, kept, `${at}: keeps_descriptors`);
        measured.codes.push(Object.keys(lib.FACTS.grpc_codes).find((k) => lib.FACTS.grpc_codes[k] === outcome.error.code));
        measured.shortCircuited.push(outcome.error.shortCircuited);
        measured.openAfter.push(Boolean(client.breaker && client.breaker.isOpen));
      }
    } finally {
      client.close();
    }
  } finally {
    if (server) await server.stop();
  }
  const seen = `(each call: ${measured.codes.map((c, i) => `${c} ${measured.times[i].toFixed(0)} ms`).join(', ')})`;
  if (want.within_ms !== undefined) {
    const bound = want.within_ms + (want.slack_ms || 0);
    measured.times.forEach((ms, i) => assert.ok(ms <= bound, `${where}: within_ms: call ${i + 1} took ${ms.toFixed(0)} ms (bound ${bound}) ${seen}`));
  }
  if (want.breaker_open_after !== undefined) {
    const n = want.breaker_open_after;
    assert.deepEqual(measured.openAfter, measured.openAfter.map((_, i) => i + 1 >= n), `${where}: breaker_open_after: open after each call ${seen}`);
    assert.deepEqual(measured.shortCircuited, measured.shortCircuited.map((_, i) => i + 1 > n), `${where}: breaker_open_after: short-circuited calls ${seen}`);
  }
  if (server) measured.attempts = server.seen.attempts;
  if (want.attempts_at_least !== undefined) {
    assert.ok(measured.attempts >= want.attempts_at_least, `${where}: attempts_at_least: the server saw ${measured.attempts}`);
  }
  if (want.attempts_at_most !== undefined) {
    assert.ok(measured.attempts <= want.attempts_at_most, `${where}: attempts_at_most: the server saw ${measured.attempts}`);
  }
  return measured;
}

module.exports = { runOutage };
