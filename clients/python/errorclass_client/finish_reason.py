"""Failures that are not exceptions: a response that ended with a refusal or a filter.

A model call can return normally and still have failed on the provider's side: OpenAI's
`finish_reason: content_filter`, Anthropic's `stop_reason: refusal`, Gemini's
`finishReason: SAFETY` or a blocked prompt (`promptFeedback.blockReason`), Bedrock
Converse's `stopReason: guardrail_intervened`. Nothing raises, so the convention
(docs/clients.md, the same in Node) sends such a failure as a descriptor:

- `type: errorclass.FinishReason` (the response ended with a failure reason), or
  `errorclass.PromptBlocked` (the prompt was refused before generation);
- `supertypes: [errorclass.ResponseFailure]`; `origin: provider`; `provider`;
- `code`: the reason exactly as the API spells it (`content_filter`, `refusal`, `SAFETY`);
- `language: python`; `message`: a short sentence; `attributes.model` when known.

Rules for them are in rules/providers/finish-reasons.yaml. Only refusal and filter
reasons are failures here (`FAILURE_REASONS`, from facts.json); a normal stop (`stop`,
`end_turn`, `STOP`) and a **length cut-off** (`length`, `max_tokens`, `MAX_TOKENS`) give
None: a cut-off is model misbehaviour, which the taxonomy leaves Unknown, and treating it
as a failure would fail runs that only need a larger `max_tokens`.

Nothing here imports an SDK: the response objects are read by their attribute names
(openai, anthropic, google-genai) or as the JSON the APIs send (any HTTP client), and
Bedrock's as the dict boto3 returns. So are the agent frameworks' (langchain's
`AIMessage.response_metadata`, pydantic-ai's `ModelResponse` and run results,
openai-agents' `RunResult.raw_responses` and raw stream events; `_framework_reasons`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from errorclass_client import facts
from errorclass_client._text import strip
from errorclass_client.descriptor import Descriptor, fit
from errorclass_client.taxonomy import Origin

FINISH_REASON = facts.FINISH_REASON_TYPE
PROMPT_BLOCKED = facts.PROMPT_BLOCKED_TYPE
RESPONSE_FAILURE = facts.RESPONSE_FAILURE_TYPE
FAILURE_REASONS = frozenset(r for reasons in facts.FAILURE_REASONS.values() for r in reasons)
"""Finish/stop reasons that are the provider refusing or filtering, whatever the provider
label (an API is reached under many names: Azure OpenAI, Vertex)."""
CUTOFF_REASONS = frozenset(facts.CUTOFF_REASONS)
"""Length cut-offs: model misbehaviour (Unknown by the taxonomy), never sent as failures."""
NOT_BLOCKED = frozenset(facts.NOT_BLOCKED)


def descriptor_from_finish_reason(
    reason: str,
    *,
    provider: str,
    prompt_blocked: bool = False,
    model: str = "",
    language: str = "python",
    attributes: Mapping[str, str] | None = None,
) -> Descriptor | None:
    """The descriptor for a response that ended with `reason`, or None when it is no failure.

    `prompt_blocked` says the prompt itself was refused (Gemini's
    `promptFeedback.blockReason`): every block reason is then a failure but those of
    NOT_BLOCKED. Otherwise only FAILURE_REASONS are; a normal stop and a length cut-off
    (CUTOFF_REASONS) give None. The reason is compared as the API spells it, stripped.
    """
    reason = _name(reason)
    provider = strip(provider).lower()  # in the field and wherever the message names it
    if prompt_blocked:
        if reason in NOT_BLOCKED:
            return None
        kind, template = PROMPT_BLOCKED, facts.PROMPT_BLOCKED_MESSAGE
    elif reason in FAILURE_REASONS:
        kind, template = FINISH_REASON, facts.FINISH_REASON_MESSAGE
    else:
        return None
    attrs = dict(attributes or {})
    if model:
        attrs.setdefault("model", model)
    return fit(
        Descriptor(
            type=kind,
            supertypes=(RESPONSE_FAILURE,),
            origin=Origin.provider,
            code=reason,
            message=template.format(provider=provider, reason=reason),
            language=language,
            provider=provider,
            attributes=attrs,
        )
    )


def descriptor_from_response(response: Any, *, provider: str | None = None) -> Descriptor | None:
    """The descriptor for a response that is a provider-side refusal, or None.

    Reads an openai `ChatCompletion` (or the list of `ChatCompletionChunk`s of a stream) or
    Responses-API `Response`, an anthropic `Message` (or the events of a stream), a
    google-genai `GenerateContentResponse`, a Bedrock Converse dict (or ConverseStream
    events), or the same as parsed JSON; and a langchain `AIMessage`, a pydantic-ai
    `ModelResponse` or run result, an openai-agents `RunResult` or its stream events.
    `provider` defaults to the API the shape belongs to (`openai`, `anthropic`, `gemini`,
    `bedrock`); pass `azure` for Azure OpenAI.
    """
    for found_provider, reason, blocked, model in _reasons(response):
        d = descriptor_from_finish_reason(
            reason, provider=provider or found_provider, prompt_blocked=blocked, model=model
        )
        if d is not None:
            return d
    return None


MAX_DEPTH = 6
"""How far `_reasons` follows wrappers (a run result's response, a stream event's data)."""

PROVIDER_NAMES = {
    # langchain's response_metadata["model_provider"], pydantic-ai's provider_name and
    # canonical_system, mapped to the descriptor's provider names
    "openai": "openai",
    "azure": "azure",
    "azure_openai": "azure",
    "anthropic": "anthropic",
    "google": "gemini",
    "google-gla": "gemini",
    "google-vertex": "gemini",
    "google_genai": "gemini",
    "google_vertexai": "gemini",
    "gemini": "gemini",
    "bedrock": "bedrock",
    "bedrock_converse": "bedrock",
    "amazon_bedrock": "bedrock",
}


def _reasons(response: Any, depth: int = 0) -> Iterable[tuple[str, str, bool, str]]:
    """(provider, reason, prompt_blocked, model) for every reason the response states."""
    if depth > MAX_DEPTH or response is None or isinstance(response, str | bytes):
        return
    if isinstance(response, list | tuple):  # a stream's chunks or events
        for item in response:
            yield from _reasons(item, depth + 1)
        return
    model = _text(_field(response, "model", "modelVersion", "model_version", "model_name"))
    # Gemini: a blocked prompt, then each candidate's finish reason
    feedback = _field(response, "prompt_feedback", "promptFeedback")
    block = _name(_field(feedback, "block_reason", "blockReason"))
    if block:
        yield "gemini", block, True, model
    for candidate in _list(_field(response, "candidates")):
        yield "gemini", _name(_field(candidate, "finish_reason", "finishReason")), False, model
    # OpenAI chat completions (and stream chunks); a refusal in the message
    for choice in _list(_field(response, "choices")):
        yield "openai", _name(_field(choice, "finish_reason")), False, model
        if _text(_field(_field(choice, "message"), "refusal")):
            yield "openai", "refusal", False, model
    # OpenAI Responses API (a Response, or the one a stream event carries): why it stopped,
    # and a refusal among its output messages
    details = _field(response, "incomplete_details")
    if details is not None:
        yield "openai", _name(_field(details, "reason")), False, model
    for item in _list(_field(response, "output")):
        if _field(item, "type") == "message":
            for part in _list(_field(item, "content")):
                if _field(part, "type") == "refusal":
                    yield "openai", "refusal", False, model
    # Anthropic: a Message, or a stream's message_delta event
    yield "anthropic", _name(_field(response, "stop_reason")), False, model
    delta = _field(response, "delta")
    if _field(response, "type") == "message_delta" and delta is not None:
        yield "anthropic", _name(_field(delta, "stop_reason")), False, model
    # Bedrock Converse (and ConverseStream's messageStop event)
    yield "bedrock", _name(_field(response, "stopReason")), False, model
    stop = _field(response, "messageStop")
    if stop is not None:
        yield "bedrock", _name(_field(stop, "stopReason")), False, model
    yield from _framework_reasons(response, depth, model)


def _framework_reasons(
    response: Any, depth: int, model: str
) -> Iterable[tuple[str, str, bool, str]]:
    """What agent frameworks return: langchain's messages, pydantic-ai's and openai-agents' results.

    - langchain `AIMessage` / `AIMessageChunk` (or a stream's chunks added up):
      `response_metadata` holds the provider's `finish_reason` (OpenAI, Gemini),
      `stop_reason` (Anthropic) or `stopReason` (Bedrock), and `model_provider`.
    - pydantic-ai `ModelResponse`: `provider_details["finish_reason"]` (the API's own
      spelling) and `finish_reason` (pydantic-ai's: `content_filter` for any provider's
      filter); `canonical_system` or `provider_name`. An `AgentRunResult` or
      `StreamedRunResult` holds it as `response`.
    - openai-agents `RunResult` / `RunResultStreaming`: `raw_responses`, each a
      `ModelResponse` whose `output` items are read as the Responses API's; a stream's
      `RawResponsesStreamEvent` holds a Responses API event as `data`, and that event
      (response.completed, response.incomplete) its `response`.
    """
    metadata = _field(response, "response_metadata")
    if isinstance(metadata, Mapping):
        provider = _provider(metadata.get("model_provider")) or "openai"
        meta_model = _text(metadata.get("model_name")) or _text(metadata.get("model")) or model
        yield provider, _name(metadata.get("finish_reason")), False, meta_model
        yield from _reasons(metadata, depth + 1)
    finish = _field(response, "finish_reason")
    details = _field(response, "provider_details")
    if finish is not None and (details is not None or _field(response, "parts") is not None):
        provider = (
            _provider(_field(response, "canonical_system"))
            or _provider(_field(response, "provider_name"))
            or "openai"
        )
        if isinstance(details, Mapping):
            yield provider, _name(details.get("finish_reason")), False, model
        yield provider, _name(finish), False, model
    for raw in _list(_field(response, "raw_responses")):
        yield from _reasons(raw, depth + 1)
    if _field(response, "type") == "raw_response_event":
        yield from _reasons(_field(response, "data"), depth + 1)
    inner = _field(response, "response")
    if inner is not None and inner is not response:
        yield from _reasons(inner, depth + 1)


def _provider(value: Any) -> str:
    """A framework's provider name as the descriptor's (`google-gla` is `gemini`), or ''."""
    name = _text(value).lower()
    return PROVIDER_NAMES.get(name, name)


def _field(obj: Any, *names: str) -> Any:
    """The first of the names present, as an attribute or a mapping key; None otherwise."""
    if obj is None:
        return None
    for name in names:
        try:
            value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
        except Exception:
            value = None
        if value is not None:
            return value
    return None


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _name(value: Any) -> str:
    """A reason as the API spells it: an enum's value (google-genai's are str enums), or text."""
    inner = getattr(value, "value", value)
    return strip(inner) if isinstance(inner, str) else ""


def _text(value: Any) -> str:
    return strip(value) if isinstance(value, str) else ""
