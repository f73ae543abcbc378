"""The redactor: each built-in mask, the installation's own, and what is recorded."""

from __future__ import annotations

import pytest

from benchmarks.attacks import SECRETS
from classifier.redact import BUILT_IN, DEFAULT, RedactionError, Redactor


@pytest.mark.parametrize(
    ("text", "mask"),
    [
        (f"key {SECRETS['openai']} leaked", "openai_key"),
        ("sk-abcdefghijklmnopqrstuvwxyz012345", "openai_key"),
        (SECRETS["anthropic"], "anthropic_key"),
        (SECRETS["aws"], "aws_access_key"),
        (SECRETS["aws_session"], "aws_access_key"),
        (SECRETS["google"], "google_api_key"),
        (SECRETS["github"], "github_token"),
        (SECRETS["github_pat"], "github_token"),
        (f"Bearer {SECRETS['bearer']}", "bearer"),
        (f"Basic {SECRETS['basic']}", "bearer"),
        ("x-api-key: abcdefgh12345678", "authorization"),
        (f"write to {SECRETS['email']}", "email"),
        (SECRETS["hex"], "hex_secret"),
        ("token dGhpcyBpcyBhIHNlY3JldCB0b2tlbiB2YWx1ZSAxMjM0NTY3OA==", "bearer"),
        ("blob dGhpcyBpcyBhIHNlY3JldCB0b2tlbiB2YWx1ZSAxMjM0NTY3OA==", "long_secret"),
    ],
)
def test_each_built_in_mask(text: str, mask: str) -> None:
    counts: dict[str, int] = {}
    masked = Redactor().text(text, counts)
    assert f"[REDACTED:{mask}]" in masked
    assert mask in counts


@pytest.mark.parametrize(
    "text",
    [
        "openai.RateLimitError: Rate limit reached for gpt-4o in organization org-abc",
        "org.springframework.beans.factory.AbstractSingletonProxyFactoryBeanImplementation",
        "HTTP 429 Too Many Requests",
        "deadline exceeded after 30s",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert Redactor().text(text) == text


def test_installation_patterns_and_the_record() -> None:
    redactor = Redactor.from_specs(["customer=cust_[0-9]{6}", "TKT-[0-9]+"])
    data, masked = redactor.descriptor(
        {
            "type": "x.Y",
            "message": "customer cust_123456 asked",
            "attributes": {"ticket": "TKT-42", "plain": "fine"},
            "causes": [{"type": "c", "message": f"mail {SECRETS['email']}"}],
        }
    )
    assert data["message"] == "customer [REDACTED:customer] asked"
    assert data["attributes"] == {"ticket": "[REDACTED:custom_2]", "plain": "fine"}
    assert data["causes"][0]["message"] == "mail [REDACTED:email]"
    assert masked.as_dict() == {
        "fields": [
            "descriptor.message",
            "descriptor.attributes.ticket",
            "descriptor.causes[0].message",
        ],
        "masks": {"customer": 1, "custom_2": 1, "email": 1},
    }


def test_a_bad_pattern_is_refused_with_its_name() -> None:
    with pytest.raises(RedactionError, match="redaction pattern mine: not valid RE2"):
        Redactor.from_specs(["mine=(unclosed"])


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", "eyJhbGciOiJIUzI1NiJ9"),
        (
            "Incorrect API key provided: sk-proj-abcdefghijklmnop1234",
            "sk-proj-abcdefghijklmnop1234",
        ),
        ("aws AKIAIOSFODNN7EXAMPLE denied", "AKIAIOSFODNN7EXAMPLE"),
        (
            "key AIzaSyA1234567890abcdefghijklmnopqrstuv used",
            "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        ),
        ("user alice@example.com not found", "alice@example.com"),
        ("password=hunter22 rejected", "hunter22"),
        ("slack xoxb-1234567890-abcdefghij said no", "xoxb-1234567890-abcdefghij"),
    ],
)
def test_secrets_the_unknowns_sample_masked_are_still_masked(text: str, secret: str) -> None:
    """The live sample's own redactor was merged into this one: what it masked still is."""
    out = DEFAULT.text(text)
    assert secret not in out
    assert "[REDACTED:" in out


def test_redaction_keeps_the_rest() -> None:
    assert DEFAULT.text("Worker exited prematurely: signal 15 (SIGTERM) Job: 7.") == (
        "Worker exited prematurely: signal 15 (SIGTERM) Job: 7."
    )


@pytest.mark.parametrize(
    "extra", [(), (("ticket", r"(?i)^tkt-[0-9]+$"), ("cust", r"\bcust_\d{6}"))]
)
def test_one_search_for_any_mask_finds_what_each_mask_finds(
    extra: tuple[tuple[str, str], ...],
) -> None:
    """The search for any mask, which lets clean text through at once, never lets through
    text one of the masks alone would mask (flags and anchors stay each pattern's own): the
    reference applies one single-mask redactor after another, in the masks' order."""
    texts = [
        *SECRETS.values(),
        *(f"{w} {s} tail" for w in ("Bearer", "token", "password=", "x") for s in SECRETS.values()),
        "TKT-42",
        "tkt-7",
        "see TKT-42",
        "cust_123456 and cust_1234",
        "PASSWORD: hunter2",
        "AbstractSingletonProxyFactoryBeanImplementationAbstractSingleton",
        "HTTP 429 Too Many Requests",
        "",
    ]
    united = Redactor(extra)
    each = [Redactor([spec], built_in=False) for spec in (*BUILT_IN, *extra)]
    for text in texts:
        got: dict[str, int] = {}
        want: dict[str, int] = {}
        expected = text
        for one in each:
            expected = one.text(expected, want)
        assert united.text(text, got) == expected, text
        assert got == want, text
    if extra:
        assert united.text("TKT-42") == "[REDACTED:ticket]"
        assert united.text("see TKT-42") == "see TKT-42"
