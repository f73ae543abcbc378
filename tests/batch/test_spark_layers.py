"""A layered ruleset on a real local Spark: a team's layer on the bundled library, with no
catalog of its own, shipped to the workers; the same answers as the local engine, under the
digest a server reports for the same folder."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from classifier import build_descriptor, load_ruleset
from classifier.batch.jobs import Run, pin_for
from classifier.cli import main
from classifier.source.loader import CATALOG
from classifier.taxonomy import Origin
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.batch.tables import answers, engine_answers, struct_table
from tests.batch.test_arrow import public_descriptors
from tests.conftest import StartApp
from tests.support import TEAM_LAYER, write_folder

TEAM = [
    build_descriptor(type="acme.GatewayQuotaError", supertypes=["Exception"]),
    build_descriptor(type="acme.ToolBroken", origin=Origin.tool),
    build_descriptor(
        type="requests.exceptions.RetryError",
        supertypes=["requests.exceptions.RequestException", "OSError", "Exception"],
        language="python",
    ),
]


@pytest.fixture
def team(tmp_path: Path) -> Path:
    return write_folder(tmp_path / "acme", TEAM_LAYER)


def test_reclassify_on_spark_ships_a_layer_without_a_catalog_and_answers_as_local(
    spark: SparkSession, team: Path, tmp_path: Path, start_app: StartApp
) -> None:
    assert not (team / CATALOG).exists()
    ds = [*TEAM, *public_descriptors()]
    runs = tmp_path / "runs.parquet"
    pq.write_table(struct_table(ds, run_id=list(range(len(ds)))), runs, row_group_size=200)
    local, on_spark = tmp_path / "local.parquet", tmp_path / "spark.parquet"
    common = ["reclassify", "--rules", str(team), str(runs)]
    assert main([*common, "-o", str(local), "--workers", "2"]) == 0
    assert main([*common, "-o", str(on_spark), "--engine", "spark", "--master", "local[2]"]) == 0
    assert on_spark.is_dir()  # Spark's part files
    by_local = answers(pq.read_table(local).sort_by("run_id"))
    by_spark = answers(pq.read_table(on_spark).sort_by("run_id"))
    assert len(by_spark) == len(ds)
    assert by_spark == by_local
    ruleset = load_ruleset(team)
    assert by_spark == engine_answers(ruleset, ds)
    assert [row["rule_id"] for row in by_spark[:2]] == ["acme.gateway-quota", "acme.tool-broken"]
    assert by_spark[2]["rule_id"] != "python.requests.retries-exhausted"  # disabled by the layer

    pin, _ = pin_for(team, Run(engine="spark"))
    assert [layer.name for layer in pin.layers] == ["library:default", str(team)]
    assert CATALOG not in dict(pin.layers[-1].files)
    served = start_app(team).stub.GetRuleset(pb.GetRulesetRequest())
    assert pin.digest == served.digest == ruleset.digest
    assert {row["ruleset_digest"] for row in by_spark} == {served.digest}
    assert [k.digest for k in served.layers] == [k.digest for k in ruleset.layers]
