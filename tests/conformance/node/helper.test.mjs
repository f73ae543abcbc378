// clients/node's descriptorFromError (and the response helpers) on real errors of the
// pinned Node SDKs: raised by the SDKs themselves against a server on 127.0.0.1, or made
// by the SDK's own factories (APIError.generate) where a server adds nothing.
// Run by tests/conformance/test_node_sdks.py: node --test helper.test.mjs
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { APICallError, RetryError, StreamProviderError, generateText, streamText } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';

const lib = createRequire(import.meta.url)('../../../clients/node/classifier.js');
const provider = { origin: 'provider' };

// A loopback server: each path answers as `routes[path]` says.
const routes = {};
let server;
let base;
const sockets = new Set();
before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    const route = routes[new URL(req.url, 'http://x').pathname.split('/')[1]];
    route(req, res);
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => {
  for (const s of sockets) s.destroy();
  server.close();
});

async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

function json(status, body, headers = {}) {
  return (req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

// An AWS event-stream message (prelude, headers of string type 7, payload, CRCs).
function eventMessage(headers, payload) {
  const hs = Buffer.concat(Object.entries(headers).map(([k, v]) => {
    const name = Buffer.from(k);
    const value = Buffer.from(v);
    const b = Buffer.alloc(4 + name.length + value.length);
    b.writeUInt8(name.length, 0);
    name.copy(b, 1);
    b.writeUInt8(7, 1 + name.length);
    b.writeUInt16BE(value.length, 2 + name.length);
    value.copy(b, 4 + name.length);
    return b;
  }));
  const body = Buffer.from(JSON.stringify(payload));
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(16 + hs.length + body.length, 0);
  prelude.writeUInt32BE(hs.length, 4);
  const preludeCrc = Buffer.alloc(4);
  preludeCrc.writeUInt32BE(zlib.crc32(prelude), 0);
  const message = Buffer.concat([prelude, preludeCrc, hs, body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(message), 0);
  return Buffer.concat([message, crc]);
}

function bedrock() {
  return new BedrockRuntimeClient({
    region: 'us-east-1', endpoint: `${base}/bedrock`, maxAttempts: 1,
    credentials: { accessKeyId: 'AKIATESTTESTTESTTEST', secretAccessKey: 'test' },
    requestHandler: new NodeHttpHandler({ connectionTimeout: 1000, requestTimeout: 1000, throwOnRequestTimeout: true }),
  });
}

const messages = [{ role: 'user', content: [{ text: 'hi' }] }];
const HEADER = 'http.response.header.';

// An SSE response: a 200 whose stream carries `events` ([event name or '', data]).
function sse(events, headers = {}) {
  return (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', ...headers });
    res.end(events.map(([event, data]) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`).join(''));
  };
}

// The header attributes of a descriptor (what evidence.js kept).
function kept(d) {
  return Object.fromEntries(Object.entries(d.attributes || {}).filter(([k]) => k.startsWith(HEADER)));
}

describe('Anthropic', () => {
  test('the code is the body error.type (the SDK keeps it in `type`, not `code`), details.error_code an attribute', () => {
    const body = { type: 'error', error: { type: 'rate_limit_error', message: 'spend limit', details: { error_code: 'contract_spend_limit_reached' } } };
    const err = Anthropic.APIError.generate(429, body, undefined, new Headers());
    assert.ok(err instanceof Anthropic.RateLimitError);
    assert.equal(err.code, undefined);
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.type, 'RateLimitError');
    assert.deepEqual(d.supertypes, ['APIError', 'AnthropicError', 'Error']);
    assert.equal(d.http_status, 429);
    assert.equal(d.code, 'rate_limit_error');
    assert.deepEqual(d.attributes, { error_code: 'contract_spend_limit_reached' });
  });

  test('a 429 keeps retry-after and the anthropic-ratelimit-*-reset times from the SDK error\'s headers', async () => {
    routes.anthropic429 = json(429, { type: 'error', error: { type: 'rate_limit_error', message: 'per-minute rate limit' } }, {
      'retry-after': '17', 'anthropic-ratelimit-requests-reset': '2026-12-03T15:00:17Z', 'anthropic-ratelimit-requests-remaining': '0', 'request-id': 'req_1',
    });
    const client = new Anthropic({ baseURL: `${base}/anthropic429`, apiKey: 'k', maxRetries: 0 });
    const err = await rejection(client.messages.create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }));
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.code, 'rate_limit_error');
    assert.deepEqual(kept(d), {
      [`${HEADER}retry-after`]: '17', [`${HEADER}anthropic-ratelimit-requests-reset`]: '2026-12-03T15:00:17Z', [`${HEADER}date`]: err.headers.get('date'),
    });
  });

  test('an error event inside a stream: no status, the event error.type as the code', async () => {
    routes.anthropic = (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n');
    };
    const client = new Anthropic({ baseURL: `${base}/anthropic`, apiKey: 'k', maxRetries: 0 });
    const err = await rejection((async () => {
      for await (const _ of await client.messages.create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }], stream: true }));
    })());
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.type, 'APIError');
    assert.equal(d.http_status, undefined);
    assert.equal(d.code, 'overloaded_error');
    const event = lib.evidenceFromStreamError('error', err.error);
    assert.deepEqual([event.code, event.message], ['overloaded_error', 'Overloaded'], 'the stream_error reading of its event');
    assert.deepEqual(kept(d), {}, "the stream's 200 headers say nothing about the error");
  });
});

describe('openai', () => {
  test("Azure's code that repeats the status is not a code", () => {
    const err = OpenAI.APIError.generate(429, { error: { code: '429', message: 'exceeded call rate limit' } }, undefined, new Headers());
    assert.equal(err.code, '429');
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.http_status, 429);
    assert.equal(d.code, undefined);
  });

  test('a 429 keeps retry-after and the x-ratelimit-reset-* durations, and no other header', async () => {
    routes.openai429 = json(429, { error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, {
      'retry-after': '20', 'x-ratelimit-reset-requests': '6m0s', 'x-ratelimit-reset-tokens': '1s', 'x-ratelimit-limit-requests': '500', 'x-request-id': 'req_123',
    });
    const client = new OpenAI({ baseURL: `${base}/openai429`, apiKey: 'k', maxRetries: 0 });
    const err = await rejection(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
    assert.ok(err instanceof OpenAI.RateLimitError);
    const d = lib.descriptorFromError(err, provider);
    assert.deepEqual([d.http_status, d.code], [429, 'rate_limit_exceeded']);
    assert.deepEqual(kept(d), {
      [`${HEADER}retry-after`]: '20', [`${HEADER}x-ratelimit-reset-requests`]: '6m0s', [`${HEADER}x-ratelimit-reset-tokens`]: '1s',
      [`${HEADER}date`]: err.headers.get('date'),
    });
  });

  test('an error inside a stream after the 200: the event\'s code, no status, none of the 200\'s headers', async () => {
    routes.openaiStream = sse([
      ['', { id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] }],
      ['', { error: { message: 'Rate limit reached for gpt-4o', type: 'requests', param: null, code: 'rate_limit_exceeded' } }],
    ], { 'x-ratelimit-reset-requests': '1s' });
    const client = new OpenAI({ baseURL: `${base}/openaiStream`, apiKey: 'k', maxRetries: 0 });
    const err = await rejection((async () => {
      for await (const _ of await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }));
    })());
    assert.equal(err.status, undefined);
    const d = lib.descriptorFromError(err, provider);
    assert.deepEqual([d.type, d.http_status, d.code], ['APIError', undefined, 'rate_limit_exceeded']);
    assert.deepEqual(kept(d), {});
    const event = lib.evidenceFromStreamError('', JSON.stringify({ error: err.error }));
    assert.deepEqual([event.code, event.message], ['rate_limit_exceeded', 'Rate limit reached for gpt-4o'], 'the stream_error reading of its event');
  });

  test('a mid-stream error keeps its code, and a timeout has the abort one cause down', async () => {
    routes.hang = () => {};
    const client = new OpenAI({ baseURL: `${base}/hang`, apiKey: 'k', maxRetries: 0, timeout: 200 });
    const err = await rejection(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.type, 'APIConnectionTimeoutError');
    assert.deepEqual(d.causes.map((c) => [c.type, c.code]), [['DOMException', '20']]);
    assert.ok(d.causes.every((c) => !('name' in c) && !('attributes' in c)), 'a cause carries the proto Cause fields only');
  });
});

describe('undici (fetch, and every SDK over it)', () => {
  test('a body cut mid-way: TypeError "terminated", UND_ERR_SOCKET one cause down', async () => {
    routes.cut = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id": "x", "obj');
      setTimeout(() => req.socket.destroy(), 10);
    };
    const err = await rejection(fetch(`${base}/cut`).then((r) => r.json()));
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.type, 'TypeError');
    assert.equal(d.message, 'terminated');
    assert.deepEqual(d.causes.map((c) => [c.type, c.code]), [['SocketError', 'UND_ERR_SOCKET']]);
  });

  test('connection refused: ECONNREFUSED one cause down', async () => {
    const port = await new Promise((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
    });
    const err = await rejection(fetch(`http://127.0.0.1:${port}/`));
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.message, 'fetch failed');
    assert.equal(d.causes[0].code, 'ECONNREFUSED');
  });

  test('descriptorFromHttpResponse reads a failed Response with the body the caller read', async () => {
    routes.gemini = json(429, { error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } });
    const res = await fetch(`${base}/gemini`);
    const d = lib.descriptorFromHttpResponse(res, await res.json(), { provider: 'gemini' });
    assert.equal(d.type, 'Response');
    assert.equal(d.http_status, 429);
    assert.equal(d.code, 'RESOURCE_EXHAUSTED', "error.status, not error.code (the status)");
    assert.equal(d.grpc_status, 8);
    assert.match(d.message, /^429 Too Many Requests\nResource has been exhausted$/);
    routes.geminiQuota = json(429, { error: { code: 429, message: 'You exceeded your current quota', status: 'RESOURCE_EXHAUSTED', details: [
      { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier' }] },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '25s' },
    ] } });
    const quota = await fetch(`${base}/geminiQuota`);
    const q = lib.descriptorFromHttpResponse(quota, await quota.text(), { provider: 'gemini' });
    assert.equal(q.attributes['google.rpc.retry_info.retry_delay'], '25s');
    assert.equal(q.attributes['google.rpc.quota_failure.quota_id'], 'GenerateRequestsPerDayPerProjectPerModel-FreeTier');
    routes.ok = json(200, { candidates: [] });
    const ok = await fetch(`${base}/ok`);
    assert.equal(lib.descriptorFromHttpResponse(ok, await ok.json(), { provider: 'gemini' }), null);
  });
});

describe('AWS SDK v3 (Bedrock Runtime)', () => {
  test('a service error: its name is the code, $metadata the status, $fault an attribute', async () => {
    routes.bedrock = json(429, { message: 'Too many requests' }, { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
    const err = await rejection(bedrock().send(new ConverseCommand({ modelId: 'm', messages })));
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.type, 'ThrottlingException');
    assert.deepEqual(d.supertypes, ['BedrockRuntimeServiceException', 'ServiceException', 'Error']);
    assert.equal(d.http_status, 429);
    assert.equal(d.code, 'ThrottlingException');
    assert.deepEqual(d.attributes, { fault: 'client', [`${HEADER}date`]: err.$response.headers.date });
  });

  test("a throttled call keeps retry-after from the error's $response headers", async () => {
    routes.bedrock = json(429, { message: 'Too many requests' }, { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/', 'retry-after': '3' });
    const err = await rejection(bedrock().send(new ConverseCommand({ modelId: 'm', messages })));
    assert.equal(lib.descriptorFromError(err, provider).attributes[`${HEADER}retry-after`], '3');
  });

  test('an exception inside the event stream is the same class, without a status', async () => {
    routes.bedrock = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      res.end(Buffer.concat([
        eventMessage({ ':message-type': 'event', ':event-type': 'messageStart', ':content-type': 'application/json' }, { role: 'assistant' }),
        eventMessage({ ':message-type': 'exception', ':exception-type': 'modelStreamErrorException', ':content-type': 'application/json' }, { message: 'stream error', originalStatusCode: 500 }),
      ]));
    };
    const err = await rejection((async () => {
      const r = await bedrock().send(new ConverseStreamCommand({ modelId: 'm', messages }));
      for await (const _ of r.stream);
    })());
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.type, 'ModelStreamErrorException');
    assert.equal(d.code, 'ModelStreamErrorException');
    assert.equal(d.http_status, undefined);
  });
});

describe('the AI SDK', () => {
  test("APICallError: the code from the provider body in `data`", () => {
    const openai = new APICallError({ message: 'quota', url: 'u', requestBodyValues: {}, statusCode: 429, data: { error: { code: 'insufficient_quota', type: 'insufficient_quota' } } });
    assert.equal(lib.descriptorFromError(openai, provider).code, 'insufficient_quota');
    const anthropic = new APICallError({ message: 'billing', url: 'u', requestBodyValues: {}, statusCode: 402, responseBody: '{"type":"error","error":{"type":"billing_error","message":"billing"}}' });
    const d = lib.descriptorFromError(anthropic, provider);
    assert.equal(d.code, 'billing_error');
    assert.deepEqual(d.attributes, { name: 'AI_APICallError' });
  });

  test("StreamProviderError: the provider's error type is the code when there is none", () => {
    const err = new StreamProviderError({ message: 'Overloaded', type: 'overloaded_error', statusCode: 529 });
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.code, 'overloaded_error');
    assert.equal(d.http_status, 529);
  });

  test('APICallError keeps the retry headers of `responseHeaders`', async () => {
    routes.ai429 = json(429, { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after-ms': '1500', 'retry-after': '2' });
    const model = createOpenAI({ baseURL: `${base}/ai429`, apiKey: 'k' }).chat('m');
    const err = await rejection(generateText({ model, prompt: 'hi', maxRetries: 0 }));
    assert.ok(APICallError.isInstance(err));
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.code, 'rate_limit_exceeded');
    assert.equal(d.attributes[`${HEADER}retry-after-ms`], '1500');
    assert.equal(d.attributes[`${HEADER}retry-after`], '2');
  });

  test("streamText: the provider's error event is read from the StreamProviderError's data", async () => {
    routes.aiStream = sse([
      ['message_start', { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } }],
      ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
    ], { 'retry-after': '30' });
    const model = createAnthropic({ baseURL: `${base}/aiStream`, apiKey: 'k' })('m');
    let failure;
    const result = streamText({ model, prompt: 'hi', maxRetries: 0, onError: ({ error }) => { failure ??= error; } });
    for await (const part of result.fullStream) if (part.type === 'error') failure ??= part.error;
    assert.ok(failure, 'the stream failed');
    const d = lib.descriptorFromError(failure, provider);
    assert.equal(d.code, 'overloaded_error');
    assert.deepEqual(kept(d), {}, "the stream's 200 headers say nothing about the error");
  });

  test('RetryError (retries on): every attempt is a cause, each with its status', async () => {
    routes.retry = json(429, { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after-ms': '0' });
    const model = createOpenAI({ baseURL: `${base}/retry`, apiKey: 'k' }).chat('m');
    const err = await rejection(generateText({ model, prompt: 'hi', maxRetries: 1 }));
    assert.ok(RetryError.isInstance(err));
    const d = lib.descriptorFromError(err, provider);
    assert.equal(d.type, 'RetryError');
    assert.deepEqual(d.causes.map((c) => [c.type, c.http_status, c.code]), [
      ['APICallError', 429, 'rate_limit_exceeded'], ['APICallError', 429, 'rate_limit_exceeded'],
    ]);
  });
});

describe('descriptorFromResponse (failures that raise nothing)', () => {
  const failure = (d) => d && [d.type, d.code, d.provider, d.supertypes[0], d.origin];
  test('every shape the Python helper reads, the same output', () => {
    assert.deepEqual(failure(lib.descriptorFromResponse([{ choices: [{ finish_reason: null }] }, { choices: [{ finish_reason: 'content_filter' }], model: 'gpt-4o' }], { provider: 'azure' })),
      ['errorclass.FinishReason', 'content_filter', 'azure', 'errorclass.ResponseFailure', 'provider']);
    assert.deepEqual(failure(lib.descriptorFromResponse({ type: 'message', stop_reason: 'refusal', model: 'claude' })),
      ['errorclass.FinishReason', 'refusal', 'anthropic', 'errorclass.ResponseFailure', 'provider']);
    assert.deepEqual(failure(lib.descriptorFromResponse({ promptFeedback: { blockReason: 'SAFETY' } })),
      ['errorclass.PromptBlocked', 'SAFETY', 'gemini', 'errorclass.ResponseFailure', 'provider']);
    assert.deepEqual(failure(lib.descriptorFromResponse({ stream: [{ messageStart: { role: 'assistant' } }, { messageStop: { stopReason: 'guardrail_intervened' } }] })),
      ['errorclass.FinishReason', 'guardrail_intervened', 'bedrock', 'errorclass.ResponseFailure', 'provider']);
    assert.deepEqual(failure(lib.descriptorFromResponse({ finishReason: 'content-filter', rawFinishReason: 'refusal' }, { provider: 'anthropic' })),
      ['errorclass.FinishReason', 'refusal', 'anthropic', 'errorclass.ResponseFailure', 'provider']);
    const d = lib.descriptorFromResponse({ candidates: [{ finishReason: 'SAFETY' }], modelVersion: 'gemini-2.5-flash' });
    assert.equal(d.message, 'The gemini response ended with the failure finish reason SAFETY.');
    assert.deepEqual(d.attributes, { model: 'gemini-2.5-flash' });
  });

  test('a normal stop and a length cut-off are no failure', () => {
    for (const r of [{ stop_reason: 'max_tokens' }, { choices: [{ finish_reason: 'length' }] }, { candidates: [{ finishReason: 'MAX_TOKENS' }] }, { stopReason: 'end_turn' }, { promptFeedback: { blockReason: 'BLOCK_REASON_UNSPECIFIED' } }]) {
      assert.equal(lib.descriptorFromResponse(r), null, JSON.stringify(r));
    }
  });
});

describe('what only the runtime knows (the contract attributes)', () => {
  test('each option becomes its attribute, checked', () => {
    assert.deepEqual(lib.runtimeAttributes({ timeLimit: 'tool', veto: 'Budget', stage: 'parse', refusedBy: ' Rate_Limiter ', providerCalls: 0 }),
      { time_limit: 'tool', veto: 'budget', stage: 'parse', refused_by: 'rate_limiter', provider_calls: '0' });
    assert.deepEqual(lib.descriptorFromError(new Error('x'), { origin: 'runtime', stage: 'validate', attributes: { step: 'load' } }).attributes,
      { step: 'load', stage: 'validate' });
  });

  test('a value outside the contract, or a misspelt option, throws naming it', () => {
    assert.throws(() => lib.descriptorFromError(new Error('x'), { timeLimit: 'wrapper' }),
      (err) => err instanceof TypeError && err.fact === 'time_limit' && err.message === 'timeLimit: "wrapper" is not one of tool, run');
    assert.throws(() => lib.descriptorFromError(new Error('x'), { providerCalls: -1 }), /providerCalls: -1 is not a count/);
    assert.throws(() => lib.descriptorFromError(new Error('x'), { refusedBy: 'bulkhead' }),
      (err) => err instanceof lib.RuntimeFactError && err.fact === 'refused_by' &&
        err.message === 'refusedBy: "bulkhead" is not one of breaker, rate_limiter, concurrency_limit, quota, budget');
    assert.throws(() => lib.descriptorFromError(new Error('x'), { timelimit: 'tool' }), /unknown option timelimit/);
    assert.throws(() => lib.descriptorFromError(new Error('x'), { timeLimit: 'tool', attributes: { time_limit: 'run' } }),
      /time_limit: given as "tool" and in attributes as "run"/);
  });

  test("describeToolFailure says whether the wrapper's own signal fired", async () => {
    const limit = AbortSignal.timeout(10);
    let err;
    try {
      await new Promise((resolve, reject) => { limit.addEventListener('abort', () => reject(limit.reason)); });
    } catch (e) {
      err = e;
    }
    assert.deepEqual(lib.describeToolFailure(err, { limitFired: limit.aborted }).attributes, { name: 'TimeoutError', time_limit: 'tool' });
    assert.equal(lib.describeToolFailure(err, { limitFired: false }).attributes.time_limit, undefined);
    assert.throws(() => lib.describeToolFailure(err, {}), /limitFired must be true or false/);
  });
});
