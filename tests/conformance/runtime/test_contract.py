"""The contract holds over the whole bundled library, not only over the suite's pairs: a
tool wrapper that says its own limit fired (`time_limit: tool`) gets ToolTimeout for any
Python or Node failure on a tool's path, whatever typed rule decides it without the
attribute (the wrapper may have handed its deadline to the tool's client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from classifier import Ruleset, classify, descriptor_from_data
from tests.support import BUNDLED_RULES

NOT_A_TIMEOUT = {
    "python.pydantic-ai.tool-retry": "ModelRetry is the tool asking the model to retry, never a time limit",
}


def tool_cases() -> list[Any]:
    out = []
    for path in sorted(Path(BUNDLED_RULES).rglob("*.cases.yaml")):
        for case in yaml.safe_load(path.read_text())["cases"]:
            d = case["descriptor"]
            on_a_tool = d.get("origin") == "tool" and d.get("language") in ("python", "node")
            if on_a_tool and case["want"].get("rule") not in NOT_A_TIMEOUT:
                out.append(pytest.param(d, id=f"{path.name}:{case['note'][:60]}"))
    return out


@pytest.mark.parametrize("descriptor", tool_cases())
def test_the_wrapper_saying_its_limit_fired_decides(
    descriptor: dict[str, Any], bundled: Ruleset
) -> None:
    d = {**descriptor, "attributes": {**(descriptor.get("attributes") or {}), "time_limit": "tool"}}
    answer = classify(bundled, descriptor_from_data(d))
    assert (answer.error_class.name, answer.effect.label) == ("ToolTimeout", "continue"), (
        answer.rule_id
    )
