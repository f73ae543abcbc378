#!/usr/bin/env node
// The in-process bundle evaluator on the bundled library (clients/spec/bundles/library.json):
// p50 and p99 of one evaluation (normalising the descriptor and classifying it) over the
// descriptors of clients/spec/vectors/bundle.library.json (the library's cases, the public
// corpus, the conformance suite's SDK types), each timed alone with process.hrtime.bigint()
// (whose own cost, about 0.05 us, is in the figures); then the same descriptors with their
// message as long as a descriptor's may be. Figures, not a pass/fail test: on a loaded
// machine the tail is the scheduler's (a sample preempted waits milliseconds), the more so
// the longer an evaluation. Beside it, in the same run, the gRPC Classify call a runtime makes
// instead (Client#classify, one descriptor at a time, each awaited) against a real local
// server: the one at ERRORCLASS_BENCH_ADDR, else a `classifier serve` of the repository's
// .venv started here (and killed at the end). The summary is one line:
//   bench node: in-process p50 X us p99 Y us; grpc p50 A us p99 B us (N descriptors, R rounds)
// (R: the in-process passes over the N descriptors; the gRPC calls make one pass.)
// Run by `make bench` (node clients/node/bench/bundle.js [--seconds N]).
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Bundle, Client } = require('..');
const { classifierServer } = require('../tests/servers');

const SPEC = process.env.ERRORCLASS_SPEC_DIR || path.join(__dirname, '..', '..', 'spec');
const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 3;

function expanded(input) {
  if (!input.pad) return input.descriptor;
  const text = input.pad.text.repeat(input.pad.count);
  const d = structuredClone(input.descriptor);
  for (const s of [d, ...(d.causes || [])]) if (typeof s.message === 'string') s.message = s.message.replace('@PAD@', () => text);
  return d;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

// The sorted samples (ns) of evaluating each descriptor, pass after pass, for about `seconds`.
function timed(bundle, descriptors, seconds) {
  const samples = [];
  const until = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  let passes = 0;
  while (process.hrtime.bigint() < until && passes < 1000) {
    for (const d of descriptors) {
      const t0 = process.hrtime.bigint();
      bundle.classify(d);
      samples.push(Number(process.hrtime.bigint() - t0));
    }
    passes++;
  }
  samples.sort((a, b) => a - b);
  return { samples, passes };
}

const us = (ns) => (ns / 1000).toFixed(1);

function summary({ samples, passes }, count) {
  return `${count} descriptors x ${passes} passes = ${samples.length} evaluations: ` +
    `p50 ${us(percentile(samples, 50))} us, p90 ${us(percentile(samples, 90))} us, p99 ${us(percentile(samples, 99))} us, max ${us(samples[samples.length - 1])} us`;
}

// The sorted samples (ns) of one Classify call per descriptor, each awaited (after a warm-up).
async function grpcTimed(address, descriptors) {
  const client = new Client(address, { deadlineMs: 5000, breaker: false });
  try {
    for (const d of descriptors.slice(0, 200)) await client.classify(d);
    const samples = [];
    for (const d of descriptors) {
      const t0 = process.hrtime.bigint();
      await client.classify(d);
      samples.push(Number(process.hrtime.bigint() - t0));
    }
    return samples.sort((a, b) => a - b);
  } finally {
    client.close();
  }
}

async function main() {
  const started = process.hrtime.bigint();
  const bundle = Bundle.load(path.join(SPEC, 'bundles', 'library.json'));
  const loadMs = Number(process.hrtime.bigint() - started) / 1e6;
  const vectors = JSON.parse(fs.readFileSync(path.join(SPEC, 'vectors', 'bundle.library.json'), 'utf8')).vectors;
  const descriptors = vectors.filter((v) => v.input.bundle === 'library').map((v) => expanded(v.input));
  for (let i = 0; i < 3; i++) for (const d of descriptors) bundle.classify(d); // warm: the JIT, the patterns' DFAs
  const local = timed(bundle, descriptors, seconds);
  console.log(`node bundle evaluator (re2js, Node ${process.versions.node}, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(2)}): ` +
    `library ${bundle.ruleCount} rules loaded in ${loadMs.toFixed(0)} ms; ${summary(local, descriptors.length)}`);
  // the same descriptors with their message as long as a descriptor's may be (4,096 characters):
  // every pattern of a rule found by type then searches the whole message
  const long = descriptors.filter((d) => d.message).map((d) => ({ ...d, message: `${d.message} ${'x'.repeat(Math.max(0, 4095 - d.message.length))}` }));
  console.log(`  with 4,096-character messages: ${summary(timed(bundle, long, seconds / 3), long.length)}`);
  let server = null;
  let address = process.env.ERRORCLASS_BENCH_ADDR;
  if (!address) {
    server = await classifierServer();
    address = server.address;
  }
  try {
    const remote = await grpcTimed(address, descriptors);
    console.log(`bench node: in-process p50 ${us(percentile(local.samples, 50))} us p99 ${us(percentile(local.samples, 99))} us; ` +
      `grpc p50 ${us(percentile(remote, 50))} us p99 ${us(percentile(remote, 99))} us (${descriptors.length} descriptors, ${local.passes} rounds)`);
  } finally {
    if (server) await server.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
