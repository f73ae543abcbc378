// Failures that are not exceptions: a response that returned normally but ended with the
// provider refusing or filtering (clients/spec/README.md, "finish_reason" and "response";
// the convention of docs/clients.md). Such a failure is sent as a descriptor:
//   type errorclass.FinishReason (a failure finish or stop reason) or
//   errorclass.PromptBlocked (the prompt refused before generation),
//   supertypes [errorclass.ResponseFailure], origin provider, the provider,
//   code: the reason exactly as the API spells it, the message of the facts' template,
//   and attributes.model when known.
// The reasons, types and templates are the facts' (response_failures), the same in every
// client. Only refusal and filter reasons are failures; a normal stop and a length
// cut-off (length, max_tokens, MAX_TOKENS) give null: a cut-off is model misbehaviour,
// which the taxonomy leaves Unknown.
'use strict';

const { fit } = require('./descriptor');
const { read, text } = require('./evidence');
const { FACTS, strip } = require('./facts');

const FAILURES = FACTS.response_failures;
// A failure reason of any provider: an API is reached under many names (Azure OpenAI, Vertex).
const FAILURE_REASONS = new Set(Object.values(FAILURES.failure_reasons).flat());
const NOT_BLOCKED = new Set(FAILURES.not_blocked);

// The descriptor for a response that ended with `reason`, or null when that is no failure.
// With `promptBlocked` (Gemini's promptFeedback.blockReason) every block reason is a
// failure but those saying nothing was blocked; otherwise only the failure reasons are.
function descriptorFromFinishReason(reason, { provider = '', promptBlocked = false, model = '', attributes } = {}) {
  const name = typeof reason === 'string' ? strip(reason) : '';
  provider = typeof provider === 'string' ? strip(provider).toLowerCase() : '';
  let type;
  let template;
  if (promptBlocked) {
    if (NOT_BLOCKED.has(name)) return null;
    type = FAILURES.prompt_blocked_type;
    template = FAILURES.prompt_blocked_message;
  } else if (FAILURE_REASONS.has(name)) {
    type = FAILURES.finish_reason_type;
    template = FAILURES.finish_reason_message;
  } else {
    return null;
  }
  const attrs = { ...(attributes || {}) };
  if (model && !('model' in attrs)) attrs.model = model;
  return fit({
    type,
    supertypes: [FAILURES.supertype],
    origin: 'provider',
    code: name,
    message: template.replace('{provider}', () => provider).replace('{reason}', () => name),
    language: 'node',
    provider,
    attributes: attrs,
  });
}

// The descriptor for a response that is a provider-side refusal, or null. Reads, as
// objects or as the JSON the APIs send, in this order, the first failure deciding:
// Gemini's promptFeedback.blockReason (a block) and each candidates[].finishReason;
// OpenAI's choices[].finish_reason and a choices[].message.refusal (as `refusal`); the
// Responses API's incomplete_details.reason and an output[] message's refusal part;
// Anthropic's stop_reason and a message_delta event's delta.stop_reason; Bedrock's
// stopReason and a messageStop event's stopReason. An array is a stream's chunks or
// events, read in order. Node's own shapes too: Bedrock ConverseStream's events as
// `stream`, and the AI SDK's generateText / streamText result (`rawFinishReason`, the
// provider's own spelling). `provider` defaults to the API the shape belongs to; pass
// it for Azure OpenAI or the AI SDK.
function descriptorFromResponse(response, { provider, attributes } = {}) {
  for (const found of finishReasons(response, 0)) {
    const d = descriptorFromFinishReason(found.reason, {
      provider: provider || found.provider, promptBlocked: found.blocked, model: found.model, attributes,
    });
    if (d) return d;
  }
  return null;
}

const MAX_DEPTH = 3;

function* finishReasons(response, depth) {
  if (response === null || typeof response !== 'object' || depth > MAX_DEPTH) return;
  if (Array.isArray(response)) { // a stream's chunks or events
    for (const item of response) yield* finishReasons(item, depth + 1);
    return;
  }
  const model = text(field(response, 'model', 'modelVersion', 'model_version'));
  const at = (provider, reason, blocked = false) => ({ provider, reason: text(reason), blocked, model });
  // Gemini: a blocked prompt, then each candidate's finish reason
  const block = text(field(field(response, 'promptFeedback', 'prompt_feedback'), 'blockReason', 'block_reason'));
  if (block) yield at('gemini', block, true);
  for (const candidate of list(field(response, 'candidates'))) yield at('gemini', field(candidate, 'finishReason', 'finish_reason'));
  // OpenAI chat completions (and stream chunks), with a refusal in the message
  for (const choice of list(field(response, 'choices'))) {
    yield at('openai', field(choice, 'finish_reason'));
    if (text(field(field(choice, 'message'), 'refusal'))) yield at('openai', 'refusal');
  }
  // The Responses API: why it stopped, and a refusal among its output messages
  const details = field(response, 'incomplete_details');
  if (details) yield at('openai', field(details, 'reason'));
  for (const item of list(field(response, 'output'))) {
    if (field(item, 'type') !== 'message') continue;
    for (const part of list(field(item, 'content'))) {
      if (field(part, 'type') === 'refusal') yield at('openai', 'refusal');
    }
  }
  // Anthropic: a Message, or a stream's message_delta event
  yield at('anthropic', field(response, 'stop_reason'));
  if (field(response, 'type') === 'message_delta') yield at('anthropic', field(field(response, 'delta'), 'stop_reason'));
  // Bedrock Converse, and ConverseStream's messageStop event (the driver's `stream` array)
  yield at('bedrock', field(response, 'stopReason'));
  yield at('bedrock', field(field(response, 'messageStop'), 'stopReason'));
  yield* finishReasons(field(response, 'stream'), depth + 1);
  // The AI SDK: the provider's own reason (finishReason is the SDK's unified one)
  yield at('', field(response, 'rawFinishReason'));
  // A Responses API stream event (response.incomplete) carries the response itself
  const inner = field(response, 'response');
  if (inner && typeof inner === 'object' && !Array.isArray(inner)) yield* finishReasons(inner, depth + 1);
}

function field(obj, ...names) {
  if (obj === null || typeof obj !== 'object') return undefined;
  for (const name of names) {
    const value = read(() => obj[name]);
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}

function list(value) {
  return Array.isArray(value) ? value : [];
}

module.exports = { descriptorFromFinishReason, descriptorFromResponse };
