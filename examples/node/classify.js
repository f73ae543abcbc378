#!/usr/bin/env node
// Classify descriptors over gRPC and print the answers as JSON.
//
//   node classify.js --addr 127.0.0.1:50051 descriptor.json
//   echo '{"type": "com.example.Weird"}' | node classify.js -
//   node classify.js --batch many.json     # a JSON array, one ClassifyBatch call
//   node classify.js --stream many.json    # a JSON array, over ClassifyStream
//
// The input is the descriptor-file shape `classifier classify` reads, so one
// file works with both. Exit status: 0 answered, 2 the descriptor was
// refused (each bad field on stderr), 1 any other failure.
'use strict';

const fs = require('node:fs');
const { parseArgs } = require('node:util');
const lib = require('./classifier');

const USAGE = 'usage: classify.js [--addr HOST:PORT] [--deadline-ms N] [--explain] [--batch|--stream] FILE|-';

async function main() {
  const { values, positionals } = parseArgs({
    options: {
      addr: { type: 'string', default: process.env.CLASSIFIER_ADDR || '127.0.0.1:50051' },
      'deadline-ms': { type: 'string', default: '5000' },
      explain: { type: 'boolean', default: false },
      batch: { type: 'boolean', default: false },
      stream: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    allowPositionals: true,
  });
  if (values.help || positionals.length !== 1) {
    console.error(USAGE);
    return values.help ? 0 : 1;
  }
  const file = positionals[0];
  const input = JSON.parse(fs.readFileSync(file === '-' ? 0 : file, 'utf8'));
  const options = { explain: values.explain, deadlineMs: Number(values['deadline-ms']) };
  const client = lib.connect(values.addr);
  try {
    let output;
    if (values.batch || values.stream) {
      if (!Array.isArray(input)) throw new Error('--batch and --stream read a JSON array of descriptors');
      const call = values.stream ? lib.classifyStream : lib.classifyBatch;
      output = (await call(client, input, options)).map(lib.answerJson);
    } else {
      output = lib.answerJson(await lib.classify(client, input, options));
    }
    console.log(JSON.stringify(output, null, 2));
    return 0;
  } catch (err) {
    if (err.code === lib.grpc.status.INVALID_ARGUMENT) {
      for (const violation of err.details.split('; ')) console.error(`${file}: ${violation}`);
      return 2;
    }
    console.error(`classify.js: ${err.message}`);
    return 1;
  } finally {
    client.close();
  }
}

main().then((code) => { process.exitCode = code; });
