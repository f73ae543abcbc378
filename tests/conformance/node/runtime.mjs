#!/usr/bin/env node
// The Node side of the runtime suite (tests/conformance/runtime): real Node code raising
// each runtime failure, described with clients/node's helper.
//
//   node runtime.mjs --list    the pair ids, as a JSON array (needs no node_modules)
//   node runtime.mjs           one JSON request per stdin line, one JSON answer per stdout line
//
// A request is {"pair", "env": {"tool_api", "closed_port", "tmp"}, "contract": bool}; the
// answer {"pair", "descriptor", "chain", "error"}. A pair returns {error, origin, knows}
// (knows: what only the runtime knows, the helper's contract options timeLimit, veto,
// stage, refusedBy, providerCalls) or {descriptor} built by a helper itself. With contract false the
// error is described with the origin only (the baseline). `error` in the answer is a
// driver bug, never the failure. Pairs run one at a time, each bounded.
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { PAIRS } from './runtime/pairs.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const HELPER = process.env.CONFORMANCE_NODE_HELPER || path.join(HERE, '..', '..', '..', 'clients', 'node', 'classifier.js');
const PAIR_LIMIT_MS = 15000;
const CAUSE_FIELDS = ['type', 'supertypes', 'message', 'http_status', 'grpc_status', 'code']; // proto Cause

function chainOf(err) {
  const out = [];
  const seen = new Set();
  for (let e = err; e && typeof e === 'object' && !seen.has(e) && out.length < 8; e = e.cause) {
    seen.add(e);
    out.push({ type: e.constructor?.name, name: e.name, code: e.code ?? undefined, message: String(e.message ?? '').slice(0, 200) });
  }
  return out;
}

// What the gRPC wire carries: a Cause has no attributes (classifier.js's classify() drops them too).
function onTheWire(d) {
  if (!d || !d.causes) return d;
  return { ...d, causes: d.causes.map((c) => Object.fromEntries(CAUSE_FIELDS.filter((k) => k in c).map((k) => [k, c[k]]))) };
}

async function handle(lib, request) {
  const { pair, env, contract } = request;
  const fn = PAIRS[pair];
  if (!fn) return { pair, descriptor: null, chain: [], error: `no pair ${pair}` };
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`pair ${pair} did not settle in ${PAIR_LIMIT_MS} ms`)), PAIR_LIMIT_MS);
  });
  try {
    const failure = await Promise.race([fn(env, lib), limit]);
    if (failure.descriptor !== undefined) return { pair, descriptor: onTheWire(failure.descriptor), chain: [], error: null };
    if (!failure.error) return { pair, descriptor: null, chain: [], error: 'the pair raised nothing' };
    const options = contract ? { origin: failure.origin, ...(failure.knows || {}) } : { origin: failure.origin };
    return { pair, descriptor: onTheWire(lib.descriptorFromError(failure.error, options)), chain: chainOf(failure.error), error: null };
  } catch (err) {
    return { pair, descriptor: null, chain: chainOf(err), error: String(err?.stack || err) };
  } finally {
    clearTimeout(timer);
  }
}

async function main() {
  if (process.argv.includes('--list')) {
    console.log(JSON.stringify(Object.keys(PAIRS)));
    return;
  }
  const lib = createRequire(import.meta.url)(HELPER);
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let answer;
    try {
      answer = await handle(lib, JSON.parse(line));
    } catch (err) {
      answer = { pair: null, descriptor: null, chain: [], error: String(err?.stack || err) };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
