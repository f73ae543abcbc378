"""Witness building: descriptors that satisfy every condition of the given rules, or none."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from classifier import Descriptor, load_ruleset
from classifier.lint.witness import WitnessBuilder, _by_index_sum, constraints, witness_text
from tests.strategies import compiled, descriptors, rulesets
from tests.support import MakeRuleset

RULES = """
rules:
  - {id: a, when: {type: [x.A, x.B], http_status: 5xx, attributes: {tier: [free, paid]}}, class: Timeout}
  - {id: b, when: {type: [x.B, x.C], http_status: [503, 429], attributes: {tier: paid}}, class: Timeout}
  - {id: c, when: {type: x.A, code: [X, Y], cause: {grpc_status: UNAVAILABLE}}, class: Timeout}
  - {id: d, when: {type: x.B, http_status: 429}, class: Timeout}
"""


def test_candidates_satisfy_every_rule_and_differ(make_ruleset: MakeRuleset) -> None:
    ruleset = load_ruleset(make_ruleset(RULES))
    a, b, c, d = ruleset.rules
    found = list(WitnessBuilder(ruleset).candidates([a, b], limit=5))
    assert [witness_text(w) for w in found[:1]] == [
        '{"type": "x.B", "http_status": 503, "attributes": {"tier": "paid"}}'
    ]
    assert len(found) == 1, "only one type, one status and one tier satisfy both"
    (wc,) = WitnessBuilder(ruleset).candidates([c], limit=1)
    assert witness_text(wc) == (
        '{"type": "x.A", "code": "X", "causes": [{"type": "lint.Cause", "grpc_status": "UNAVAILABLE"}]}'
    )
    assert list(WitnessBuilder(ruleset).candidates([a, d])) == []  # 5xx and 429 do not meet


def test_index_vectors_come_by_increasing_sum_and_cover_the_product() -> None:
    vectors = list(_by_index_sum([2, 3, 1]))
    assert [sum(v) for v in vectors] == sorted(sum(v) for v in vectors)
    assert sorted(vectors) == sorted(itertools.product(range(2), range(3), range(1)))
    assert list(_by_index_sum([2, 0])) == []


def test_conditions_of_every_kind_that_cannot_meet_are_contradictions(
    make_ruleset: MakeRuleset,
) -> None:
    """What the builder is asked for two rules at once: a type, a status range, an attribute
    no value of which both allow; each contradiction names the conditions."""
    ruleset = load_ruleset(
        make_ruleset(
            """
            rules:
              - {id: a, when: {type: x.A, http_status: 4xx, attributes: {tier: free}}, class: Timeout}
              - {id: b, when: {type: x.B, http_status: 5xx, attributes: {tier: paid}}, class: Timeout}
            """
        )
    )
    a, b = ruleset.rules
    need = constraints([*a.all_conditions, *b.all_conditions])
    assert not need.satisfiable
    assert [c.text for c in need.contradictions()] == [
        "`type: x.A` and `type: x.B` contradict each other (no type is both)",
        "`http_status: 4xx` and `http_status: 5xx` contradict each other (no http_status is both)",
        "`attributes: {tier: free}` and `attributes: {tier: paid}` contradict each other "
        "(no attributes.tier is both)",
    ]
    assert list(WitnessBuilder(ruleset).candidates([a, b])) == []


@settings(max_examples=100, deadline=None)
@given(rulesets(), st.lists(descriptors(), min_size=1, max_size=8))
def test_a_rule_with_a_contradiction_matches_no_descriptor(
    rule_docs: list[Any], subjects: list[Descriptor]
) -> None:
    """The analysis is sound: the engine matches no descriptor to a rule it rules out."""
    with compiled(rule_docs) as ruleset:
        for rule in ruleset.rules:
            if constraints(rule.all_conditions).contradictions():
                assert not any(all(c.holds(d) for c in rule.all_conditions) for d in subjects)


@settings(max_examples=100, deadline=None)
@given(rulesets(messages=False, causes=False))
def test_a_rule_without_a_contradiction_has_a_witness(rule_docs: list[Any]) -> None:
    """Without patterns and causes the analysis is complete: every rule it does not rule out
    gets a descriptor the engine matches to it."""
    with compiled(rule_docs) as ruleset:
        builder = WitnessBuilder(ruleset)
        for rule in ruleset.rules:
            if not constraints(rule.all_conditions).contradictions():
                (witness,) = builder.candidates([rule], limit=1)
                assert all(c.holds(witness) for c in rule.all_conditions)
