"""Where the server's package meets its client: `import classifier.client` keeps working for
code written before the client had its own distribution, `classifier.classify` takes the
client's descriptor, and the in-process fallback answers as the client does."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import classifier
import classifier.client
import errorclass_client
from classifier import Ruleset, build_descriptor
from classifier.client.convert import answer_of, classification_of
from classifier.client.local import LocalFallback
from classifier.errors import DescriptorError as ServerDescriptorError

BEFORE = [
    "DEFAULT_ATTEMPTS",
    "DEFAULT_TIMEOUT",
    "TLS",
    "Answer",
    "CauseFields",
    "CauseInput",
    "ClassInfo",
    "Client",
    "Descriptor",
    "DescriptorError",
    "DescriptorFields",
    "Effect",
    "ErrorClass",
    "FieldViolation",
    "Origin",
    "ReloadInfo",
    "ReloadResult",
    "RulesetInfo",
    "RulesetLayer",
    "ServiceError",
    "UnknownReason",
    "describe_tool_failure",
    "descriptor_from_exception",
    "descriptor_from_finish_reason",
    "descriptor_from_response",
    "descriptor_from_span",
    "descriptor_from_span_event",
    "runtime_attributes",
]
"""What `classifier.client` exported before the client moved to clients/python."""


def test_every_name_it_had_is_still_there_and_is_the_clients() -> None:
    assert set(BEFORE) <= set(classifier.client.__all__)
    assert "Unclassified" in classifier.client.__all__
    for name in classifier.client.__all__:
        assert getattr(classifier.client, name) is getattr(errorclass_client, name), name


DATA: dict[str, Any] = {
    "type": "System.Threading.Tasks.TaskCanceledException",
    "supertypes": ["System.OperationCanceledException", "System.Exception"],
    "origin": "caller",
    "causes": [{"type": "System.TimeoutException"}],
    "language": " DotNet ",
}


def test_classify_and_explain_take_the_clients_descriptor(bundled: Ruleset) -> None:
    """The public entry points validate a client descriptor as the service does, and answer
    as for the server's own descriptor."""
    theirs = errorclass_client.Descriptor(**DATA)
    ours = build_descriptor(
        type=str(DATA["type"]),
        supertypes=DATA["supertypes"],
        origin=classifier.Origin.user,
        causes=[classifier.CauseInput("System.TimeoutException")],
        language="dotnet",
    )
    assert classifier.classify(bundled, theirs) == classifier.classify(bundled, ours)
    assert classifier.explain(bundled, theirs) == classifier.explain(bundled, ours)
    with pytest.raises(ServerDescriptorError) as err:
        classifier.classify(bundled, errorclass_client.Descriptor(type=" ", http_status=42))
    assert [v.field for v in err.value.violations] == [
        "descriptor.type",
        "descriptor.http_status",
    ]
    with pytest.raises(ServerDescriptorError) as err:
        classifier.classify(bundled, {"type": "x"})  # a mapping is the client's to read
    assert [v.field for v in err.value.violations] == ["descriptor"]


def test_the_fallback_classifies_the_clients_descriptor_in_process(bundled: Ruleset) -> None:
    fallback = LocalFallback(bundled)
    answer = fallback.classify(errorclass_client.Descriptor(**DATA))
    local = classifier.classify(bundled, errorclass_client.Descriptor(**DATA))
    assert answer.local
    assert answer.error_class is errorclass_client.ErrorClass(int(local.error_class))
    assert (answer.rule_id, answer.ruleset_digest) == (local.rule_id, bundled.digest)
    assert fallback.answered == 1


def test_an_answer_crosses_both_ways_unchanged(bundled: Ruleset) -> None:
    """The engine's explained Classification, as the client's Answer and back."""
    explained = classifier.explain(bundled, errorclass_client.Descriptor(**DATA))
    assert explained.explanation is not None
    answer = answer_of(explained)
    assert answer.explanation is not None
    assert dataclasses.asdict(answer.explanation) == dataclasses.asdict(explained.explanation)
    assert classification_of(answer) == explained


def test_the_wait_crosses_both_ways_unchanged(bundled: Ruleset) -> None:
    """A retryable answer's wait (capped, so its source carries the label) as the client's
    Answer, the fallback's included, and back."""
    waited = classifier.classify(
        bundled,
        errorclass_client.Descriptor(
            type="openai.RateLimitError",
            supertypes=["openai.APIStatusError", "openai.APIError", "Exception"],
            http_status=429,
            origin=errorclass_client.Origin.provider,
            provider="openai",
            attributes={"http.response.header.retry-after": "600"},
        ),
    )
    assert waited.retry_after is not None
    assert waited.retry_after.capped
    answer = answer_of(waited, local=True)
    assert answer.retry_after == waited.retry_after.delay
    assert answer.retry_after_source == "http.response.header.retry-after (capped)"
    assert classification_of(answer) == waited
