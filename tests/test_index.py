"""The index is an optimisation only: the indexed engine agrees with the unindexed oracle."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from classifier import Descriptor, classify, classify_unindexed, explain
from tests.strategies import compiled, descriptors, rulesets


@settings(max_examples=100, deadline=None)
@given(rulesets(), st.lists(descriptors(), min_size=1, max_size=10))
def test_indexed_engine_agrees_with_the_oracle(
    rule_docs: list[Any], subjects: list[Descriptor]
) -> None:
    """Same class, rule and reason from the index, from every rule, and from explain's tracer."""
    with compiled(rule_docs) as ruleset:
        for d in subjects:
            fast = classify(ruleset, d)
            assert fast == classify_unindexed(ruleset, d)
            traced = explain(ruleset, d)
            assert (traced.error_class, traced.rule_id, traced.unknown_reason) == (
                fast.error_class,
                fast.rule_id,
                fast.unknown_reason,
            )
