// Every vector file of clients/spec/vectors, read by this package's own functions
// (clients/spec/README.md says what each kind means and how it is compared). A file of a
// kind this runner does not know fails; a failure names the file, the vector and the
// field. Prints how many vectors of each kind it ran.
//
//   node --test clients/node/tests/                                  # the repository's spec
//   ERRORCLASS_SPEC_DIR=/path/to/spec node --test clients/node/tests/  # another copy of it
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { after, describe, test } = require('node:test');
const lib = require('..');
const { runOutage } = require('./outage');
const retry = require('../retry');

const SPEC = process.env.ERRORCLASS_SPEC_DIR || path.join(__dirname, '..', '..', 'spec');
const FOLDER = path.join(SPEC, 'vectors');
const BUNDLES = path.join(SPEC, 'bundles');
const KEYS = path.join(SPEC, 'keys');
const LANGUAGE = 'node';

// Each bundle of the spec, loaded once (its signatures are bundle_verify's business).
const loaded = new Map();
function bundleNamed(name) {
  if (!loaded.has(name)) loaded.set(name, lib.Bundle.load(path.join(BUNDLES, `${name}.json`)));
  return loaded.get(name);
}

// A bundle vector's descriptor, with @PAD@ in a message standing for pad.text repeated pad.count times.
function expanded(input) {
  if (!input.pad) return input.descriptor;
  const text = input.pad.text.repeat(input.pad.count);
  const d = structuredClone(input.descriptor);
  for (const subject of [d, ...(d.causes || [])]) {
    if (typeof subject.message === 'string') subject.message = subject.message.replace('@PAD@', () => text);
  }
  return d;
}

// An answer in the vectors' spelling of `want` (empty values left out).
function answerFields(answer) {
  const a = lib.answerJson(answer);
  const out = { class: a.class, action: a.action.id, effect: a.effect };
  if (a.retryable) out.retryable = true;
  if (a.rule) out.rule_id = a.rule;
  if (a.unknown_reason) out.unknown_reason = a.unknown_reason;
  const wait = retry.waitOf(answer);
  if (wait) out.retry_after = wait;
  return out;
}

// A vector's `now` (RFC 3339, read as the evaluator reads a reset) as epoch milliseconds.
function epochMs(now) {
  const t = retry.timestamp(now);
  assert.ok(t, `now ${JSON.stringify(now)} is not RFC 3339`);
  return t.s * 1000 + t.us / 1000;
}

// `pad.text` repeated `pad.count` times stands for @PAD@ in a body (a large input written small).
function body(input) {
  return input.pad ? input.body.replace('@PAD@', () => input.pad.text.repeat(input.pad.count)) : input.body;
}

// The first field where two descriptors (or evidence) differ, or undefined.
function differs(got, want) {
  for (const key of new Set([...Object.keys(got), ...Object.keys(want)])) {
    try {
      assert.deepStrictEqual(got[key], want[key]);
    } catch {
      return key;
    }
  }
  return undefined;
}

function sameFields(got, want, where) {
  const field = differs(got, want);
  if (field !== undefined) {
    assert.fail(`${where}: ${field}: got ${JSON.stringify(got[field])}, want ${JSON.stringify(want[field])}`);
  }
}

// A builder's descriptor carries this client's language; `want` leaves it out.
function built(got, where) {
  if (got === null) return null;
  assert.equal(got.language, LANGUAGE, `${where}: language`);
  const { language, ...rest } = got;
  return rest;
}

function sameDescriptor(got, want, where) {
  if (want === null || got === null) {
    assert.deepStrictEqual(got, want, `${where}: descriptor: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    return;
  }
  sameFields(got, want, `${where}: descriptor`);
}

const EMPTY_EVIDENCE = { code: '', grpc_status: null, message: '', attributes: {} };

const KINDS = {
  error_body({ input, want }, where) {
    const got = lib.evidenceFromBody(input.status, input.headers, body(input));
    sameFields({ ...got, grpc_status: got.grpc_status ?? null }, { ...EMPTY_EVIDENCE, ...want }, where);
  },
  stream_error({ input, want }, where) {
    const got = lib.evidenceFromStreamError(input.event, input.data);
    sameFields({ ...got, grpc_status: got.grpc_status ?? null }, { ...EMPTY_EVIDENCE, ...want }, where);
  },
  bundle({ input, want }, where) {
    const bundle = bundleNamed(input.bundle);
    const answer = bundle.classify(expanded(input), input.now === undefined ? {} : { now: epochMs(input.now) });
    sameFields(answerFields(answer), want, where);
    assert.deepStrictEqual([answer.ruleset_version, answer.ruleset_digest], [bundle.version, bundle.digest], `${where}: the answer names another ruleset`);
    assert.deepStrictEqual([answer.local, answer.bundle_digest], [true, bundle.bundleDigest], `${where}: local, bundle_digest`);
  },
  retry_after({ input, want }, where) {
    const got = lib.retryAfter(input.attributes, input.cap_seconds, epochMs(input.now));
    sameFields({ retry_after: got && { seconds: got.seconds, source: got.source, capped: got.capped } }, { retry_after: null, ...want }, where);
  },
  bundle_verify({ input, want }, where) {
    const data = fs.readFileSync(path.join(BUNDLES, `${input.bundle}.json`));
    if (input.flip_byte !== undefined) data[input.flip_byte] ^= 0x01;
    const trustedKeys = input.trusted_keys.map((k) => fs.readFileSync(path.join(KEYS, `${k}.pub`)));
    let got;
    try {
      const bundle = lib.Bundle.fromBytes(data, { signatures: input.signatures, trustedKeys });
      got = { accepted: true, key_ids: [...bundle.keyIds] };
    } catch (err) {
      if (!(err instanceof lib.BundleError)) throw err;
      got = { refused: err.code };
    }
    sameFields(got, want, where);
  },
  finish_reason({ input, want }, where) {
    const got = lib.descriptorFromFinishReason(input.reason, {
      provider: input.provider, promptBlocked: input.prompt_blocked, model: input.model,
    });
    sameDescriptor(built(got, where), want.descriptor, where);
  },
  response({ input, want }, where) {
    const got = lib.descriptorFromResponse(input.response, { provider: input.provider });
    sameDescriptor(built(got, where), want.descriptor, where);
  },
  runtime_facts({ input, want }, where) {
    let got;
    try {
      got = { attributes: lib.runtimeFacts(input.facts) };
    } catch (err) {
      if (!(err instanceof lib.RuntimeFactError)) throw err;
      got = { error: err.fact };
    }
    sameFields(got, want, where);
  },
  validate({ input, want }, where) {
    let got;
    try {
      got = { descriptor: lib.validateDescriptor(input.descriptor) };
    } catch (err) {
      if (!(err instanceof lib.DescriptorError)) throw err;
      got = { violations: err.violations.map((v) => v.field) };
    }
    if (want.violations) {
      assert.ok(got.violations, `${where}: violations: none, the descriptor was accepted as ${JSON.stringify(got.descriptor)}`);
      assert.deepStrictEqual(new Set(got.violations), new Set(want.violations.map((v) => v.field)), `${where}: violations`);
    } else {
      assert.ok(got.descriptor, `${where}: descriptor: refused (${got.violations && got.violations.join(', ')})`);
      sameDescriptor(got.descriptor, want.descriptor, where);
    }
  },
  fit({ input, want }, where) {
    sameDescriptor(lib.fit(input.descriptor), want.descriptor, where);
  },
  breaker({ input, want }, where) {
    const breaker = new lib.Breaker();
    const states = [];
    const waits = [];
    for (const event of input.events) {
      if (event === 'call') {
        states.push(breaker.allow() ? 'allowed' : 'short_circuited');
        continue;
      }
      if (event === 'probe_ok' || event === 'probe_failed') {
        waits.push(breaker.probeWait());
        breaker.probed(event === 'probe_ok');
      } else {
        assert.ok(event === 'ok' || Object.hasOwn(lib.FACTS.grpc_codes, event), `${where}: events: unknown event ${event}`);
        breaker.record(event);
      }
      states.push(breaker.state);
    }
    assert.deepStrictEqual(states, want.states, `${where}: states`);
    if (want.probe_waits_ms) assert.deepStrictEqual(waits, want.probe_waits_ms, `${where}: probe_waits_ms`);
  },
  outage(vector, where) {
    return runOutage(vector, where);
  },
};

const counts = {};
const files = fs.readdirSync(FOLDER).filter((f) => f.endsWith('.json')).sort();

test('the spec has vector files', () => {
  assert.ok(files.length, `no vector files in ${FOLDER}`);
});

// Kinds of thousands of small synchronous vectors run as one test per file, each failure
// still named by file, vector and field (the first MAX_SHOWN of them, and how many in all):
// ten thousand node:test subtests cost seconds of reporting, which a loaded machine pays
// while the outage vectors time their calls.
const BULK = new Set(['bundle']);
const MAX_SHOWN = 20;

for (const file of files) {
  const data = JSON.parse(fs.readFileSync(path.join(FOLDER, file), 'utf8'));
  describe(`${file} (${data.kind})`, () => {
    const run = KINDS[data.kind];
    if (!run) {
      test('a known kind', () => assert.fail(`${file}: kind ${JSON.stringify(data.kind)}: this runner knows ${Object.keys(KINDS).join(', ')}`));
      return;
    }
    if (BULK.has(data.kind)) {
      test(`every vector (${data.vectors.length})`, () => {
        const failed = [];
        for (const vector of data.vectors) {
          counts[data.kind] = (counts[data.kind] || 0) + 1;
          try {
            run(vector, `${file} ${vector.name}`);
          } catch (err) {
            failed.push(err.message.split('\n')[0]);
          }
        }
        if (failed.length) {
          assert.fail(`${failed.length} of ${data.vectors.length} vectors differ:\n${failed.slice(0, MAX_SHOWN).join('\n')}` +
            `${failed.length > MAX_SHOWN ? `\n... and ${failed.length - MAX_SHOWN} more` : ''}`);
        }
      });
      return;
    }
    for (const vector of data.vectors) {
      test(vector.name, async () => {
        counts[data.kind] = (counts[data.kind] || 0) + 1;
        await run(vector, `${file} ${vector.name}`);
      });
    }
  });
}

after(() => {
  for (const kind of Object.keys(counts).sort()) console.log(`vectors: ${kind} ${counts[kind]}`);
});
