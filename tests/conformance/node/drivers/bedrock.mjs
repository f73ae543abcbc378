// @aws-sdk/client-bedrock-runtime: Converse, or ConverseStream when the scenario streams.
// maxAttempts 1 (retries off), dummy static credentials (no credential chain, no IMDS).
// The client's default handler speaks HTTP/2 only; the fake provider is HTTP/1.1, so the
// driver passes the SDK's own HTTP/1.1 handler, NodeHttpHandler, with the suite's timeouts
// (throwOnRequestTimeout: without it a request timeout only logs a warning and waits on).
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { BEDROCK_MODEL, KEYS, PROMPT, TIMEOUT_MS, drain } from '../apis.mjs';

export const drivers = {
  'node.bedrock': {
    apis: ['bedrock'],
    async call(scenario, base) {
      const client = new BedrockRuntimeClient({
        region: 'us-east-1',
        endpoint: base,
        credentials: KEYS.aws,
        maxAttempts: 1,
        requestHandler: new NodeHttpHandler({
          connectionTimeout: TIMEOUT_MS, requestTimeout: TIMEOUT_MS, throwOnRequestTimeout: true,
        }),
      });
      const input = { modelId: BEDROCK_MODEL, messages: [{ role: 'user', content: [{ text: PROMPT }] }] };
      try {
        if (scenario.stream) {
          const response = await client.send(new ConverseStreamCommand(input));
          return { ...response, stream: await drain(response.stream) };
        }
        return await client.send(new ConverseCommand(input));
      } finally {
        client.destroy();
      }
    },
  },
};
