#!/usr/bin/env node
// The Node half of the SDK drift check (tests/conformance/drift): every class the pinned
// Node SDKs export that extends Error, as the entries the drift check reads:
//   [{"sdk", "language": "node", "type", "supertypes", "code"?}, ...]
// `type` and `supertypes` are exactly what clients/node's descriptorFromError sends for
// an instance (the constructor's name, then the prototype chain up to Error). An AWS SDK
// v3 service exception is also a code entry: its instances are named for their error code,
// which the helper sends as the descriptor's code, so a rule keyed on the code decides it.
//
//   node error_classes.mjs > node-entries.json
//   python -m tests.conformance.drift --entries node-entries.json
//
// Nothing is called: each package is imported and its exports walked (the module's named
// exports, and the static members of an exported class, where openai-node and
// @anthropic-ai/sdk hang their errors: OpenAI.RateLimitError). A class is listed once,
// under the first package that exports it.
const PACKAGES = [
  'openai',
  '@anthropic-ai/sdk',
  '@aws-sdk/client-bedrock-runtime',
  '@smithy/node-http-handler',
  'ai',
  '@ai-sdk/provider',
  '@ai-sdk/provider-utils',
  '@ai-sdk/openai',
  '@ai-sdk/anthropic',
];
const AWS_SERVICE_EXCEPTION = 'ServiceException';

function isErrorClass(value) {
  return typeof value === 'function' && value.prototype instanceof Error;
}

// The constructor names of the prototype chain above the class, as descriptorFromError
// lists them for an instance (Error included, Object not).
function supertypes(cls) {
  const names = [];
  for (let proto = Object.getPrototypeOf(cls.prototype); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    if (proto.constructor && proto.constructor.name) names.push(proto.constructor.name);
  }
  return names;
}

function candidates(module) {
  const out = [];
  const seen = new Set();
  const add = (v) => { if (typeof v === 'function' && !seen.has(v)) { seen.add(v); out.push(v); } };
  for (const value of Object.values(module)) {
    add(value);
    // Errors hung on a class (OpenAI.APIError, Anthropic.RateLimitError).
    if (typeof value === 'function') {
      for (const key of Object.getOwnPropertyNames(value)) {
        let member;
        try {
          member = value[key];
        } catch {
          continue;
        }
        add(member);
      }
    }
  }
  return out;
}

async function main() {
  const listed = new Set();
  const entries = [];
  for (const sdk of PACKAGES) {
    const module = await import(sdk);
    for (const cls of candidates(module)) {
      if (!isErrorClass(cls) || listed.has(cls) || !cls.name) continue;
      listed.add(cls);
      const chain = supertypes(cls);
      entries.push({ sdk, language: 'node', type: cls.name, supertypes: chain });
      if (chain.includes(AWS_SERVICE_EXCEPTION) && cls.name !== `${sdk === '@aws-sdk/client-bedrock-runtime' ? 'BedrockRuntime' : ''}ServiceException`) {
        entries.push({ sdk, language: 'node', type: cls.name, supertypes: chain, code: cls.name });
      }
    }
  }
  entries.sort((a, b) => (a.sdk + a.type + (a.code || '')).localeCompare(b.sdk + b.type + (b.code || '')));
  process.stdout.write(`${JSON.stringify(entries, null, 1)}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
