"""docs/actions.md lists exactly the bundled catalog's actions, with the catalog's summaries
and whether a retry can help."""

from __future__ import annotations

import re

from classifier import Ruleset
from tests.support import ROOT

ROW = re.compile(r"^\| `(?P<id>[a-z0-9][a-z0-9._-]*)` \| (?P<summary>.+?) \| ")


def _documented() -> dict[str, str]:
    text = (ROOT / "docs" / "actions.md").read_text(encoding="utf-8")
    rows = [m for line in text.splitlines() if (m := ROW.match(line))]
    ids = [m["id"] for m in rows]
    assert len(ids) == len(set(ids)), "an action is listed twice"
    return {m["id"]: m["summary"] for m in rows}


def test_docs_list_every_catalog_action_and_nothing_else(bundled: Ruleset) -> None:
    """Every action in rules/actions.yaml has a row, and every row is in the catalog."""
    assert set(_documented()) == set(bundled.actions)


def test_docs_summaries_are_the_catalog_summaries(bundled: Ruleset) -> None:
    """A summary edited in one place and not the other fails here."""
    documented = _documented()
    assert {a: documented[a] for a in bundled.actions} == {
        a.id: a.summary for a in bundled.actions.values()
    }


CELLS = re.compile(
    r"^\| `(?P<id>[a-z0-9][a-z0-9._-]*)` \| .+? \| (?P<retry>never|may) \| (?P<default>.+?) \| "
    r"(?P<named>.+?) \|$"
)


def named_by(bundled: Ruleset, action_id: str) -> str:
    """The "named by" cell for an action no class has as its default: the rules answering
    with it, in ruleset order (three at most, with the count when there are more). The
    conflict action, named by no rule, says so in words."""
    ids = [r.id for r in bundled.rules if r.outcome.action.id == action_id]
    shown = ", ".join(f"`{i}`" for i in ids[:3])
    return shown if len(ids) <= 3 else f"{len(ids)} rules, e.g. {shown}"


def test_docs_say_whether_a_retry_can_help_as_the_catalog_does(bundled: Ruleset) -> None:
    """The retry column is the catalog's `retry:`, action by action."""
    text = (ROOT / "docs" / "actions.md").read_text(encoding="utf-8")
    cells = {m["id"]: m["retry"] for line in text.splitlines() if (m := CELLS.match(line))}
    assert cells == {a: retry.value for a, retry in bundled.action_retry.items()}


def test_docs_say_which_rules_name_each_action(bundled: Ruleset) -> None:
    """The rule counts and examples follow the library (a rule added or removed shows here)."""
    text = (ROOT / "docs" / "actions.md").read_text(encoding="utf-8")
    defaults = {o.action.id for o in bundled.defaults.values()}
    cells = {m["id"]: m["named"] for line in text.splitlines() if (m := CELLS.match(line))}
    named = {r.outcome.action.id for r in bundled.rules}
    wanted = {a: named_by(bundled, a) for a in bundled.actions if a in named - defaults}
    assert {a: cells[a] for a in wanted} == wanted
