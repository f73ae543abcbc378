// A client that survives the service: the bundle source (a start file, trusted keys, the
// refusals), its refresh from a real `classifier serve` (GetBundle with if_none_match), the
// bundle's answer when the service cannot answer (equal to the server's, within the deadline),
// and local-first mode reporting its decisions (ReportDecisions, seen in the server's decision
// log). One real server is shared by the tests that need it, started on first use.
'use strict';

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, test } = require('node:test');
const { isDeepStrictEqual } = require('node:util');
const lib = require('..');
const { answeringServer, classifierServer, stoppedPort } = require('./servers');

const SPEC = path.join(__dirname, '..', '..', 'spec');
const KEYS = path.join(SPEC, 'keys');
const PUB_A = path.join(KEYS, 'TEST-ONLY-a.pub');
const PUB_B = path.join(KEYS, 'TEST-ONLY-b.pub');
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'errorclass-node-failover-'));

let shared = null;
function server() {
  if (!shared) shared = classifierServer({ decisionLog: path.join(TMP, 'decisions.jsonl') });
  return shared;
}

after(async () => {
  if (shared) await (await shared).kill();
  fs.rmSync(TMP, { recursive: true, force: true });
});

// Until `check()` holds (every 20 ms, at most `ms`).
async function eventually(check, ms = 10000) {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

// A bundle file (and FILE.sig.json signed by the TEST keys named) written in TMP.
function bundleFile(name, data, signers = []) {
  const file = path.join(TMP, name);
  fs.writeFileSync(file, data);
  if (signers.length) fs.writeFileSync(`${file}.sig.json`, signatures(data, signers));
  return file;
}

function signatures(data, signers) {
  return JSON.stringify({
    format: 'errorclass-bundle-signatures',
    format_version: 1,
    signatures: signers.map((k) => ({
      key_id: lib.keyId(fs.readFileSync(path.join(KEYS, `TEST-ONLY-${k}.pub`))),
      algorithm: 'ed25519',
      signature: crypto.sign(null, data, crypto.createPrivateKey(fs.readFileSync(path.join(KEYS, `TEST-ONLY-${k}.key`)))).toString('base64'),
    })),
  });
}

// The serving bundle's bytes and signatures, as GetBundle hands them out.
async function servedBundle(address) {
  const client = new lib.Client(address, { deadlineMs: 10000 });
  try {
    return await new Promise((resolve, reject) => {
      client.stub.GetBundle({}, { deadline: Date.now() + 10000 }, (err, r) => (err ? reject(err) : resolve(r)));
    });
  } finally {
    client.close();
  }
}

// Descriptors with every kind of answer, and the provider's retry evidence (the date header
// makes a date's wait the server's and the client's alike).
const DESCRIPTORS = [
  { type: 'openai.RateLimitError', http_status: 429, origin: 'provider', provider: 'openai', attributes: { 'http.response.header.retry-after': '7' } },
  {
    type: 'anthropic.RateLimitError',
    http_status: 429,
    origin: 'provider',
    provider: 'anthropic',
    attributes: {
      'http.response.header.date': 'Thu, 01 Jan 2026 00:00:00 GMT',
      'http.response.header.anthropic-ratelimit-tokens-reset': '2026-01-01T00:00:12.5Z',
    },
  },
  { type: 'openai.RateLimitError', http_status: 429, origin: 'provider', provider: 'openai', attributes: { 'http.response.header.retry-after-ms': '120000' } },
  { type: 'openai.RateLimitError', http_status: 429, origin: 'provider', code: 'insufficient_quota', attributes: { 'http.response.header.retry-after': '20' } },
  { type: 'TimeoutError', supertypes: ['OSError', 'Exception'], origin: 'tool', attributes: { time_limit: 'tool' } },
  { type: 'com.example.NeverSeen' },
  { type: 'httpx.ConnectError', supertypes: ['httpx.TransportError', 'Exception'], origin: 'provider', message: 'connection refused' },
];

// The fields of an answer that the service and the bundle must agree on.
function fields(a) {
  const { local, bundle_digest: digest, explanation, ...rest } = a;
  return JSON.parse(JSON.stringify(rest));
}

test('the serving bundle is fetched at start and verified; its answers are the server\'s, field for field', async () => {
  const s = await server();
  const client = new lib.Client(s.address, { trustedKeys: [PUB_A], deadlineMs: 5000 });
  try {
    assert.equal(client.fetchBundle, true, 'trusted keys turn fetching on');
    assert.ok(await eventually(() => client.bundleDigest === s.bundleDigest), `bundle ${client.bundleDigest}, serving ${s.bundleDigest}`);
    assert.deepEqual([...client.bundle.keyIds], [lib.keyId(fs.readFileSync(PUB_A))]);
    for (const d of DESCRIPTORS) {
      const served = await client.classify(d);
      const local = client.bundle.classify(lib.validateDescriptor(d));
      assert.equal(served.local, false);
      assert.equal(local.local, true);
      assert.equal(local.bundle_digest, s.bundleDigest);
      assert.deepEqual(fields(local), fields(served), JSON.stringify(d));
    }
    // and the library's cases, a thousand in one ClassifyBatch (those whose wait reads a clock left out)
    const library = JSON.parse(fs.readFileSync(path.join(SPEC, 'vectors', 'bundle.library.json'), 'utf8')).vectors
      .filter((v) => v.input.bundle === 'library' && !v.input.pad && !v.input.now).slice(0, 1000).map((v) => v.input.descriptor);
    const batch = await client.classifyBatch(library);
    const differ = library.filter((d, i) => !isDeepStrictEqual(fields(client.bundle.classify(lib.validateDescriptor(d))), fields(batch[i])));
    assert.deepEqual(differ, [], `${differ.length} of ${library.length} differ`);
    const waits = [];
    for (const d of DESCRIPTORS.slice(0, 3)) {
      const a = await client.classify(d);
      waits.push([a.retry_after_ms, a.retry_after_source]);
    }
    assert.deepEqual(waits, [
      [7000, 'http.response.header.retry-after'],
      [12500, 'http.response.header.anthropic-ratelimit-tokens-reset'],
      [60000, 'http.response.header.retry-after-ms (capped)'],
    ]);
    const fetching = client.refreshBundle();
    assert.equal(client.refreshBundle(), fetching, 'one fetch in flight at most');
    assert.deepEqual(await fetching, { changed: false, bundleDigest: s.bundleDigest }, 'if_none_match: unchanged');
    assert.equal(client.refusals, 0);
  } finally {
    await client.close();
  }
});

test('a fetched bundle no trusted key signed is refused, counted, and the bundle in use stays', async () => {
  const s = await server();
  const kinds = fs.readFileSync(path.join(SPEC, 'bundles', 'kinds.json'));
  const file = bundleFile('kinds-b.json', kinds, ['b']);
  const client = new lib.Client(s.address, { bundleFile: file, trustedKeys: [PUB_B], deadlineMs: 5000, refreshRetryMs: 1 });
  try {
    const start = client.bundleDigest;
    assert.match(start, /^sha256:[0-9a-f]{64}$/);
    assert.notEqual(start, s.bundleDigest);
    const err = await rejection(client.refreshBundle());
    assert.ok(err instanceof lib.BundleError, String(err));
    assert.equal(err.code, 'unknown_key');
    assert.equal(client.bundleDigest, start, 'the bundle in use stays in use');
    assert.ok(client.refusals >= 1);
    assert.equal(client.lastRefusal.code, 'unknown_key');
    const refusals = client.refusals;
    for (let i = 0; i < 3; i++) assert.equal((await client.classify(DESCRIPTORS[0])).local, false);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(client.refusals, refusals, 'answers naming the refused ruleset fetch nothing more');
  } finally {
    await client.close();
  }
});

test('a bundle file is refused with its stable code: at construction an error, at a load a refusal that keeps the bundle in use', async () => {
  const port = await stoppedPort();
  const data = fs.readFileSync(path.join(SPEC, 'bundles', 'library.json'));
  const good = bundleFile('library-a.json', data, ['a']);
  const tampered = Buffer.from(data);
  tampered[100] ^= 1;
  const bad = path.join(TMP, 'tampered.json');
  fs.writeFileSync(bad, tampered);
  fs.copyFileSync(`${good}.sig.json`, `${bad}.sig.json`);
  const unsigned = bundleFile('unsigned.json', data);
  const malformed = bundleFile('malformed.json', data);
  fs.writeFileSync(`${malformed}.sig.json`, '{"format": "something else"}');
  const garbage = bundleFile('garbage.json', Buffer.from('{"format": "not a bundle"}'), ['a']);
  const options = { trustedKeys: [PUB_A], fetchBundle: false };

  const refused = (fn) => {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof lib.BundleError, String(err));
      return err.code;
    }
    return 'accepted';
  };
  assert.equal(refused(() => new lib.Client(`127.0.0.1:${port}`, { ...options, bundleFile: bad })), 'bad_signature');
  assert.equal(refused(() => new lib.Client(`127.0.0.1:${port}`, { bundleFile: unsigned, fetchBundle: false })), 'unsigned', 'no keys and unsigned not allowed');
  assert.equal(refused(() => new lib.Client(`127.0.0.1:${port}`, { bundleFile: good, fetchBundle: false })), 'unknown_key', 'no keys: a signed bundle is by an unknown key');

  const client = new lib.Client(`127.0.0.1:${port}`, { ...options, bundleFile: good });
  try {
    const digest = client.bundleDigest;
    const cases = [[bad, 'bad_signature'], [unsigned, 'unsigned'], [malformed, 'malformed_signatures'], [garbage, 'invalid_bundle']];
    for (const [file, code] of cases) {
      assert.equal(refused(() => client.loadBundle(file)), code, file);
      assert.equal(client.bundleDigest, digest, `${file}: the bundle in use stays`);
      assert.equal(client.lastRefusal.code, code);
    }
    assert.equal(client.refusals, cases.length);
    const answer = await client.classify(DESCRIPTORS[0]); // the service is down: the bundle answers
    assert.equal(answer.local, true);
    assert.equal(answer.bundle_digest, digest);
  } finally {
    await client.close();
  }
  const open = new lib.Client(`127.0.0.1:${port}`, { bundleFile: unsigned, allowUnsigned: true, fetchBundle: false });
  assert.equal(open.bundleDigest, `sha256:${crypto.createHash('sha256').update(data).digest('hex')}`, 'allowUnsigned: used unverified');
  await open.close();
});

test('when the service cannot answer, the bundle does, within the deadline, as the server would; without one, Unclassified', async () => {
  const s = await server();
  const response = await servedBundle(s.address);
  const file = bundleFile('served.json', response.bundle);
  fs.writeFileSync(`${file}.sig.json`, response.signatures);
  const up = new lib.Client(s.address, { deadlineMs: 5000 });
  const stopped = `127.0.0.1:${await stoppedPort()}`;
  const hung = await answeringServer('hang');
  const deadlineMs = 1000; // the bundle answers from 950 ms at the latest (a loaded machine fires timers late)
  try {
    for (const address of [stopped, hung.address]) {
      const down = new lib.Client(address, { bundleFile: file, trustedKeys: [PUB_A], fetchBundle: false, deadlineMs });
      try {
        for (const d of DESCRIPTORS) {
          const started = Date.now();
          const local = await down.classify(d);
          const elapsed = Date.now() - started;
          assert.ok(elapsed <= deadlineMs, `${address}: ${elapsed} ms, past the deadline of ${deadlineMs}`);
          assert.equal(local.local, true);
          assert.equal(local.bundle_digest, s.bundleDigest);
          assert.deepEqual(fields(local), fields(await up.classify(d)), `${address}: ${JSON.stringify(d)}`);
        }
        assert.equal(down.counters.local, DESCRIPTORS.length);
        const batch = await down.classifyBatch(DESCRIPTORS.slice(0, 2));
        assert.deepEqual(batch.map((a) => a.local), [true, true]);
      } finally {
        await down.close();
      }
    }
    const bare = new lib.Client(stopped, { deadlineMs });
    const err = await rejection(bare.classify(DESCRIPTORS[0]));
    assert.ok(err instanceof lib.UnclassifiedError, String(err));
    await bare.close();
  } finally {
    up.close();
    await hung.stop();
  }
});

// The decision log's lines whose descriptor message is one of `messages`.
function logged(file, messages) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    .filter((e) => e.descriptor && messages.includes(e.descriptor.message));
}

test('local-first answers in process and reports its decisions in batches; they reach the decision log', async () => {
  const s = await server();
  const library = path.join(SPEC, 'bundles', 'library.json'); // the bytes the server serves
  const client = new lib.Client(s.address, {
    mode: 'local_first', bundleFile: bundleFile('lf.json', fs.readFileSync(library), ['a']), trustedKeys: [PUB_A],
    reportBatch: 3, reportIntervalMs: 60000, deadlineMs: 5000,
  });
  const run = `${process.pid}-${Date.now()}`;
  const messages = [1, 2, 3, 4].map((i) => `local-first ${run} #${i}`);
  try {
    const answers = [];
    for (const message of messages.slice(0, 3)) answers.push(await client.classify({ ...DESCRIPTORS[0], message }));
    assert.deepEqual(answers.map((a) => a.local), [true, true, true]);
    assert.equal(client.counters.server, 0, 'no Classify call');
    assert.ok(await eventually(() => client.reports.reported === 3), `a batch of 3: ${JSON.stringify(client.reports)}`);
    assert.ok(await eventually(() => logged(s.decisionLog, messages).length === 3), 'in the decision log');
    const [entry] = logged(s.decisionLog, messages.slice(0, 1));
    assert.equal(entry.local, true);
    assert.equal(entry.bundle_digest, s.bundleDigest);
    assert.equal(entry.answer.rule, answers[0].rule_id);
    assert.deepEqual(entry.answer.retry_after, { seconds: 7, source: 'http.response.header.retry-after', capped: false });
    await client.classify({ ...DESCRIPTORS[0], message: messages[3] });
    assert.equal(client.reports.pending, 1, 'below the batch, before the interval');
    await client.close(); // flushes
    assert.deepEqual(client.reports, { pending: 0, reported: 4, dropped: 0 });
    assert.ok(await eventually(() => logged(s.decisionLog, messages).length === 4), 'the flush on close');
  } finally {
    await client.close();
  }
  // the interval sends what is below a batch
  const timed = new lib.Client(s.address, { mode: 'local_first', bundleFile: library, allowUnsigned: true, reportIntervalMs: 100, deadlineMs: 5000 });
  try {
    await timed.classify({ ...DESCRIPTORS[1], message: `timed ${run}` });
    assert.ok(await eventually(() => timed.reports.reported === 1), JSON.stringify(timed.reports));
  } finally {
    await timed.close();
  }
});

test('the report queue is bounded (the oldest dropped, counted) and a failed report is kept', async () => {
  const port = await stoppedPort();
  const client = new lib.Client(`127.0.0.1:${port}`, {
    mode: 'local_first', bundleFile: path.join(SPEC, 'bundles', 'library.json'), allowUnsigned: true, fetchBundle: false,
    reportQueue: 3, reportBatch: 100, deadlineMs: 200,
  });
  try {
    for (let i = 0; i < 5; i++) assert.equal((await client.classify({ ...DESCRIPTORS[0], message: `#${i}` })).local, true);
    assert.deepEqual(client.reports, { pending: 3, reported: 0, dropped: 2 });
    assert.deepEqual(client.reporter.queue.map((q) => q.decision.descriptor.message), ['#2', '#3', '#4'], 'oldest first, the oldest dropped');
    const err = await rejection(client.flush());
    assert.ok(err.code === lib.grpc.status.UNAVAILABLE || err.code === lib.grpc.status.DEADLINE_EXCEEDED, String(err));
    assert.deepEqual(client.reports, { pending: 3, reported: 0, dropped: 2 }, 'kept for the next batch');
  } finally {
    await client.close();
  }
});

test('a served answer naming another ruleset, or a report naming another bundle, fetches the serving bundle', async () => {
  const fake = await answeringServer('ok');
  const library = fs.readFileSync(path.join(SPEC, 'bundles', 'library.json'));
  const libraryDigest = `sha256:${crypto.createHash('sha256').update(library).digest('hex')}`;
  const kinds = path.join(SPEC, 'bundles', 'kinds.json');
  const options = { bundleFile: kinds, allowUnsigned: true, refreshRetryMs: 50, deadlineMs: 5000 };
  try {
    const remote = new lib.Client(fake.address, { ...options, fetchBundle: true });
    try {
      await eventually(() => (fake.seen.GetBundle || 0) >= 1); // the fetch at start: the service serves none
      assert.equal(remote.refusals, 0);
      fake.bundle = { bundle: library, bundle_digest: libraryDigest, signed: false };
      const before = fake.seen.GetBundle;
      await remote.classify(DESCRIPTORS[0]); // answers naming sha256:test, not the bundle's ruleset
      assert.ok(await eventually(() => remote.bundleDigest === libraryDigest), `fetched: ${fake.seen.GetBundle - before} calls`);
    } finally {
      await remote.close();
    }
    const early = new lib.Client(fake.address, { mode: 'local_first', allowUnsigned: true, deadlineMs: 5000 });
    try {
      fake.bundle = null; // the service serves none: local-first without a bundle asks the service
      const answer = await early.classify(DESCRIPTORS[0]);
      assert.equal(answer.local, false);
      assert.equal(answer.rule_id, 'test.rule');
      assert.equal(early.reports.pending, 0);
    } finally {
      await early.close();
    }
    fake.bundle = { bundle: library, bundle_digest: libraryDigest, signed: false };
    const local = new lib.Client(fake.address, { ...options, mode: 'local_first', reportBatch: 1 });
    try {
      assert.ok(await eventually(() => local.bundleDigest === libraryDigest), 'the fetch at start swaps the served bundle in');
      fake.bundle = { bundle: fs.readFileSync(kinds), bundle_digest: `sha256:${crypto.createHash('sha256').update(fs.readFileSync(kinds)).digest('hex')}` };
      await local.classify(DESCRIPTORS[0]); // reported at once: the report names the kinds bundle
      assert.ok(await eventually(() => local.bundleDigest === fake.bundle.bundle_digest), 'the report named another bundle');
      assert.equal(fake.reported.length >= 1, true);
      assert.equal(fake.reported[0].bundle_digest, libraryDigest);
      assert.equal(fake.seen.Classify, 2, 'the remote client\'s and the bundle-less local-first one\'s: local-first with a bundle sends no Classify');
    } finally {
      await local.close();
    }
  } finally {
    await fake.stop();
  }
});

test('pending reports and refresh timers never keep the process alive', () => {
  const script = `
    const lib = require(${JSON.stringify(path.join(__dirname, '..'))});
    const client = new lib.Client('127.0.0.1:1', { mode: 'local_first', bundleFile: ${JSON.stringify(path.join(SPEC, 'bundles', 'library.json'))},
      allowUnsigned: true, reportIntervalMs: 60000, refreshRetryMs: 60000 });
    client.classify({ type: 'x' }).then((a) => console.log(a.local, client.reports.pending));`;
  const started = Date.now();
  const done = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30000 });
  assert.equal(done.status, 0, done.stderr);
  assert.equal(done.stdout.trim(), 'true 1');
  assert.ok(Date.now() - started < 20000, 'exited without waiting for a timer');
});
