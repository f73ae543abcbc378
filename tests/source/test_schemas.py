"""The JSON Schemas editors check files with: generated from the loader's own models, shipped
in the package, accepting every bundled file and refusing the documented bad examples that are
about a file's shape."""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from classifier.cli import main
from classifier.cli.schema import FOLDER, SCHEMAS, WRITTEN_BY_HAND, file_name, generate
from classifier.source.loader import CASES_SUFFIX, CATALOG, MANIFEST
from tests.support import BUNDLED_RULES, ROOT
from tests.test_docs import DOC, SECTIONS

SCHEMA_LEVEL = {
    "unknown_key": "a key the format does not have",
    "missing_key": "a required key is absent",
    "invalid_value": "a value of the wrong type, or outside a closed set (effect)",
    "unknown_class": "classes are an enum",
    "unknown_as_rule_class": "a rule's class enum leaves Unknown out",
    "unknown_lint_code": "lint codes are an enum",
}
"""The documented codes whose bad example is wrong in shape, so a schema can refuse it."""


@functools.cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((FOLDER / file_name(name)).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator: jsonschema.protocols.Validator = cls(schema)
    return validator


def _json(value: Any) -> Any:
    """A YAML value as an editor's YAML language server sees it: dates are text."""
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _errors(name: str, value: Any) -> list[str]:
    return [e.message for e in _validator(name).iter_errors(_json(value))]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_shipped_schemas_are_what_the_models_generate(name: str) -> None:
    committed = (FOLDER / file_name(name)).read_text(encoding="utf-8")
    assert committed == generate(name), "run `make schemas`"


def test_no_stray_schema_is_shipped() -> None:
    assert sorted(p.name for p in FOLDER.glob("*.json")) == sorted(map(file_name, SCHEMAS))


def _kind(path: Path) -> str:
    if path.name.endswith(CASES_SUFFIX):
        return "cases"
    rel = path.relative_to(BUNDLED_RULES).as_posix()
    return {MANIFEST: "manifest", CATALOG: "catalog"}.get(rel, "rules")


BUNDLED = sorted(BUNDLED_RULES.rglob("*.yaml"))


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.relative_to(BUNDLED_RULES).as_posix())
def test_every_bundled_file_is_valid_under_its_schema(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    kind = _kind(path)
    assert _errors(kind, data) == []
    if kind == "cases":
        for case in data["cases"]:
            assert _errors("descriptor", case["descriptor"]) == []
            assert _errors("descriptor", {"descriptor": case["descriptor"]}) == []


def test_each_kind_of_bundled_file_was_checked() -> None:
    assert {_kind(p) for p in BUNDLED} == {"rules", "manifest", "catalog", "cases"}


def _documented(code: str, kind: str) -> list[tuple[str, str]]:
    """The section's examples of one kind (bad or fix) that are whole rule files."""
    return [
        (file, text)
        for file, merged, text in SECTIONS[code].examples.get(kind, [])
        if file == "rules.yaml" and not merged
    ]


@pytest.mark.parametrize("code", sorted(SCHEMA_LEVEL))
def test_the_schema_refuses_the_documented_bad_example_and_takes_the_fix(code: str) -> None:
    [(_, bad)] = _documented(code, "bad")
    assert _errors("rules", yaml.safe_load(bad)), f"{code}: the schema accepts the bad example"
    for _, fix in _documented(code, "fix"):
        assert _errors("rules", yaml.safe_load(fix)) == []


def test_a_misspelt_key_is_refused_wherever_it_is() -> None:
    """additionalProperties: false on every object: rules, conditions, causes, cases."""
    rule = {"id": "a", "when": {"type": "a.B", "cause": {"typ": "c.D"}}, "class": "Timeout"}
    assert _errors("rules", {"rules": [rule]})
    case = {"note": "n", "descriptor": {"type": "a.B", "http_stauts": 429}, "want": {}}
    assert _errors("cases", {"cases": [case]})
    assert _errors("descriptor", {"type": "a.B", "orign": "provider"})
    assert _errors("manifest", {"name": "x", "version": "1", "incldue": []})


def test_one_value_or_a_list_where_the_loader_takes_either() -> None:
    """`type: A` and `type: [A, B]` are both valid rules; the schema says so."""
    for when in ({"type": "a.B"}, {"type": ["a.B", "c.D"]}, {"http_status": "5xx"}):
        assert _errors("rules", {"rules": [{"id": "a", "when": when, "class": "Timeout"}]}) == []
    assert _errors("manifest", {"name": "x", "version": 1.0}) == []


def test_the_docs_give_the_modeline_for_each_schema() -> None:
    """docs/rules.md shows the yaml-language-server line, naming the shipped files."""
    named = set(re.findall(r"# yaml-language-server: \$schema=\S*?([a-z]+\.schema\.json)", DOC))
    assert named == {file_name(n) for n in WRITTEN_BY_HAND}


def test_the_schema_command_lists_and_copies_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["schema"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == list(SCHEMAS)
    monkeypatch.chdir(tmp_path)
    assert main(["schema", "--out", ".schemas"]) == 0
    out = capsys.readouterr().out
    assert "# yaml-language-server: $schema=.schemas/rules.schema.json" in out
    for name in SCHEMAS:
        copied = (tmp_path / ".schemas" / file_name(name)).read_text()
        assert copied == (FOLDER / file_name(name)).read_text()
    (tmp_path / "blocked").write_text("a file, not a folder")
    assert main(["schema", "--out", "blocked"]) == 2


def test_the_schemas_are_in_the_source_tree_the_package_ships() -> None:
    assert FOLDER == ROOT / "classifier" / "schemas"
