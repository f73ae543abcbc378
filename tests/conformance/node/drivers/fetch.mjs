// Plain fetch (Node's built-in undici): each API's request as a hand-rolled client sends
// it, with AbortSignal.timeout for the suite's short timeout. fetch throws only for
// transport failures and a body that cannot be read or parsed; an HTTP error status
// returns normally, so the driver returns the Response with the body it read, and the
// worker describes it with descriptorFromHttpResponse (or, for a 200, descriptorFromResponse).
import {
  ANTHROPIC_MODEL, ANTHROPIC_VERSION, AZURE_API_VERSION, AZURE_DEPLOYMENT, GEMINI_MODEL, KEYS,
  MESSAGES, OPENAI_MODEL, PROMPT, TIMEOUT_MS,
} from '../apis.mjs';

function requestFor(scenario, base) {
  const stream = Boolean(scenario.stream);
  const json = { 'content-type': 'application/json' };
  switch (scenario.api) {
    case 'openai':
      return { url: `${base}/v1/chat/completions`, headers: { ...json, authorization: `Bearer ${KEYS.openai}` },
        body: { model: OPENAI_MODEL, messages: MESSAGES, ...(stream ? { stream } : {}) } };
    case 'azure':
      return { url: `${base}/openai/deployments/${AZURE_DEPLOYMENT}/chat/completions?api-version=${AZURE_API_VERSION}`,
        headers: { ...json, 'api-key': KEYS.azure }, body: { messages: MESSAGES, ...(stream ? { stream } : {}) } };
    case 'anthropic':
      return { url: `${base}/v1/messages`,
        headers: { ...json, 'x-api-key': KEYS.anthropic, 'anthropic-version': ANTHROPIC_VERSION },
        body: { model: ANTHROPIC_MODEL, max_tokens: 64, messages: MESSAGES, ...(stream ? { stream } : {}) } };
    case 'gemini': {
      const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
      const model = (scenario.request && scenario.request.model) || GEMINI_MODEL;
      return { url: `${base}/v1beta/models/${model}:${method}`, headers: { ...json, 'x-goog-api-key': KEYS.gemini },
        body: { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] } };
    }
    default:
      throw new Error(`no plain-fetch request for api ${scenario.api}`);
  }
}

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export const drivers = {
  'node.fetch': {
    apis: ['openai', 'azure', 'anthropic', 'gemini'],
    async call(scenario, base) {
      const { url, headers, body } = requestFor(scenario, base);
      const response = await fetch(url, {
        method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      if (!response.ok) return { fetchResponse: response, body: parsed(await response.text()) };
      if (scenario.stream) return { fetchResponse: response, body: await response.text() };
      return { fetchResponse: response, body: await response.json() };
    },
  },
};
