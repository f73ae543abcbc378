"""The index: crowded buckets split by a plain field so lookups stay small as rules grow.

That the index is an optimisation only (the indexed engine answers exactly as
the unindexed oracle) is the property test in tests/engine/test_oracle.py."""

from __future__ import annotations

from classifier import (
    build_descriptor,
    classify,
    classify_unindexed,
    load_ruleset,
)
from classifier.engine.index import SPLIT_AT
from tests.support import MakeRuleset


def _rules(items: list[str]) -> str:
    return "rules:\n" + "".join(items)


def test_many_provider_rules_on_one_type_cost_one_lookup(make_ruleset: MakeRuleset) -> None:
    """A hundred rules on one generic type, one per provider: a descriptor meets only its own."""
    ruleset = load_ruleset(
        make_ruleset(
            _rules(
                [
                    f"  - id: p{i}\n    when: {{type: httpx.HTTPStatusError, provider: p{i}, "
                    f"http_status: 429}}\n    class: RateLimited\n"
                    for i in range(100)
                ]
            )
        )
    )
    bucket = ruleset.index.by_type["httpx.HTTPStatusError"]
    d = build_descriptor(type="httpx.HTTPStatusError", provider="p42", http_status=429)
    assert [r.id for r in bucket.candidates(d)] == ["p42"]
    assert classify(ruleset, d).rule_id == "p42"


def test_a_rule_goes_where_it_has_the_fewest_neighbours(make_ruleset: MakeRuleset) -> None:
    """Status 429 is shared by every rule, the code by none: rules are split by code."""
    ruleset = load_ruleset(
        make_ruleset(
            _rules(
                [
                    f"  - id: c{i}\n    when: {{http_status: 429, code: E{i}}}\n"
                    "    class: RateLimited\n"
                    for i in range(SPLIT_AT)
                ]
            )
        )
    )
    fields = [field for field, _ in ruleset.index.untyped.by_field]
    assert fields == ["code"]
    d = build_descriptor(type="x.Y", http_status=429, code="E3")
    assert [r.id for r in ruleset.index.untyped.candidates(d)] == ["c3"]


def test_a_small_bucket_is_not_split(make_ruleset: MakeRuleset) -> None:
    """Below SPLIT_AT rules a bucket is a plain list: checking them is cheaper than splitting."""
    ruleset = load_ruleset(
        make_ruleset(
            _rules(
                [
                    f"  - id: s{i}\n    when: {{type: a.B, code: E{i}}}\n    class: ToolError\n"
                    for i in range(SPLIT_AT - 1)
                ]
            )
        )
    )
    bucket = ruleset.index.by_type["a.B"]
    assert bucket.by_field == ()
    assert len(bucket.always) == SPLIT_AT - 1


def test_tied_rules_from_different_parts_of_a_split_bucket_decide_in_ruleset_order(
    make_ruleset: MakeRuleset,
) -> None:
    """The first rule in ruleset order decides a tie, wherever the split filed each rule."""
    filler = [
        f"  - id: f{i}\n    when: {{type: t.A, code: Z{i}}}\n    class: Timeout\n"
        for i in range(SPLIT_AT)
    ]
    ruleset = load_ruleset(
        make_ruleset(
            _rules(
                [
                    "  - id: by-provider\n    when: {type: t.A, provider: p1}\n    class: Timeout\n",
                    "  - id: unsplit\n    when: {type: t.A, message: x}\n    class: Timeout\n",
                    "  - id: by-code\n    when: {type: t.A, code: E1}\n    class: Timeout\n",
                    *filler,
                ]
            )
        )
    )
    bucket = ruleset.index.by_type["t.A"]
    assert {f for f, _ in bucket.by_field} == {"code", "provider"}
    for fields, winner in (
        ({"code": "E1", "message": "x"}, "unsplit"),
        ({"code": "E1", "provider": "p1"}, "by-provider"),
        ({"code": "E1", "provider": "p1", "message": "x"}, "by-provider"),
    ):
        d = build_descriptor(type="t.A", **fields)  # type: ignore[arg-type]
        assert classify(ruleset, d).rule_id == winner
        assert classify_unindexed(ruleset, d).rule_id == winner
