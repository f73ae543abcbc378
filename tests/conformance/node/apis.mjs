// What every Node driver sends, the same requests as tests/conformance/apis.py.
export const TIMEOUT_MS = 1000; // tests/conformance/drivers TIMEOUT_S: hang and connect_timeout wait this long
export const OPENAI_MODEL = 'gpt-4o-mini';
export const AZURE_DEPLOYMENT = 'gpt-4o';
export const AZURE_API_VERSION = '2024-10-21';
export const ANTHROPIC_MODEL = 'claude-sonnet-4-5';
export const ANTHROPIC_VERSION = '2023-06-01';
export const GEMINI_MODEL = 'gemini-2.5-flash';
export const BEDROCK_MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
export const PROMPT = 'Say hello.';
export const MESSAGES = [{ role: 'user', content: PROMPT }];
// Dummy credentials: nothing leaves 127.0.0.1.
export const KEYS = {
  openai: 'sk-test',
  azure: 'azure-test-key',
  anthropic: 'sk-ant-test',
  gemini: 'gemini-test-key',
  aws: { accessKeyId: 'AKIATESTTESTTESTTEST', secretAccessKey: 'test-secret-key' },
};

// Reads a stream to its end (a driver returns what a normal end returned).
export async function drain(iterable) {
  const items = [];
  for await (const item of iterable) items.push(item);
  return items;
}
