#!/usr/bin/env node
// The Node side of the conformance suite: makes real SDK calls against the fake provider
// and prints the descriptor clients/node/classifier.js builds from what each call raised.
//
//   node worker.mjs            one JSON request per stdin line, one JSON answer per stdout line
//   node worker.mjs --list     the drivers and the APIs each can call, as JSON
//
// A request is {"sdk": "node.openai", "base": "http://127.0.0.1:PORT/s/<id>",
// "scenario": {"id", "api", "stream": bool, "fault": null | name}}. The answer is
// {"sdk", "id", "outcome": "error" | "response" | "driver_error", "descriptor": {...} | null,
// "chain": [...]}: the descriptor as descriptorFromError (or, for a call that returned,
// descriptorFromResponse / descriptorFromHttpResponse) built it, and the error's chain
// (constructor, name, code, status per level) for reports. Python classifies the
// descriptor over gRPC (tests/conformance/node_drivers.py). Calls run one at a time, so the
// fake provider's per-scenario request count belongs to one call.
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { drivers as ai } from './drivers/ai.mjs';
import { drivers as anthropic } from './drivers/anthropic.mjs';
import { drivers as bedrock } from './drivers/bedrock.mjs';
import { drivers as fetchDrivers } from './drivers/fetch.mjs';
import { drivers as openai } from './drivers/openai.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const HELPER = process.env.CONFORMANCE_NODE_HELPER || path.join(HERE, '..', '..', '..', 'clients', 'node', 'classifier.js');
const lib = createRequire(import.meta.url)(HELPER);
const CALL_LIMIT_MS = 15000; // a driver that neither settles nor times out by then is a driver bug
const CAUSE_FIELDS = ['type', 'supertypes', 'message', 'http_status', 'grpc_status', 'code']; // proto Cause

export const DRIVERS = { ...openai, ...anthropic, ...bedrock, ...ai, ...fetchDrivers };

function chainOf(err) {
  const out = [];
  const seen = new Set();
  for (let e = err; e && typeof e === 'object' && !seen.has(e) && out.length < 8; e = e.cause) {
    seen.add(e);
    out.push({
      constructor: e.constructor?.name, name: e.name, code: e.code ?? undefined,
      status: e.status ?? e.statusCode ?? e.$metadata?.httpStatusCode, message: String(e.message ?? '').slice(0, 200),
    });
  }
  return out;
}

// What the gRPC wire carries of a descriptor: a Cause has no attributes, so any other key
// a helper put on a cause is dropped by protobuf, as classifier.js's classify() would.
function onTheWire(d) {
  if (!d || !d.causes) return d;
  return { ...d, causes: d.causes.map((c) => Object.fromEntries(CAUSE_FIELDS.filter((k) => k in c).map((k) => [k, c[k]]))) };
}

function describeReturn(value, options) {
  if (value && value.fetchResponse) {
    const { fetchResponse, body } = value;
    if (!fetchResponse.ok) return lib.descriptorFromHttpResponse ? lib.descriptorFromHttpResponse(fetchResponse, body, options) : null;
    return lib.descriptorFromResponse ? lib.descriptorFromResponse(body, options) : null;
  }
  return lib.descriptorFromResponse ? lib.descriptorFromResponse(value, options) : null;
}

async function handle(request) {
  const { sdk, base, scenario } = request;
  const driver = DRIVERS[sdk];
  const answer = { sdk, id: scenario.id };
  if (!driver) return { ...answer, outcome: 'driver_error', descriptor: null, chain: [{ message: `no driver ${sdk}` }] };
  const options = { origin: 'provider', provider: scenario.api };
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`driver ${sdk} did not settle in ${CALL_LIMIT_MS} ms`), { driverLimit: true })), CALL_LIMIT_MS);
  });
  try {
    const value = await Promise.race([driver.call(scenario, base), limit]);
    return { ...answer, outcome: 'response', descriptor: onTheWire(describeReturn(value, options)), chain: [] };
  } catch (err) {
    if (err && err.driverLimit) return { ...answer, outcome: 'driver_error', descriptor: null, chain: chainOf(err) };
    return { ...answer, outcome: 'error', descriptor: onTheWire(lib.descriptorFromError(err, options)), chain: chainOf(err) };
  } finally {
    clearTimeout(timer);
  }
}

async function main() {
  if (process.argv.includes('--list')) {
    console.log(JSON.stringify(Object.fromEntries(Object.entries(DRIVERS).map(([k, v]) => [k, v.apis]))));
    return;
  }
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let answer;
    try {
      answer = await handle(JSON.parse(line));
    } catch (err) {
      answer = { outcome: 'driver_error', descriptor: null, chain: chainOf(err) };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
