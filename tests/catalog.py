"""tests/catalog.yaml: a fixed catalog for tests that count lint warnings.

The bundled catalog moves with the rule library (its precise actions are
unused in a small test ruleset), so counts of `unused_action` and
`class_never_produced` are taken against this one instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support import MakeRuleset

CATALOG = Path(__file__).with_name("catalog.yaml")


def with_fixed_catalog(make: MakeRuleset) -> MakeRuleset:
    """make_ruleset, writing tests/catalog.yaml as the ruleset's actions.yaml."""

    def make_fixed(files: dict[str, str] | str, **kwargs: Any) -> Path:
        files = {"rules.yaml": files} if isinstance(files, str) else files
        return make({"actions.yaml": CATALOG.read_text(), **files}, **kwargs)

    return make_fixed
