"""`classifier reclassify` as a newcomer runs it: the bundled library unless --rules says
otherwise, and a table whose descriptor columns have other names gets told which flags to give;
a pin of a layered ruleset ships every layer and reads back the same digest, in memory."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from classifier import build_descriptor, load_ruleset
from classifier.batch.pin import RulesetPin, load_pinned, pin_ruleset
from classifier.cli import main
from tests.batch.tables import answers, engine_answers, struct_table
from tests.support import BUNDLED_RULES, TEAM_LAYER, write_folder

DS = [
    build_descriptor(type="openai.RateLimitError", supertypes=["openai.APIError"]),
    build_descriptor(type="acme.GatewayQuotaError"),
]


def test_rules_default_to_the_bundled_library(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs, out = tmp_path / "runs.parquet", tmp_path / "out.parquet"
    pq.write_table(struct_table(DS), runs)
    assert main(["reclassify", str(runs), "-o", str(out), "--workers", "1"]) == 0
    library = load_ruleset(BUNDLED_RULES)
    assert f"{library.name} {library.version} ({library.digest})" in capsys.readouterr().err
    assert answers(pq.read_table(out)) == engine_answers(library, DS)


def test_a_table_without_descriptor_columns_is_told_to_name_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs, out = tmp_path / "runs.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"exc_type": ["openai.RateLimitError"], "msg": ["slow down"]}), runs)
    assert main(["reclassify", str(runs), "-o", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert "no descriptor found" in err
    assert "the columns are exc_type, msg" in err
    assert "--flat --column type=COL" in err
    flags = ["--flat", "--column", "type=exc_type", "--column", "message=msg", "--workers", "1"]
    assert main(["reclassify", str(runs), "-o", str(out), *flags]) == 0
    assert pq.read_table(out).column("rule_id").to_pylist() == ["python.openai.rate-limited"]


def test_a_shipped_layered_pin_reads_back_from_memory(tmp_path: Path) -> None:
    team = write_folder(tmp_path / "acme", TEAM_LAYER)
    pin, ruleset = pin_ruleset(team)
    assert [layer.name for layer in pin.layers] == ["library:default", str(team)]
    assert all(layer.folder for layer in pin.layers)
    moved = tmp_path / "moved"
    team.rename(moved)  # a worker has no folder: the shipped bytes are all it needs
    fresh = RulesetPin(pin.digest, str(team), pin.layers, "fresh")
    loaded = load_pinned(fresh)
    assert loaded.digest == ruleset.digest
    assert loaded.rule("acme.gateway-quota") is not None
