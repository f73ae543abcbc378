// Real servers for the tests, on 127.0.0.1: a port nothing listens on, and a grpc-js
// server of the service whose answer the test sets (`server.mode`) and which counts the
// calls it sees.
'use strict';

const net = require('node:net');
const lib = require('..');

const { grpc } = lib;

// A loopback port nothing listens on: bound, then closed.
async function stoppedPort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// The answer every Classify gets while the server is `ok` (a ClassifyResponse's fields).
const ANSWER = {
  class_name: 'RateLimited', error_class: 'RUN_ERROR_CLASS_RATE_LIMITED', effect: 'RUN_EFFECT_FAIL', retryable: true,
  action: { id: 'provider.backoff', summary: 'back off', runbook_url: '' }, rule_id: 'test.rule',
  ruleset_version: '1.0.0', ruleset_digest: 'sha256:test',
};

// A real gRPC server of the service. `mode`: 'ok' answers (`answer`, ANSWER unless the
// test sets another; the ruleset for GetRuleset), 'hang' never answers, any other value is
// the gRPC status every call gets, with `metadata` (trailers) when the test sets it.
// `seen` counts the calls by method and in all (`attempts`).
async function answeringServer(mode) {
  const server = new grpc.Server();
  const state = { mode, answer: ANSWER, metadata: undefined, seen: { attempts: 0 } };
  const service = lib.loadService().service;
  const handler = (name) => (call, callback) => {
    state.seen.attempts++;
    state.seen[name] = (state.seen[name] || 0) + 1;
    if (state.mode === 'hang') return;
    if (name === 'ClassifyStream') { // a bidirectional stream: one answer per request
      if (state.mode !== 'ok') {
        call.emit('error', { code: state.mode, details: 'the test server answers every call so', metadata: state.metadata });
        return;
      }
      call.on('data', () => call.write(state.answer));
      call.on('end', () => call.end());
      return;
    }
    if (state.mode !== 'ok') {
      callback({ code: state.mode, details: 'the test server answers every call so', metadata: state.metadata });
    } else if (name === 'Classify') {
      callback(null, state.answer);
    } else if (name === 'ClassifyBatch') {
      callback(null, { responses: call.request.requests.map(() => state.answer) });
    } else {
      callback(null, { version: ANSWER.ruleset_version, digest: ANSWER.ruleset_digest });
    }
  };
  server.addService(service, Object.fromEntries(Object.keys(service).map((name) => [name, handler(name)])));
  const port = await new Promise((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return Object.assign(state, {
    port,
    address: `127.0.0.1:${port}`,
    stop: () => new Promise((resolve) => server.tryShutdown(() => resolve())),
    kill: () => server.forceShutdown(),
  });
}

module.exports = { ANSWER, answeringServer, stoppedPort };
