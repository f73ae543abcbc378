"""`--propose` on a team's layer: the drafts compile as a layer held in memory that joins the
target's own, over every base (a `path:` base too), without a copy of the folder on disk and
without reading the catalog's YAML (the layer here has none: it inherits its base's)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from classifier import build_descriptor, classify
from classifier.cli import main
from classifier.engine.compiler import compile_stack
from classifier.source.loader import CATALOG, load_stack
from classifier.unknowns.action_choice import ActionChoice
from classifier.unknowns.proof import drafts_layer
from tests.support import BUNDLED_RULES, write_folder
from tests.unknowns.test_propose import write_log

PLATFORM = {
    "ruleset.yaml": "name: platform\nversion: 3.1.0\n",
    "actions.yaml": (BUNDLED_RULES / "actions.yaml").read_text(),
    "probe.yaml": "rules:\n  - id: probe\n    when: {type: test.Probe}\n    class: Timeout\n",
}
TEAM = {
    "ruleset.yaml": "name: acme\nversion: 1.0.0\nbase:\n  - path: ../platform\n",
    "acme.yaml": (
        "rules:\n"
        "  - id: acme.gateway-quota\n"
        "    when: {type: acme.GatewayQuotaError}\n"
        "    class: QuotaExceeded\n"
    ),
}
UNKNOWN = [
    {"type": "acme.WidgetJammed", "language": "python", "message": f"widget {i} jammed"}
    for i in range(5)
]


@pytest.fixture
def team(tmp_path: Path) -> Path:
    write_folder(tmp_path / "platform", PLATFORM)
    return write_folder(tmp_path / "acme", TEAM)


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_propose_on_a_layer_without_a_catalog_makes_no_copy(
    team: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not (team / CATALOG).exists()
    log = write_log(tmp_path / "d.jsonl", team, UNKNOWN)
    before = _snapshot(tmp_path)
    made: list[Any] = []
    real_mkdtemp, real_copytree = tempfile.mkdtemp, shutil.copytree

    def mkdtemp(*args: Any, **kwargs: Any) -> str:
        made.append(("mkdtemp", args, kwargs))
        return str(real_mkdtemp(*args, **kwargs))

    def copytree(*args: Any, **kwargs: Any) -> Any:
        made.append(("copytree", args, kwargs))
        return real_copytree(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(shutil, "copytree", copytree)
    capsys.readouterr()
    args = ["unknowns", "--rules", str(team), "--propose", "--format", "json", str(log)]
    assert main(args) == 0
    [p] = json.loads(capsys.readouterr().out)["proposals"]
    assert p["status"] == "proposed", p
    assert p["replay"]["changed"] == 5
    assert made == []  # no temporary folder, no copy of the ruleset
    assert _snapshot(tmp_path) == before  # the layer, its base and the log untouched


def test_drafts_join_the_targets_own_layer_in_memory(team: Path) -> None:
    """A draft with a new catalog entry: the entry is the draft layer's own catalog, the rule
    counts as the team's (layer 0: lint and precedence as if written into its folder), and
    the stack's layers are still the team's and its base's."""
    target = load_stack(team)
    rule = {
        "id": "acme.widget-jammed",
        "when": {"type": "acme.WidgetJammed"},
        "class": "ToolError",
        "action": "acme.unjam",
    }
    layer = drafts_layer([rule], [ActionChoice("acme.unjam", "Unjam the widget.", True, "new")])
    assert layer.joins
    assert layer.folder == ""
    head = compile_stack(target.over(layer))
    compiled = head.rule("acme.widget-jammed")
    assert compiled is not None
    assert compiled.layer == 0
    assert str(compiled.location).startswith("unknowns-drafts/drafts.yaml:")
    assert head.actions["acme.unjam"].summary == "Unjam the widget."
    assert [k.name for k in head.layers] == ["acme", "platform"]
    assert (head.name, head.version) == ("acme", "1.0.0")
    answer = classify(head, build_descriptor(type="acme.WidgetJammed"))
    assert (answer.rule_id, answer.action.id) == ("acme.widget-jammed", "acme.unjam")
    assert [r.layer for r in head.rules if r.id == "probe"] == [1]
