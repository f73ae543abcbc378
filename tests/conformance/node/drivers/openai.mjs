// openai-node: `OpenAI` for api openai, `AzureOpenAI` for api azure; chat completions,
// streamed when the scenario streams. Retries off, the suite's short timeout.
import OpenAI, { AzureOpenAI } from 'openai';
import { AZURE_API_VERSION, AZURE_DEPLOYMENT, KEYS, MESSAGES, OPENAI_MODEL, TIMEOUT_MS, drain } from '../apis.mjs';

function clientFor(scenario, base) {
  if (scenario.api === 'azure') {
    return new AzureOpenAI({
      endpoint: base, apiKey: KEYS.azure, apiVersion: AZURE_API_VERSION, deployment: AZURE_DEPLOYMENT,
      maxRetries: 0, timeout: TIMEOUT_MS,
    });
  }
  return new OpenAI({ baseURL: `${base}/v1`, apiKey: KEYS.openai, maxRetries: 0, timeout: TIMEOUT_MS });
}

export const drivers = {
  'node.openai': {
    apis: ['openai', 'azure'],
    async call(scenario, base) {
      const client = clientFor(scenario, base);
      const model = scenario.api === 'azure' ? AZURE_DEPLOYMENT : OPENAI_MODEL;
      if (scenario.stream) {
        return drain(await client.chat.completions.create({ model, messages: MESSAGES, stream: true }));
      }
      return client.chat.completions.create({ model, messages: MESSAGES });
    },
  },
};
