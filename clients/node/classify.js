#!/usr/bin/env node
// Classify descriptors over gRPC and print the answers as JSON.
//
//   errorclass-classify --addr 127.0.0.1:50051 descriptor.json
//   echo '{"type": "com.example.Weird"}' | errorclass-classify -
//   errorclass-classify --batch many.json     # a JSON array, one ClassifyBatch call
//   errorclass-classify --stream many.json    # a JSON array, over ClassifyStream
//
// The input is the descriptor-file shape `classifier classify` reads, so one
// file works with both, and a descriptor it refuses is refused here with the
// same words, before anything is sent. Exit status: 0 answered, 2 the
// descriptor was refused or the file is unreadable (each bad field on stderr),
// 1 any other failure (no server, deadline exceeded).
'use strict';

const fs = require('node:fs');
const { parseArgs } = require('node:util');
const lib = require('./classifier');

// A command pays for starting Node and connecting on every run, which a runtime's client
// pays once: its calls get more time than the library's default (lib.DEFAULTS.deadline_ms).
const DEADLINE_MS = 5000;

const USAGE = `usage: errorclass-classify [--addr HOST:PORT] [--deadline-ms N] [--explain] [--batch|--stream] FILE|-

Classify a descriptor file (JSON, the shape \`classifier classify\` reads) by the
server at --addr (default $CLASSIFIER_ADDR or 127.0.0.1:50051); - reads stdin.
--deadline-ms bounds the call (default ${DEADLINE_MS}).

exit status:
  0  answered (Unknown included)
  1  no answer: the server cannot be reached, the deadline passed, a bad option
  2  the descriptor was refused (each bad field on stderr) or the file is unreadable`;

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        addr: { type: 'string', default: process.env.CLASSIFIER_ADDR || '127.0.0.1:50051' },
        'deadline-ms': { type: 'string', default: String(DEADLINE_MS) },
        explain: { type: 'boolean', default: false },
        batch: { type: 'boolean', default: false },
        stream: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
        version: { type: 'boolean', default: false },
      },
      allowPositionals: true,
    });
  } catch (err) {
    console.error(`errorclass-classify: ${err.message}\n${USAGE}`);
    return 1;
  }
  const { values, positionals } = parsed;
  if (values.version) {
    console.log(`errorclass-classify ${lib.VERSION}`);
    return 0;
  }
  if (values.help || positionals.length !== 1) {
    (values.help ? console.log : console.error)(USAGE);
    return values.help ? 0 : 1;
  }
  const file = positionals[0];
  let input;
  try {
    input = JSON.parse(fs.readFileSync(file === '-' ? 0 : file, 'utf8'));
  } catch (err) {
    console.error(`${file}: ${err instanceof SyntaxError ? `not valid JSON: ${err.message}` : err.message}`);
    return 2;
  }
  const many = values.batch || values.stream;
  if (many && !Array.isArray(input)) {
    console.error(`${file}: --batch and --stream read a JSON array of descriptors`);
    return 2;
  }
  try {
    // refused before a connection is made, as `classifier classify --addr` refuses it
    if (!many) lib.descriptorFromFileData(input);
  } catch (err) {
    return refused(file, err);
  }
  const deadlineMs = Number(values['deadline-ms']);
  if (!(deadlineMs > 0)) {
    console.error(`errorclass-classify: --deadline-ms must be a positive number of milliseconds, not ${values['deadline-ms']}`);
    return 1;
  }
  const options = { explain: values.explain, deadlineMs };
  const client = lib.connect(values.addr);
  try {
    let output;
    if (many) {
      const call = values.stream ? lib.classifyStream : lib.classifyBatch;
      output = (await call(client, input, options)).map(lib.answerJson);
    } else {
      const descriptor = Object.keys(input).length === 1 && 'descriptor' in input ? input.descriptor : input;
      output = lib.answerJson(await lib.classify(client, descriptor, options));
    }
    console.log(JSON.stringify(output, null, 2));
    return 0;
  } catch (err) {
    return refused(file, err);
  } finally {
    client.close();
  }
}

// A descriptor refused here (DescriptorError) or by the server (INVALID_ARGUMENT):
// each bad field on its own line, exit 2; anything else exits 1.
function refused(file, err) {
  if (err instanceof lib.DescriptorError) {
    for (const v of err.violations) console.error(`${file}: ${v.field}: ${v.message}`);
    return 2;
  }
  if (err.code === lib.grpc.status.INVALID_ARGUMENT) {
    for (const violation of err.details.split('; ')) console.error(`${file}: ${violation}`);
    return 2;
  }
  console.error(`errorclass-classify: ${err.message}`);
  return 1;
}

main().then((code) => { process.exitCode = code; });
