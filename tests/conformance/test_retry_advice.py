"""The judges' reading of the wait on the wire: what the server advises, with its source."""

from __future__ import annotations

import pytest

from errorclass_client import Client, Descriptor, DescriptorError
from tests.conformance import retry_advice

HEADER = "http.response.header."


def test_a_retryable_answer_carries_the_providers_wait(classifier_client: Client) -> None:
    d = Descriptor(
        type="openai.RateLimitError",
        http_status=429,
        origin="provider",
        provider="openai",
        attributes={HEADER + "retry-after-ms": "1500", HEADER + "retry-after": "2"},
    )
    advice = retry_advice.classify(classifier_client, d)
    assert advice.answer.class_name == "RateLimited"
    assert advice.retry_after == 1.5
    assert advice.source == HEADER + "retry-after-ms"


def test_the_cap_cuts_the_wait_and_says_so(classifier_client: Client) -> None:
    d = Descriptor(
        type="openai.RateLimitError",
        http_status=429,
        origin="provider",
        provider="openai",
        attributes={HEADER + "retry-after": "120"},
    )
    advice = retry_advice.classify(classifier_client, d)
    assert advice.retry_after == 60.0
    assert advice.source.endswith("(capped)")


def test_no_evidence_no_wait(classifier_client: Client) -> None:
    d = Descriptor(type="openai.RateLimitError", http_status=429, origin="provider")
    advice = retry_advice.classify(classifier_client, d)
    assert (advice.answer.class_name, advice.retry_after, advice.source) == (
        "RateLimited",
        None,
        "",
    )


def test_a_descriptor_the_client_refuses_is_refused(classifier_client: Client) -> None:
    with pytest.raises(DescriptorError):
        retry_advice.classify(classifier_client, Descriptor(type=""))
