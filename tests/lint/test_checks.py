"""Lint: each warning found where it should be, not where it should not, and every witness real."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from classifier import (
    Descriptor,
    Diagnostic,
    RulesetError,
    UnknownReason,
    classify,
    descriptor_from_data,
    explain,
    load_ruleset,
)
from classifier.engine.evaluate import ranked_matches
from classifier.engine.ruleset import Ruleset
from classifier.errors import Severity
from classifier.lint.checks import lint, lint_report
from classifier.lint.witness import WitnessBuilder
from tests.catalog import CATALOG, with_fixed_catalog
from tests.strategies import compiled, descriptors, rulesets
from tests.support import BUNDLED_RULES, MakeRuleset

QUIET = "name: t\nversion: '1'\nlint_ignore: [class_never_produced, unused_action]\n"
OTHER_RULE = re.compile(r'rule "([^"]+)" at ')


@pytest.fixture
def make_ruleset(make_ruleset: MakeRuleset) -> MakeRuleset:
    """The shared fixture, with tests/catalog.yaml rather than the moving bundled catalog."""
    return with_fixed_catalog(make_ruleset)


def _lint(make_ruleset: MakeRuleset, rules: str, manifest: str = QUIET) -> list[Diagnostic]:
    return lint(load_ruleset(make_ruleset(rules, manifest=manifest)))


def _codes(found: list[Diagnostic]) -> list[tuple[str, str]]:
    return [(d.code, d.rule_id) for d in found]


def _witness(d: Diagnostic) -> Descriptor:
    return descriptor_from_data(json.loads(d.witness))


def _assert_witness_shows(ruleset: Ruleset, d: Diagnostic) -> None:
    """The claim a conflict or shadow warning makes, checked against explain's account."""
    match = OTHER_RULE.search(d.message)
    assert match is not None, d.message
    other = match.group(1)
    result = explain(ruleset, _witness(d))
    assert result.explanation is not None
    matched = [m.rule_id for m in result.explanation.matches]
    assert {d.rule_id, other} <= set(matched), (d.render(), matched)
    if d.code == "conflicting_rules":
        assert result.unknown_reason is UnknownReason.conflict
        tied = {x.loser_rule_id for x in result.explanation.decisions}
        assert {d.rule_id, other} <= tied
    else:
        assert matched.index(other) < matched.index(d.rule_id)
        assert result.rule_id != d.rule_id


# conflicting_rules ---------------------------------------------------------------------------


def test_a_conflict_names_both_rules_and_a_witness_both_match(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        """
        rules:
          - id: a
            when: {type: [x.E, x.F], origin: [provider, tool]}
            class: ProviderError
          - id: b
            when: {type: [x.G, x.E], code: X}
            class: RateLimited
        """,
        manifest=QUIET,
    )
    ruleset = load_ruleset(root)
    (found,) = lint(ruleset)
    assert (found.code, found.rule_id, found.severity) == (
        "conflicting_rules",
        "b",
        Severity.warning,
    )
    assert found.message.startswith(f'conflicts with rule "a" at {ruleset.rules[0].location}: ')
    assert found.related == (ruleset.rules[0].location,)
    assert json.loads(found.witness) == {"type": "x.E", "code": "X", "origin": "provider"}
    _assert_witness_shows(ruleset, found)


def test_a_witness_has_what_has_asks_for_and_lacks_what_lacks_rules_out(
    make_ruleset: MakeRuleset,
) -> None:
    root = make_ruleset(
        """
        rules:
          - id: a
            when: {type: x.E, has: [code, message], origin: [provider, tool]}
            class: ProviderError
          - id: b
            when: {type: x.E, lacks: http_status, origin: provider}
            class: RateLimited
        """,
        manifest=QUIET,
    )
    ruleset = load_ruleset(root)
    (found,) = lint(ruleset)
    assert (found.code, found.rule_id) == ("conflicting_rules", "b")
    witness = json.loads(found.witness)
    assert witness["code"]
    assert witness["message"]
    assert witness["origin"] == "provider"
    assert "http_status" not in witness
    _assert_witness_shows(ruleset, found)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("{type: x.E}", "{type: x.F}"),  # different names never sit at the same depth
        ("{type: x.E}", "{origin: provider}"),  # typed beats untyped
        ("{type: x.E, http_status: 429}", "{type: x.E, http_status: 5xx}"),  # disjoint values
        ("{type: x.E, code: X}", "{type: x.E, code: X, origin: tool}"),  # counts differ
        ("{type: x.E, message: '^a'}", "{type: x.E, message: '^b'}"),  # no message has both
        ("{attributes: {k: v1}}", "{attributes: {k: v2}}"),
        ("{type: x.E, has: code}", "{type: x.E, lacks: code}"),  # set and unset
        ("{type: x.E, code: X}", "{type: x.E, lacks: code}"),  # a value needs the field set
    ],
)
def test_rules_that_cannot_tie_on_one_descriptor_do_not_conflict(
    make_ruleset: MakeRuleset, a: str, b: str
) -> None:
    rules = f"rules:\n  - {{id: a, when: {a}, class: Timeout}}\n  - {{id: b, when: {b}, class: ToolError}}\n"
    assert _lint(make_ruleset, rules) == []


def test_rules_that_agree_do_not_conflict_but_a_different_effect_does(
    make_ruleset: MakeRuleset,
) -> None:
    agree = """
        rules:
          - {id: a, when: {type: x.E, origin: provider}, class: Timeout}
          - {id: b, when: {type: x.E, code: X}, class: Timeout, action: provider.investigate}
        """
    assert _lint(make_ruleset, agree) == []
    differ = agree.replace("action: provider.investigate", "effect: pause")
    assert _codes(_lint(make_ruleset, differ)) == [("conflicting_rules", "b")]


def test_no_conflict_when_a_third_rule_always_outranks_both(make_ruleset: MakeRuleset) -> None:
    """Wherever a and b both match, c matches too and has more conditions: no descriptor ties."""
    rules = """
        rules:
          - {id: a, when: {type: x.E, origin: provider}, class: Timeout}
          - {id: b, when: {type: x.E, code: X}, class: RateLimited}
          - {id: c, when: {type: x.E, origin: provider, code: X}, class: ToolError}
        """
    assert _lint(make_ruleset, rules) == []


def test_the_witness_search_goes_past_a_candidate_a_third_rule_outranks(
    make_ruleset: MakeRuleset,
) -> None:
    """tool is named by more rules than provider, so provider is tried first, and c wins there."""
    root = make_ruleset(
        """
        rules:
          - {id: a, when: {type: x.E, origin: [provider, tool]}, class: Timeout}
          - {id: b, when: {type: x.E, code: X}, class: RateLimited}
          - {id: c, when: {type: x.E, origin: provider, code: X}, class: ToolError}
          - {id: d, when: {type: x.Other, origin: tool}, class: ToolError}
          - {id: e, when: {type: x.Else, origin: tool}, class: ToolError}
        """,
        manifest=QUIET,
    )
    ruleset = load_ruleset(root)
    (found,) = lint(ruleset)
    assert found.rule_id == "b"
    assert json.loads(found.witness)["origin"] == "tool"
    _assert_witness_shows(ruleset, found)


def test_untyped_rules_conflict_on_a_type_no_rule_names(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        """
        rules:
          - {id: guard, when: {origin: guard}, class: ContentBlocked}
          - {id: deadline, when: {grpc_status: DEADLINE_EXCEEDED}, class: Timeout}
          - {id: taken, when: {type: lint.Witness, origin: tool}, class: ToolError}
        """,
        manifest=QUIET,
    )
    ruleset = load_ruleset(root)
    (found,) = lint(ruleset)
    assert json.loads(found.witness) == {
        "type": "lint.Witness2",
        "grpc_status": "DEADLINE_EXCEEDED",
        "origin": "guard",
    }
    _assert_witness_shows(ruleset, found)


def test_a_witness_message_satisfies_both_patterns(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        """
        rules:
          - {id: a, when: {type: x.E, message: '^Rate'}, class: Timeout}
          - {id: b, when: {type: x.E, message: '(?i)limit( reached)?$'}, class: RateLimited}
        """,
        manifest=QUIET,
    )
    ruleset = load_ruleset(root)
    (found,) = lint(ruleset)
    assert json.loads(found.witness)["message"] == "Rate limit"
    _assert_witness_shows(ruleset, found)


def test_a_witness_carries_one_cause_per_cause_condition(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        """
        rules:
          - {id: a, when: {type: x.E, cause: {type: x.Timeout}}, class: Timeout}
          - {id: b, when: {type: x.E, cause: {code: E42, message: 'quota'}}, class: QuotaExceeded, priority: 0}
        """,
        manifest=QUIET,
    )
    ruleset = load_ruleset(root)
    found = [d for d in lint(ruleset) if d.code == "conflicting_rules"]
    assert len(found) == 0, "a has 2 conditions and b has 3: they never tie"
    root = make_ruleset(
        """
        rules:
          - {id: a, when: {type: x.E, code: C, cause: {type: x.Timeout}}, class: Timeout}
          - {id: b, when: {type: x.E, cause: {code: E42, message: 'quota'}}, class: QuotaExceeded}
        """,
        manifest=QUIET,
    )
    ruleset = load_ruleset(root)
    found = [d for d in lint(ruleset) if d.code == "conflicting_rules"]
    assert [json.loads(d.witness)["causes"] for d in found] == [
        [{"type": "x.Timeout"}, {"type": "lint.Cause", "code": "E42", "message": "quota"}]
    ]
    _assert_witness_shows(ruleset, found[0])


# shadowed_rule -------------------------------------------------------------------------------


def test_a_rule_another_covers_and_outranks_by_priority_is_shadowed(
    make_ruleset: MakeRuleset,
) -> None:
    root = make_ruleset(
        """
        rules:
          - id: broad
            when: {type: [x.A, x.B], http_status: [429, 503], message: '(?i)slow down'}
            class: RateLimited
            priority: 1
          - id: narrow
            when: {type: x.A, http_status: 429, message: '(?i)slow down'}
            class: Timeout
        """,
        manifest=QUIET,
    )
    ruleset = load_ruleset(root)
    (found,) = lint(ruleset)
    assert (found.code, found.rule_id) == ("shadowed_rule", "narrow")
    assert "wins on priority (1 > 0)" in found.message
    _assert_witness_shows(ruleset, found)


def test_a_duplicate_later_in_order_is_shadowed(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        {
            "a.yaml": "rules:\n  - {id: first, when: {type: x.A, cause: {type: x.C}}, class: Timeout}\n",
            "b.yaml": "rules:\n  - {id: again, when: {type: x.A, cause: {type: x.C}}, class: Timeout}\n",
        },
        manifest=QUIET,
    )
    ruleset = load_ruleset(root)
    (found,) = lint(ruleset)
    assert (found.code, found.rule_id) == ("shadowed_rule", "again")
    assert "the two are duplicates" in found.message
    _assert_witness_shows(ruleset, found)


@pytest.mark.parametrize(
    "narrow",
    [
        "{type: x.A, http_status: 429, code: Q}",  # more conditions: it wins where it matches
        "{type: x.A, http_status: 429, message: 'other'}",  # a different pattern
        "{type: x.Z, http_status: 429}",  # a type the broad rule does not list
        "{type: x.A, http_status: 500}",  # a status the broad rule does not list
    ],
)
def test_a_rule_that_can_still_win_is_not_shadowed(make_ruleset: MakeRuleset, narrow: str) -> None:
    rules = f"""
        rules:
          - {{id: broad, when: {{type: [x.A, x.B], http_status: [429, 503]}}, class: RateLimited, priority: 1}}
          - {{id: narrow, when: {narrow}, class: RateLimited}}
        """
    assert [d for d in _lint(make_ruleset, rules) if d.code == "shadowed_rule"] == []


# catch_all_rule, message_only_rule -----------------------------------------------------------


@pytest.mark.parametrize(
    ("when", "catch_all"),
    [
        ("{}", True),
        ("{type: Exception}", True),
        ("{type: [java.lang.Throwable, x.A]}", True),
        ("{type: System.Exception, http_status: 500}", False),
        ("{origin: guard}", False),
        ("{type: x.A}", False),
    ],
)
def test_catch_all_rules(make_ruleset: MakeRuleset, when: str, catch_all: bool) -> None:
    found = _lint(make_ruleset, f"rules:\n  - {{id: r, when: {when}, class: ToolError}}\n")
    assert [d.code for d in found] == (["catch_all_rule"] if catch_all else [])


@pytest.mark.parametrize(
    ("when", "hint"),
    [
        ("{message: '(?i)too many requests'}", "test a type, a status or a code as well"),
        ("{origin: provider, message: 'HTTP 429'}", "test http_status: 429 instead"),
        ("{message: '(?i)deadline exceeded'}", "test grpc_status: DEADLINE_EXCEEDED instead"),
        ("{cause: {message: 'quota'}}", "test a type, a status or a code as well"),
        ("{type: x.A, message: 'quota'}", None),
        ("{code: rate_limit, message: 'quota'}", None),
        ("{cause: {type: x.T, message: 'quota'}}", None),
    ],
)
def test_message_only_rules(make_ruleset: MakeRuleset, when: str, hint: str | None) -> None:
    found = _lint(make_ruleset, f"rules:\n  - {{id: r, when: {when}, class: ToolError}}\n")
    if hint is None:
        assert found == []
    else:
        (d,) = found
        assert d.code == "message_only_rule"
        assert d.message.endswith(hint)


def test_rule_warnings_point_at_the_condition(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        "rules:\n  - id: r\n    when:\n      origin: user\n      message: x\n    class: Canceled\n",
        manifest=QUIET,
    )
    (found,) = lint(load_ruleset(root))
    assert (found.location.line, found.location.column) == (5, 7)


# unsatisfiable_rule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("when", "contradicting"),
    [
        ("{type: x.A, http_status: 507, lacks: http_status}", "`http_status: 507` and `lacks: http_status`"),
        ("{type: x.A, http_status: 5xx, lacks: http_status}", "`http_status: 5xx` and `lacks: http_status`"),
        ("{type: x.A, grpc_status: UNAVAILABLE, lacks: grpc_status}", "`grpc_status: UNAVAILABLE` and `lacks: grpc_status`"),
        ("{type: x.A, code: E1, lacks: code}", "`code: E1` and `lacks: code`"),
        ("{type: x.A, language: python, lacks: language}", "`language: python` and `lacks: language`"),
        ("{type: x.A, provider: openai, lacks: [provider]}", "`provider: openai` and `lacks: provider`"),
        ("{type: x.A, has: code, lacks: code}", "`has: code` and `lacks: code`"),
        ("{type: x.A, code: '', has: code}", "`code: ''` and `has: code`"),
        ("{type: x.A, message: 'quota', lacks: message}", "`message: quota` and `lacks: message`"),
        ("{type: x.A, cause: {http_status: 503, lacks: http_status}}", "`cause: {http_status: 503, lacks: http_status}` holds for no cause: `http_status: 503` and `lacks: http_status`"),
        ("{type: x.A, cause: {has: message, lacks: message}}", "`cause: {has: message, lacks: message}` holds for no cause: `has: message` and `lacks: message`"),
        ("{type: x.A, cause: {message: 'x', lacks: message}}", "holds for no cause: `message: x` and `lacks: message`"),
    ],
)  # fmt: skip
def test_a_rule_whose_conditions_contradict_can_never_match(
    make_ruleset: MakeRuleset, when: str, contradicting: str
) -> None:
    """The warning names the conditions that contradict each other, at the first of them;
    the witness builder, reading the same analysis, finds no descriptor for the rule."""
    root = make_ruleset(f"rules:\n  - {{id: r, when: {when}, class: ToolError}}\n", manifest=QUIET)
    ruleset = load_ruleset(root)
    (found,) = lint(ruleset)
    assert (found.code, found.rule_id, found.severity) == (
        "unsatisfiable_rule",
        "r",
        Severity.warning,
    )
    assert found.message.startswith("can never match: ")
    assert contradicting in found.message
    assert found.message.endswith(
        ", so no descriptor satisfies this rule and it decides nothing; remove the condition "
        "that is wrong, or split the rule in two"
    )
    assert found.witness == ""
    (rule,) = ruleset.rules
    assert found.location == rule.locations[_first_key(when)]
    assert list(WitnessBuilder(ruleset).candidates([rule])) == []


def _first_key(when: str) -> str:
    """The first key of `when` after `type` that takes part in the contradiction."""
    return when.split(", ", 1)[1].split(":", 1)[0]


@pytest.mark.parametrize(
    "when",
    [
        "{type: x.A, lacks: http_status, code: E1}",  # different fields
        "{type: x.A, has: http_status, http_status: 507}",  # `has` agrees with a status
        "{type: x.A, message: '^$|x*', lacks: message}",  # the pattern matches ""
        "{type: x.A, lacks: http_status, cause: {http_status: 503}}",  # a cause is not the descriptor
        "{type: x.A, cause: {lacks: message}}",
    ],
)
def test_conditions_that_can_hold_together_are_not_unsatisfiable(
    make_ruleset: MakeRuleset, when: str
) -> None:
    found = _lint(make_ruleset, f"rules:\n  - {{id: r, when: {when}, class: ToolError}}\n")
    assert [d.code for d in found] == []


def test_every_contradiction_of_a_rule_is_named_and_located(make_ruleset: MakeRuleset) -> None:
    """One warning for the rule, at its first contradicting condition; the others' places
    are its related locations."""
    root = make_ruleset(
        "rules:\n"
        "  - id: r\n"
        "    when:\n"
        "      type: x.A\n"
        "      code: E1\n"
        "      message: quota\n"
        "      lacks: [code, message]\n"
        "    class: ToolError\n",
        manifest=QUIET,
    )
    (found,) = lint(load_ruleset(root))
    assert found.code == "unsatisfiable_rule"
    assert "`code: E1` and `lacks: code` contradict each other" in found.message
    assert "`message: quota` and `lacks: message` contradict each other" in found.message
    assert (found.location.line, found.location.column) == (5, 7)
    assert [(r.line, r.column) for r in found.related] == [(7, 7), (6, 7)]


def test_an_unsatisfiable_rule_can_be_ignored(make_ruleset: MakeRuleset) -> None:
    rules = (
        "rules:\n  - {id: r, when: {type: x.A, http_status: 507, lacks: http_status}, "
        "class: ToolError, lint_ignore: unsatisfiable_rule}\n"
    )
    report = lint_report(load_ruleset(make_ruleset(rules, manifest=QUIET)))
    assert (report.warnings, report.suppressed) == ([], 13)  # the manifest's 12 too


# misspelt_value ------------------------------------------------------------------------------


def test_a_language_close_to_a_runtimes_is_taken_for_a_misspelling(
    make_ruleset: MakeRuleset,
) -> None:
    found = _lint(
        make_ruleset,
        "rules:\n  - {id: r, when: {type: x.A, language: [ruby, pyhton]}, class: ToolError}\n",
    )
    (d,) = found
    assert (d.code, d.rule_id, d.severity) == ("misspelt_value", "r", Severity.warning)
    assert d.message.startswith(
        "language 'pyhton' is no language a runtime reports (did you mean 'python'?): "
    )
    assert (d.location.line, d.location.column) == (2, 31)  # at `language`


def test_a_provider_close_to_one_more_rules_name_is_taken_for_a_misspelling(
    make_ruleset: MakeRuleset,
) -> None:
    rules = """
        rules:
          - {id: a, when: {type: x.A, provider: openai}, class: ToolError}
          - {id: b, when: {type: x.B, provider: [openai, anthropic]}, class: ToolError}
          - {id: c, when: {type: x.C, provider: opneai}, class: ToolError}
          - {id: d, when: {type: x.D, provider: anthropik}, class: ToolError}
        """
    found = _lint(make_ruleset, rules)
    # anthropik and anthropic are named as often: neither is taken for the other's misspelling
    assert _codes(found) == [("misspelt_value", "c")]
    assert "provider 'opneai' is named by fewer rules than a provider close to it " in (
        found[0].message
    )
    assert "(did you mean 'openai'?)" in found[0].message


@pytest.mark.parametrize(
    "when",
    [
        "{type: x.A, language: [python, dotnet, java, go, node, rust]}",
        "{type: x.A, language: ruby}",  # close to no runtime's language: taken as meant
        "{type: x.A, provider: acme-llm}",
    ],
)
def test_a_value_close_to_no_known_one_is_taken_as_meant(
    make_ruleset: MakeRuleset, when: str
) -> None:
    assert _lint(make_ruleset, f"rules:\n  - {{id: r, when: {when}, class: ToolError}}\n") == []


def test_a_misspelt_value_can_be_ignored_on_its_rule(make_ruleset: MakeRuleset) -> None:
    rules = (
        "rules:\n  - {id: r, when: {type: x.A, language: pyhton}, class: ToolError, "
        "lint_ignore: misspelt_value}\n"
    )
    assert lint(load_ruleset(make_ruleset(rules, manifest=QUIET))) == []


# overruled_rule ------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["timeLimit", "Time-Limit", "time.limit", "timelimit", "time_limt"])
def test_a_decisive_fact_under_another_name_is_overruled(
    make_ruleset: MakeRuleset, key: str
) -> None:
    """The rule stays out of the decisive tier, and matches nothing the helpers send."""
    found = _lint(
        make_ruleset,
        f"rules:\n  - {{id: r, when: {{type: x.A, attributes: {{{key}: run}}}}, class: Timeout}}\n",
    )
    (d,) = found
    assert (d.code, d.rule_id, d.severity) == ("overruled_rule", "r", Severity.warning)
    assert d.message.startswith(
        f"reads attribute {key!r}, the runtime's decisive fact 'time_limit' written another way"
    )
    assert (d.location.line, d.location.column) == (2, 31)  # at `attributes`
    assert not d.witness


@pytest.mark.parametrize(
    ("fact", "value", "shown"),
    [
        ("time_limit", "deadline", "time_limit is one of tool, run"),
        ("time_limit", "Run", "time_limit is one of tool, run"),
        ("refused_by", "circuit_breaker", "refused_by is one of breaker, rate_limiter, "),
        ("veto", "Budget", "veto is one of budget, quota, policy, or another lower-case word"),
        ("provider_calls", "00", "provider_calls is a whole number written in decimal"),
    ],
)
def test_a_decisive_fact_with_a_value_never_sent_is_overruled(
    make_ruleset: MakeRuleset, fact: str, value: str, shown: str
) -> None:
    rules = (
        f"rules:\n  - {{id: r, when: {{type: x.A, attributes: {{{fact}: [{value!r}]}}}}, "
        "class: Timeout}\n"
    )
    (d,) = _lint(make_ruleset, rules)
    assert d.code == "overruled_rule"
    assert d.message.startswith(f"reads the decisive fact {fact} with {value!r}, which runtimes ")
    assert shown in d.message


@pytest.mark.parametrize(
    "attributes",
    [
        "{time_limit: [tool, run]}",
        "{veto: [budget, my_gate]}",  # an open fact takes another word
        "{provider_calls: 0}",
        "{timeout_ms: '300'}",  # no fact's name
        "{time_limit_ms: '300', vetoed_by: acme}",  # other attributes that start alike
    ],
)
def test_a_fact_read_as_runtimes_send_it_is_not_overruled(
    make_ruleset: MakeRuleset, attributes: str
) -> None:
    rules = (
        f"rules:\n  - {{id: r, when: {{type: x.A, attributes: {attributes}}}, class: Timeout}}\n"
    )
    assert _lint(make_ruleset, rules) == []


OVERRULED = """
rules:
  - id: tool-limit
    when: {origin: tool, attributes: {time_limit: tool}}
    class: ToolTimeout
    effect: continue
  - id: tool-code
    when: {origin: tool, code: SLOW}
    class: ToolError
    effect: continue
    priority: 5
  - id: typed-tool
    when: {type: x.Slow, origin: tool}
    class: ToolError
    effect: continue
  - id: deadline-fallback
    when: {origin: provider, attributes: {time_limit: run}}
    class: Timeout
    fallback: true
  - id: provider-code
    when: {origin: provider, code: E1}
    class: ProviderError
"""


def test_a_rule_ranked_above_a_decisive_rule_is_overruled(make_ruleset: MakeRuleset) -> None:
    """tool-code's priority put it above tool-limit (same depth and count), and
    deadline-fallback's author made it a fallback: the tier reverses both. typed-tool loses
    to tool-limit on the exception's evidence alone (its type), which the tier is for: no
    warning."""
    ruleset = load_ruleset(make_ruleset(OVERRULED, manifest=QUIET))
    found = [d for d in lint(ruleset) if d.code == "overruled_rule"]
    assert _codes(found) == [("overruled_rule", "tool-code"), ("overruled_rule", "provider-code")]
    by_rule = {d.rule_id: d for d in found}
    assert by_rule["tool-code"].message.startswith('is ranked above rule "tool-limit" at ')
    assert "(on priority, 5 > 0)" in by_rule["tool-code"].message
    assert "(that rule is a fallback)" in by_rule["provider-code"].message
    assert "decisive fact time_limit: tool and this one does not" in (by_rule["tool-code"].message)
    for d in found:
        assert d.render().splitlines()[1] == f"    witness: {d.witness}"
        _assert_witness_shows(ruleset, d)
        explained = explain(ruleset, _witness(d)).explanation
        assert explained is not None
        assert {x.loser_rule_id: x.step for x in explained.decisions}[d.rule_id] == "decisive"


def test_a_team_rule_above_the_librarys_decisive_rule_by_layer_is_overruled(
    make_ruleset: MakeRuleset,
) -> None:
    """A team's rule as specific as the library's used to win on its layer; the library's
    rule reads `time_limit: tool`, so now it decides, and the team is told."""
    base = make_ruleset(
        "rules:\n  - {id: lib.tool-limit, when: {origin: tool, attributes: {time_limit: tool}}, "
        "class: ToolTimeout}\n",
        manifest=QUIET,
    )
    top = make_ruleset(
        "rules:\n  - {id: team.tool-code, when: {origin: tool, code: SLOW}, class: ToolError}\n",
        manifest=QUIET + f"base:\n  - path: {base}\n",
    )
    found = lint(load_ruleset(top))
    assert _codes(found) == [("overruled_rule", "team.tool-code")]
    assert "(as a rule of a layer above that rule's)" in found[0].message


def test_an_overruled_rule_can_be_ignored(make_ruleset: MakeRuleset) -> None:
    rules = OVERRULED.replace(
        "    priority: 5\n", "    priority: 5\n    lint_ignore: [overruled_rule]\n"
    ).replace("    fallback: true\n", "")
    assert _lint(make_ruleset, rules) == []


# unused_action, class_never_produced, lint_ignore --------------------------------------------


def test_catalog_warnings(make_ruleset: MakeRuleset) -> None:
    """An action nothing names, and every class no rule produces, at their catalog entries."""
    catalog = CATALOG.read_text().replace(
        "classes:", "  - {id: ops.page-oncall, summary: Nothing names it.}\nclasses:"
    )
    root = make_ruleset(
        {
            "actions.yaml": catalog,
            "rules.yaml": "rules:\n  - {id: t, when: {type: x.T}, class: Timeout, "
            "action: tool.investigate}\n",
        }
    )
    found = lint(load_ruleset(root))
    unused = [d.message.split('"')[1] for d in found if d.code == "unused_action"]
    never = {d.message.split()[4] for d in found if d.code == "class_never_produced"}
    assert unused == ["ops.page-oncall"]
    assert "Timeout" not in never
    assert len(never) == 12
    assert all(d.location.file.endswith("actions.yaml") for d in found)


def test_lint_ignore_silences_and_counts(make_ruleset: MakeRuleset) -> None:
    rules = """
        rules:
          - {id: a, when: {type: x.E, origin: provider}, class: Timeout}
          - {id: b, when: {type: x.E, code: X}, class: RateLimited, lint_ignore: conflicting_rules}
          - {id: c, when: {}, class: ToolError, lint_ignore: [catch_all_rule]}
        """
    report = lint_report(load_ruleset(make_ruleset(rules, manifest=QUIET)))
    assert (report.warnings, report.suppressed) == ([], 12)


def test_lint_ignore_must_name_a_lint_code(make_ruleset: MakeRuleset) -> None:
    bad_rule = (
        "rules:\n  - {id: a, when: {type: x.E}, class: Timeout, lint_ignore: unused_action}\n"
    )
    with pytest.raises(RulesetError) as info:
        load_ruleset(make_ruleset(bad_rule))
    assert [d.code for d in info.value.diagnostics] == ["unknown_lint_code"]
    with pytest.raises(RulesetError) as info:
        load_ruleset(
            make_ruleset("rules: []\n", manifest="name: t\nversion: '1'\nlint_ignore: [x]\n")
        )
    assert [d.code for d in info.value.diagnostics] == ["unknown_lint_code"]


def test_warnings_are_sorted_by_file_and_line(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        {
            "b.yaml": "rules:\n  - {id: b1, when: {}, class: Timeout}\n",
            "a.yaml": "rules:\n  - {id: a1, when: {message: x}, class: Timeout}\n"
            "  - {id: a2, when: {type: Error}, class: Timeout}\n",
        }
    )
    found = lint(load_ruleset(root))
    assert found == sorted(found, key=Diagnostic.sort_key)
    assert [d.rule_id for d in found if d.rule_id] == ["a1", "a2", "b1"]


# properties ----------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(rulesets())
def test_every_witness_the_linter_prints_shows_what_it_claims(rule_docs: list[Any]) -> None:
    """Re-read from its printed text, each witness is matched by both rules, as claimed."""
    with compiled(rule_docs) as ruleset:
        for d in lint(ruleset):
            if d.code in ("conflicting_rules", "shadowed_rule") or d.witness:
                assert d.render().splitlines()[1] == f"    witness: {d.witness}"
                _assert_witness_shows(ruleset, d)


@settings(max_examples=100, deadline=None)
@given(rulesets(messages=False, causes=False), st.lists(descriptors(), min_size=1, max_size=8))
def test_every_conflict_the_engine_meets_is_reported(
    rule_docs: list[Any], subjects: list[Descriptor]
) -> None:
    """Without patterns and causes the search is complete: a tie the engine meets was linted."""
    with compiled(rule_docs) as ruleset:
        reported = {
            frozenset({d.rule_id, OTHER_RULE.findall(d.message)[0]})
            for d in lint(ruleset)
            if d.code == "conflicting_rules"
        }
        for subject in subjects:
            if classify(ruleset, subject).unknown_reason is not UnknownReason.conflict:
                continue
            ranked = ranked_matches(ruleset, subject)
            tied = [m.rule for m in ranked if m.rank == ranked[0].rank]
            pairs = {
                frozenset({a.id, b.id})
                for a in tied
                for b in tied
                if (a.outcome.error_class, a.outcome.effect)
                != (b.outcome.error_class, b.outcome.effect)
            }
            assert pairs & reported, (subject, pairs, reported)


# retry advice that cannot be wrong -----------------------------------------------------------


def test_check_refuses_a_retryable_billing_rule(make_ruleset: MakeRuleset) -> None:
    """Not a warning to silence but an error: the bundled catalog says a retry cannot fix
    billing (`provider.fix-billing`, `retry: never`), so a rule that marks an
    insufficient_quota 429 retryable stops the ruleset from loading, at its `retryable`."""
    root = make_ruleset(
        {
            "actions.yaml": (BUNDLED_RULES / "actions.yaml").read_text(),
            "rules.yaml": """
            rules:
              - id: openai.billing-retried
                when: {type: openai.RateLimitError, code: insufficient_quota}
                class: RateLimited
                action: provider.fix-billing
                retryable: true
            """,
        },
        manifest=QUIET,
    )
    with pytest.raises(RulesetError) as caught:
        load_ruleset(root)
    (found,) = caught.value.diagnostics
    assert (found.code, found.rule_id, found.severity) == (
        "retry_cannot_help",
        "openai.billing-retried",
        Severity.error,
    )
    assert (found.location.file.rsplit("/", 1)[-1], found.location.line) == ("rules.yaml", 7)
