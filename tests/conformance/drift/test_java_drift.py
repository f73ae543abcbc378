"""The drift check on the pinned Java SDKs (tests/conformance/java ErrorClasses.java)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance.drift.entries import Allowed, Entry, check, read_allowlist, read_rules
from tests.conformance.drift.java import java_entries
from tests.conformance.drift.run import ALLOWLIST, RULES, run_check
from tests.conformance.java_drivers import java_available


@pytest.fixture(scope="module")
def entries_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not java_available():
        pytest.skip("java and mvn are not on PATH: the Java drift check needs JDK 17 and Maven")
    path = tmp_path_factory.mktemp("drift") / "java-entries.json"
    java_entries(path)
    return path


def test_the_pinned_java_sdks_have_a_rule_or_a_reason(entries_file: Path) -> None:
    """Every public Throwable class of the pinned Java SDKs is decided by a rule or listed."""
    report = run_check([entries_file])
    assert report.ok, report.text()


def test_the_java_entries_are_what_the_helper_sends(entries_file: Path) -> None:
    """Entries carry the class name and superclass chain, each SDK's status classes among them."""
    entries = {
        (e.sdk, e.type): e for e in map(Entry.from_data, json.loads(entries_file.read_text()))
    }
    rate = entries[("openai-java", "com.openai.errors.RateLimitException")]
    assert rate.supertypes == (
        "com.openai.errors.OpenAIServiceException",
        "com.openai.errors.OpenAIException",
        "java.lang.RuntimeException",
        "java.lang.Exception",
        "java.lang.Throwable",
    )
    assert rate.language == "java"
    assert ("anthropic-java", "com.anthropic.models.ContractSpendLimitReachedException") in entries
    assert (
        "aws-sdk-java-v2",
        "software.amazon.awssdk.services.bedrockruntime.model.ThrottlingException",
    ) in entries
    assert ("langchain4j", "dev.langchain4j.exception.RateLimitException") in entries
    assert (
        "resilience4j",
        "io.github.resilience4j.circuitbreaker.CallNotPermittedException",
    ) in entries
    assert {e.sdk for e in entries.values()} == {
        "openai-java",
        "anthropic-java",
        "langchain4j",
        "spring-ai",
        "aws-sdk-java-v2",
        "okhttp",
        "resilience4j",
    }


def test_a_new_java_class_without_a_rule_fails(entries_file: Path, tmp_path: Path) -> None:
    """A class a pin bump adds (a made-up one under an SDK's root) fails until decided or listed."""
    data = json.loads(entries_file.read_text())
    data.append(
        {
            "sdk": "openai-java",
            "language": "java",
            "type": "com.openai.errors.BrandNewException",
            "supertypes": ["com.openai.errors.OpenAIException", "java.lang.RuntimeException"],
        }
    )
    path = tmp_path / "bumped.json"
    path.write_text(json.dumps(data))
    report = run_check([path])
    assert [e.type for e in report.undecided] == ["com.openai.errors.BrandNewException"]
    assert "undecided: java openai-java: com.openai.errors.BrandNewException" in report.text()


def test_a_java_allow_list_entry_a_rule_now_decides_is_stale(entries_file: Path) -> None:
    """A listed Java class that a rule decides is reported stale, so the list stays true."""
    entries = [Entry.from_data(raw) for raw in json.loads(entries_file.read_text())]
    decided = next(e for e in entries if e.type == "com.openai.errors.RateLimitException")
    report = check(
        entries,
        read_rules(RULES),
        [*read_allowlist(ALLOWLIST), Allowed(decided.type, "java", "a test")],
    )
    assert [a.name for a in report.stale] == ["com.openai.errors.RateLimitException"]


def test_a_rule_on_runtime_exception_decides_no_java_class() -> None:
    """java.lang.RuntimeException and the other JDK roots are roots: a rule on them (the
    fallback for provider I/O wrapped in a bare RuntimeException) decides no SDK class."""
    entry = Entry("x", "java", "com.example.Error", ("java.lang.RuntimeException",))
    assert not [r for r in read_rules(RULES) if r.types and entry.type in r.types]
    assert check([entry], read_rules(RULES), []).undecided == (entry,)
