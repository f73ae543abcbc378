"""Retry advice that cannot be wrong: the compiler refuses a retryable answer the taxonomy or
the catalog says a retry cannot fix, and a retryable answer says how long to wait, capped."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest

from classifier import RulesetError, build_descriptor, classify, classify_unindexed, load_ruleset
from classifier.answer import Classification, RetryAfter, classification_dict
from classifier.engine.explain import explain, render_classification
from classifier.engine.ruleset import Ruleset
from classifier.taxonomy import RETRY, ErrorClass, Origin, Retry
from tests.support import BUNDLED_RULES, MakeRuleset

H = "http.response.header."
NOW = dt.datetime(2025, 6, 1, 12, 0, 0, tzinfo=dt.UTC)


def _refused(root: Path) -> list[str]:
    """Each diagnostic as `file:line:col: code: message`, the ruleset folder's name stripped."""
    with pytest.raises(RulesetError) as caught:
        load_ruleset(root)
    return [d.render().replace(f"{root}/", "") for d in caught.value.diagnostics]


def _answer(root: Path, **attributes: str) -> tuple[Ruleset, Classification]:
    ruleset = load_ruleset(root)
    d = build_descriptor(
        type="x.ProviderError", origin=Origin.provider, http_status=429, attributes=attributes
    )
    return ruleset, classify(ruleset, d, now=lambda: NOW)


# refusals ------------------------------------------------------------------------------------


def test_a_retryable_billing_rule_is_refused_where_it_says_so(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        """
        rules:
          - id: billing
            when: {origin: provider, code: insufficient_quota}
            class: RateLimited
            action: provider.fix-billing
            retryable: true
        """
    )
    assert _refused(root) == [
        "rules.yaml:7:16: retry_cannot_help: the rule marks retryable what a retry cannot fix: "
        "action provider.fix-billing says a retry cannot help (`retry: never`); remove "
        "`retryable: true` (its answer is then not retryable), or name an action a retry can "
        'help (rule "billing")'
    ]


@pytest.mark.parametrize("error_class", [c for c in ErrorClass if RETRY[c] is Retry.never][1:])
def test_a_class_a_retry_cannot_help_is_never_retryable(
    make_ruleset: MakeRuleset, error_class: ErrorClass
) -> None:
    """ContentFiltered, CompilationFailed, BudgetExceeded, Canceled, ContentBlocked."""
    root = make_ruleset(
        f"""
        rules:
          - id: r
            when: {{code: X}}
            class: {error_class.name}
            retryable: true
        """
    )
    (line,) = _refused(root)
    assert line.startswith("rules.yaml:6:16: retry_cannot_help: ")
    assert f"a retry cannot help a {error_class.name} (" in line


def test_a_rule_naming_a_never_action_inherits_no_retry(make_ruleset: MakeRuleset) -> None:
    """RateLimited's default is retryable; a rule that names fix-billing and says nothing about
    retrying is not (and `retryable: false` is accepted, as the library writes it)."""
    root = make_ruleset(
        """
        rules:
          - id: billing
            when: {origin: provider, code: insufficient_quota}
            class: RateLimited
            action: provider.fix-billing
          - id: said-so
            when: {origin: provider, code: billing_hard_limit_reached}
            class: RateLimited
            action: provider.fix-billing
            retryable: false
          - id: backoff
            when: {origin: provider, http_status: 429}
            class: RateLimited
        """
    )
    ruleset = load_ruleset(root)
    retryable = {r.id: r.outcome.retryable for r in ruleset.rules}
    assert retryable == {"billing": False, "said-so": False, "backoff": True}


def test_a_class_default_a_retry_cannot_help_is_refused(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset({})
    catalog = root / "actions.yaml"
    text = catalog.read_text()
    old = "ContentFiltered:     {action: provider.review-content-filter, effect: fail, retryable: false}"
    assert old in text
    catalog.write_text(text.replace(old, old.replace("retryable: false", "retryable: true")))
    (line,) = _refused(root)
    assert line.startswith("actions.yaml:")
    assert (
        "retry_cannot_help: class ContentFiltered's default is retryable, but a retry cannot "
        in line
    )


def test_a_class_default_whose_action_says_never_is_refused(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset({})
    catalog = root / "actions.yaml"
    text = catalog.read_text()
    old = "RateLimited:         {action: provider.backoff,"
    catalog.write_text(text.replace(old, "RateLimited:         {action: provider.fix-billing,"))
    (line,) = _refused(root)
    assert "retry_cannot_help: class RateLimited's default is retryable, but action " in line
    assert "provider.fix-billing says a retry cannot help" in line


def test_a_layer_cannot_make_a_never_action_retryable(make_ruleset: MakeRuleset) -> None:
    """A layer may reword a base action or point at its own runbook (its `retry` is the
    base's unless it says one), not loosen `never`."""
    loosened = "actions:\n  - {id: provider.fix-billing, summary: Call finance., retry: may}\n"
    root = make_ruleset(
        {"actions.yaml": loosened},
        manifest="name: team\nversion: '1'\nbase: [{library: default}]\n",
    )
    (line,) = _refused(root)
    assert line.startswith(
        "actions.yaml:2:63: retry_cannot_help: action 'provider.fix-billing' is "
    )
    (root / "actions.yaml").write_text(loosened.replace(", retry: may", ""))
    reworded = load_ruleset(root)
    assert reworded.actions["provider.fix-billing"].summary == "Call finance."
    assert reworded.action_retry["provider.fix-billing"] is Retry.never


def test_the_bundled_library_never_advises_a_retry_that_cannot_help() -> None:
    """Every rule and class default: retryable only where its class and its action allow."""
    ruleset = load_ruleset(BUNDLED_RULES)
    outcomes = [r.outcome for r in ruleset.rules] + list(ruleset.defaults.values())
    wrong = [
        (o.error_class.name, o.action.id)
        for o in outcomes
        if o.retryable
        and (
            RETRY[o.error_class] is Retry.never or ruleset.action_retry[o.action.id] is Retry.never
        )
    ]
    assert wrong == []
    billing = [r for r in ruleset.rules if r.outcome.action.id == "provider.fix-billing"]
    assert billing
    assert all(not r.outcome.retryable for r in billing)
    assert {r.outcome.error_class for r in billing} == {
        ErrorClass.RateLimited,
        ErrorClass.ProviderError,
    }


# caps ----------------------------------------------------------------------------------------


RETRYABLE = """
rules:
  - id: rate
    when: {origin: provider, http_status: 429}
    class: RateLimited
  - id: capped
    when: {origin: provider, http_status: 429, code: slow_down}
    class: RateLimited
    retry_after_cap: 10s
  - id: billing
    when: {origin: provider, http_status: 429, code: insufficient_quota}
    class: RateLimited
    action: provider.fix-billing
"""


def test_a_retryable_answer_says_how_long_the_provider_asked(make_ruleset: MakeRuleset) -> None:
    _, answer = _answer(make_ruleset(RETRYABLE), **{H + "retry-after": "20"})
    assert answer.retry_after == RetryAfter(dt.timedelta(seconds=20), H + "retry-after")


def test_the_ruleset_cap_defaults_to_60_seconds(make_ruleset: MakeRuleset) -> None:
    ruleset, answer = _answer(make_ruleset(RETRYABLE), **{H + "x-ratelimit-reset-tokens": "6m0s"})
    assert ruleset.retry_after_cap == dt.timedelta(seconds=60)
    assert answer.retry_after == RetryAfter(
        dt.timedelta(seconds=60), H + "x-ratelimit-reset-tokens", capped=True
    )


@pytest.mark.parametrize(("written", "expected"), [("90s", 90), ("2m", 120), (45, 45), (1.5, 1.5)])
def test_the_manifest_sets_the_rulesets_cap(
    make_ruleset: MakeRuleset, written: object, expected: float
) -> None:
    root = make_ruleset(RETRYABLE, manifest=f"name: t\nversion: '1'\nretry_after_cap: {written}\n")
    ruleset, answer = _answer(root, **{H + "retry-after": "600"})
    assert ruleset.retry_after_cap == dt.timedelta(seconds=expected)
    assert answer.retry_after is not None
    assert answer.retry_after.seconds == expected


def test_a_rules_own_cap_replaces_the_rulesets(make_ruleset: MakeRuleset) -> None:
    ruleset = load_ruleset(make_ruleset(RETRYABLE))
    d = build_descriptor(
        type="x.E",
        origin=Origin.provider,
        http_status=429,
        code="slow_down",
        attributes={H + "retry-after": "20"},
    )
    answer = classify(ruleset, d)
    assert answer.rule_id == "capped"
    assert answer.retry_after == RetryAfter(dt.timedelta(seconds=10), H + "retry-after", True)
    assert ruleset.caps == {"rate": dt.timedelta(seconds=60), "capped": dt.timedelta(seconds=10)}


def test_a_base_layers_cap_holds_unless_the_top_layer_sets_one(
    make_ruleset: MakeRuleset, tmp_path: Path
) -> None:
    base = make_ruleset(RETRYABLE, manifest="name: base\nversion: '1'\nretry_after_cap: 30s\n")
    top = make_ruleset(
        {}, manifest=f"name: top\nversion: '1'\nbase: [{{path: {base}}}]\n", name="top"
    )
    assert load_ruleset(top).retry_after_cap == dt.timedelta(seconds=30)
    (top / "ruleset.yaml").write_text(
        f"name: top\nversion: '1'\nbase: [{{path: {base}}}]\nretry_after_cap: 5s\n"
    )
    assert load_ruleset(top).retry_after_cap == dt.timedelta(seconds=5)


@pytest.mark.parametrize(
    ("written", "why"),
    [
        ("soon", "'soon' is not a duration"),
        ("0", "a cap of 0 is out of range"),
        ("-5", "a cap of -5 is out of range"),
        ("25h", "a cap of '25h' is out of range"),
        ("true", "not true"),
    ],
)
def test_a_bad_cap_is_refused_where_it_is_written(
    make_ruleset: MakeRuleset, written: str, why: str
) -> None:
    root = make_ruleset(RETRYABLE.replace("retry_after_cap: 10s", f"retry_after_cap: {written}"))
    (line,) = _refused(root)
    assert line.startswith("rules.yaml:9:22: invalid_value: ")
    assert why in line


# when no wait is advised ---------------------------------------------------------------------


def test_no_wait_for_an_answer_that_is_not_retryable(make_ruleset: MakeRuleset) -> None:
    """A billing 429 sent with Retry-After is still not worth retrying."""
    ruleset = load_ruleset(make_ruleset(RETRYABLE))
    d = build_descriptor(
        type="x.E",
        origin=Origin.provider,
        http_status=429,
        code="insufficient_quota",
        attributes={H + "retry-after": "20"},
    )
    answer = classify(ruleset, d)
    assert (answer.rule_id, answer.retryable, answer.retry_after) == ("billing", False, None)


def test_without_evidence_the_answer_is_the_rules_own(make_ruleset: MakeRuleset) -> None:
    """No copy is made: the server's prebuilt responses are keyed by the answer itself."""
    ruleset = load_ruleset(make_ruleset(RETRYABLE))
    d = build_descriptor(type="x.E", origin=Origin.provider, http_status=429)
    answer = classify(ruleset, d)
    assert answer is ruleset.answers[ruleset.rule("rate")]  # type: ignore[index]
    assert answer.retry_after is None


def test_unknown_is_never_advised_a_wait() -> None:
    ruleset = load_ruleset(BUNDLED_RULES)
    d = build_descriptor(type="x.Nothing", attributes={H + "retry-after": "5"})
    answer = classify(ruleset, d)
    assert (answer.error_class, answer.retry_after) == (ErrorClass.Unknown, None)


# where the wait shows ------------------------------------------------------------------------


def test_the_oracle_explain_and_plain_data_agree(make_ruleset: MakeRuleset) -> None:
    ruleset = load_ruleset(make_ruleset(RETRYABLE))
    d = build_descriptor(
        type="x.E", origin=Origin.provider, http_status=429, attributes={H + "retry-after": "20"}
    )
    answer = classify(ruleset, d)
    assert classify_unindexed(ruleset, d) == answer
    explained = explain(ruleset, d)
    assert dataclasses.replace(explained, explanation=None) == answer
    assert "retryable: yes, retry after 20 s (from http.response.header.retry-after)" in (
        render_classification(explained)
    )
    assert classification_dict(answer)["retry_after"] == {
        "seconds": 20.0,
        "source": H + "retry-after",
        "capped": False,
    }
    assert "retry_after" not in classification_dict(dataclasses.replace(answer, retry_after=None))
