"""Witness building: descriptors that satisfy every condition of the given rules, or none."""

from __future__ import annotations

import itertools

from classifier import load_ruleset
from classifier.lint.witness import WitnessBuilder, _by_index_sum, witness_text
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
