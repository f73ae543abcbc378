"""The runtime suite: one test per pair, named `<language>.<mechanism>::<situation-id>`.

Each pair raises a real runtime failure (a wrapper's time limit, a user's cancel, a guard,
a limiter, a veto, a definition error, a reconciliation finding), describes it with its
language's helper and what only the runtime knows, classifies it over gRPC with the
bundled rules, and checks class and effect against situations.yaml. A pair listed under
its situation's `known` (with the reason) is a strict xfail.
"""

from __future__ import annotations

import pytest

from tests.conformance.runtime.judge import RIGHT
from tests.conformance.runtime.situations import parse_pair
from tests.conformance.runtime.suite import Suite, listed

LISTING = listed()
PAIRS = [
    pytest.param(
        pair,
        id=pair,
        marks=[pytest.mark.xfail(reason=known[pair], strict=True)] if pair in known else [],
    )
    for pair in LISTING.pairs
    for known in [LISTING.situations[parse_pair(pair).situation].known]
]


@pytest.mark.parametrize("pair", PAIRS)
def test_pair(pair: str, runtime_suite: Suite) -> None:
    result = runtime_suite.judge(pair)
    assert result.verdict == RIGHT, result.explain()
