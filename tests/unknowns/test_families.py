"""`--propose` over a decision log of invented failure families (tests/unknowns/families.py)
under the bundled rules: no draft settles a wrong class.

The settled families get their class; every other one is written with the `TO CHOOSE`
placeholder, which fails `classifier check` (and `classifier test`) with a
`file:line:col: class_to_choose:` diagnostic naming the candidates, until a person picks;
ids carry the type's namespace; no generic type scopes a draft alone; a drafted case file
holds distinct descriptors.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from classifier.cli import main
from classifier.generic_types import is_generic
from tests.support import BUNDLED_RULES
from tests.unknowns.families import FAMILIES, pick
from tests.unknowns.test_propose import write_log

CLASSES = {
    "ProviderError", "ProviderUnavailable", "RateLimited", "QuotaExceeded", "ContentFiltered",
    "ToolError", "Timeout", "CompilationFailed", "BudgetExceeded", "Canceled",
    "ContentBlocked", "Infrastructure", "ToolTimeout",
}  # fmt: skip


@pytest.fixture(scope="module")
def proposed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("families")
    log = write_log(root / "d.jsonl", BUNDLED_RULES, [m for f in FAMILIES for m in f.members])
    drafts = root / "drafts"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            ["unknowns", "--rules", str(BUNDLED_RULES), "--propose", "--format", "json",
             "--write", str(drafts), str(log)]
        )  # fmt: skip
    assert code == 0
    return log, drafts, json.loads(out.getvalue())


def _by_family(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    by_type = {p["rule"]["when"]["type"]: p for p in data["proposals"] if "rule" in p}
    return {f.name: by_type[f.members[0]["type"]] for f in FAMILIES}


def test_the_log_has_the_families_the_issue_asks_for() -> None:
    assert len(FAMILIES) >= 8
    assert len({f.language for f in FAMILIES}) >= 4
    assert any(f.settles for f in FAMILIES)
    assert not all(f.settles for f in FAMILIES)


def test_no_draft_settles_a_wrong_class(proposed: tuple[Path, Path, dict[str, Any]]) -> None:
    _, _, data = proposed
    assert len(data["proposals"]) == len(FAMILIES)
    found = _by_family(data)
    table = []
    for f in FAMILIES:
        p = found[f.name]
        assert p["status"] == "proposed", p
        klass = p["class"]
        if f.settles:
            assert klass["settled"] is True, (f.name, klass)
            assert klass["proposed"] == p["rule"]["class"] == f.settles
        else:
            assert klass["settled"] is False, (f.name, klass)
            assert klass["proposed"] is None
            assert p["rule"]["class"].startswith("TO CHOOSE: ")
            named = [c["class"] for c in klass["plausible"]]
            assert named
            assert set(named) <= CLASSES
            for c in klass["plausible"]:
                assert f"{c['class']} ({c['why']})" in p["rule"]["class"]
            assert all(case["want"]["class"] == p["rule"]["class"] for case in p["cases"])
        table.append((f.name, p["rule"]["class"] if f.settles else "placeholder"))
    print("\n".join(f"{name:32} {cls}" for name, cls in table))


def test_ids_carry_the_types_namespace(proposed: tuple[Path, Path, dict[str, Any]]) -> None:
    found = _by_family(proposed[2])
    assert {f.name: found[f.name]["rule_id"] for f in FAMILIES} == {
        f.name: f.rule_id for f in FAMILIES
    }


def test_a_generic_type_never_scopes_a_draft_alone(
    proposed: tuple[Path, Path, dict[str, Any]],
) -> None:
    for p in proposed[2]["proposals"]:
        when = p["rule"]["when"]
        if is_generic(when["type"]):
            assert {"cause", "code", "http_status", "grpc_status", "message"} & set(when), when
            if "cause" in when and "message" not in when:
                assert not is_generic(when["cause"]["type"]), when


def test_a_drafted_case_file_holds_distinct_descriptors(
    proposed: tuple[Path, Path, dict[str, Any]],
) -> None:
    _, drafts, data = proposed
    found = _by_family(data)
    assert len(found["node-type-error-undefined"]["cases"]) == 1  # five identical members
    for p in data["proposals"]:
        written = yaml.safe_load((drafts / f"{p['rule_id']}.cases.yaml").read_text())["cases"]
        keys = [json.dumps(c["descriptor"], sort_keys=True) for c in written]
        assert len(keys) == len(set(keys)) >= 1


def _adopt(drafts: Path, head: Path) -> Path:
    """The drafts moved into a copy of the bundled rules, as a reviewer would."""
    shutil.copytree(BUNDLED_RULES, head)
    target = head / "unknowns"
    target.mkdir()
    for path in drafts.glob("*.yaml"):
        if path.name != "actions.yaml":
            shutil.copy(path, target / path.name)
    if (drafts / "actions.yaml").is_file():
        catalog = yaml.safe_load((head / "actions.yaml").read_text())
        catalog["actions"] += yaml.safe_load((drafts / "actions.yaml").read_text())["actions"]
        (head / "actions.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False))
    return target


def test_every_placeholder_fails_check_until_a_person_picks(
    proposed: tuple[Path, Path, dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, drafts, data = proposed
    target = _adopt(drafts, tmp_path / "rules")
    unsettled = {p["rule_id"]: p for p in data["proposals"] if not p["class"]["settled"]}
    capsys.readouterr()
    assert main(["check", "--strict", str(tmp_path / "rules")]) == 1
    err = capsys.readouterr()
    printed = [ln for ln in (err.out + err.err).splitlines() if ": class_to_choose: " in ln]
    assert len(printed) == len(unsettled)
    for rule_id, p in unsettled.items():
        [line] = [ln for ln in printed if f'(rule "{rule_id}")' in ln]
        where = line.split(": class_to_choose: ")[0]
        path, row, col = where.rsplit(":", 2)
        assert Path(path).name == f"{rule_id}.yaml"
        assert int(row) > 0
        assert int(col) > 0
        assert "write the one that fits as `class: NAME`" in line
        for c in p["class"]["plausible"]:
            assert c["class"] in line
    assert main(["test", str(target)]) != 0  # the cases name the placeholder too
    assert "class_to_choose" in "".join(capsys.readouterr())

    # A person picks one of the candidates for each: then check and the cases pass.
    pick(target, {rule_id: p["class"]["checked_with"] for rule_id, p in unsettled.items()})
    assert main(["check", "--strict", str(tmp_path / "rules")]) == 0
    assert main(["test", str(target)]) == 0
