"""The code registry: every code registered, documented where it says, and emitted somewhere."""

from __future__ import annotations

import re

import pytest

from classifier.codes import LINT_CODES, REGISTRY, RULE_LINT_CODES, Code, Family, Scope
from tests.support import ROOT

DOCS = ROOT / "docs"


def _slug(heading: str) -> str:
    """GitHub's anchor for a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: str) -> dict[str, str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return {_slug(h): h for h in re.findall(r"^#+ (.*)$", text, flags=re.M)}


def test_every_code_is_registered() -> None:
    assert set(REGISTRY) == set(Code)


@pytest.mark.parametrize("code", list(Code), ids=str)
def test_the_anchor_is_a_heading_that_names_the_code(code: Code) -> None:
    page, _, anchor = REGISTRY[code].anchor.partition("#")
    headings = _anchors(page)
    assert anchor in headings, f"{code}: no heading #{anchor} in docs/{page}"
    if REGISTRY[code].family is not Family.case:
        assert f"`{code}`" in headings[anchor]
    else:
        assert f"`{code}`" in (DOCS / page).read_text(encoding="utf-8")


def test_every_code_is_emitted_by_the_package() -> None:
    """A registered code nothing emits would be documented for nothing."""
    source = "\n".join(
        p.read_text(encoding="utf-8")
        for p in (ROOT / "classifier").rglob("*.py")
        if p.name != "codes.py"
    )
    assert [c for c in Code if f"Code.{c.name}" not in source] == []


def test_lint_scopes() -> None:
    assert set(RULE_LINT_CODES) <= set(LINT_CODES)
    assert all(REGISTRY[c].lint_scope is Scope.rule for c in RULE_LINT_CODES)
    assert all(REGISTRY[c].is_warning for c in LINT_CODES)
    assert not any(REGISTRY[c].is_warning for c in Code if c not in LINT_CODES)
