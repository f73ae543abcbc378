"""Layers held in memory: a folder read into one reads back as the folder does (the same
digest, rules and locations), a stack read back from its layers' bytes is the same stack, and
a layer that joins the one below shares its number."""

from __future__ import annotations

from pathlib import Path

from classifier.engine.compiler import compile_stack, load_ruleset
from classifier.source.loader import (
    CATALOG,
    MANIFEST,
    layer_files,
    load_source,
    load_stack,
    read_folder,
    read_layer,
    select_rule_files,
    stack_of,
)
from tests.support import BUNDLED_RULES, TEAM_LAYER, write_folder


def test_a_folder_read_into_memory_reads_back_as_the_folder(tmp_path: Path) -> None:
    root = write_folder(
        tmp_path / "rs",
        {
            MANIFEST: "name: rs\nversion: 1.0.0\nexclude: ['skip/**']\n",
            CATALOG: (BUNDLED_RULES / CATALOG).read_text(),
            "a.yaml": "rules:\n  - {id: a, when: {type: x.A}, class: Timeout}\n",
            "sub/b.yml": "rules:\n  - {id: b, when: {type: x.B}, class: ToolError}\n",
            "skip/c.yaml": "rules:\n  - {id: c, when: {type: x.C}, class: ToolError}\n",
            ".hidden/d.yaml": "rules: []\n",
            "a.cases.yaml": "cases: []\n",
            "README.md": "not a rule file\n",
        },
    )
    layer = read_folder(root)
    assert [rel for rel, _ in layer.files] == [MANIFEST, CATALOG, "a.yaml", "sub/b.yml"]
    assert layer.folder == str(root.resolve())
    assert layer.source == str(root.resolve())
    source = load_source(root)
    again = read_layer(layer_files("elsewhere", dict(layer.files)))
    assert again.digest == source.digest
    assert [r.doc.id for r in again.rules] == [r.doc.id for r in source.rules] == ["a", "b"]
    assert str(again.rules[0].location) == "elsewhere/a.yaml:2:5"
    assert again.root is None


def test_rule_files_are_chosen_in_memory_as_in_a_folder() -> None:
    paths = [MANIFEST, CATALOG, "z.yaml", "a/b.yaml", "a/b.cases.yaml", ".git/x.yaml", "c.txt"]
    assert select_rule_files(paths, ["**/*.yaml"], []) == ["a/b.yaml", "z.yaml"]
    assert select_rule_files(paths, ["**/*.yaml"], ["a/**"]) == ["z.yaml"]


def test_a_stack_read_back_from_its_bytes_is_the_same_ruleset(tmp_path: Path) -> None:
    team = write_folder(tmp_path / "acme", TEAM_LAYER)
    stack = load_stack(team)
    assert [s.layer.name for s in stack.layers] == ["library:default", str(team)]
    shipped = stack_of(stack.files())
    assert shipped.digest == stack.digest == load_ruleset(team).digest
    ruleset = compile_stack(shipped)
    assert ruleset.digest == stack.digest
    assert ruleset.rule("python.requests.retries-exhausted") is None  # the layer's disable
    assert stack.numbers() == [1, 0]


def test_a_layer_that_joins_the_one_below_shares_its_number(tmp_path: Path) -> None:
    team = write_folder(tmp_path / "acme", TEAM_LAYER)
    extra = layer_files(
        "extra", {"x.yaml": "rules:\n  - {id: x, when: {type: x.X}, class: Timeout}\n"}, joins=True
    )
    stack = load_stack(team).over(extra)
    assert stack.numbers() == [1, 0, 0]
    assert stack.top.layer.name == str(team)
    ruleset = compile_stack(stack)
    assert [(r.id, r.layer) for r in ruleset.rules if r.id in ("x", "acme.tool-broken")] == [
        ("acme.tool-broken", 0),
        ("x", 0),
    ]
    assert ruleset.name == "acme"
