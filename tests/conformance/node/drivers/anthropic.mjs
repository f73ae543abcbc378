// @anthropic-ai/sdk: messages.create, streamed when the scenario streams. Retries off.
import Anthropic from '@anthropic-ai/sdk';
import { ANTHROPIC_MODEL, KEYS, MESSAGES, TIMEOUT_MS, drain } from '../apis.mjs';

export const drivers = {
  'node.anthropic': {
    apis: ['anthropic'],
    async call(scenario, base) {
      const client = new Anthropic({ baseURL: base, apiKey: KEYS.anthropic, maxRetries: 0, timeout: TIMEOUT_MS });
      const request = { model: ANTHROPIC_MODEL, max_tokens: 64, messages: MESSAGES };
      if (scenario.stream) return drain(await client.messages.create({ ...request, stream: true }));
      return client.messages.create(request);
    },
  },
};
