// Real servers for the tests, on 127.0.0.1: a port nothing listens on, and a grpc-js
// server of the service whose answer the test sets (`server.mode`) and which counts the
// calls it sees.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
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
  const state = { mode, answer: ANSWER, metadata: undefined, seen: { attempts: 0 }, bundle: null, reported: [] };
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
    } else if (name === 'GetBundle') { // state.bundle: {bundle (bytes), bundle_digest}, or the service serves none
      if (!state.bundle) callback({ code: grpc.status.FAILED_PRECONDITION, details: 'no bundle' });
      else if (call.request.if_none_match === state.bundle.bundle_digest) callback(null, { unchanged: true, bundle_digest: state.bundle.bundle_digest });
      else callback(null, state.bundle);
    } else if (name === 'ReportDecisions') {
      state.reported.push(...call.request.decisions);
      callback(null, { accepted: call.request.decisions.length, bundle_digest: state.bundle ? state.bundle.bundle_digest : '' });
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

// A real `classifier serve` (the repository's .venv, or ERRORCLASS_CLASSIFIER) on a free
// loopback port, serving the bundled rules with their bundle signed by the TEST key a
// (clients/spec/keys), its decision log in `decisionLog`. Resolves once it logs its start.
function classifierServer({ decisionLog, args = [] } = {}) {
  const root = path.join(__dirname, '..', '..', '..');
  const exe = process.env.ERRORCLASS_CLASSIFIER || path.join(root, '.venv', 'bin', 'classifier');
  if (!fs.existsSync(exe)) throw new Error(`${exe} not found: run \`make setup\` (or set ERRORCLASS_CLASSIFIER)`);
  const child = spawn(exe, ['serve', '--addr', '127.0.0.1:0', '--no-watch', '--no-console',
    '--bundle-key', path.join(root, 'clients', 'spec', 'keys', 'TEST-ONLY-a.key'), ...(decisionLog ? ['--decision-log', decisionLog] : []), ...args],
  { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`classifier serve did not start in 60 s: ${text.slice(-2000)}`));
    }, 60000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`classifier serve exited (${code}): ${text.slice(-2000)}`));
    });
    child.stderr.on('data', (chunk) => {
      text += chunk;
      for (const line of text.split('\n')) {
        let event;
        try {
          event = JSON.parse(line);
        } catch {
          continue;
        }
        if (event.event !== 'start') continue;
        clearTimeout(timer);
        child.removeAllListeners('exit');
        child.stderr.removeAllListeners('data');
        child.stderr.resume();
        resolve({
          address: event.address,
          digest: event.digest,
          bundleDigest: event.bundle_digest,
          decisionLog,
          kill: () => new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) done();
            else {
              child.on('exit', () => done());
              child.kill('SIGKILL');
            }
          }),
        });
        return;
      }
    });
  });
}

module.exports = { ANSWER, answeringServer, classifierServer, stoppedPort };
