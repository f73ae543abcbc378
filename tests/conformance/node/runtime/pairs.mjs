// Node's runtime pairs: `node.<mechanism>::<situation-id>` -> async (env, lib) => failure.
// A failure is {error, origin, knows} (knows: the helper's contract options) or
// {descriptor}. Third-party packages are imported inside the pairs, so `--list` needs no
// node_modules. Every wait is short and bounded; every address is 127.0.0.1.
import { execFile, execFileSync } from 'node:child_process';
import dns from 'node:dns';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const PAIRS = {};
const LIMIT_MS = 50;
const SLOW = (env) => `${env.tool_api}/slow/1000`;
const WRAPPER = { timeLimit: 'tool' };
const RUN = { timeLimit: 'run' };
// A provider API on loopback that answers only after 2 s: a run's deadline cuts the call.
const HANGING = (env) => `${env.tool_api}/slow/2000`;

function pair(mechanism, situation, fn) {
  const id = `node.${mechanism}::${situation}`;
  if (PAIRS[id]) throw new Error(`pair ${id} registered twice`);
  PAIRS[id] = fn;
}

async function caught(fn) {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('the pair raised nothing');
}

const tool = (error, knows) => ({ error, origin: 'tool', knows });

// --- the tool wrapper's own limit fired (ToolTimeout) --------------------------------------

async function slowTool(env, signal) {
  const res = await fetch(SLOW(env), { signal });
  return res.text();
}

pair('abort-signal-timeout', 'tool-timeout.wrapper-limit', async (env) =>
  tool(await caught(() => slowTool(env, AbortSignal.timeout(LIMIT_MS))), WRAPPER));

pair('timers-promises-abort-signal-timeout', 'tool-timeout.wrapper-limit', async () =>
  tool(await caught(() => sleep(2000, undefined, { signal: AbortSignal.timeout(LIMIT_MS) })), WRAPPER));

pair('abort-signal-any', 'tool-timeout.wrapper-limit', async (env) => {
  const user = new AbortController();
  return tool(await caught(() => slowTool(env, AbortSignal.any([user.signal, AbortSignal.timeout(LIMIT_MS)]))), WRAPPER);
});

pair('abort-controller-timer', 'tool-timeout.wrapper-limit', async (env) => {
  // The wrapper's own timer aborts the tool's controller (no reason: an AbortError).
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), LIMIT_MS);
  try {
    return tool(await caught(() => slowTool(env, controller.signal)), WRAPPER);
  } finally {
    clearTimeout(timer);
  }
});

pair('promise-race-timer', 'tool-timeout.wrapper-limit', async () => {
  const limit = sleep(LIMIT_MS).then(() => { throw new Error(`tool search timed out after ${LIMIT_MS} ms`); });
  return tool(await caught(() => Promise.race([sleep(2000), limit])), WRAPPER);
});

pair('child-process-timeout', 'tool-timeout.wrapper-limit', async () => {
  // The runtime runs the tool as a process, killed at its limit.
  const run = () => new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', 'setTimeout(() => {}, 2000)'], { timeout: 200 }, (err) => (err ? reject(err) : resolve()));
  });
  return tool(await caught(run), WRAPPER);
});

pair('opossum-timeout', 'tool-timeout.wrapper-limit', async () => {
  const { default: CircuitBreaker } = await import('opossum');
  const breaker = new CircuitBreaker(() => sleep(2000), { timeout: LIMIT_MS });
  try {
    return tool(await caught(() => breaker.fire()), WRAPPER);
  } finally {
    breaker.shutdown();
  }
});

pair('p-queue-timeout', 'tool-timeout.wrapper-limit', async () => {
  const { default: PQueue } = await import('p-queue');
  const queue = new PQueue({ concurrency: 1, timeout: LIMIT_MS });
  return tool(await caught(() => queue.add(() => sleep(2000))), WRAPPER);
});

// --- the tool's own client timed out (ToolError) ------------------------------------------

pair('abort-signal-timeout', 'tool-error.own-timeout', async (env) =>
  tool(await caught(() => slowTool(env, AbortSignal.timeout(LIMIT_MS)))));

pair('timers-promises-abort-signal-timeout', 'tool-error.own-timeout', async () =>
  tool(await caught(() => sleep(2000, undefined, { signal: AbortSignal.timeout(LIMIT_MS) }))));

pair('child-process-timeout', 'tool-error.own-timeout', async () => {
  const run = () => new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', 'setTimeout(() => {}, 2000)'], { timeout: 200 }, (err) => (err ? reject(err) : resolve()));
  });
  return tool(await caught(run));
});

pair('http-request-timeout', 'tool-error.own-timeout', async (env) => {
  // http.get's `timeout` only emits 'timeout'; the tool destroys the request with an error.
  const get = () => new Promise((resolve, reject) => {
    const req = http.get(SLOW(env), { timeout: LIMIT_MS }, (res) => { res.resume(); res.on('end', resolve); });
    req.on('timeout', () => req.destroy(Object.assign(new Error('socket timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
  });
  return tool(await caught(get));
});

pair('openai-timeout', 'tool-error.own-timeout', async (env) => {
  // A tool that calls a model itself (a summariser): its SDK's timeout is the tool's own.
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${SLOW(env)}/v1`, timeout: LIMIT_MS, maxRetries: 0 });
  return tool(await caught(() => client.models.list()));
});

// --- the user cancelled (Canceled) ---------------------------------------------------------

const user = (error) => ({ error, origin: 'user' });

pair('abort-controller', 'cancel.user', async (env) => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 10);
  return user(await caught(() => slowTool(env, controller.signal)));
});

pair('timers-promises-abort', 'cancel.user', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 10);
  return user(await caught(() => sleep(2000, undefined, { signal: controller.signal })));
});

pair('abort-signal-any', 'cancel.user', async (env) => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 10);
  return user(await caught(() => slowTool(env, AbortSignal.any([controller.signal, AbortSignal.timeout(5000)]))));
});

pair('openai-abort', 'cancel.user', async (env) => {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${SLOW(env)}/v1`, maxRetries: 0 });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 10);
  return user(await caught(() => client.models.list({ signal: controller.signal })));
});

// --- the run's deadline fired (Timeout) ----------------------------------------------------

const run = (error) => ({ error, origin: 'runtime', knows: RUN });

pair('abort-signal-timeout', 'timeout.run-deadline', async (env) =>
  run(await caught(() => slowTool(env, AbortSignal.timeout(LIMIT_MS)))));

pair('timers-promises-abort-signal-timeout', 'timeout.run-deadline', async () =>
  run(await caught(() => sleep(2000, undefined, { signal: AbortSignal.timeout(LIMIT_MS) }))));

pair('abort-signal-any', 'timeout.run-deadline', async (env) => {
  const userCancel = new AbortController();
  return run(await caught(() => slowTool(env, AbortSignal.any([userCancel.signal, AbortSignal.timeout(LIMIT_MS)]))));
});

pair('abort-controller-timer', 'timeout.run-deadline', async (env) => {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), LIMIT_MS);
  try {
    return run(await caught(() => slowTool(env, controller.signal)));
  } finally {
    clearTimeout(timer);
  }
});

// The run's deadline cancels a provider call in flight: what surfaces is what the SDK or
// HTTP client raises on that cancel (an SDK's abort error, a socket hang up), with the
// call's origin; the runtime knows its deadline fired.
const cut = (error) => ({ error, origin: 'provider', knows: RUN });

pair('openai-run-deadline-signal', 'timeout.run-deadline', async (env) => {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${HANGING(env)}/v1`, maxRetries: 0 });
  const deadline = AbortSignal.timeout(LIMIT_MS); // the run's
  return cut(await caught(() => client.chat.completions.create(
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, { signal: deadline })));
});

pair('anthropic-run-deadline-signal', 'timeout.run-deadline', async (env) => {
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: HANGING(env), maxRetries: 0 });
  const deadline = AbortSignal.timeout(LIMIT_MS); // the run's
  return cut(await caught(() => client.messages.create(
    { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, { signal: deadline })));
});

pair('http-request-destroyed-run-deadline', 'timeout.run-deadline', async (env) => {
  // The run's deadline timer destroys the request in flight: node:http raises its own
  // I/O error (socket hang up, ECONNRESET), which says nothing of a deadline.
  const post = () => new Promise((resolve, reject) => {
    const req = http.request(`${HANGING(env)}/v1/chat/completions`, { method: 'POST' }, (res) => { res.resume(); res.on('end', resolve); });
    req.on('error', reject);
    req.end('{}');
    const deadline = setTimeout(() => req.destroy(), LIMIT_MS);
    req.on('close', () => clearTimeout(deadline));
  });
  return cut(await caught(post));
});

// --- the provider call's own client timed out (Timeout) ------------------------------------

const provider = (error) => ({ error, origin: 'provider' });

pair('fetch-abort-signal-timeout', 'timeout.provider-call', async (env) =>
  provider(await caught(() => slowTool(env, AbortSignal.timeout(LIMIT_MS)))));

pair('openai-timeout', 'timeout.provider-call', async (env) => {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${SLOW(env)}/v1`, timeout: LIMIT_MS, maxRetries: 0 });
  return provider(await caught(() => client.models.list()));
});

pair('anthropic-timeout', 'timeout.provider-call', async (env) => {
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: SLOW(env), timeout: LIMIT_MS, maxRetries: 0 });
  return provider(await caught(() => client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })));
});

// --- tools failing -------------------------------------------------------------------------

pair('fs-read-missing', 'tool-error.file', async (env) => tool(await caught(() => fs.readFile(path.join(env.tmp, 'missing.csv')))));
pair('fs-read-directory', 'tool-error.file', async (env) => tool(await caught(() => fs.readFile(env.tmp))));
pair('fs-readdir-file', 'tool-error.file', async (env) => {
  const file = path.join(env.tmp, 'node-plain.txt');
  await fs.writeFile(file, 'x');
  return tool(await caught(() => fs.readdir(file)));
});
pair('fs-open-missing', 'tool-error.file', async (env) => tool(await caught(() => fs.open(path.join(env.tmp, 'nope', 'x')))));

pair('json-parse', 'tool-error.parse', async () => tool(await caught(() => JSON.parse('{"rows": [1, 2,'))));
pair('js-yaml-load', 'tool-error.parse', async () => {
  const yaml = await import('js-yaml');
  return tool(await caught(() => yaml.load('key: [unclosed')));
});
pair('bigint-parse', 'tool-error.parse', async () => tool(await caught(() => BigInt('12.5 EUR'))));
pair('url-parse', 'tool-error.parse', async () => tool(await caught(() => new URL('not a url'))));
pair('decode-uri', 'tool-error.parse', async () => tool(await caught(() => decodeURIComponent('%E0%A4%A'))));

function closedResolver(env) {
  // A resolver whose only server is the closed loopback port: nothing leaves the machine.
  const resolver = new dns.promises.Resolver({ timeout: 200, tries: 1 });
  resolver.setServers([`127.0.0.1:${env.closed_port}`]);
  return resolver;
}

pair('dns-resolver-closed-port', 'tool-error.dns', async (env) =>
  tool(await caught(() => closedResolver(env).resolve4('tool-api.invalid'))));

function lookupVia(env) {
  const resolver = closedResolver(env);
  return (hostname, options, callback) => {
    resolver.resolve4(hostname).then((addresses) => {
      if (options && options.all) callback(null, addresses.map((address) => ({ address, family: 4 })));
      else callback(null, addresses[0], 4);
    }, (err) => callback(err));
  };
}

pair('net-connect-lookup', 'tool-error.dns', async (env) => {
  const connect = () => new Promise((resolve, reject) => {
    const socket = net.connect({ host: 'tool-api.invalid', port: 443, lookup: lookupVia(env) });
    socket.on('connect', () => { socket.destroy(); resolve(); });
    socket.on('error', reject);
  });
  return tool(await caught(connect));
});

pair('http-get-lookup', 'tool-error.dns', async (env) => {
  const get = () => new Promise((resolve, reject) => {
    const req = http.get({ host: 'tool-api.invalid', port: 80, path: '/', lookup: lookupVia(env) }, (res) => { res.resume(); resolve(); });
    req.on('error', reject);
  });
  return tool(await caught(get));
});

pair('net-connect', 'tool-error.refused', async (env) => {
  const connect = () => new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: env.closed_port });
    socket.on('connect', () => { socket.destroy(); resolve(); });
    socket.on('error', reject);
  });
  return tool(await caught(connect));
});
pair('fetch', 'tool-error.refused', async (env) => tool(await caught(() => fetch(`http://127.0.0.1:${env.closed_port}/v1/search`))));
pair('http-get', 'tool-error.refused', async (env) => {
  const get = () => new Promise((resolve, reject) => {
    const req = http.get(`http://127.0.0.1:${env.closed_port}/`, (res) => { res.resume(); resolve(); });
    req.on('error', reject);
  });
  return tool(await caught(get));
});

pair('exec-file-exit-code', 'tool-error.subprocess', async () => {
  const run = () => new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', 'process.exit(3)'], (err) => (err ? reject(err) : resolve()));
  });
  return tool(await caught(run));
});
pair('exec-file-sync', 'tool-error.subprocess', async () =>
  tool(await caught(() => execFileSync(process.execPath, ['-e', 'process.exit(1)'], { stdio: 'pipe' }))));
pair('exec-file-missing', 'tool-error.subprocess', async (env) => {
  const run = () => new Promise((resolve, reject) => {
    execFile(path.join(env.tmp, 'no-such-tool'), [], (err) => (err ? reject(err) : resolve()));
  });
  return tool(await caught(run));
});

// fetch does not throw on a status: the tool describes the failed Response with the helper.
async function toolResponse(env, status, lib) {
  const res = await fetch(`${env.tool_api}/status/${status}`);
  const body = await res.text();
  return { descriptor: lib.descriptorFromHttpResponse(res, body, { origin: 'tool' }) };
}
pair('fetch-response-404', 'tool-error.http-status', (env, lib) => toolResponse(env, 404, lib));
pair('fetch-response-429', 'tool-error.http-status', (env, lib) => toolResponse(env, 429, lib));
pair('fetch-response-500', 'tool-error.http-status', (env, lib) => toolResponse(env, 500, lib));
pair('fetch-throw-on-status', 'tool-error.http-status', async (env) => {
  // The usual tool code: `if (!res.ok) throw new Error(...)`, keeping the status.
  const call = async () => {
    const res = await fetch(`${env.tool_api}/status/503`);
    if (!res.ok) throw Object.assign(new Error(`search API answered ${res.status}`), { status: res.status });
  };
  return tool(await caught(call));
});

// --- limiters, bulkheads, quotas, breakers, retries ----------------------------------------

const runtime = (error, knows) => ({ error, origin: 'runtime', knows });

class RateLimitError extends Error {
  constructor(message) { super(message); this.name = 'RateLimitError'; }
}

pair('app-token-bucket', 'quota.limiter', async () => {
  let tokens = 0;
  const take = () => { if (tokens <= 0) throw new RateLimitError('rate limit exceeded: 0 tokens left for tenant t-42'); tokens -= 1; };
  return runtime(await caught(take), { refusedBy: 'rate_limiter' });
});

pair('bottleneck-reservoir', 'quota.limiter', async () => {
  const { default: Bottleneck } = await import('bottleneck');
  const limiter = new Bottleneck({ reservoir: 0, highWater: 0, strategy: Bottleneck.strategy.OVERFLOW });
  try {
    return runtime(await caught(() => limiter.schedule(() => Promise.resolve())));
  } finally {
    await limiter.stop({ dropWaitingJobs: true });
  }
});

pair('bottleneck-high-water', 'quota.bulkhead', async () => {
  const { default: Bottleneck } = await import('bottleneck');
  const limiter = new Bottleneck({ maxConcurrent: 1, highWater: 0, strategy: Bottleneck.strategy.OVERFLOW });
  const first = limiter.schedule(() => sleep(100));
  try {
    return runtime(await caught(() => limiter.schedule(() => Promise.resolve())));
  } finally {
    await first;
    await limiter.stop();
  }
});

class ConcurrencyCapError extends Error {
  constructor(message) { super(message); this.name = 'ConcurrencyCapError'; }
}

pair('app-semaphore', 'quota.bulkhead', async () => {
  const running = 4;
  const admit = () => { if (running >= 4) throw new ConcurrencyCapError('concurrency cap of 4 runs reached for tenant t-42'); };
  return runtime(await caught(admit), { refusedBy: 'concurrency_limit' });
});

class QuotaExceededError extends Error {
  constructor(message) { super(message); this.name = 'QuotaExceededError'; }
}

pair('app-tenant-quota', 'quota.tenant', async () => {
  const charge = () => { throw new QuotaExceededError('tenant t-42 used its monthly quota of 1000000 tokens'); };
  return runtime(await caught(charge), { refusedBy: 'quota' });
});

pair('opossum-open', 'breaker.open', async () => {
  const { default: CircuitBreaker } = await import('opossum');
  const breaker = new CircuitBreaker(async () => { throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }); },
    { errorThresholdPercentage: 1, volumeThreshold: 1, resetTimeout: 60000 });
  try {
    await caught(() => breaker.fire());
    return { error: await caught(() => breaker.fire()), origin: 'provider' };
  } finally {
    breaker.shutdown();
  }
});

const BREAKER = { refusedBy: 'breaker' };
const providerDown = async () => { throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }); };

pair('opossum-open-own-guard', 'breaker.open', async () => {
  // The same breaker described as the runtime's own guard (origin runtime, refusedBy).
  const { default: CircuitBreaker } = await import('opossum');
  const breaker = new CircuitBreaker(providerDown, { errorThresholdPercentage: 1, volumeThreshold: 1, resetTimeout: 60000 });
  try {
    await caught(() => breaker.fire());
    return runtime(await caught(() => breaker.fire()), BREAKER);
  } finally {
    breaker.shutdown();
  }
});

async function opossumHalfOpenRefusal() {
  // Half-open after resetTimeout: opossum lets one probe through and rejects every call
  // while it is in flight (EOPENBREAKER, the same error as open).
  const { default: CircuitBreaker } = await import('opossum');
  let calls = 0;
  const provider = async () => { calls += 1; if (calls === 1) return providerDown(); return sleep(200); };
  const breaker = new CircuitBreaker(provider, { errorThresholdPercentage: 1, volumeThreshold: 1, resetTimeout: 30 });
  try {
    await caught(() => breaker.fire()); // opens it
    await sleep(90); // past resetTimeout
    if (!breaker.halfOpen) throw new Error('the breaker is not half-open');
    const probe = breaker.fire();
    const refused = await caught(() => breaker.fire());
    await probe;
    return refused;
  } finally {
    breaker.shutdown();
  }
}

pair('opossum-half-open', 'breaker.half-open', async () => runtime(await opossumHalfOpenRefusal()));
pair('opossum-half-open-own-guard', 'breaker.half-open', async () => runtime(await opossumHalfOpenRefusal(), BREAKER));

pair('openai-max-retries', 'retry.gave-up-on-429', async (env) => {
  // The SDK's own retry policy: one retry (honouring a zero Retry-After), then it gives up.
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${env.tool_api}/provider/rate-limit/v1`, maxRetries: 1 });
  return provider(await caught(() => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })));
});

pair('p-retry-style-loop', 'retry.gave-up-on-429', async (env, lib) => {
  // A runtime's own retry loop over fetch: after the last 429 it gives up with the Response.
  let res;
  let body;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    res = await fetch(`${env.tool_api}/provider/rate-limit/v1/chat/completions`, { method: 'POST', body: '{}' });
    body = await res.text();
    if (res.status !== 429) break;
  }
  return { descriptor: lib.descriptorFromHttpResponse(res, body, { origin: 'provider', provider: 'openai' }) };
});

// --- our guard against the provider's filter -----------------------------------------------

class PolicyViolationError extends Error {
  constructor(message) { super(message); this.name = 'PolicyViolationError'; }
}

pair('app-guard-error', 'guard.blocked', async () => ({
  error: await caught(() => { throw new PolicyViolationError('output blocked: it contains a payment card number (policy pii.cards)'); }),
  origin: 'guard',
}));

pair('zod-output-guard', 'guard.blocked', async () => {
  const { z } = await import('zod');
  const Reply = z.object({ answer: z.string().max(20) });
  return { error: await caught(() => Reply.parse({ answer: 'x'.repeat(200) })), origin: 'guard' };
});

pair('openai-400-content-filter', 'provider.content-filtered', async (env) => {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${env.tool_api}/provider/content-filter/v1`, maxRetries: 0 });
  return { ...provider(await caught(() => client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }))) };
});

pair('fetch-response-content-filter', 'provider.content-filtered', async (env, lib) => {
  const res = await fetch(`${env.tool_api}/provider/content-filter/openai/deployments/gpt-4o/chat/completions`, { method: 'POST', body: '{}' });
  return { descriptor: lib.descriptorFromHttpResponse(res, await res.text(), { origin: 'provider', provider: 'azure' }) };
});

// --- interceptor vetoes (paused, not failed) -----------------------------------------------

class ExecutionBlockedError extends Error {
  constructor(message) { super(message); this.name = 'ExecutionBlockedError'; }
}

for (const [reason, message] of [
  ['budget', "run blocked: the run's spend of $5.00 is used up"],
  ['quota', 'run blocked: tenant t-42 has no credits left'],
  ['policy', 'run blocked: tool shell.exec is not allowed for this tenant'],
]) {
  pair('interceptor-error', `veto.${reason}`, async () => ({
    error: await caught(() => { throw new ExecutionBlockedError(message); }), origin: 'interceptor', knows: { veto: reason },
  }));
  pair('interceptor-plain-error', `veto.${reason}`, async () => ({
    error: await caught(() => { throw new Error('next step declined'); }), origin: 'interceptor', knows: { veto: reason },
  }));
}

// --- budgets and the agent definition ------------------------------------------------------

class BudgetExceededError extends Error {
  constructor(message) { super(message); this.name = 'BudgetExceededError'; }
}

pair('app-step-budget', 'budget.tree', async () =>
  runtime(await caught(() => { throw new BudgetExceededError("the run's step budget of 25 is used up"); }), { refusedBy: 'budget' }));

const DEFINITION = { name: 'triage', model: 'gpt-4o-mini', max_steps: 0 };

pair('zod-parse', 'definition.schema', async () => {
  const { z } = await import('zod');
  const Spec = z.object({ name: z.string(), model: z.string(), max_steps: z.number().int().positive() });
  return runtime(await caught(() => Spec.parse(DEFINITION)), { stage: 'validate' });
});

pair('ajv-validation-error', 'definition.schema', async () => {
  const { default: Ajv } = await import('ajv');
  const ajv = new Ajv.default ? new Ajv.default() : new Ajv();
  const validate = ajv.compile({ type: 'object', properties: { max_steps: { type: 'integer', minimum: 1 } } });
  const check = () => { if (!validate(DEFINITION)) throw new Ajv.ValidationError(validate.errors); };
  return runtime(await caught(check), { stage: 'validate' });
});

pair('ajv-invalid-schema', 'definition.schema', async () => {
  const { default: Ajv } = await import('ajv');
  const ajv = new Ajv.default ? new Ajv.default() : new Ajv();
  return runtime(await caught(() => ajv.compile({ type: 'objekt' })), { stage: 'compile' });
});

pair('js-yaml-load', 'definition.syntax', async () => {
  const yaml = await import('js-yaml');
  return runtime(await caught(() => yaml.load('name: triage\ntools: [search\n')), { stage: 'parse' });
});
pair('json-parse', 'definition.syntax', async () => runtime(await caught(() => JSON.parse('{"name": "triage",}')), { stage: 'parse' }));
pair('fs-read-missing', 'definition.syntax', async (env) =>
  runtime(await caught(() => fs.readFile(path.join(env.tmp, 'agents', 'triage.yaml'))), { stage: 'load' }));

pair('nunjucks-syntax', 'definition.template', async () => {
  const { default: nunjucks } = await import('nunjucks');
  const environment = new nunjucks.Environment(null, { throwOnUndefined: true });
  return runtime(await caught(() => environment.renderString('Hello {{ user.name ', {})), { stage: 'compile' });
});
pair('nunjucks-undefined', 'definition.template', async () => {
  const { default: nunjucks } = await import('nunjucks');
  const environment = new nunjucks.Environment(null, { throwOnUndefined: true });
  return runtime(await caught(() => environment.renderString('Hello {{ user }}', {})), { stage: 'compile' });
});
pair('template-literal-function', 'definition.template', async () =>
  // A template compiled to a function (`new Function`) whose text does not parse.
  runtime(await caught(() => new Function('vars', 'return `Answer as ${vars.persona`;')), { stage: 'compile' })); // eslint-disable-line no-new-func

// --- reconciliation ------------------------------------------------------------------------

class OrphanedRunError extends Error {
  constructor(message) { super(message); this.name = 'OrphanedRunError'; }
}

async function deadPid() {
  const child = execFile(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid;
}

for (const [situation, calls] of [['reconcile.vanished', '0'], ['reconcile.after-provider', '3']]) {
  pair('process-kill-probe', situation, async () => {
    const pid = await deadPid();
    return { error: await caught(() => process.kill(pid, 0)), origin: 'reconciler', knows: { providerCalls: calls } };
  });
  pair('app-orphaned-run', situation, async () => ({
    error: await caught(() => { throw new OrphanedRunError('run r-7 has had no heartbeat for 300 s and its worker is gone'); }),
    origin: 'reconciler',
    knows: { providerCalls: calls },
  }));
}

// --- the contract's tool-wrapper helper: the wrapper knows whether *its* signal fired ---

async function wrapped(env, lib, toolCall) {
  // A wrapper as a runtime writes it: its own AbortSignal.timeout(), and `limit.aborted`
  // says whether this limit (not one inside the tool) ended the call.
  const limit = AbortSignal.timeout(LIMIT_MS * 4);
  try {
    await toolCall(limit);
  } catch (err) {
    return { descriptor: lib.describeToolFailure(err, { limitFired: limit.aborted }) };
  }
  throw new Error('the tool returned');
}

pair('describe-tool-failure', 'tool-timeout.wrapper-limit', (env, lib) => wrapped(env, lib, (signal) => slowTool(env, signal)));
pair('describe-tool-failure', 'tool-error.own-timeout', (env, lib) =>
  wrapped(env, lib, () => slowTool(env, AbortSignal.timeout(LIMIT_MS))));

// --- a timeout the exception itself says (no attribute needed) -----------------------------

pair('timers-promises-abort-signal-timeout', 'timeout.provider-call', async () =>
  provider(await caught(() => sleep(2000, undefined, { signal: AbortSignal.timeout(LIMIT_MS) }))));
