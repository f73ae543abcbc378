"""The pytest parameters of the provider suite's pairs, for every language's test module."""

from __future__ import annotations

from collections.abc import Container

import pytest
from _pytest.mark import ParameterSet

from tests.conformance.loader import load_scenarios
from tests.conformance.runner import pairs


def pair_params(sdks: Container[str]) -> list[ParameterSet]:
    """One `(sdk, scenario_id)` per pair of these SDKs, named `<sdk>::<scenario-id>`; a pair
    the scenario lists under `known` is a strict xfail with that reason."""
    return [
        pytest.param(
            sdk,
            scenario.id,
            id=f"{sdk}::{scenario.id}",
            marks=[pytest.mark.xfail(reason=scenario.known[sdk], strict=True)]
            if sdk in scenario.known
            else [],
        )
        for sdk, scenario in pairs(load_scenarios(), sdks)
    ]
