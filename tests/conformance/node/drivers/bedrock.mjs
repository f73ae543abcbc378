// @aws-sdk/client-bedrock-runtime: the scenario's `request.operation` (default converse;
// converse_stream when the scenario streams; also invoke_model and
// invoke_model_with_response_stream), as tests/conformance/drivers/py_boto3.py calls them.
// maxAttempts 1 (retries off), dummy static credentials (no credential chain, no IMDS).
// The client's default handler speaks HTTP/2 only; the fake provider is HTTP/1.1, so the
// driver passes the SDK's own HTTP/1.1 handler, NodeHttpHandler, with the suite's timeouts
// (throwOnRequestTimeout: without it a request timeout only logs a warning and waits on).
import {
  BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { BEDROCK_MODEL, KEYS, PROMPT, TIMEOUT_MS, drain } from '../apis.mjs';

const INVOKE_BODY = JSON.stringify({
  anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }],
});

async function call(client, operation, modelId) {
  const messages = [{ role: 'user', content: [{ text: PROMPT }] }];
  switch (operation) {
    case 'converse':
      return client.send(new ConverseCommand({ modelId, messages }));
    case 'converse_stream': {
      const response = await client.send(new ConverseStreamCommand({ modelId, messages }));
      return { ...response, stream: await drain(response.stream) };
    }
    case 'invoke_model': {
      const response = await client.send(new InvokeModelCommand({ modelId, body: INVOKE_BODY, contentType: 'application/json' }));
      return { ...response, body: new TextDecoder().decode(response.body) };
    }
    case 'invoke_model_with_response_stream': {
      const response = await client.send(new InvokeModelWithResponseStreamCommand({ modelId, body: INVOKE_BODY, contentType: 'application/json' }));
      return { ...response, body: await drain(response.body) };
    }
    default:
      throw new Error(`unknown bedrock operation ${operation}`);
  }
}

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
      const request = scenario.request || {};
      const operation = request.operation || (scenario.stream ? 'converse_stream' : 'converse');
      try {
        return await call(client, operation, request.model || BEDROCK_MODEL);
      } finally {
        client.destroy();
      }
    },
  },
};
