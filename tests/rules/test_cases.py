"""Every regression case beside the bundled rules holds, and every rule has one it decides."""

from __future__ import annotations

import pytest

from classifier import Ruleset
from tests.rules.cases import Case, case_files, load_cases, mismatches, run
from tests.support import BUNDLED_RULES

CASES = [case for path in case_files(BUNDLED_RULES) for case in load_cases(path)]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case: Case) -> None:
    """The case's descriptor gets every answer field the case wants (a todo case must still fail)."""
    problems = mismatches(case, run(case))
    if case.todo:
        assert problems, f"{case.id} passes now; remove its todo ({case.todo})"
    else:
        assert not problems, f"{case.id} ({case.note}): " + "; ".join(problems)


def test_every_rule_decides_at_least_one_case(bundled: Ruleset) -> None:
    """A rule without a case it decides is untested: name every such rule."""
    decided = {
        c.want["rule"]
        for c in CASES
        if not c.todo and "rule" in c.want and not mismatches(c, run(c))
    }
    missing = sorted(r.id for r in bundled.rules if r.id not in decided)
    assert not missing, f"{len(missing)} rules have no passing case that names them: {missing}"


def test_deliberate_unknowns_are_written_down() -> None:
    """The cases include negative cases: descriptors the rules must leave Unknown."""
    unknown = [c for c in CASES if c.want["class"] == "Unknown"]
    assert len(unknown) >= 10
    assert all("rule" not in c.want or c.want["rule"] == "" for c in unknown)
