// The Vercel AI SDK (`ai`) with its OpenAI and Anthropic providers: generateText, or
// streamText when the scenario streams. maxRetries 0 (so errors are not wrapped in a
// RetryError), `timeout` (the SDK's own total timeout) for the hang scenarios.
// streamText does not throw: a failure arrives at `onError` (and as an error part of
// fullStream); the driver rethrows the first one, as an application would.
import { generateText, streamText } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { ANTHROPIC_MODEL, AZURE_DEPLOYMENT, KEYS, OPENAI_MODEL, PROMPT, TIMEOUT_MS } from '../apis.mjs';

globalThis.AI_SDK_LOG_WARNINGS = false;

async function run(model, scenario) {
  const options = { model, prompt: PROMPT, maxRetries: 0, timeout: TIMEOUT_MS };
  if (!scenario.stream) return generateText(options);
  let failure;
  const result = streamText({ ...options, onError: ({ error }) => { failure ??= { error }; } });
  try {
    for await (const part of result.fullStream) {
      if (part.type === 'error') failure ??= { error: part.error };
    }
  } catch (error) {
    failure ??= { error };
  }
  if (failure) throw failure.error;
  return { finishReason: await result.finishReason, rawFinishReason: await result.rawFinishReason };
}

export const drivers = {
  'node.ai-openai': {
    apis: ['openai', 'azure'],
    call(scenario, base) {
      // Azure OpenAI's v1 API (/openai/v1) is OpenAI-compatible; it takes the key as api-key.
      const provider = scenario.api === 'azure'
        ? createOpenAI({ baseURL: `${base}/openai/v1`, apiKey: KEYS.azure, headers: { 'api-key': KEYS.azure } })
        : createOpenAI({ baseURL: `${base}/v1`, apiKey: KEYS.openai });
      return run(provider.chat(scenario.api === 'azure' ? AZURE_DEPLOYMENT : OPENAI_MODEL), scenario);
    },
  },
  'node.ai-anthropic': {
    apis: ['anthropic'],
    call(scenario, base) {
      const provider = createAnthropic({ baseURL: `${base}/v1`, apiKey: KEYS.anthropic });
      return run(provider(ANTHROPIC_MODEL), scenario);
    },
  },
};
