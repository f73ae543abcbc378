"""Precedence: the most specific matching rule decides, deterministically."""

from __future__ import annotations

from classifier import (
    CauseInput,
    ErrorClass,
    Origin,
    UnknownReason,
    build_descriptor,
    classify,
    classify_unindexed,
    explain,
    load_ruleset,
)
from tests.support import MakeRuleset

HIERARCHY = [
    "java.net.SocketTimeoutException",
    "java.io.InterruptedIOException",
    "java.io.IOException",
]

RULES = """
rules:
  - id: io
    when: {type: java.io.IOException}
    class: ProviderError
  - id: interrupted
    when: {type: java.io.InterruptedIOException}
    class: Timeout
  - id: status-503
    when: {http_status: 503}
    class: RateLimited
  - id: exact-plain
    when: {type: com.example.Exact}
    class: ToolError
  - id: exact-more
    when: {type: com.example.Exact, origin: tool, code: E1}
    class: ToolTimeout
  - id: tie-a
    when: {type: com.example.Tie, origin: provider}
    class: ProviderError
  - id: tie-b
    when: {type: com.example.Tie, code: X}
    class: RateLimited
  - id: prio-low
    when: {type: com.example.Prio, origin: provider}
    class: ProviderError
  - id: prio-high
    when: {type: com.example.Prio, code: P}
    class: RateLimited
    priority: 10
  - id: agree-a
    when: {type: com.example.Agree, origin: provider}
    class: ProviderError
  - id: agree-b
    when: {type: com.example.Agree, code: A}
    class: ProviderError
"""


def _classify(make_ruleset: MakeRuleset, **fields: object) -> tuple[str, str, UnknownReason]:
    ruleset = load_ruleset(make_ruleset(RULES))
    d = build_descriptor(**fields)  # type: ignore[arg-type]
    got = classify(ruleset, d)
    assert got == classify_unindexed(ruleset, d), "index and oracle disagree"
    explained = explain(ruleset, d)
    assert (explained.error_class, explained.rule_id) == (got.error_class, got.rule_id)
    return got.error_class.name, got.rule_id, got.unknown_reason


def test_a_rule_for_the_own_type_beats_one_for_a_supertype(make_ruleset: MakeRuleset) -> None:
    """interrupted names a nearer supertype than io, so it wins."""
    got = _classify(make_ruleset, type=HIERARCHY[0], supertypes=HIERARCHY[1:])
    assert got == ("Timeout", "interrupted", UnknownReason.none)


def test_a_nearer_supertype_beats_a_farther_one(make_ruleset: MakeRuleset) -> None:
    got = _classify(make_ruleset, type="x.Custom", supertypes=["java.io.IOException"])
    assert got == ("ProviderError", "io", UnknownReason.none)


def test_a_typed_rule_beats_an_untyped_one_with_more_conditions(make_ruleset: MakeRuleset) -> None:
    """Type specificity comes before condition count."""
    got = _classify(make_ruleset, type="java.io.IOException", http_status=503)
    assert got == ("ProviderError", "io", UnknownReason.none)


def test_an_untyped_rule_matches_when_no_typed_rule_does(make_ruleset: MakeRuleset) -> None:
    got = _classify(make_ruleset, type="x.Other", http_status=503)
    assert got == ("RateLimited", "status-503", UnknownReason.none)


def test_more_conditions_beat_fewer_at_the_same_type_depth(make_ruleset: MakeRuleset) -> None:
    got = _classify(make_ruleset, type="com.example.Exact", origin=Origin.tool, code="E1")
    assert got == ("ToolTimeout", "exact-more", UnknownReason.none)
    assert _classify(make_ruleset, type="com.example.Exact", code="E1")[1] == "exact-plain"


def test_a_tie_that_disagrees_is_unknown_conflict(make_ruleset: MakeRuleset) -> None:
    """Never a coin toss: equally specific rules that disagree give Unknown."""
    got = _classify(make_ruleset, type="com.example.Tie", origin=Origin.provider, code="X")
    assert got == ("Unknown", "", UnknownReason.conflict)


def test_unknown_recommends_the_conflict_action_only_for_a_conflict(
    make_ruleset: MakeRuleset,
) -> None:
    """A conflict asks for a rule fix, no match for a new rule: the catalog says which action each gets."""
    ruleset = load_ruleset(make_ruleset(RULES))
    conflict = classify(
        ruleset, build_descriptor(type="com.example.Tie", origin=Origin.provider, code="X")
    )
    no_match = classify(ruleset, build_descriptor(type="com.example.Weird"))
    assert (conflict.action.id, no_match.action.id) == ("rules.resolve-conflict", "rules.add")


def test_without_a_conflict_action_a_conflict_gets_unknowns_action(
    make_ruleset: MakeRuleset,
) -> None:
    root = make_ruleset(RULES)
    catalog = root / "actions.yaml"
    catalog.write_text(catalog.read_text().replace(", conflict_action: rules.resolve-conflict", ""))
    ruleset = load_ruleset(root)
    got = classify(
        ruleset, build_descriptor(type="com.example.Tie", origin=Origin.provider, code="X")
    )
    assert (got.unknown_reason, got.action.id) == (UnknownReason.conflict, "rules.add")


def test_priority_breaks_a_tie(make_ruleset: MakeRuleset) -> None:
    got = _classify(make_ruleset, type="com.example.Prio", origin=Origin.provider, code="P")
    assert got == ("RateLimited", "prio-high", UnknownReason.none)


def test_a_tie_that_agrees_is_decided_by_ruleset_order(make_ruleset: MakeRuleset) -> None:
    got = _classify(make_ruleset, type="com.example.Agree", origin=Origin.provider, code="A")
    assert got == ("ProviderError", "agree-a", UnknownReason.none)


def test_no_match_is_unknown_no_match(make_ruleset: MakeRuleset) -> None:
    assert _classify(make_ruleset, type="com.example.Weird") == (
        "Unknown",
        "",
        UnknownReason.no_match,
    )


def test_cause_conditions_hold_for_any_cause_in_the_chain(make_ruleset: MakeRuleset) -> None:
    ruleset = load_ruleset(
        make_ruleset(
            """
            rules:
              - id: wrapped-timeout
                when:
                  type: java.util.concurrent.ExecutionException
                  cause: {type: java.util.concurrent.TimeoutException, message: "(?i)timed out"}
                class: Timeout
            """
        )
    )
    outer = "java.util.concurrent.ExecutionException"
    timeout = (
        CauseInput(type="java.lang.RuntimeException"),
        CauseInput(
            type="x.Sub",
            supertypes=["java.util.concurrent.TimeoutException"],
            message="Timed out after 5s",
        ),
    )
    got = classify(ruleset, build_descriptor(type=outer, causes=timeout))
    assert (got.error_class, got.rule_id) == (ErrorClass.Timeout, "wrapped-timeout")
    other = (CauseInput(type="java.util.concurrent.TimeoutException", message="boom"),)
    assert (
        classify(ruleset, build_descriptor(type=outer, causes=other)).error_class
        is ErrorClass.Unknown
    )


def test_each_condition_kind_must_hold(make_ruleset: MakeRuleset) -> None:
    """A rule with every kind of condition matches only when each one holds."""
    ruleset = load_ruleset(
        make_ruleset(
            """
            rules:
              - id: everything
                when:
                  type: [a.A, b.B]
                  http_status: [400, 5xx, 420-422]
                  grpc_status: UNAVAILABLE
                  origin: [provider, tool]
                  code: [c1, 42]
                  provider: OpenAI
                  language: python
                  message: "over (quota|limit)"
                  attributes: {tier: [free, trial], retries: 3}
                class: QuotaExceeded
            """
        )
    )
    good: dict[str, object] = {
        "type": "x.X",
        "supertypes": ["b.B"],
        "http_status": 421,
        "grpc_status": 14,
        "origin": Origin.tool,
        "code": "42",
        "provider": "openai",
        "language": "Python",
        "message": "you are over limit now",
        "attributes": {"tier": "trial", "retries": "3"},
    }
    assert classify(ruleset, build_descriptor(**good)).rule_id == "everything"  # type: ignore[arg-type]
    spoilers: dict[str, object] = {
        "supertypes": ["c.C"],
        "http_status": 404,
        "grpc_status": 4,
        "origin": Origin.guard,
        "code": "c2",
        "provider": "anthropic",
        "language": "go",
        "message": "fine",
        "attributes": {"tier": "paid", "retries": "3"},
    }
    for key, bad in spoilers.items():
        got = classify(ruleset, build_descriptor(**{**good, key: bad}))  # type: ignore[arg-type]
        assert got.error_class is ErrorClass.Unknown, f"{key}={bad!r} should not match"


def test_explain_names_the_step_that_decided(make_ruleset: MakeRuleset) -> None:
    ruleset = load_ruleset(make_ruleset(RULES))
    got = explain(ruleset, build_descriptor(type=HIERARCHY[0], supertypes=HIERARCHY[1:]))
    assert got.explanation is not None
    assert [m.rule_id for m in got.explanation.matches] == ["interrupted", "io"]
    assert [(d.loser_rule_id, d.step) for d in got.explanation.decisions] == [("io", "type_depth")]


def test_explain_lists_near_misses_for_unknown(make_ruleset: MakeRuleset) -> None:
    ruleset = load_ruleset(make_ruleset(RULES))
    got = explain(
        ruleset, build_descriptor(type="com.example.Exact", origin=Origin.tool, code="E2")
    )
    assert got.error_class is ErrorClass.ToolError
    unknown = explain(ruleset, build_descriptor(type="x.Y", origin=Origin.tool, code="E1"))
    assert unknown.explanation is not None
    assert unknown.explanation.near_misses[0].rule_id == "exact-more"
    assert unknown.explanation.near_misses[0].failed_conditions == ("type: com.example.Exact",)


DECISIVE_RULES = """
rules:
  - id: io
    when: {type: java.io.IOException, origin: provider}
    class: ProviderError
  - id: sdk-catch-all
    when: {type: java.io.IOException}
    class: ProviderError
    fallback: true
  - id: run-deadline
    when: {attributes: {time_limit: run}}
    class: Timeout
  - id: socket-run-deadline
    when: {type: java.net.SocketException, attributes: {time_limit: run}}
    class: ToolError
  - id: deadline-fallback
    when: {origin: provider, attributes: {time_limit: run}}
    class: Canceled
    fallback: true
  - id: calls-zero
    when: {attributes: {calls: "0"}}
    class: Infrastructure
  - id: quota-a
    when: {origin: runtime, attributes: {refused_by: quota}}
    class: QuotaExceeded
  - id: quota-b
    when: {language: go, attributes: {refused_by: quota}}
    class: BudgetExceeded
"""


def _decided(make_ruleset: MakeRuleset, **fields: object) -> tuple[str, str]:
    ruleset = load_ruleset(make_ruleset(DECISIVE_RULES))
    d = build_descriptor(**fields)  # type: ignore[arg-type]
    got = classify(ruleset, d)
    assert got == classify_unindexed(ruleset, d), "index and oracle disagree"
    explained = explain(ruleset, d)
    assert (explained.error_class, explained.rule_id) == (got.error_class, got.rule_id)
    return got.error_class.name, got.rule_id


def test_a_decisive_fact_outranks_a_typed_rule(make_ruleset: MakeRuleset) -> None:
    """The run's deadline closed the socket: the untyped rule reading `time_limit: run`
    decides over the typed I/O rule that would win on type depth."""
    io = {"type": "java.io.EOFException", "supertypes": ["java.io.IOException"]}
    assert _decided(make_ruleset, **io, origin=Origin.provider) == ("ProviderError", "io")
    got = _decided(make_ruleset, **io, origin=Origin.provider, attributes={"time_limit": "run"})
    assert got == ("Timeout", "run-deadline")


def test_within_the_decisive_tier_the_usual_steps_decide(make_ruleset: MakeRuleset) -> None:
    """Type depth first among decisive rules; a decisive fallback still beats every rule
    outside the tier, and loses to every decisive rule that is not a fallback."""
    socket = {
        "type": "java.net.SocketException",
        "supertypes": ["java.io.IOException"],
        "origin": Origin.provider,
        "attributes": {"time_limit": "run"},
    }
    assert _decided(make_ruleset, **socket) == ("ToolError", "socket-run-deadline")
    ruleset = load_ruleset(make_ruleset(DECISIVE_RULES))
    fallback = ruleset.rule("deadline-fallback")
    assert fallback is not None
    assert (fallback.decisive, fallback.fallback) == (True, True)
    got = explain(ruleset, build_descriptor(**socket))  # type: ignore[arg-type]
    assert got.explanation is not None
    steps = {d.loser_rule_id: d.step for d in got.explanation.decisions}
    assert steps == {
        "run-deadline": "type_depth",
        "deadline-fallback": "fallback",
        "io": "decisive",
        "sdk-catch-all": "decisive",
    }


def test_a_fact_that_is_not_decisive_ranks_as_any_condition(make_ruleset: MakeRuleset) -> None:
    """`calls` is no fact of the contract: its rule is in the ordinary tier, and loses to
    the typed rule on type depth."""
    ruleset = load_ruleset(make_ruleset(DECISIVE_RULES))
    calls = ruleset.rule("calls-zero")
    assert calls is not None
    assert (calls.decisive, calls.facts) == (False, ())
    got = _decided(
        make_ruleset,
        type="java.io.IOException",
        origin=Origin.provider,
        attributes={"calls": "0"},
    )
    assert got == ("ProviderError", "io")


def test_decisive_rules_that_tie_and_disagree_are_a_conflict(make_ruleset: MakeRuleset) -> None:
    got = explain(
        load_ruleset(make_ruleset(DECISIVE_RULES)),
        build_descriptor(
            type="*errors.errorString",
            origin=Origin.runtime,
            language="go",
            attributes={"refused_by": "quota"},
        ),
    )
    assert (got.error_class, got.unknown_reason) == (ErrorClass.Unknown, UnknownReason.conflict)


def test_explain_names_the_decisive_fact_with_the_value_stated(make_ruleset: MakeRuleset) -> None:
    ruleset = load_ruleset(make_ruleset(DECISIVE_RULES))
    got = explain(
        ruleset,
        build_descriptor(
            type="java.io.IOException", origin=Origin.provider, attributes={"time_limit": "run"}
        ),
    )
    assert got.explanation is not None
    io = next(d for d in got.explanation.decisions if d.loser_rule_id == "io")
    assert io.step == "decisive"
    assert io.reason.startswith("decided by the runtime's fact time_limit=run: run-deadline")
