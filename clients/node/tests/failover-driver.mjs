// The failover DRIVER of the Node client for tests/clients/test_failover.py: JSON lines, one
// request a line on stdin, one response a line on stdout (nothing else on stdout; logs go to
// stderr). The protocol is the one every language's driver speaks (ops open, classify,
// load_bundle, refresh, flush, status, close; EOF is close).
//
//   node clients/node/tests/failover-driver.mjs     (from the repository root)
import { createRequire } from 'node:module';
import readline from 'node:readline';

const require = createRequire(import.meta.url);
const lib = require('../classifier.js');

let client = null;

function errorText(err) {
  if (err instanceof lib.BundleError) return err.message; // `<code>: <message>`
  if (err && typeof err.code === 'number' && err.details !== undefined) return `${codeName(err.code)}: ${err.details}`;
  return `${err && err.name ? err.name : 'Error'}: ${err && err.message ? err.message : err}`;
}

function codeName(code) {
  return Object.keys(lib.FACTS.grpc_codes).find((name) => lib.FACTS.grpc_codes[name] === code) ?? String(code);
}

function answerOut(a) {
  const json = lib.answerJson(a);
  return {
    class: a.class_name,
    action: a.action.id,
    effect: json.effect,
    retryable: a.retryable,
    rule_id: a.rule_id,
    ruleset_version: a.ruleset_version,
    ruleset_digest: a.ruleset_digest,
    unknown_reason: json.unknown_reason ?? '',
    local: a.local === true,
    bundle_digest: a.local ? a.bundle_digest : '',
    retry_after_ms: a.retry_after_ms === null || a.retry_after_ms === undefined ? null : Math.round(a.retry_after_ms),
    retry_after_source: a.retry_after_source || '',
  };
}

function status() {
  const r = client.reports;
  return {
    bundle_digest: client.bundleDigest,
    pending: r.pending,
    reported: r.reported,
    dropped: r.dropped,
    refusals: client.refusals,
    last_refusal: client.lastRefusal ? client.lastRefusal.message : '',
  };
}

const OPS = {
  async open(req) {
    if (client) await client.close();
    client = null;
    client = new lib.Client(req.addr, {
      mode: req.mode || 'remote',
      deadlineMs: req.deadline_ms ?? lib.DEFAULTS.deadline_ms,
      bundleFile: req.bundle_file || null,
      signaturesFile: req.signatures_file || null,
      trustedKeys: req.trusted_keys || [],
      allowUnsigned: Boolean(req.allow_unsigned),
      ...(req.fetch_bundle === undefined || req.fetch_bundle === null ? {} : { fetchBundle: req.fetch_bundle }),
      ...(req.report_batch ? { reportBatch: req.report_batch } : {}),
      ...(req.report_interval_ms ? { reportIntervalMs: req.report_interval_ms } : {}),
    });
    return { ok: true, bundle_digest: client.bundleDigest };
  },
  async classify(req) {
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
    try {
      const answer = await client.classify(req.descriptor);
      return { answer: answerOut(answer), elapsed_ms: elapsed() };
    } catch (err) {
      if (err instanceof lib.UnclassifiedError) return { unclassified: true, elapsed_ms: elapsed() };
      throw err;
    }
  },
  async load_bundle(req) {
    try {
      client.loadBundle(req.bundle_file, { signatures: req.signatures_file || null });
      return { ok: true, bundle_digest: client.bundleDigest };
    } catch (err) {
      return { error: errorText(err), bundle_digest: client.bundleDigest };
    }
  },
  async refresh() {
    try {
      const { changed } = await client.refreshBundle();
      return { ok: true, bundle_digest: client.bundleDigest, changed };
    } catch (err) {
      return { error: errorText(err), bundle_digest: client.bundleDigest };
    }
  },
  async flush() {
    return { ok: true, reported: await client.flush() };
  },
  async status() {
    return status();
  },
  async close() {
    if (client) await client.close();
    client = null;
    return { ok: true };
  },
};

function reply(obj) {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let req;
    try {
      req = JSON.parse(line);
    } catch (err) {
      reply({ error: `bad_request: not JSON (${err.message})` });
      continue;
    }
    const op = OPS[req.op];
    if (!op) {
      reply({ error: `bad_request: unknown op ${JSON.stringify(req.op)}` });
      continue;
    }
    if (!client && req.op !== 'open' && req.op !== 'close') {
      reply({ error: 'bad_request: no client: open first' });
      continue;
    }
    try {
      reply(await op(req));
    } catch (err) {
      process.stderr.write(`failover-driver: ${req.op}: ${err && err.stack ? err.stack : err}\n`);
      reply({ error: errorText(err) });
    }
    if (req.op === 'close') process.exit(0);
  }
  if (client) await client.close(); // EOF is close
  process.exit(0);
}

main();
