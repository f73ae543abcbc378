"""descriptor_from_response on what agent frameworks return: langchain messages, pydantic-ai's
ModelResponse and run results, openai-agents' run results and stream events (real objects)."""

from __future__ import annotations

import operator
from datetime import UTC, datetime
from functools import reduce
from types import SimpleNamespace

from agents.items import ModelResponse as AgentsModelResponse
from agents.stream_events import RawResponsesStreamEvent
from agents.usage import Usage
from langchain_core.messages import AIMessage, AIMessageChunk
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
)
from pydantic_ai.messages import ModelResponse, TextPart

from classifier import Ruleset, classify
from errorclass_client import descriptor_from_response


def test_langchain_message_response_metadata(bundled: Ruleset) -> None:
    """AIMessage.response_metadata: OpenAI's finish_reason, Anthropic's stop_reason, the model."""
    openai_message = AIMessage(
        content="",
        response_metadata={
            "finish_reason": "content_filter",
            "model_name": "gpt-4o-mini-2024-07-18",
            "model_provider": "openai",
        },
    )
    d = descriptor_from_response(openai_message)
    assert d is not None
    assert (d.type, d.provider, d.code, d.attributes["model"]) == (
        "errorclass.FinishReason",
        "openai",
        "content_filter",
        "gpt-4o-mini-2024-07-18",
    )
    assert classify(bundled, d).error_class.name == "ContentFiltered"
    anthropic_message = AIMessage(
        content=[],
        response_metadata={"stop_reason": "refusal", "model_provider": "anthropic"},
    )
    refusal = descriptor_from_response(anthropic_message)
    assert refusal is not None
    assert (refusal.provider, refusal.code) == ("anthropic", "refusal")
    gemini_message = AIMessage(
        content="", response_metadata={"finish_reason": "SAFETY", "model_provider": "google_genai"}
    )
    gemini = descriptor_from_response(gemini_message)
    assert gemini is not None
    assert (gemini.provider, gemini.code) == ("gemini", "SAFETY")
    for ordinary in ("stop", "length"):
        normal = AIMessage(content="Hi", response_metadata={"finish_reason": ordinary})
        assert descriptor_from_response(normal) is None


def test_langchain_stream_chunks_added_up() -> None:
    """A stream's chunks added up keep the last chunk's finish reason (and a list works too)."""
    chunks = [
        AIMessageChunk(content="Once", response_metadata={"model_provider": "openai"}),
        AIMessageChunk(content="", response_metadata={"finish_reason": "content_filter"}),
        AIMessageChunk(content="", response_metadata={}),
    ]
    whole = reduce(operator.add, chunks)
    for response in (whole, chunks):
        d = descriptor_from_response(response, provider="azure")
        assert d is not None
        assert (d.provider, d.code) == ("azure", "content_filter")


def model_response(finish_reason: str | None, raw: str | None, **kw: object) -> ModelResponse:
    details = {"finish_reason": raw} if raw is not None else None
    return ModelResponse(
        parts=[TextPart(content="The")],
        finish_reason=finish_reason,  # type: ignore[arg-type]
        provider_details=details,
        timestamp=datetime(2025, 12, 1, tzinfo=UTC),
        **kw,  # type: ignore[arg-type]
    )


def test_pydantic_ai_model_response_and_run_results(bundled: Ruleset) -> None:
    """ModelResponse: the API's own reason (provider_details) first, then pydantic-ai's."""
    anthropic = model_response(
        "content_filter", "refusal", provider_name="anthropic", model_name="claude-sonnet-5-5"
    )
    d = descriptor_from_response(anthropic)
    assert d is not None
    assert (d.provider, d.code, d.attributes["model"]) == (
        "anthropic",
        "refusal",
        "claude-sonnet-5-5",
    )
    assert classify(bundled, d).error_class.name == "ContentFiltered"
    azure = model_response(
        "content_filter", "content_filter", provider_name="openai", canonical_system="azure"
    )
    az = descriptor_from_response(azure)
    assert az is not None
    assert (az.provider, az.code) == ("azure", "content_filter")
    # no raw reason: pydantic-ai's own content_filter still says it
    normalized = descriptor_from_response(model_response("content_filter", None))
    assert normalized is not None
    assert normalized.code == "content_filter"
    gemini = descriptor_from_response(
        model_response("content_filter", "SAFETY", provider_name="google-gla")
    )
    assert gemini is not None
    assert (gemini.provider, gemini.code) == ("gemini", "SAFETY")
    assert descriptor_from_response(model_response("stop", "end_turn")) is None
    assert descriptor_from_response(model_response("length", "max_tokens")) is None
    # AgentRunResult and StreamedRunResult hold the last ModelResponse as `response`
    run_result = SimpleNamespace(output="The", response=anthropic)
    wrapped = descriptor_from_response(run_result)
    assert wrapped is not None
    assert wrapped.code == "refusal"


def refusal_message() -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg_1",
        content=[ResponseOutputRefusal(refusal="I can't help with that.", type="refusal")],
        role="assistant",
        status="completed",
        type="message",
    )


def responses_api_response(**kw: object) -> Response:
    return Response.model_validate(
        {
            "id": "resp_1",
            "created_at": 1764547200,
            "model": "gpt-4o-mini",
            "object": "response",
            "output": [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            **kw,
        }
    )


def test_openai_agents_run_results_and_stream_events(bundled: Ruleset) -> None:
    """RunResult.raw_responses (a refusal part), a stream's raw response event, a normal run."""
    refused = AgentsModelResponse(output=[refusal_message()], usage=Usage(), response_id=None)
    d = descriptor_from_response(SimpleNamespace(raw_responses=[refused], final_output=None))
    assert d is not None
    assert (d.provider, d.code) == ("openai", "refusal")
    assert classify(bundled, d).error_class.name == "ContentFiltered"
    said = ResponseOutputMessage(
        id="msg_2",
        content=[ResponseOutputText(annotations=[], text="Hello", type="output_text")],
        role="assistant",
        status="completed",
        type="message",
    )
    normal = AgentsModelResponse(output=[said], usage=Usage(), response_id=None)
    assert descriptor_from_response(SimpleNamespace(raw_responses=[normal])) is None
    incomplete = responses_api_response(
        status="incomplete", incomplete_details={"reason": "content_filter"}
    )
    event = RawResponsesStreamEvent(
        data=ResponseCompletedEvent(
            response=incomplete, sequence_number=3, type="response.completed"
        )
    )
    streamed = descriptor_from_response([event])
    assert streamed is not None
    assert (streamed.provider, streamed.code) == ("openai", "content_filter")


def test_chat_completion_message_refusal() -> None:
    """A chat completion whose message carries a refusal (finish_reason stop) is a refusal."""
    completion = {
        "model": "gpt-4o-mini",
        "choices": [
            {"finish_reason": "stop", "message": {"role": "assistant", "refusal": "I can't."}}
        ],
    }
    d = descriptor_from_response(completion)
    assert d is not None
    assert d.code == "refusal"
    completion["choices"][0]["message"]["refusal"] = None  # type: ignore[index]
    assert descriptor_from_response(completion) is None
